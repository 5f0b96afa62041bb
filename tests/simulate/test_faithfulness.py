"""The faithfulness generators plant what they say (large draws, fast)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from judgelab.analyses import faithfulness
from judgelab.simulate import faithfulness as sim
from judgelab.simulate.base import Design


def test_faithbench_plants_sources_labels_and_alignment():
    big = Design(n_clusters=250, per_cluster=10, icc=0.3, benchmark="fb")
    s = sim.faithbench(np.random.default_rng(1), design=big, discrimination=1.0)
    assert s.items.groupby("cluster").size().eq(10).all()  # ten summaries per source
    assert s.items["gold"].isin(["Consistent", "Hallucinated"]).all()
    assert s.judgments["cluster"].nunique() == 250
    pairs = faithfulness.faithbench_pairs(s.items)
    # pairs reuse summaries within a source
    assert len(pairs) > len(set(pairs["item_pos"]) | set(pairs["item_neg"]))
    prefs = faithfulness.pointwise_preferences(s.extra["scores"], pairs)
    pref = prefs["pref"]
    assert (pref == "pos").mean() == pytest.approx(s.truth["alignment"], abs=0.03)
    dec = pref.isin(["pos", "neg"])
    margin = ((pref == "pos").sum() - (pref == "neg").sum()) / dec.sum()
    assert margin == pytest.approx(s.truth["margin"], abs=0.05)
    assert (pref == "tie").any() and (pref == "invalid").any()


def test_faithbench_null_has_zero_margin():
    s = sim.faithbench(np.random.default_rng(2), discrimination=0.0)
    assert s.truth["margin"] == pytest.approx(0.0, abs=0.005)


def test_faitheval_mc_plants_accuracy_and_unparsed_share():
    big = Design(n_clusters=300, per_cluster=5, icc=0.3, benchmark="fe")
    s = sim.faitheval_mc(np.random.default_rng(3), design=big, ability=0.8, unparsed=0.1)
    graded = faithfulness.grade_answers(s.judgments, s.items)
    assert graded["strict"].mean() == pytest.approx(s.truth["accuracy"], abs=0.035)
    assert (~graded["parsed"]).mean() == pytest.approx(0.1, abs=0.025)
    # several phrasings: the old "whole answer <= 3 characters" rule misses many
    assert s.judgments["output"].str.startswith("The answer is").any()


def test_prompt_strategies_plants_the_difference():
    big = Design(n_clusters=400, per_cluster=5, icc=0.3, benchmark="ps")
    s = sim.prompt_strategies(np.random.default_rng(4), design=big, effects={"CoT": 0.5})
    j = s.judgments
    ca = (
        j.assign(ok=j["correct"].astype(bool))
        .groupby(["prompt", "item_id"])["ok"]
        .all()
        .groupby("prompt")
        .mean()
    )
    assert ca["CoT"] - ca["Vanilla"] == pytest.approx(s.truth["diff_ca:CoT"], abs=0.03)
    assert s.truth["diff_ca:CoT"] > 0.05


def test_faitheval_mc_meta_names_the_task_and_options():
    from judgelab.core.schema import read_meta

    s = sim.faitheval_mc(np.random.default_rng(5))  # the default benchmark names no task
    meta = read_meta(s.items["meta"].iloc[0])
    assert meta["faitheval_task"] == "counterfactual" and len(meta["options"]["text"]) == 4
    conditions = faithfulness.item_conditions(s.items)
    assert set(conditions["task"]) == {"counterfactual"}


def test_inf2_1_faithfulness_generators_take_the_scenario_shape():
    from judgelab.simulate.base import scenario

    design = scenario("unequal/varying/G8/n48").design(benchmark="fb")
    s = sim.faithbench(np.random.default_rng(6), design=design, doc_sd=design.effect_sd)
    sizes = s.items.groupby("cluster").size()
    assert len(sizes) == 8 and sizes.sum() == 48 and sizes.max() >= 3 * sizes.min()
    fe = sim.faitheval_mc(np.random.default_rng(7), design=replace(design, benchmark="fe"))
    assert fe.items["cluster"].nunique() == 8 and len(fe.items) == 48
    ps = sim.prompt_strategies(np.random.default_rng(8), design=design)
    assert ps.items["cluster"].nunique() == 8


def test_inf2_1_nulls_are_exact_with_cluster_varying_effects():
    varying = Design(n_clusters=400, per_cluster=5, icc=0.5, effect_sd=0.5, benchmark="ps")
    s = sim.prompt_strategies(np.random.default_rng(9), design=varying, effects={"CoT": 0.0})
    assert abs(s.truth["diff_ca:CoT"]) < 0.002
    fb = sim.faithbench(
        np.random.default_rng(10), discrimination=0.0, doc_sd=0.5, invalid_hallucinated=0.1
    )
    assert abs(fb.truth["margin"]) < 0.002


def test_inf2_1_unparsed_answers_are_missing_not_at_random():
    big = Design(n_clusters=300, per_cluster=5, icc=0.5, effect_sd=0.5, benchmark="fe")
    s = sim.faitheval_mc(
        np.random.default_rng(11), design=big, ability=0.8, unparsed=0.02, unparsed_if_wrong=0.3
    )
    graded = faithfulness.grade_answers(s.judgments, s.items)
    assert graded["strict"].mean() == pytest.approx(s.truth["accuracy"], abs=0.035)
    assert (~graded["parsed"]).mean() == pytest.approx(s.truth["unparsed_share"], abs=0.025)
    assert s.truth["unparsed_share"] > 0.08  # mostly the wrong answers go unparsed
