"""Item outcomes, coverage and judge selection (`analyses.pairwise.outcomes`)."""

from __future__ import annotations

import pandas as pd
import pytest

from judgelab.analyses import pairwise
from judgelab.core import schema


def test_item_outcomes_hand_example_every_column(judgments, six):
    out = pairwise.item_outcomes(judgments(six)).set_index("item_id")
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
    strict = pairwise.item_outcomes(judgments(six), invalid_policy="strict")
    assert strict["consistent"].tolist() == [True, False, False, True, False, False]


def test_missing_order_is_counted_not_consistent(judgments, rates_of, six):
    spec = [*six, ("i7", "pos", "pos")]
    table = judgments(spec, drop={("i7", 1)})
    out = pairwise.item_outcomes(table).set_index("item_id")
    assert not out.loc["i7", "complete"]
    assert out.loc["i7", "category"] == "incomplete"
    assert pd.isna(out.loc["i7", "consistent"])
    r = rates_of(table)
    # same rates as the six complete items; the seventh is reported
    assert r.loc["cons", "value"] == pytest.approx(3 / 6)
    assert r.loc["ca", "value"] == pytest.approx(1 / 6)
    assert (r["n_incomplete"] == 1).all() and (r["n_items"] == 6).all()


def test_coverage_counts_complete_incomplete_missing(judgments):
    items = schema.new_items(
        [
            {"benchmark": "b", "split": "s", "item_id": i, "task": "pairwise"}
            for i in ("i1", "i2", "i3", "i4")
        ]
    )
    table = judgments(
        [("i1", "pos", "pos"), ("i2", "pos", "neg"), ("zz", "pos", "pos")], drop={("i2", 1)}
    )
    cov = pairwise.coverage(pairwise.item_outcomes(table), items).iloc[0]
    # i1 complete, i2 one order, i3 and i4 never judged, zz not in the items table
    assert (cov["n_items_table"], cov["n_complete"], cov["n_incomplete"]) == (4, 1, 1)
    assert (cov["n_missing"], cov["n_unknown"]) == (2, 1)


def test_select_judges(judgments, six):
    table = pd.concat([judgments(six, judge="A"), judgments(six, judge="B")], ignore_index=True)
    assert len(pairwise.select_judges(table, [])) == 24
    assert set(pairwise.select_judges(table, ["B"])["judge"]) == {"B"}
    with pytest.raises(ValueError, match="unknown judge"):
        pairwise.select_judges(table, ["C"])


def test_errors_name_the_problem(judgments, rates_of, six):
    table = judgments(six)
    with pytest.raises(KeyError, match="chosen"):
        pairwise.item_outcomes(table.drop(columns=["chosen"]))
    with pytest.raises(ValueError, match="invalid_policy"):
        pairwise.item_outcomes(table, invalid_policy="lenient")
    twice = pd.concat([table, table.assign(condition="ctx")], ignore_index=True)
    with pytest.raises(ValueError, match="condition"):
        pairwise.item_outcomes(twice)
    # with condition as a group column the two runs are kept apart
    out = pairwise.item_outcomes(twice, groups=["judge", "condition", "benchmark", "split"])
    assert len(out) == 12
    with pytest.raises(KeyError, match="item_outcomes"):
        pairwise.pairwise_rates(table)
    with pytest.raises(ValueError, match="unknown metric"):
        pairwise.rates_for(rates_of(table).reset_index(), metric="accuracy")
