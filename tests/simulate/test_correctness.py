"""The correctness / reference generators plant what they say (large draws, fast)."""

import numpy as np
import pytest

from judgelab.analyses import correctness, pairwise
from judgelab.core import schema
from judgelab.simulate import correctness as sc
from judgelab.simulate.base import Design, scenario

BIG = Design(n_clusters=3000, per_cluster=5, icc=0.3)


@pytest.fixture(scope="module")
def big():
    sim = sc.correctness_sim(
        np.random.default_rng(7), design=BIG, self_fpr=1.0, answered_shift=0.8
    )
    return sim, correctness.correctness_table(sim.items, sim.judgments)


def _fpr(t, policy="exclude"):
    h, v = t["human"], t["verdict"]
    neg = h == "Incorrect"
    if policy == "exclude":
        neg = neg & v.notna()
        return float(((v == "Correct") & neg).sum() / neg.sum())
    return float((((v == "Correct") | v.isna()) & neg).sum() / neg.sum())


def test_tables_follow_the_schema_and_design(big):
    sim, t = big
    schema.validate(sim.items, schema.ITEMS)
    schema.validate(sim.judgments.drop(columns="cluster"), schema.JUDGMENTS)
    assert len(sim.items) == BIG.n_items and sim.items["cluster"].nunique() == BIG.n_clusters
    assert set(t["candidate_model"]) == set(sc.MODELS)
    # a question is answered by distinct models; its cluster holds several questions
    per_q = t.groupby("question_uid")["candidate_model"]
    assert (per_q.nunique() == per_q.size()).all() and per_q.size().max() == 3
    own = t["candidate_model"] == sc.JUDGE_MODEL
    assert 0.1 < own.mean() < 0.3
    share = own.groupby(t["cluster"]).mean()
    assert share.std() > 0.05  # the own model's share varies by cluster


def test_inf2_1_scenarios_give_unequal_clusters_and_few_own_negatives():
    """Issue 33 item 1: a scenario's Design shapes the draw (the old generator refused it)."""
    sim = sc.correctness_sim(
        np.random.default_rng(3), design=scenario("unequal/varying/G8/n48").design()
    )
    t = correctness.correctness_table(sim.items, sim.judgments)
    sizes = t.groupby("cluster").size()
    assert len(t) == 48 and len(sizes) == 8 and sizes.max() >= 3 * sizes.min()
    own_neg = (t["candidate_model"] == sc.JUDGE_MODEL) & (t["human"] == "Incorrect")
    assert own_neg.sum() < 10  # small n: too few own-model negatives for a test, often


def test_invalid_verdicts_are_missing_not_at_random():
    # FPR 0.5, FNR 0.05: half the verdicts on human-Incorrect answers are wrong, few on Correct
    sim = sc.correctness_sim(np.random.default_rng(9), design=BIG, fpr=0.5, fnr=0.05)
    t = correctness.correctness_table(sim.items, sim.judgments)
    inv = t["verdict"].isna().groupby(t["human"]).mean()
    assert inv["Incorrect"] > inv["Correct"] + 0.02  # 12 % where wrong, 3 % where right


def test_planted_self_shift_and_truths(big):
    sim, t = big
    own = t["candidate_model"] == sc.JUDGE_MODEL
    for policy, sfx in (("exclude", ""), ("error", "_error")):
        # own negatives are few and share cluster effects: a looser tolerance than others'
        assert _fpr(t[own], policy) == pytest.approx(sim.truth[f"fpr_self{sfx}"], abs=0.035)
        assert _fpr(t[~own], policy) == pytest.approx(sim.truth[f"fpr_others{sfx}"], abs=0.01)
    assert sim.truth["fpr_diff"] > 0.12  # +1 logit on own answers
    # family-level "self" mixes in alpha-7b, whose answers carry no shift: a smaller gap
    assert 0 < sim.truth["fpr_family_diff"] < sim.truth["fpr_diff"]


def test_answered_gap_truth_matches_large_sample(big):
    sim, t = big
    marked = correctness.mark_answered(t, judge_candidate=sim.params["judge_candidate"])
    k = correctness.kappa_by_answered(marked, n_boot=1, inference="bootstrap")
    k = k.query("metric == 'kappa'").set_index("subset")["value"]
    gap = k["answered_correctly"] - k["answered_incorrectly"]
    assert gap == pytest.approx(sim.truth["kappa_gap"], abs=0.04)
    assert sim.truth["kappa_gap"] > 0.15


@pytest.mark.parametrize("name", ["unequal/varying/G8/n48", "balanced/constant/G50/n250"])
def test_inf2_1_nulls_are_true_nulls_with_cluster_varying_effects(name):
    """With a self shift varying by cluster (mean 0), self − others FPR is 0 in the population."""
    design = scenario(name).design()
    sim = sc.correctness_sim(np.random.default_rng(0), design=design)
    assert sim.params["self_sd"] == design.effect_sd
    for key in ("fpr_diff", "fpr_diff_error", "fnr_diff", "kappa_gap", "kappa_gap_error"):
        assert abs(sim.truth[key]) < 0.002, key


def test_null_holds_in_a_large_draw():
    """A large sample of the null has self − others FPR near 0 although s varies by cluster."""
    design = Design(n_clusters=4000, per_cluster=6, icc=0.5, size_spread=1.5, effect_sd=0.5)
    sim = sc.correctness_sim(np.random.default_rng(4), design=design)
    t = correctness.correctness_table(sim.items, sim.judgments)
    own = t["candidate_model"] == sc.JUDGE_MODEL
    assert abs(_fpr(t[own]) - _fpr(t[~own])) < 0.02
    assert abs(sim.truth["fpr_diff"]) < 0.002


def test_seeded():
    a = sc.correctness_sim(np.random.default_rng(1))
    b = sc.correctness_sim(np.random.default_rng(1))
    assert a.judgments["verdict"].equals(b.judgments["verdict"])


def test_reference_sim_plants_condition_effect():
    sim = sc.reference_sim(
        np.random.default_rng(3),
        design=Design(n_clusters=2000, per_cluster=5, icc=0.3, effect_sd=0.5),
        effects=(0.0, 0.6, 0.0),
    )
    out = pairwise.item_outcomes(sim.judgments, groups=("judge", "condition"))
    ca = out.groupby("condition")["consistently_correct"].mean()
    assert ca["reference=human"] == pytest.approx(sim.truth["ca_reference=human"], abs=0.03)
    assert ca["reference=none"] == pytest.approx(sim.truth["ca_reference=none"], abs=0.03)
    diff = ca["reference=human"] - ca["reference=none"]
    assert diff == pytest.approx(sim.truth["ca_diff_1_0"], abs=0.02)
    # reference=self has no cluster-varying part: it differs from none by Jensen's gap only
    assert sim.truth["ca_diff_1_0"] > 0.08 and abs(sim.truth["ca_diff_2_0"]) < 0.002
    assert "cluster" in out.columns and out["cluster"].nunique() == 2000


def test_reference_null_is_exact_with_a_cluster_varying_effect():
    t = sc.reference_truths((0.0, 0.0, 0.2), 1.0, 0.5, 0.4, 0.02, 0.5, 0.5)
    assert abs(t["ca_diff_1_0"]) < 1e-12
    sim = sc.reference_sim(
        np.random.default_rng(5), design=scenario("unequal/varying/G8/n48").design()
    )
    assert sim.judgments.groupby("condition").size().nunique() == 1
    sizes = sim.items["cluster"].value_counts()
    assert sizes.max() >= 3 * sizes.min()
