"""Shared tables of the faithfulness tests: graded FaithEval answers and FaithBench items."""

import json

import pandas as pd
import pytest


@pytest.fixture()
def graded():
    """Graded answers of one model: dataset X 3 of 4 strict (4 of 4 non-strict), Y 1 of 1."""
    # dataset X: 3 of 4 correct (strict), dataset Y: 1 of 1; non-strict adds one in X
    rows = [("X", True, True)] * 3 + [("X", False, True)] + [("Y", True, True)]
    return pd.DataFrame(
        [
            {
                "label": "m",
                "task": "unanswerable",
                "context_kind": "modified",
                "source_dataset": d,
                "strict": s,
                "nonstrict": n,
            }
            for d, s, n in rows
        ]
    )


@pytest.fixture()
def fb_items():
    """FaithBench-shaped items: three sources, labels and severity annotations."""
    # source S1: items 1, 2 Consistent, 3 Hallucinated (Unwanted); S2: 4 Consistent, 5 Benign
    # (Consistent gold), 6 Hallucinated (Questionable); S3: 7, 8 Consistent only
    spec = [
        ("1", "S1", "Consistent", []),
        ("2", "S1", "Consistent", []),
        ("3", "S1", "Hallucinated", ["Unwanted"]),
        ("4", "S2", "Consistent", []),
        ("5", "S2", "Consistent", ["Benign"]),
        ("6", "S2", "Hallucinated", ["Questionable"]),
        ("7", "S3", "Consistent", []),
        ("8", "S3", "Consistent", []),
    ]
    return pd.DataFrame(
        [
            {
                "benchmark": "fb",
                "split": "all",
                "item_id": iid,
                "task": "pointwise",
                "context": src,
                "response": f"summary {iid}",
                "gold": gold,
                "meta": json.dumps({"annotations": [{"label": labels}] if labels else []}),
            }
            for iid, src, gold, labels in spec
        ]
    )
