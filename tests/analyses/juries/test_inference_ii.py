"""Issue 33 (Inference II) in the juries family: bias-corrected alpha, wild-bootstrap juries.

Item 2 of the issue: Krippendorff's alpha gets a bias-corrected interval with its bias shown;
jury − best member and sc − greedy are differences of rates tested by the restricted wild
cluster bootstrap, whose p-value inverts the interval beside it; every row reports its
effective clusters and flags few of them.
"""

from __future__ import annotations

import krippendorff
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from judgelab.analyses import juries
from judgelab.analyses.juries import alpha as alpha_mod
from judgelab.analyses.juries import resample
from judgelab.core import clusters
from judgelab.simulate import base
from judgelab.simulate import juries as sj

PARAMS = sj.JuryParams(intercepts=(2.3, 2.0, 1.8), item_sd=0.5, judge_sd=1.5)
UNEQUAL = base.scenario("unequal/varying/G15/n60").design()


@pytest.fixture(scope="module")
def small() -> base.Simulation:
    return sj.jury_benchmark(np.random.default_rng(5), UNEQUAL, PARAMS)


def test_inf2_2_jackknife_hand_example():
    # leave-one-out values 0.4, 0.5, 0.6 around 0.5: no bias, SE² = 2/3 · 0.02
    jk = resample.jackknife(0.5, np.array([0.4, 0.5, 0.6]), df=2)
    assert jk.bias == pytest.approx(0.0) and jk.se == pytest.approx(np.sqrt(2 / 3 * 0.02))
    assert jk.ci_low == pytest.approx(0.5 - 4.302653 * jk.se, abs=1e-5)
    # a plug-in above every leave-one-out value is biased upward: the interval moves down
    up = resample.jackknife(0.7, np.array([0.4, 0.5, 0.6]))
    assert up.bias == pytest.approx(2 * (0.5 - 0.7))
    assert (up.ci_low + up.ci_high) / 2 == pytest.approx(0.7 - up.bias)


def test_inf2_2_nominal_leave_one_out_equals_the_package(rng):
    data = rng.integers(0, 3, size=(3, 30)).astype(float)
    data[rng.random(data.shape) < 0.1] = np.nan
    codes = np.repeat(np.arange(6), 5)
    fast = alpha_mod._leave_one_out(data, codes, "nominal", np.random.default_rng(0))
    slow = [
        krippendorff.alpha(reliability_data=data[:, codes != g], level_of_measurement="nominal")
        for g in range(6)
    ]
    assert np.allclose(fast, slow)


def test_inf2_2_alpha_shows_its_bias_and_a_bias_corrected_interval(small):
    row = juries.alpha_table(small.judgments, across=None).iloc[0]
    assert row["interval"] == "jackknife" and np.isfinite(row["bias"])
    assert row["n_clusters"] == 15 and 1 <= row["n_eff_clusters"] < 15  # very unequal sizes
    assert row["few_clusters"] and "effective clusters" in row["method"]
    centre = (row["ci_low"] + row["ci_high"]) / 2
    assert centre == pytest.approx(row["alpha"] - row["bias"], abs=1e-9)
    before = juries.alpha_table(small.judgments, across=None, interval="percentile").iloc[0]
    assert before["alpha"] == row["alpha"] and before["method"].startswith("percentile")
    assert row["ci_high"] - row["ci_low"] > before["ci_high"] - before["ci_low"]
    bca = juries.alpha_table(small.judgments, across=None, interval="bca").iloc[0]
    assert bca["ci_low"] < bca["alpha"] < bca["ci_high"]


def test_inf2_2_alpha_other_levels_group_many_clusters(monkeypatch):
    data = np.random.default_rng(1).integers(0, 3, size=(3, 40)).astype(float)
    codes = np.arange(40)  # 40 clusters of one unit
    monkeypatch.setattr(resample, "MAX_JACKKNIFE", 8)
    leave = alpha_mod._leave_one_out(data, codes, "ordinal", np.random.default_rng(0))
    assert leave.shape == (8,) and np.isfinite(leave).all()


def test_inf2_2_kappa_and_phi_report_jackknife_and_effective_clusters(small):
    kappa = juries.cohen_kappa_matrix(small.judgments, across=None)
    row = juries.pick(kappa, judge_1="judge-0", judge_2="judge-1").iloc[0]
    assert row["interval"] == "jackknife" and row["n_clusters"] == 15
    assert row["ci_low"] < row["kappa"] - row["bias"] < row["ci_high"]
    assert row["few_clusters"] and row["n_eff_clusters"] < 15
    diag = juries.pick(kappa, judge_1="judge-0", judge_2="judge-0").iloc[0]
    assert diag["kappa"] == 1.0 and diag["method"] == "a judge with itself"
    phi = juries.error_correlation(small.judgments, across=None, interval="percentile")
    assert phi["method"].str.startswith(("percentile", "a judge")).all()


def test_inf2_2_jury_difference_is_simultaneous_over_the_members(small):
    table = juries.jury_table(small.judgments, size=[1, 3], across=None)
    jury = table[table["size"] == 3].iloc[0]
    assert jury["best_member_rule"] == "simultaneous" and jury["interval"] == "wild"
    assert jury["method"].startswith("simultaneous over 3 members (Bonferroni), wild cluster")
    assert jury["n_clusters"] == 15 and jury["few_clusters"]
    assert jury["diff_low"] <= jury["diff_vs_best"] <= jury["diff_high"]
    single = table[table["size"] == 1].set_index("jury")
    assert single["p_value"].isna().all() and (single["diff_vs_best"] == 0).all()
    # the estimate is jury − the in-sample best member; the interval is that of
    # min_j (jury − member_j): each difference at level 1 − 0.05 / 3, the minimum of the ends
    best = single["ca"].max()
    assert jury["diff_vs_best"] == pytest.approx(jury["ca"] - best)
    assert jury["best_member_ca"] == pytest.approx(best)
    fixed = juries.jury_table(small.judgments, size=3, across=None, best_member="fixed").iloc[0]
    assert fixed["diff_vs_best"] == pytest.approx(jury["diff_vs_best"])
    assert fixed["diff_high"] <= jury["diff_high"]  # one comparison at 0.95, not three at 0.983
    old = juries.jury_table(small.judgments, size=3, across=None, interval="t").iloc[0]
    assert old["best_member_rule"] == "crossfit" and old["method"].startswith("t cluster")
    with pytest.raises(ValueError, match="reselect"):
        juries.jury_table(small.judgments, size=3, best_member="reselect")
    with pytest.raises(ValueError, match="'simultaneous' needs interval='wild'"):
        juries.jury_table(small.judgments, size=3, best_member="simultaneous", interval="t")


def test_inf2_2_simultaneous_p_value_combines_the_member_tests():
    # a jury that copies its best member: the difference to it is 0 exactly, p = 1
    data = sj.jury_benchmark(np.random.default_rng(9), UNEQUAL, PARAMS).judgments
    copy = data[data["judge"] == "judge-0"].assign(judge="judge-copy", model="judge-copy")
    both = pd.concat([data[data["judge"] != "judge-2"], copy], ignore_index=True)
    row = juries.jury_table(both, size=3, across=None).iloc[0]
    assert row["diff_vs_best"] <= 0 and 0 < row["p_value"] <= 1
    assert row["diff_low"] <= 0 <= row["diff_high"]


def test_inf2_2_jury_pooled_rows_pool_the_items(small):
    data = pd.concat([small.judgments, small.judgments.assign(split="b")], ignore_index=True)
    table = juries.jury_table(data, size=3)
    pooled = table[table["aggregation"] == "pooled"].iloc[0]
    split = table[table["aggregation"] == "split"].iloc[0]
    assert pooled["n"] == 2 * split["n"]
    assert pooled["n_clusters"] == split["n_clusters"]  # a source in both splits is one unit


def test_inf2_2_self_consistency_tests_sc_minus_greedy():
    sim = sj.jury_benchmark(
        np.random.default_rng(2), UNEQUAL, sj.JuryParams(intercepts=(2.0,), n_samples=5)
    )
    rates = juries.self_consistency_rates(juries.self_consistency(sim.judgments), across=None)
    d = juries.pick(rates, metric="sc_minus_greedy").iloc[0]
    assert d["few_clusters"] and np.isfinite(d["p_value"]) and d["n_clusters"] == 15
    assert (d["p_value"] < 0.05) == (not d["ci_low"] <= 0 <= d["ci_high"])
    acc = juries.pick(rates, metric="sc_ca").iloc[0]
    assert np.isnan(acc["p_value"]) and acc["ci_low"] <= acc["value"] <= acc["ci_high"]
    old = juries.self_consistency_rates(
        juries.self_consistency(sim.judgments), across=None, interval="percentile"
    )
    assert juries.pick(old, metric="sc_minus_greedy")["value"].iloc[0] == pytest.approx(d["value"])


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 10_000), G=st.integers(3, 14), a0=st.floats(1.0, 3.0))
def test_inf2_2_jury_p_value_inverts_its_interval(seed, G, a0):
    design = base.Design(n_clusters=G, per_cluster=4, icc=0.5, size_spread=1.5)
    params = sj.JuryParams(intercepts=(a0, 2.0, 1.8), item_sd=0.5, judge_sd=1.5)
    sim = sj.jury_benchmark(np.random.default_rng(seed), design, params)
    row = juries.jury_table(sim.judgments, size=3, across=None, seed=seed).iloc[0]
    if not np.isfinite(row["p_value"]):
        return
    inside = row["diff_low"] <= 0.0 <= row["diff_high"]
    width = row["diff_high"] - row["diff_low"]  # the root finder stops within 1e-4 SE of a bound
    near = min(abs(row["diff_low"]), abs(row["diff_high"])) < 1e-4 * width + 1e-9
    assert near or inside == (row["p_value"] >= 0.05)


def test_inf2_2_effective_clusters_of_alpha_follow_the_sizes():
    data = np.tile(np.array([[0.0, 1.0, 2.0, 0.0]]), (3, 10))
    equal = alpha_mod._effective(data, np.repeat(np.arange(10), 4))
    lopsided = alpha_mod._effective(data, np.r_[np.zeros(31, int), np.arange(1, 10)])
    assert equal > lopsided and lopsided < clusters.FEW_EFFECTIVE
