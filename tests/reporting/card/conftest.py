"""Toy tables of the report-card tests: one pairwise judge, one correctness judge."""

import json

import numpy as np
import pandas as pd
import pytest


@pytest.fixture
def pairwise_tables():
    """4 pairwise items judged in both orders by one judge (no peers, no context).

    chosen (order 0, order 1): item 1 pos,pos · item 2 pos,neg · item 3 pos,neg · item 4 pos,pos.
    pos is longer in items 1-2 (10 vs 5 words), neg is longer in items 3-4.
    """
    words = {1: (10, 5), 2: (10, 5), 3: (5, 10), 4: (5, 10)}
    items = pd.DataFrame(
        {
            "benchmark": "b",
            "split": "s",
            "item_id": [str(i) for i in words],
            "task": "pairwise",
            "question": [f"question {i}" for i in words],
            "context": "",
            "response_pos": [" ".join(["w"] * p) for p, _ in words.values()],
            "response_neg": [" ".join(["w"] * n) for _, n in words.values()],
            "response": None,
            "reference": None,
            "gold": "pos",
            "meta": "{}",
        }
    )
    chosen = {1: ("pos", "pos"), 2: ("pos", "neg"), 3: ("pos", "neg"), 4: ("pos", "pos")}
    rows = []
    for i, pair in chosen.items():
        for order, c in enumerate(pair):
            rows.append(
                {
                    "benchmark": "b",
                    "split": "s",
                    "item_id": str(i),
                    "judge": "m.p",
                    "model": "m",
                    "prompt": "p",
                    "condition": "",
                    "order": order,
                    "sample": 0,
                    "verdict": {"pos": "AB"[order], "neg": "BA"[order]}[c],
                    "valid": True,
                    "chosen": c,
                    "correct": c == "pos",
                    "cost_usd": 0.002,
                    "latency_s": np.nan,
                }
            )
    return items, pd.DataFrame(rows)


@pytest.fixture
def correctness_tables():
    """4 answers graded Correct/Incorrect: human C, C, I, I; judge C, I, C, I."""
    items = pd.DataFrame(
        {
            "benchmark": "q",
            "split": "V1",
            "item_id": ["0", "1", "2", "3"],
            "task": "pointwise",
            "question": ["a", "b", "c", "d"],
            "context": "",
            "response_pos": None,
            "response_neg": None,
            "response": "an answer",
            "reference": None,
            "gold": ["Correct", "Correct", "Incorrect", "Incorrect"],
            "meta": [json.dumps({"candidate_model": "x"})] * 4,
        }
    )
    judgments = pd.DataFrame(
        {
            "benchmark": "q",
            "split": "V1",
            "item_id": ["0", "1", "2", "3"],
            "judge": "g.umass",
            "model": "g",
            "prompt": "umass",
            "condition": "",
            "order": 0,
            "sample": 0,
            "verdict": ["Correct", "Incorrect", "Correct", "Incorrect"],
            "valid": True,
            "chosen": None,
            "correct": [True, False, False, True],
            "cost_usd": np.nan,
            "latency_s": np.nan,
        }
    )
    return items, judgments
