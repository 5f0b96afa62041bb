"""Hand-built judgments of the juries tests: judges given consolidated labels per item."""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd
import pytest

from judgelab.core import schema

# A consolidated label is produced by a pair of verdicts (order 0, order 1).
PAIRS = {"pos": ("pos", "pos"), "neg": ("neg", "neg"), "tie": ("pos", "neg")}


def _verdict(judge, item, order, chosen, *, split="s", prompt="p", sample=0) -> dict:
    """One judgments row; `chosen=None` is an invalid output."""
    return {
        "benchmark": "b",
        "split": split,
        "item_id": item,
        "judge": judge,
        "model": judge,
        "prompt": prompt,
        "order": order,
        "sample": sample,
        "valid": chosen is not None,
        "chosen": chosen,
        "correct": chosen == "pos",
    }


def _labelled(
    labels: dict[str, list[str]], *, split: str = "s", prompt: str = "p"
) -> pd.DataFrame:
    """Judgments giving each judge the consolidated labels listed (items i0, i1, ...)."""
    rows = []
    for judge, per_item in labels.items():
        for i, label in enumerate(per_item):
            for order, chosen in enumerate(PAIRS[label]):
                rows.append(_verdict(judge, f"i{i}", order, chosen, split=split, prompt=prompt))
    return schema.new_judgments(rows)


@pytest.fixture()
def verdict() -> Callable[..., dict]:
    """`verdict(judge, item, order, chosen, *, split, prompt, sample)` → one judgments row."""
    return _verdict


@pytest.fixture()
def labelled() -> Callable[..., pd.DataFrame]:
    """`labelled({judge: [label per item]}, *, split, prompt)` → judgments with those labels."""
    return _labelled


@pytest.fixture()
def draws(verdict) -> Callable[[list[tuple[str, str]]], pd.DataFrame]:
    """`draws([(order-0 verdict, order-1 verdict) per draw])` → one judge, one item."""

    def make(pairs: list[tuple[str, str]]) -> pd.DataFrame:
        rows = []
        for k, pair in enumerate(pairs):
            for order, chosen in enumerate(pair):
                rows.append(verdict("j", "i", order, chosen, sample=k))
        return schema.new_judgments(rows)

    return make
