"""The grounding and planner generators plant what they say (issue 33 item 1)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from judgelab.core import schema
from judgelab.simulate import design as sim_design
from judgelab.simulate import grounding as sim_grounding
from judgelab.simulate.base import Design, scenario


def test_inf2_3_grounding_draws_unequal_clusters_varying_bias_and_mnar_invalids():
    rng = np.random.default_rng(0)
    shape = scenario("unequal/varying/G8/n240")
    sim = sim_grounding.grounding_sim(rng, design=shape.design(), n_labelled=96,
                                      invalid_rate=0.05, invalid_if_wrong=0.3)  # fmt: skip
    schema.validate(sim.items[[c for c in schema.ITEMS.names if c in sim.items]], schema.ITEMS)
    sizes = np.asarray(sim.params["cluster_sizes"])
    assert len(sizes) == 8 and sizes.sum() == 240 and sizes.max() > 3 * np.median(sizes)
    assert int(sim.items["labelled"].sum()) == 96
    labels = sim.extra["labels"]
    assert labels["human"].notna().sum() == 96
    assert sim.truth["items_mean"] == pytest.approx(sim.items["human"].mean())
    # invalid verdicts score ½ and are more frequent where the judge is wrong
    judge = sim_grounding.judge_values(sim)
    np.testing.assert_array_equal(judge, labels["judge"].to_numpy())
    invalid = judge == 0.5
    wrong = ~invalid & (judge != sim.items["human"].to_numpy())
    assert invalid.any() and wrong.any()
    big = sim_grounding.grounding_sim(np.random.default_rng(1), design=Design(2000, 1, 0.0),
                                      invalid_rate=0.05, invalid_if_wrong=0.3,
                                      tables=False)  # fmt: skip
    j = big.extra["labels"]["judge"].to_numpy()
    assert 0.04 < np.mean(j == 0.5) < 0.15


def test_inf2_3_plain_frames_hold_the_same_draw_as_schema_tables():
    a = sim_grounding.grounding_sim(np.random.default_rng(2), design=Design(10, 5, 0.3))
    b = sim_grounding.grounding_sim(np.random.default_rng(2), design=Design(10, 5, 0.3),
                                    tables=False)  # fmt: skip
    assert a.truth == b.truth
    np.testing.assert_array_equal(a.extra["labels"]["human"], b.extra["labels"]["human"])
    np.testing.assert_array_equal(sim_grounding.judge_values(a), sim_grounding.judge_values(b))


def test_inf2_3_the_population_truth_is_the_large_draws_mean():
    # a huge draw (ICC 0.5, the judge's bias varying): its items' mean is the truth
    shape = scenario("balanced/varying/G15/n240").design(n_clusters=6000, per_cluster=10)
    sim = sim_grounding.grounding_sim(np.random.default_rng(3), design=shape, tables=False)
    assert sim.truth["items_mean"] == pytest.approx(sim.truth["mean"], abs=0.012)  # 3 SE


def test_inf2_4_position_null_is_a_true_null_with_varying_bias_ties_and_invalids():
    params = sim_design.PositionParams()
    assert abs(sim_design.truth(params, 0.5, 0.5) - 0.5) < 0.002
    gap = sim_design.delta_for(0.08, params, 0.5, 0.5)
    assert sim_design.truth(replace(params, delta=gap), 0.5, 0.5) == pytest.approx(0.58, abs=1e-4)
    # a large study recovers the planted P(A | decisive), counting only decisive verdicts
    shape = Design(3000, 4, icc=0.5, size_spread=1.5, effect_sd=0.5)
    sim = sim_design.position_study(np.random.default_rng(4), shape,
                                    replace(params, delta=gap), tables=False)  # fmt: skip
    j = sim.judgments
    dec = j["valid"] & j["chosen"].isin(["pos", "neg"])
    a = ((j["order"] == 0) & (j["chosen"] == "pos")) | ((j["order"] == 1) & (j["chosen"] == "neg"))
    assert (a & dec).sum() / dec.sum() == pytest.approx(0.58, abs=0.01)
    # invalid outputs: more where the verdict is not the better response
    inv = ~j["valid"]
    assert 0.05 < inv.mean() < 0.2
    one = sim_design.position_study(np.random.default_rng(5), Design(10, 3), params,
                                    orders="one")  # fmt: skip
    assert len(one.judgments) == 30
    with pytest.raises(ValueError, match="unknown orders"):
        sim_design.position_study(np.random.default_rng(5), Design(10, 3), params, orders="x")
