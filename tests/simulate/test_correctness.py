"""The correctness / reference generators plant what they say (large draws, fast)."""

import numpy as np
import pytest

from judgelab.analyses import correctness, pairwise
from judgelab.simulate import correctness as sc
from judgelab.simulate.base import Design

BIG = Design(n_clusters=3000, per_cluster=5, icc=0.3)


@pytest.fixture(scope="module")
def big():
    sim = sc.correctness_sim(
        np.random.default_rng(7), design=BIG, self_fpr=1.0, answered_shift=0.8
    )
    return sim, correctness.correctness_table(sim.items, sim.judgments)


def _confusion(t):
    h, v = t["human"], t["verdict"]
    ok = v.notna()
    fpr = ((h == "Incorrect") & (v == "Correct") & ok).sum() / ((h == "Incorrect") & ok).sum()
    return float(fpr)


def test_tables_follow_the_schema_and_design(big):
    sim, t = big
    assert len(sim.items) == BIG.n_items and sim.items["cluster"].nunique() == BIG.n_clusters
    assert (t.groupby("cluster").size() == 5).all()  # >= 5 answers per question
    assert set(t["candidate_model"]) == set(sc.MODELS)
    assert t["verdict"].isna().mean() == pytest.approx(0.04, abs=0.005)


def test_planted_self_shift_and_truths(big):
    sim, t = big
    own = t["candidate_model"] == sc.JUDGE_MODEL
    assert _confusion(t[own]) == pytest.approx(sim.truth["fpr_self"], abs=0.015)
    assert _confusion(t[~own]) == pytest.approx(sim.truth["fpr_others"], abs=0.01)
    assert sim.truth["fpr_diff"] > 0.15  # +1 logit on own answers
    # family-level "self" mixes in alpha-7b, whose answers carry no shift: a smaller gap
    assert 0 < sim.truth["fpr_family_diff"] < sim.truth["fpr_diff"]


def test_answered_gap_truth_matches_large_sample(big):
    sim, t = big
    marked = correctness.mark_answered(t, judge_candidate=sim.params["judge_candidate"])
    k = correctness.kappa_by_answered(marked, n_boot=1).query("metric == 'kappa'")
    k = k.set_index("subset")["value"]
    gap = k["answered_correctly"] - k["answered_incorrectly"]
    assert gap == pytest.approx(sim.truth["kappa_gap"], abs=0.04)
    assert sim.truth["kappa_gap"] > 0.15


def test_null_is_a_true_null():
    t = sc.truths(fpr=0.2, fnr=0.2, self_fpr=0.0, self_fnr=0.0, family_fpr=0.0, family_fnr=0.0,
                  answered_shift=0.0, icc=0.3)  # fmt: skip
    assert abs(t["fpr_diff"]) < 1e-3 and abs(t["kappa_diff"]) < 2e-3
    assert abs(t["kappa_gap"]) < 3e-3  # symmetric design: the kappa gap is 0 without a shift


def test_seeded():
    a = sc.correctness_sim(np.random.default_rng(1))
    b = sc.correctness_sim(np.random.default_rng(1))
    assert a.judgments["verdict"].equals(b.judgments["verdict"])


def test_reference_sim_plants_condition_effect():
    sim = sc.reference_sim(
        np.random.default_rng(3),
        design=Design(n_clusters=2000, per_cluster=5, icc=0.3),
        effects=(0.0, 0.6, 0.0),
    )
    out = pairwise.item_outcomes(sim.judgments, groups=("judge", "condition"))
    ca = out.groupby("condition")["consistently_correct"].mean()
    # levels share the cluster effects (SE ~ 0.007); their difference is paired (SE ~ 0.005)
    assert ca["reference=human"] == pytest.approx(sim.truth["ca_reference=human"], abs=0.03)
    assert ca["reference=none"] == pytest.approx(sim.truth["ca_reference=none"], abs=0.03)
    diff = ca["reference=human"] - ca["reference=none"]
    assert diff == pytest.approx(sim.truth["ca_diff_1_0"], abs=0.02)
    assert sim.truth["ca_diff_1_0"] > 0.08 and sim.truth["ca_diff_2_0"] == 0.0
    assert "cluster" in out.columns and out["cluster"].nunique() == 2000
