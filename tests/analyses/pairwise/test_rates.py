"""Pairwise rates and their intervals (`analyses.pairwise.rates`)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from judgelab.analyses import pairwise


def test_pairwise_rates_hand_example_every_metric(judgments, rates_of, six):
    r = rates_of(judgments(six))
    expected = {
        "a1": (2, 6),  # i1, i2
        "a2": (3, 6),  # i1, i3, i5
        "ca": (1, 6),  # i1
        "oa": (4, 6),  # i1, i2, i3, i5 = A1 + A2 - CA = 2 + 3 - 1
        "cons": (3, 6),  # i1, i4, i6 (repo)
        "run_gap": (1, 6),  # (3 - 2) / 6
        # A-picks 1+2+0+1+0+0 over valid verdicts 2+2+2+2+2+0 (spec 000 §4.7, ties count)
        "pos_a_rate": (4, 10),
        "pos_a_rate_decisive": (4, 9),  # ... over valid non-tie verdicts 2+2+2+2+1+0
        "flip_rate": (3, 5),  # i2, i3, i5 change with the order, of i1-i5 (two valid verdicts)
        "share_consistent": (2, 6),  # i1, i4
        "share_biased_first": (1, 6),  # i2
        "share_biased_second": (1, 6),  # i3
        "share_inconsistent_tie": (1, 6),  # i5
        "share_invalid": (1, 6),  # i6
        "both_invalid": (1, 6),  # i6
        "invalid_0": (1, 6),  # i6
        "invalid_1": (1, 6),  # i6
    }
    assert set(r.index) == set(expected) == set(pairwise.METRICS)
    for m, (k, n) in expected.items():
        assert r.loc[m, "value"] == pytest.approx(k / n), m
        assert (r.loc[m, "k"], r.loc[m, "n"]) == (k, n), m
    assert (r["n_items"] == 6).all() and (r["n_gold"] == 6).all()
    assert (r["n_incomplete"] == 0).all()
    # Wilson for CA = 1/6, z² = 3.841459: centre (1/6 + z²/12) / (1 + z²/6) = 0.296782,
    # half z·sqrt((1/6)(5/6)/6 + z²/144) / (1 + z²/6) = 0.266721 -> [0.030053, 0.563503]
    assert r.loc["ca", "wilson_low"] == pytest.approx(0.030053, abs=1e-5)
    assert r.loc["ca", "wilson_high"] == pytest.approx(0.563502, abs=1e-5)
    assert np.isnan(r.loc["run_gap", "wilson_low"])
    for m in expected:
        assert r.loc[m, "ci_low"] <= r.loc[m, "value"] <= r.loc[m, "ci_high"], m
    # strict: the (inv, inv) item is no longer consistent -> 2/6
    assert rates_of(judgments(six), policy="strict").loc["cons", "value"] == pytest.approx(2 / 6)


@pytest.mark.parametrize(
    ("name", "pair", "expected"),
    [
        # (A1, A2, CA, OA, CONS, pos_a_rate)
        ("always-A", ("pos", "neg"), (1, 0, 0, 1, 0, 1)),
        ("always-B", ("neg", "pos"), (0, 1, 0, 1, 0, 0)),
        ("always-positive", ("pos", "pos"), (1, 1, 1, 1, 1, 0.5)),
        ("always-negative", ("neg", "neg"), (0, 0, 0, 0, 1, 0.5)),
    ],
)
def test_degenerate_judges(name, pair, expected, judgments, rates_of):
    r = rates_of(judgments([(f"i{i}", *pair) for i in range(20)], judge=name))
    got = tuple(r.loc[m, "value"] for m in ("a1", "a2", "ca", "oa", "cons", "pos_a_rate"))
    assert got == pytest.approx(expected)
    # every item at the same bound: no within-data variation for a cluster-robust test, so
    # the Wilson interval with one trial per cluster (20 items, 20 units), said in `method`
    ca = r.loc["ca"]
    assert ca["method"].startswith("Wilson") and ca["n_eff_clusters"] == pytest.approx(20)
    low, high = (0.0, 0.16112515805281938) if expected[2] == 0 else (0.8388748419471806, 1.0)
    assert (ca["ci_low"], ca["ci_high"]) == pytest.approx((low, high))


def test_always_invalid_under_both_policies(judgments, rates_of):
    table = judgments([(f"i{i}", None, None) for i in range(10)])
    repo, strict = rates_of(table, policy="repo"), rates_of(table, policy="strict")
    assert repo.loc["cons", "value"] == 1.0 and strict.loc["cons", "value"] == 0.0
    for r in (repo, strict):
        assert r.loc["ca", "value"] == 0.0 and r.loc["oa", "value"] == 0.0
        assert r.loc["share_invalid", "value"] == 1.0 and r.loc["both_invalid", "value"] == 1.0
        assert r.loc["invalid_0", "value"] == 1.0 and r.loc["invalid_1", "value"] == 1.0
        # no valid non-tie verdict: the position preference is undefined
        assert np.isnan(r.loc["pos_a_rate", "value"]) and r.loc["pos_a_rate", "n"] == 0


@pytest.mark.parametrize("trial", range(5))
def test_identities_on_random_tables(rng, trial, rates_of, random_table):
    # OA = A1 + A2 - CA holds with ties and invalid outputs too
    r = rates_of(random_table(rng, 60, ["pos", "neg", "tie", None]))
    v = r["value"]
    assert v["oa"] == pytest.approx(v["a1"] + v["a2"] - v["ca"])
    # CONS = CA + 1 - OA needs choices only (no ties, no invalids)
    r = rates_of(random_table(rng, 60, ["pos", "neg"]))
    v = r["value"]
    assert v["oa"] == pytest.approx(v["a1"] + v["a2"] - v["ca"])
    assert v["cons"] == pytest.approx(v["ca"] + 1 - v["oa"])
    # repo policy, invalids allowed: CONS = CA + P(both neg) + P(both invalid), no ties
    table = random_table(rng, 60, ["pos", "neg", None])
    out = pairwise.item_outcomes(table)
    both_neg = ((out["chosen_0"] == "neg") & (out["chosen_1"] == "neg")).mean()
    v = rates_of(table)["value"]
    assert v["cons"] == pytest.approx(v["ca"] + both_neg + v["both_invalid"])


def test_no_gold_gives_nan_accuracies_but_consistency_works(judgments, rates_of, six):
    r = rates_of(judgments(six, gold=False))
    for m in ("a1", "a2", "ca", "oa", "run_gap"):
        assert np.isnan(r.loc[m, "value"]), m
        assert r.loc[m, "n"] == 0
    assert (r["n_gold"] == 0).all()
    assert r.loc["cons", "value"] == pytest.approx(3 / 6)
    assert r.loc["pos_a_rate", "value"] == pytest.approx(4 / 10)
    assert r.loc["pos_a_rate_decisive", "value"] == pytest.approx(4 / 9)


def test_pooled_vs_mean_of_splits_hand_example(judgments, rates_of):
    # s1: CA 1 of 2; s2: CA 1 of 4
    s1 = judgments([("a", "pos", "pos"), ("b", "pos", "neg")], split="s1")
    s2 = judgments(
        [("c", "pos", "pos"), ("d", "neg", "neg"), ("e", "neg", "neg"), ("f", "neg", "neg")],
        split="s2",
    )
    table = pd.concat([s1, s2], ignore_index=True)
    pooled = rates_of(table, aggregation="pooled")
    mean = rates_of(table, aggregation="mean_of_splits")
    assert pooled.loc["ca", "value"] == pytest.approx(2 / 6)  # (1 + 1) / (2 + 4)
    assert mean.loc["ca", "value"] == pytest.approx(0.375)  # (1/2 + 1/4) / 2
    assert pooled.loc["ca", "split"] == "pooled" and mean.loc["ca", "split"] == "mean_of_splits"
    assert (pooled.loc["ca", "k"], pooled.loc["ca", "n"]) == (2, 6)
    assert np.isnan(mean.loc["ca", "k"]) and np.isnan(mean.loc["ca", "wilson_low"])
    # CONS: s1 1/2, s2 4/4 -> pooled 5/6, mean (0.5 + 1) / 2 = 0.75
    assert pooled.loc["cons", "value"] == pytest.approx(5 / 6)
    assert mean.loc["cons", "value"] == pytest.approx(0.75)
    board = pairwise.leaderboard(pairwise.pairwise_rates(pairwise.item_outcomes(table), n_boot=50))
    assert list(board.columns) == [
        "judge",
        "benchmark",
        "s1",
        "s2",
        "pooled",
        "mean_of_splits",
        "pooled_low",
        "pooled_high",
        "n",
    ]
    assert board.loc[0, ["s1", "s2", "pooled", "mean_of_splits", "n"]].tolist() == pytest.approx(
        [0.5, 0.25, 2 / 6, 0.375, 6]
    )


def test_bootstrap_reproducible_and_independent_of_other_groups(rng, rates_of, random_table):
    j1 = random_table(rng, 40, ["pos", "neg"], judge="J1")
    j2 = random_table(rng, 40, ["pos", "neg"], judge="J2")
    alone = rates_of(j1, seed=7, n_boot=300)
    again = rates_of(j1, seed=7, n_boot=300)
    both = rates_of(pd.concat([j2, j1], ignore_index=True), seed=7, n_boot=300)
    both = both[both["judge"] == "J1"]
    other = rates_of(j1, seed=8, n_boot=300)
    assert alone[["ci_low", "ci_high"]].equals(again[["ci_low", "ci_high"]])
    assert np.allclose(alone["ci_low"], both["ci_low"], equal_nan=True)
    assert not np.allclose(alone["ci_low"], other["ci_low"], equal_nan=True)


def test_bootstrap_interval_shrinks_with_items(rng, rates_of, random_table):
    small = rates_of(random_table(rng, 30, ["pos", "neg"]), n_boot=500).loc["ca"]
    large = rates_of(random_table(rng, 3000, ["pos", "neg"]), n_boot=500).loc["ca"]
    # width ~ 1/sqrt(n): 100x the items -> about a tenth of the width
    ratio = (large["ci_high"] - large["ci_low"]) / (small["ci_high"] - small["ci_low"])
    assert 0.05 < ratio < 0.2


def test_i34_5_single_order_rows_say_why():
    rows = [
        dict(judge="j", benchmark="b", split="s", item_id=f"i{i}", sample=0, order=0,
             valid=True, chosen="pos", correct=True)
        for i in range(6)
    ]  # fmt: skip
    rows += [{**rows[0], "judge": "k", "order": o} for o in (0, 1)]  # k: one complete item
    out = pairwise.item_outcomes(pd.DataFrame(rows))
    r = pairwise.pairwise_rates(out, n_boot=99, metrics=["a1", "cons"])
    j = r[(r["judge"] == "j") & (r["split"] == "s")].set_index("metric")
    assert j["value"].isna().all()
    assert j.loc["cons", "reason"] == (
        "no item judged in both presentation orders (6 judged in one order only): "
        "cons pairs the two orders of each item"
    )
    k = r[(r["judge"] == "k") & (r["split"] == "s")].set_index("metric")
    assert k.loc["a1", "value"] == 1.0 and k.loc["a1", "reason"] == ""


def test_i34_5_one_order_supports_accuracy_invalid_and_tie_shares():
    verdicts = ["pos"] * 5 + ["neg"] * 2 + ["tie", "invalid"] + ["pos"] * 3
    rows = [
        dict(judge="j", benchmark="b", split="s", item_id=f"i{i}", sample=0, order=0,
             valid=v != "invalid", chosen=None if v == "invalid" else v,
             correct=v == "pos", cluster=f"c{i % 5}")
        for i, v in enumerate(verdicts)
    ]  # fmt: skip
    rows += [{**rows[0], "item_id": "both", "order": o} for o in (0, 1)]  # one complete item
    single = pairwise.single_order_rates(pd.DataFrame(rows), n_boot=199).set_index("metric")
    assert (single["order"] == 0).all() and len(single) == 3  # order 1: nothing judged alone
    acc = single.loc["accuracy"]
    assert acc["value"] == pytest.approx(8 / 12) and acc["n"] == 12
    assert acc["ci_low"] < 8 / 12 < acc["ci_high"] and acc["n_clusters"] == 5
    assert single.loc["invalid", "value"] == pytest.approx(1 / 12)
    assert single.loc["ties", "value"] == pytest.approx(1 / 12)
    assert (single["reason"] == "").all()
    assert "position bias cannot be told apart from skill" in pairwise.NOT_IDENTIFIED
    # every item judged in both orders: nothing to add
    none = pairwise.single_order_rates(pd.DataFrame(rows[-2:]), n_boot=99)
    assert none.empty and "both presentation orders" in pairwise.single_order_reason(none)
    assert pairwise.single_order_reason(single) is None
