"""The rows both judge engines write: verdict → chosen/correct, diagnostics, empty tables."""

from __future__ import annotations

import pytest

from judgelab.core import schema
from judgelab.core.verdicts import Parsed
from judgelab.judges import rows
from judgelab.judges.templates import ItemView


@pytest.mark.parametrize(
    ("verdict", "order", "chosen"),
    [("A", 0, "pos"), ("B", 0, "neg"), ("A", 1, "neg"), ("B", 1, "pos"), ("tie", 1, "tie")],
)
def test_position_to_chosen_unswaps_the_order(verdict, order, chosen):
    assert rows.position_to_chosen(verdict, order) == chosen


def test_judge_row_rules():
    pair = ItemView({"task": "pairwise", "gold": "pos"})
    # order 1 shows pos second: "B" picks pos → correct
    out = rows.judge_row(None, pair, Parsed("B", True, 1), order=1, condition="", pairwise=True)
    assert out == {"verdict": "B", "valid": True, "chosen": "pos", "correct": True}
    # a verdict that is no position is invalid, and wrong against gold
    odd = rows.judge_row(None, pair, Parsed("C", True, 1), order=0, condition="", pairwise=True)
    assert (odd["valid"], odd["chosen"], odd["correct"]) == (False, None, False)
    # grading one response of a pair (candidate=) is not comparable to the pair's gold
    cand = rows.judge_row(
        None, pair, Parsed("Correct", True, 1), order=0, condition="candidate=pos", pairwise=False
    )
    assert cand["correct"] is None
    single = ItemView({"task": "qa", "gold": "Correct"})
    out = rows.judge_row(None, single, Parsed(None, False), order=0, condition="", pairwise=False)
    assert out == {"verdict": None, "valid": False, "chosen": None, "correct": False}


def test_detail_rows_and_empty_tables():
    key = dict(benchmark="b", split="s", item_id="1", condition="", order=0, sample=0)
    detail = rows.detail_row(key, request_key="k", status="pending", note="no cached response")
    assert list(detail) == rows.DETAIL_COLUMNS
    built = rows.built([], [detail])
    assert built.judgments.empty and list(built.judgments.columns) == [
        c.name for c in schema.JUDGMENTS.columns if c.required
    ]
    assert built.details["status"].tolist() == ["pending"]
