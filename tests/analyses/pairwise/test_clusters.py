"""Cluster bootstrap, stratified pooled rows, bootstrap tests and missing-as-wrong (issue 20)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from judgelab.analyses import pairwise
from judgelab.simulate.base import Design
from judgelab.simulate.pairwise import PairwiseParams, pairwise_benchmark


def _with_clusters(table, mapping):
    out = table.copy()
    out["cluster"] = out["item_id"].map(mapping)
    return out


def test_item_outcomes_carries_cluster_but_not_as_group(judgments, six):
    table = _with_clusters(judgments(six), {f"i{k}": f"c{(k + 1) // 2}" for k in range(1, 7)})
    out = pairwise.item_outcomes(table)
    assert out["cluster"].tolist() == ["c1", "c1", "c2", "c2", "c3", "c3"]
    rates = pairwise.pairwise_rates(out, n_boot=50)
    assert "cluster" not in pairwise.rates_for(rates, metric="ca").columns
    r = rates[rates["aggregation"] == "split"].set_index("metric")
    assert (r["n_clusters"] == 3).all() and r.loc["ca", "n"] == 6
    # cluster=None drops it: the legacy item bootstrap
    assert "cluster" not in pairwise.item_outcomes(table, cluster=None).columns


def test_without_clusters_results_equal_the_item_bootstrap(rng, random_table):
    table = random_table(rng, 60, ["pos", "neg", "tie"])
    own = _with_clusters(table, {i: f"u{i}" for i in table["item_id"]})
    base = pairwise.pairwise_rates(pairwise.item_outcomes(table), n_boot=300)
    same = pairwise.pairwise_rates(pairwise.item_outcomes(own), n_boot=300)
    legacy = pairwise.pairwise_rates(pairwise.item_outcomes(own), n_boot=300, cluster=None)
    for other in (same, legacy):
        assert np.allclose(base["ci_low"], other["ci_low"], equal_nan=True)
        assert np.allclose(base["ci_high"], other["ci_high"], equal_nan=True)


def _clustered(seed, icc=0.6):
    design = Design(n_clusters=40, per_cluster=8, icc=icc)
    return pairwise_benchmark(np.random.default_rng(seed), design, PairwiseParams())


def test_cluster_interval_wider_than_item_interval_on_clustered_data():
    out = pairwise.item_outcomes(_clustered(3).judgments)
    width = {}
    for name, cl in (("cluster", "cluster"), ("item", None)):
        r = pairwise.pairwise_rates(out, n_boot=400, across=None, cluster=cl)
        r = r.set_index("metric")
        width[name] = r.loc["ca", "ci_high"] - r.loc["ca", "ci_low"]
        assert r.loc["ca", "n_clusters"] == (40 if cl else 320)
    # design effect 1 + (m - 1) ICC_outcome: clearly above 1 with 8 items per cluster
    assert width["cluster"] > 1.3 * width["item"]


def test_pooled_rows_resample_within_each_split(judgments):
    # split s1: every item right in both orders, s2: every item wrong. The mean of splits is
    # the contrast of per-split rates with residuals within each split (the earlier
    # bootstrap kept 6 s1 and 4 s2 items in every replicate): no within-split variation, no
    # width. The pooled row is one ratio over the 5 sources: the splits' difference counts.
    s1 = judgments([(f"a{i}", "pos", "pos") for i in range(6)], split="s1")
    s2 = judgments([(f"b{i}", "neg", "neg") for i in range(4)], split="s2")
    table = pd.concat([s1, s2], ignore_index=True)
    table = _with_clusters(table, {i: i[0] + str(int(i[1:]) // 2) for i in table["item_id"]})
    rates = pairwise.pairwise_rates(pairwise.item_outcomes(table), n_boot=200)
    mean = pairwise.rates_for(rates, metric="ca", aggregation="mean_of_splits").iloc[0]
    assert mean["ci_low"] == pytest.approx(0.5) == pytest.approx(mean["ci_high"])
    pooled = pairwise.rates_for(rates, metric="ca", aggregation="pooled").iloc[0]
    assert pooled["value"] == pytest.approx(0.6)
    assert pooled["ci_low"] < 0.3 and pooled["ci_high"] > 0.9
    for row in (mean, pooled):
        assert row["n_clusters"] == 5  # 3 + 2 sources


def test_position_test_rejects_planted_bias_not_its_absence():
    design = Design(n_clusters=60, per_cluster=5, icc=0.3)
    tie = dict(tie_rate=(0.15,), item_sd=0.3)
    biased = pairwise_benchmark(
        np.random.default_rng(5), design, PairwiseParams(delta=(0.8,), **tie)
    )
    fair = pairwise_benchmark(np.random.default_rng(5), design, PairwiseParams(**tie))
    pref = {}
    for name, sim in (("biased", biased), ("fair", fair)):
        rates = pairwise.pairwise_rates(pairwise.item_outcomes(sim.judgments), across=None)
        pref[name] = pairwise.position_preference(rates).iloc[0]
    biased = pref["biased"]
    assert biased["p_value"] < 0.001 and biased["decisive_low"] > 0.5  # p inverts the CI
    assert pref["fair"]["p_value"] > 0.05
    # with 15 % ties the spec rate of a fair judge is ~0.425, the decisive one ~0.5
    fair = pref["fair"]
    assert fair["pos_a_rate"] < 0.46 < fair["pos_a_rate_decisive"]
    assert fair["ci_low"] <= fair["pos_a_rate"] <= fair["ci_high"]


def test_compare_judges_missing_as_wrong_and_legacy_test(judgments):
    # J1 judges a-d (CA 1,1,1,0); J2 judges a-c (1,0,0) and d only in order 0 (incomplete).
    j1 = judgments([("a", "pos", "pos"), ("b", "pos", "pos"), ("c", "pos", "pos")]
                   + [("d", "neg", "neg")], judge="J1")  # fmt: skip
    j2 = judgments([("a", "pos", "pos"), ("b", "pos", "neg"), ("c", "neg", "neg")]
                   + [("d", "pos", "pos")], judge="J2", drop=[("d", 1)])  # fmt: skip
    out = pairwise.item_outcomes(pd.concat([j1, j2], ignore_index=True))
    excl = pairwise.compare_judges(out, across=None).iloc[0]
    wrong = pairwise.compare_judges(out, across=None, missing="wrong").iloc[0]
    assert (excl["n_common"], excl["diff"]) == (3, pytest.approx(2 / 3))
    assert (excl["missing_1"], excl["missing_2"]) == (0, 1)
    # d kept, J2's missing verdict wrong: CA 3/4 vs 1/4
    assert (wrong["n_common"], wrong["diff"]) == (4, pytest.approx(0.5))
    assert wrong["missing"] == "wrong" and excl["missing"] == "exclude"
    legacy = pairwise.compare_judges(out, across=None, cluster=None, test="mcnemar").iloc[0]
    assert legacy["p_value"] == pytest.approx(0.5) == legacy["p_mcnemar"]  # 2 vs 0 discordant


def test_compare_judges_clusters_keep_pairs_together():
    design = Design(n_clusters=30, per_cluster=8, icc=0.6)
    params = PairwiseParams(judges=("J1", "J2"), accuracy=(1.0, 1.0), delta=(0.0, 0.0),
                            tie_rate=(0.0, 0.0), invalid_rate=(0.0, 0.0),
                            invalid_if_wrong=(None, None), judge_corr=0.0)  # fmt: skip
    out = pairwise.item_outcomes(
        pairwise_benchmark(np.random.default_rng(2), design, params).judgments
    )
    new = pairwise.compare_judges(out, across=None, n_boot=400).iloc[0]
    old = pairwise.compare_judges(out, across=None, n_boot=400, cluster=None).iloc[0]
    assert (new["n_clusters"], old["n_clusters"]) == (30, 240)
    assert new["ci_high"] - new["ci_low"] > 1.2 * (old["ci_high"] - old["ci_low"])
