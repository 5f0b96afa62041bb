"""The correctness table (`analyses.correctness.table`)."""

import json

import pandas as pd
import pytest

from judgelab.analyses import correctness


def test_correctness_table_joins_and_checks():
    items = pd.DataFrame(
        {
            "benchmark": "b", "split": "s", "item_id": ["0", "1", "2"],
            "question": ["q", "q", "r"], "gold": ["Correct", "Incorrect", None],
            "meta": [json.dumps({"candidate_model": m}) for m in ("x", "y", "x")],
        }
    )  # fmt: skip
    j = pd.DataFrame(
        {
            "benchmark": "b", "split": "s", "item_id": ["0", "0", "0", "1", "2"], "judge": "J",
            "condition": "", "sample": [0, 1, 2, 0, 0], "valid": [True, True, False, True, True],
            "verdict": ["Correct", "Incorrect", None, "Correct", "Correct"],
        }
    )  # fmt: skip
    t = correctness.correctness_table(items, j)
    assert len(t) == 2  # item 2 has no human label
    # item 0: one Correct vote, one Incorrect vote, one invalid -> tie -> invalid (None)
    assert t.set_index("item_id").loc["0", "verdict"] is None
    assert t.set_index("item_id").loc["1", "candidate_model"] == "y"
    with pytest.raises(KeyError, match="gold"):
        correctness.correctness_table(items.drop(columns="gold"), j)
    with pytest.raises(ValueError, match="not one of"):
        correctness.correctness_table(items, j.assign(verdict="A"))
