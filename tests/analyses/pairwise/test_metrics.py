from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from judgelab.analyses.pairwise import metrics
from judgelab.core import schema

NAN = float("nan")


def judgments(spec, *, judge="J", split="s", benchmark="b", sample=0, gold=True, drop=()):
    """Build a judgments table from (item, chosen in order 0, chosen in order 1) triples.

    `chosen` is pos/neg/tie or None (invalid). `drop` lists (item, order) rows to leave out.
    """
    rows = []
    for item, *pair in spec:
        for order, chosen in enumerate(pair):
            if (item, order) in drop:
                continue
            rows.append(
                {
                    "benchmark": benchmark,
                    "split": split,
                    "item_id": item,
                    "judge": judge,
                    "order": order,
                    "sample": sample,
                    "valid": chosen is not None,
                    "chosen": chosen,
                    "correct": (chosen == "pos") if gold else None,
                }
            )
    return schema.new_judgments(rows)


def rates_of(table, *, policy="repo", aggregation="split", **kw):
    out = metrics.item_outcomes(table, invalid_policy=policy)
    r = metrics.pairwise_rates(out, n_boot=kw.pop("n_boot", 200), **kw)
    return r[r["aggregation"] == aggregation].set_index("metric")


# The hand-computed example (gold = pos for every item).
#   item  order0  order1   category          c0 c1  A-picks  decisive
#   i1    pos     pos      consistent         1  1   1 (o0)   2
#   i2    pos     neg      biased_first       1  0   2        2
#   i3    neg     pos      biased_second      0  1   0        2
#   i4    neg     neg      consistent         0  0   1 (o1)   2
#   i5    tie     pos      inconsistent_tie   0  1   0        1
#   i6    inv     inv      invalid            0  0   0        0
SIX = [
    ("i1", "pos", "pos"),
    ("i2", "pos", "neg"),
    ("i3", "neg", "pos"),
    ("i4", "neg", "neg"),
    ("i5", "tie", "pos"),
    ("i6", None, None),
]


def test_item_outcomes_hand_example_every_column():
    out = metrics.item_outcomes(judgments(SIX)).set_index("item_id")
    assert list(out.index) == ["i1", "i2", "i3", "i4", "i5", "i6"]
    assert out["complete"].tolist() == [True] * 6
    assert out["chosen_0"].tolist() == ["pos", "pos", "neg", "neg", "tie", "invalid"]
    assert out["chosen_1"].tolist() == ["pos", "neg", "pos", "neg", "pos", "invalid"]
    assert out["has_gold"].tolist() == [True] * 6
    assert out["correct_0"].tolist() == [True, True, False, False, False, False]
    assert out["correct_1"].tolist() == [True, False, True, False, True, False]
    # repo: i1, i4 agree; i6 is (inv, inv) -> consistent
    assert out["consistent"].tolist() == [True, False, False, True, False, True]
    assert out["consistently_correct"].tolist() == [True, False, False, False, False, False]
    assert out["optimistically_correct"].tolist() == [True, True, True, False, True, False]
    assert out["both_invalid"].tolist() == [False] * 5 + [True]
    assert out["picks_a"].tolist() == [1, 2, 0, 1, 0, 0]
    assert out["decisive"].tolist() == [2, 2, 2, 2, 1, 0]
    assert out["category"].tolist() == [
        "consistent",
        "biased_first",
        "biased_second",
        "consistent",
        "inconsistent_tie",
        "invalid",
    ]
    strict = metrics.item_outcomes(judgments(SIX), invalid_policy="strict")
    assert strict["consistent"].tolist() == [True, False, False, True, False, False]


def test_pairwise_rates_hand_example_every_metric():
    r = rates_of(judgments(SIX))
    expected = {
        "a1": (2, 6),  # i1, i2
        "a2": (3, 6),  # i1, i3, i5
        "ca": (1, 6),  # i1
        "oa": (4, 6),  # i1, i2, i3, i5 = A1 + A2 - CA = 2 + 3 - 1
        "cons": (3, 6),  # i1, i4, i6 (repo)
        "run_gap": (1, 6),  # (3 - 2) / 6
        "pos_a_rate": (4, 9),  # A-picks 1+2+0+1+0+0 over decisive 2+2+2+2+1+0
        "share_consistent": (2, 6),  # i1, i4
        "share_biased_first": (1, 6),  # i2
        "share_biased_second": (1, 6),  # i3
        "share_inconsistent_tie": (1, 6),  # i5
        "share_invalid": (1, 6),  # i6
        "both_invalid": (1, 6),  # i6
        "invalid_0": (1, 6),  # i6
        "invalid_1": (1, 6),  # i6
    }
    assert set(r.index) == set(expected) == set(metrics.METRICS)
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
    assert rates_of(judgments(SIX), policy="strict").loc["cons", "value"] == pytest.approx(2 / 6)


def test_position_preference_hand_example():
    out = metrics.item_outcomes(judgments(SIX))
    pref = metrics.position_preference(metrics.pairwise_rates(out, n_boot=100))
    row = pref[pref["aggregation"] == "split"].iloc[0]
    assert row["pos_a_rate"] == pytest.approx(4 / 9)
    assert row["n_verdicts"] == 9
    assert row["run_gap"] == pytest.approx(1 / 6)
    # one item A-both-times (i2) vs one B-both-times (i3): sign test p = 1
    assert (row["n_biased_first"], row["n_biased_second"]) == (1, 1)
    assert row["p_value"] == pytest.approx(1.0)


def test_consistency_categories_sum_to_one_in_order():
    out = metrics.item_outcomes(judgments(SIX))
    cats = metrics.consistency_categories(metrics.pairwise_rates(out, n_boot=50))
    split = cats[cats["aggregation"] == "split"]
    assert split["category"].astype(str).tolist() == list(metrics.CATEGORIES)
    # 2/6 + 1/6 + 1/6 + 1/6 + 1/6
    assert split["value"].tolist() == pytest.approx([2 / 6, 1 / 6, 1 / 6, 1 / 6, 1 / 6])
    assert split["value"].sum() == pytest.approx(1.0)


def test_missing_order_is_counted_not_consistent():
    spec = [*SIX, ("i7", "pos", "pos")]
    table = judgments(spec, drop={("i7", 1)})
    out = metrics.item_outcomes(table).set_index("item_id")
    assert not out.loc["i7", "complete"]
    assert out.loc["i7", "category"] == "incomplete"
    assert pd.isna(out.loc["i7", "consistent"])
    r = rates_of(table)
    # same rates as the six complete items; the seventh is reported
    assert r.loc["cons", "value"] == pytest.approx(3 / 6)
    assert r.loc["ca", "value"] == pytest.approx(1 / 6)
    assert (r["n_incomplete"] == 1).all() and (r["n_items"] == 6).all()


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
def test_degenerate_judges(name, pair, expected):
    r = rates_of(judgments([(f"i{i}", *pair) for i in range(20)], judge=name))
    got = tuple(r.loc[m, "value"] for m in ("a1", "a2", "ca", "oa", "cons", "pos_a_rate"))
    assert got == pytest.approx(expected)
    # a degenerate judge has a degenerate bootstrap interval
    assert r.loc["ca", "ci_low"] == r.loc["ca", "ci_high"] == expected[2]


def test_always_invalid_under_both_policies():
    table = judgments([(f"i{i}", None, None) for i in range(10)])
    repo, strict = rates_of(table, policy="repo"), rates_of(table, policy="strict")
    assert repo.loc["cons", "value"] == 1.0 and strict.loc["cons", "value"] == 0.0
    for r in (repo, strict):
        assert r.loc["ca", "value"] == 0.0 and r.loc["oa", "value"] == 0.0
        assert r.loc["share_invalid", "value"] == 1.0 and r.loc["both_invalid", "value"] == 1.0
        assert r.loc["invalid_0", "value"] == 1.0 and r.loc["invalid_1", "value"] == 1.0
        # no valid non-tie verdict: the position preference is undefined
        assert np.isnan(r.loc["pos_a_rate", "value"]) and r.loc["pos_a_rate", "n"] == 0


def random_table(rng, n, choices, judge="J", split="s"):
    picks = rng.choice(len(choices), size=(n, 2))
    spec = [(f"{split}{i}", choices[a], choices[b]) for i, (a, b) in enumerate(picks)]
    return judgments(spec, judge=judge, split=split)


@pytest.mark.parametrize("trial", range(5))
def test_identities_on_random_tables(rng, trial):
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
    out = metrics.item_outcomes(table)
    both_neg = ((out["chosen_0"] == "neg") & (out["chosen_1"] == "neg")).mean()
    v = rates_of(table)["value"]
    assert v["cons"] == pytest.approx(v["ca"] + both_neg + v["both_invalid"])


def test_no_gold_gives_nan_accuracies_but_consistency_works():
    r = rates_of(judgments(SIX, gold=False))
    for m in ("a1", "a2", "ca", "oa", "run_gap"):
        assert np.isnan(r.loc[m, "value"]), m
        assert r.loc[m, "n"] == 0
    assert (r["n_gold"] == 0).all()
    assert r.loc["cons", "value"] == pytest.approx(3 / 6)
    assert r.loc["pos_a_rate", "value"] == pytest.approx(4 / 9)


def test_pooled_vs_mean_of_splits_hand_example():
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
    board = metrics.leaderboard(metrics.pairwise_rates(metrics.item_outcomes(table), n_boot=50))
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


def test_leaderboard_sorted_and_formatted():
    good = judgments([(f"i{i}", "pos", "pos") for i in range(4)], judge="good")
    bad = judgments([(f"i{i}", "pos", "neg") for i in range(4)], judge="bad")
    rates = metrics.pairwise_rates(
        metrics.item_outcomes(pd.concat([bad, good], ignore_index=True)), n_boot=50
    )
    board = metrics.leaderboard(rates)
    assert board["judge"].tolist() == ["good", "bad"]
    text = metrics.format_leaderboard(board)
    assert text.loc[0, "pooled"] == "100.0 [100.0, 100.0]"
    assert text.loc[1, "s"] == "0.0"
    assert text["n"].tolist() == [4, 4]


def test_bootstrap_reproducible_and_independent_of_other_groups(rng):
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


def test_bootstrap_interval_shrinks_with_items(rng):
    small = rates_of(random_table(rng, 30, ["pos", "neg"]), n_boot=500).loc["ca"]
    large = rates_of(random_table(rng, 3000, ["pos", "neg"]), n_boot=500).loc["ca"]
    # width ~ 1/sqrt(n): 100x the items -> about a tenth of the width
    ratio = (large["ci_high"] - large["ci_low"]) / (small["ci_high"] - small["ci_low"])
    assert 0.05 < ratio < 0.2


def test_samples_are_kept_apart_and_run_stability():
    # CONS per sample: 2/2, 1/2, 0/2 -> mean 0.5, sd sqrt((0.25 + 0 + 0.25) / 2) = 0.5
    runs = [
        judgments([("a", "pos", "pos"), ("b", "neg", "neg")], sample=0),
        judgments([("a", "pos", "pos"), ("b", "pos", "neg")], sample=1),
        judgments([("a", "neg", "pos"), ("b", "pos", "neg")], sample=2),
    ]
    out = metrics.item_outcomes(pd.concat(runs, ignore_index=True))
    assert len(out) == 6  # 2 items x 3 samples, not 2 items
    rates = metrics.pairwise_rates(out, n_boot=50)
    cons = metrics.rates_for(rates, metric="cons", aggregation="split")
    assert cons["sample"].tolist() == [0, 1, 2]
    assert cons["value"].tolist() == pytest.approx([1.0, 0.5, 0.0])
    stab = metrics.run_stability(rates, metric="cons")
    row = stab[stab["aggregation"] == "split"].iloc[0]
    assert row["n_samples"] == 3
    assert (row["mean"], row["sd"], row["min"], row["max"], row["range"]) == pytest.approx(
        (0.5, 0.5, 0.0, 1.0, 1.0)
    )


def test_compare_judges_paired_on_common_items():
    # CA per item: J1 1,1,1,0 ; J2 1,0,0,0 ; item e judged by J1 only -> excluded
    j1 = judgments(
        [("a", "pos", "pos"), ("b", "pos", "pos"), ("c", "pos", "pos"), ("d", "neg", "neg")]
        + [("e", "pos", "pos")],
        judge="J1",
    )
    j2 = judgments(
        [("a", "pos", "pos"), ("b", "pos", "neg"), ("c", "neg", "neg"), ("d", "neg", "pos")],
        judge="J2",
    )
    out = metrics.item_outcomes(pd.concat([j1, j2], ignore_index=True))
    cmp = metrics.compare_judges(out, metric="ca", n_boot=1000)
    row = cmp[cmp["split"] == "s"].iloc[0]
    assert (row["judge_1"], row["judge_2"], row["n_common"]) == ("J1", "J2", 4)
    assert (row["value_1"], row["value_2"], row["diff"]) == pytest.approx((0.75, 0.25, 0.5))
    # McNemar: only J1 right on b, c; only J2 right on none -> p = 2 · 0.5² = 0.5
    assert (row["only_1"], row["only_2"]) == (2, 0)
    assert row["p_value"] == pytest.approx(0.5)
    # per-item differences (0, 1, 1, 0): every resample mean lies in [0, 1]
    assert 0.0 <= row["ci_low"] <= 0.5 <= row["ci_high"] <= 1.0
    pooled = cmp[cmp["split"] == "pooled"].iloc[0]
    assert pooled["diff"] == pytest.approx(0.5) and pooled["n_common"] == 4
    again = metrics.compare_judges(out, metric="ca", n_boot=1000)
    assert cmp.equals(again)


def test_coverage_counts_complete_incomplete_missing():
    items = schema.new_items(
        [
            {"benchmark": "b", "split": "s", "item_id": i, "task": "pairwise"}
            for i in ("i1", "i2", "i3", "i4")
        ]
    )
    table = judgments(
        [("i1", "pos", "pos"), ("i2", "pos", "neg"), ("zz", "pos", "pos")], drop={("i2", 1)}
    )
    cov = metrics.coverage(metrics.item_outcomes(table), items).iloc[0]
    # i1 complete, i2 one order, i3 and i4 never judged, zz not in the items table
    assert (cov["n_items_table"], cov["n_complete"], cov["n_incomplete"]) == (4, 1, 1)
    assert (cov["n_missing"], cov["n_unknown"]) == (2, 1)


def test_select_judges():
    table = pd.concat([judgments(SIX, judge="A"), judgments(SIX, judge="B")], ignore_index=True)
    assert len(metrics.select_judges(table, [])) == 24
    assert set(metrics.select_judges(table, ["B"])["judge"]) == {"B"}
    with pytest.raises(ValueError, match="unknown judge"):
        metrics.select_judges(table, ["C"])


def test_errors_name_the_problem():
    table = judgments(SIX)
    with pytest.raises(KeyError, match="chosen"):
        metrics.item_outcomes(table.drop(columns=["chosen"]))
    with pytest.raises(ValueError, match="invalid_policy"):
        metrics.item_outcomes(table, invalid_policy="lenient")
    twice = pd.concat([table, table.assign(condition="ctx")], ignore_index=True)
    with pytest.raises(ValueError, match="condition"):
        metrics.item_outcomes(twice)
    # with condition as a group column the two runs are kept apart
    out = metrics.item_outcomes(twice, groups=["judge", "condition", "benchmark", "split"])
    assert len(out) == 12
    with pytest.raises(KeyError, match="item_outcomes"):
        metrics.pairwise_rates(table)
    with pytest.raises(ValueError, match="unknown metric"):
        metrics.rates_for(rates_of(table).reset_index(), metric="accuracy")
