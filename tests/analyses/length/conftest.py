"""Fixtures of the length tests: tiny pairwise items and judgments with known lengths."""

from collections.abc import Callable, Sequence

import pandas as pd
import pytest

from judgelab.analyses import length
from judgelab.core import lengths, schema

#: (item_id, len_pos, len_neg, chosen in order 0, chosen in order 1).
Spec = tuple[str, int, int, str | None, str | None]


def words(n: int) -> str:
    return " ".join(["w"] * n)


def _make_pairwise(specs: Sequence[Spec]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Return (items with word lengths, judgments of judge "j" in both orders); gold = pos."""
    items = schema.new_items(
        [
            {
                "benchmark": "b",
                "split": "s",
                "item_id": i,
                "task": "pairwise",
                "context": words(lp + ln),
                "response_pos": words(lp),
                "response_neg": words(ln),
                "gold": "pos",
                "meta": {"model_pos": "base", "model_neg": "mod"},
            }
            for i, lp, ln, _, _ in specs
        ]
    )
    rows = []
    for i, _, _, c0, c1 in specs:
        for order, c in ((0, c0), (1, c1)):
            rows.append(
                {
                    "benchmark": "b",
                    "split": "s",
                    "item_id": i,
                    "judge": "j",
                    "order": order,
                    "verdict": c,
                    "valid": c is not None,
                    "chosen": c,
                    "correct": None if c is None else c == "pos",
                }
            )
    return lengths.add_lengths(items), schema.new_judgments(rows)


@pytest.fixture()
def make_pairwise() -> Callable[[Sequence[Spec]], tuple[pd.DataFrame, pd.DataFrame]]:
    """Build pairwise items and judgments from (item_id, len_pos, len_neg, c0, c1) specs."""
    return _make_pairwise


#: Four items: pos longer (picked twice), neg longer (picked once), equal, tie + invalid.
HAND_SPECS = [
    ("1", 10, 5, "pos", "pos"),  # pos longer; picks longer twice
    ("2", 5, 10, "neg", "pos"),  # neg longer; picks longer once of two
    ("3", 7, 7, "pos", "neg"),  # equal lengths: left out
    ("4", 10, 5, "tie", None),  # tie and invalid: left out
]


@pytest.fixture()
def hand_verdicts(make_pairwise) -> pd.DataFrame:
    """`pairwise_verdicts` of `HAND_SPECS`."""
    return length.pairwise_verdicts(*make_pairwise(HAND_SPECS))
