"""Issue 20 fixes of the juries family, on planted truth: clusters, selection, pooling."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from judgelab.analyses import juries
from judgelab.analyses.juries import crossfit
from judgelab.simulate import base
from judgelab.simulate import juries as sj

DESIGN = base.Design(n_clusters=40, per_cluster=5, icc=0.5)


@pytest.fixture(scope="module")
def sim() -> base.Simulation:
    params = sj.JuryParams(intercepts=(2.0, 2.0, 1.9))
    return sj.jury_benchmark(np.random.default_rng(11), DESIGN, params)


def _width(table: pd.DataFrame, low: str = "ci_low", high: str = "ci_high") -> float:
    return float((table[high] - table[low]).iloc[0])


def test_alpha_resamples_clusters_with_both_presentations_together(sim):
    opts = {"units": "item_order", "across": None, "n_boot": 400}
    clustered = juries.alpha_table(sim.judgments, **opts)
    legacy = juries.alpha_table(sim.judgments, cluster=None, **opts)
    items = juries.alpha_table(sim.judgments, cluster="item", **opts)
    assert clustered["n_clusters"].iloc[0] == 40 and items["n_clusters"].iloc[0] == 200
    assert legacy["n_clusters"].iloc[0] == clustered["n_units"].iloc[0]  # 2 units per item
    assert clustered["alpha"].iloc[0] == legacy["alpha"].iloc[0]  # same estimate
    assert _width(clustered) > 1.15 * _width(legacy)  # ICC 0.5: dependence widens it


def test_alpha_variants_state_coding_and_level(sim):
    table = juries.alpha_variants(sim.judgments, across=None, n_boot=50)
    assert len(table) == len(juries.CODINGS) and table["coding"].is_unique
    assert table["level_of_measurement"].eq("nominal").all()
    assert table["alpha"].nunique() == len(table)


def test_jury_best_member_is_reselected_in_every_replicate(sim):
    opts = {"size": 3, "across": None, "n_boot": 400, "interval": "percentile"}
    re = juries.jury_table(sim.judgments, best_member="reselect", **opts).iloc[0]
    fixed = juries.jury_table(sim.judgments, best_member="fixed", **opts).iloc[0]
    assert re["diff_vs_best"] == fixed["diff_vs_best"]
    # the max over near-equal members lies above the fixed member in every replicate
    assert re["best_member_ca_low"] > fixed["best_member_ca_low"]
    assert re["diff_high"] < fixed["diff_high"]
    assert re["best_member_rule"] == "reselect" and 0 < re["p_value"] <= 1
    assert re["n_boot_p"] >= 400 and re["n_clusters"] == 40


def test_all_vote_rules_with_holm_and_the_number_of_comparisons(sim):
    table = juries.jury_table(
        sim.judgments, size=[1, 2, 3], vote_rule=list(juries.VOTE_RULES), across=None, n_boot=200
    )
    tested = table[table["size"] > 1]
    assert set(tested["vote_rule"]) == set(juries.VOTE_RULES)
    assert tested["n_comparisons"].eq(len(tested)).all()  # 4 juries × 3 rules
    assert (tested["p_holm"] >= tested["p_value"] - 1e-12).all()
    assert table.loc[table["size"] == 1, "p_value"].isna().all()
    summary = juries.jury_summary(table, size=3)
    assert summary["n_comparisons"].eq(len(tested)).all()


def test_pooled_rows_only_over_strata_with_the_same_judges(sim):
    data = sim.judgments
    other = data.assign(split="other")
    two = other[other["judge"].isin(["judge-0", "judge-1"])]
    mixed = pd.concat([data, two], ignore_index=True)
    alpha = juries.alpha_table(mixed, n_boot=50)
    pooled = alpha[alpha["split"].str.startswith("pooled")].set_index("split")
    assert pooled.loc["pooled[1]", "n_judges"] == 3 and pooled.loc["pooled[2]", "n_judges"] == 2
    assert pooled.loc["pooled[2]", "strata"] == "sim/other"
    legacy = juries.alpha_table(mixed, n_boot=50, pool_strata="all")
    row = legacy[legacy["split"] == "pooled"].iloc[0]
    assert row["strata"] == "sim/other,sim/test" and row["judges"].count("+") == 2
    jury = juries.jury_table(mixed, size=[1, 2], n_boot=50)
    rows = jury[jury["aggregation"] == "pooled"]
    for _, block in rows.groupby("split"):
        assert block["n"].nunique() == 1 and block["strata"].nunique() == 1  # same items
    kappa = juries.cohen_kappa_matrix(mixed, n_boot=50)
    assert {"pooled[1]", "pooled[2]"} <= set(kappa["split"])


def test_crossfit_scores_the_member_chosen_on_the_other_folds():
    # (jury, m0, m1) sums: totals, then 2 folds; m0 leads overall, m1 on fold 1's training
    fold0 = np.array([6.0, 2.0, 5.0])
    fold1 = np.array([6.0, 9.0, 4.0])
    sums = np.concatenate([fold0 + fold1, fold0, fold1])
    member, diff = crossfit.crossfit(sums, 20.0, 2)
    # fold 0 is scored with m0 (best on fold 1), fold 1 with m1 (best on fold 0)
    assert member == pytest.approx((2.0 + 4.0) / 20) and diff == pytest.approx(12 / 20 - 0.3)
    reps = np.stack([sums, sums])
    assert crossfit.crossfit(reps, 20.0, 2)[1] == pytest.approx([0.3, 0.3])


def test_crossfit_with_a_dominant_member_equals_the_fixed_reading():
    params = sj.JuryParams(intercepts=(4.0, 0.0, -0.5))
    data = sj.jury_benchmark(np.random.default_rng(3), DESIGN, params).judgments
    opts = {"size": 3, "across": None, "n_boot": 300, "interval": "t"}
    cf = juries.jury_table(data, **opts).iloc[0]
    fixed = juries.jury_table(data, best_member="fixed", **opts).iloc[0]
    assert cf["best_member_rule"] == "crossfit" and cf["best_member"] == "judge-0"
    assert cf["diff_vs_best"] == pytest.approx(fixed["diff_vs_best"])
    assert cf["diff_low"] < cf["diff_vs_best"] < cf["diff_high"]
    assert 0 <= cf["p_value"] <= 1 and not cf["p_bound"]


def test_jury_summary_states_its_in_sample_selection(sim):
    table = juries.jury_table(sim.judgments, size=[1, 3], across=None, n_boot=100)
    summary = juries.jury_summary(table, size=3)
    assert summary["selection"].str.contains("in-sample").all()


def test_alpha_replicates_skip_a_stratum_without_units():
    """A stratum whose units all drop out (ties coded missing) must not break the bootstrap."""
    import numpy as np

    from judgelab.analyses.juries import alpha as alpha_mod
    from judgelab.core import stats

    full = np.array([[0.0, 1.0, 1.0, 0.0], [0.0, 1.0, 0.0, 0.0]])
    empty = np.zeros((2, 0))
    groups = [np.arange(4), np.zeros(0, dtype=np.int64)]
    rngs = [stats.rng_for(0, "a"), stats.rng_for(0, "b")]
    reps = alpha_mod._alpha_replicates(
        [full, empty], groups, level_of_measurement="nominal", n_boot=50, rngs=rngs
    )
    assert reps.shape == (50,) and np.isfinite(reps).any()
