"""Leaderboard and judge-against-judge comparison (`analyses.pairwise.compare`)."""

from __future__ import annotations

import pandas as pd
import pytest

from judgelab.analyses import pairwise


def test_leaderboard_sorted_and_formatted(judgments):
    good = judgments([(f"i{i}", "pos", "pos") for i in range(4)], judge="good")
    bad = judgments([(f"i{i}", "pos", "neg") for i in range(4)], judge="bad")
    rates = pairwise.pairwise_rates(
        pairwise.item_outcomes(pd.concat([bad, good], ignore_index=True)), n_boot=50
    )
    board = pairwise.leaderboard(rates)
    assert board["judge"].tolist() == ["good", "bad"]
    text = pairwise.format_leaderboard(board)
    # every item right: the Wilson interval with one trial per cluster (4 items, 4 units)
    assert text.loc[0, "pooled"] == "100.0 [51.0, 100.0]"
    assert text.loc[1, "s"] == "0.0"
    assert text["n"].tolist() == [4, 4]


def test_compare_judges_paired_on_common_items(judgments):
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
    out = pairwise.item_outcomes(pd.concat([j1, j2], ignore_index=True))
    cmp = pairwise.compare_judges(out, metric="ca", n_boot=1000)
    row = cmp[cmp["split"] == "s"].iloc[0]
    assert (row["judge_1"], row["judge_2"], row["n_common"]) == ("J1", "J2", 4)
    assert (row["value_1"], row["value_2"], row["diff"]) == pytest.approx((0.75, 0.25, 0.5))
    # McNemar: only J1 right on b, c; only J2 right on none -> p = 2 · 0.5² = 0.5
    assert (row["only_1"], row["only_2"]) == (2, 0)
    assert row["p_mcnemar"] == pytest.approx(0.5)
    # J2 misses item e, which J1 judged: counted, and no J1 item is missing for J2's items
    assert (row["missing_1"], row["missing_2"]) == (0, 1)
    assert row["test"].startswith("wild cluster bootstrap") and row["test"] == row["method"]
    assert row["p_value"] == row["p_bootstrap"]
    assert 0.0 < row["p_value"] <= 1.0 and row["n_clusters"] == 4
    # per-item differences (0, 1, 1, 0): the interval stays in [-1, 1] and inverts the test
    assert -1.0 <= row["ci_low"] <= 0.5 <= row["ci_high"] <= 1.0
    assert (row["ci_low"] > 0) == (row["p_value"] < 0.05)
    assert row["n_eff_clusters"] == pytest.approx(4.0) and row["few_clusters"]
    pooled = cmp[cmp["split"] == "pooled"].iloc[0]
    assert pooled["diff"] == pytest.approx(0.5) and pooled["n_common"] == 4
    again = pairwise.compare_judges(out, metric="ca", n_boot=1000)
    assert cmp.equals(again)


def test_i34_3_compare_reason_says_why_with_one_judge(judgments):
    # 01 on one judge (the FastChat MT-Bench run): an empty judge-against-judge table
    one = pairwise.item_outcomes(judgments([("a", "pos", "pos"), ("b", "neg", "pos")]))
    assert pairwise.compare_judges(one, n_boot=20).empty
    assert "only one judge (J)" in pairwise.compare_reason(one)
    other = judgments([("c", "pos", "pos")], judge="K")  # a second judge, no common item
    apart = pairwise.item_outcomes(pd.concat([judgments([("a", "pos", "pos")]), other]))
    assert "no item judged in both orders by two judges" in pairwise.compare_reason(apart)
    both = judgments([("a", "pos", "pos")], judge="K")
    two = pairwise.item_outcomes(pd.concat([judgments([("a", "pos", "pos")]), both]))
    assert pairwise.compare_reason(two) is None
