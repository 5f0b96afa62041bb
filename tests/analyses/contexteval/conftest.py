"""Fixtures of the contexteval tests: judgments with known verdicts, long rating tables."""

from collections.abc import Callable, Sequence

import pandas as pd
import pytest

from judgelab.analyses import contexteval
from judgelab.core import schema

PAIR = "a_vs_b"
#: Judgment rows: (setting, example, judge, order, sample, output).
Row = tuple[str, int, str, int, int, str]


def autorater_output(position: str) -> str:
    return f'**output: {{"judgement": "{position}"}}** Justification: because.'


def _judgments(rows: Sequence[Row]) -> pd.DataFrame:
    return schema.new_judgments(
        [
            {
                "benchmark": "ce",
                "split": s,
                "item_id": f"{PAIR}/{e}",
                "judge": j,
                "order": o,
                "sample": k,
                "output": out,
                "valid": True,
            }
            for s, e, j, o, k, out in rows
        ]
    )


def _example_rows(
    labels_by_example: Sequence[Sequence[str]],
    setting: str = "NoCtxGen-NoCtxEval",
    source: str = "autorater",
) -> list[Row]:
    """Judgment rows whose candidate verdicts are the given labels (order 0: R1 = C1)."""
    position = {"C1": "Response 1", "C2": "Response 2", "Tie": "Tie"}
    rows = []
    for e, labels in enumerate(labels_by_example):
        for k, lab in enumerate(labels):
            human = source == "human"
            out = position[lab] if human else autorater_output(position[lab])
            rows.append((setting, e, "human" if human else f"j{k}", 0, k if human else 0, out))
    return rows


def _agreement_examples() -> pd.DataFrame:
    # Baseline: 3 examples with 3 humans each: [C1 C1 C1] share 1; [C1 C2 Tie] share 1/3
    # (plurality C1, first occurrence); [Tie Tie C2] share 2/3, plurality Tie.
    base = _example_rows(
        [["C1", "C1", "C1"], ["C1", "C2", "Tie"], ["Tie", "Tie", "C2"]], source="human"
    )
    # Context: [C2 C2 C1] 2/3; [C1 C1 C1] 1; [Tie Tie Tie] 1, plurality Tie.
    ctx = _example_rows(
        [["C2", "C2", "C1"], ["C1", "C1", "C1"], ["Tie", "Tie", "Tie"]],
        setting="CtxGen-CtxEval",
        source="human",
    )
    return contexteval.example_table(contexteval.verdict_table(_judgments(base + ctx)))


def _ratings(rows: Sequence[tuple[str, str, str, float]]) -> pd.DataFrame:
    """Long default ratings of rater "r" from (query, attribute, value, rating) rows."""
    return pd.DataFrame(
        [
            {
                "kind": "default",
                "query_id": q,
                "attribute": a,
                "value": v,
                "value_order": contexteval.TABLE8[a][1].index(v),
                "rater": "r",
                "rating": float(r),
                "parse_ok": True,
            }
            for q, a, v, r in rows
        ]
    )


@pytest.fixture()
def out() -> Callable[[str], str]:
    """An autorater output in the repo's format judging `position` better."""
    return autorater_output


@pytest.fixture()
def judgments() -> Callable[[Sequence[Row]], pd.DataFrame]:
    """Judgments of pair `a_vs_b` from (setting, example, judge, order, sample, output)."""
    return _judgments


@pytest.fixture()
def example_rows() -> Callable[..., list[Row]]:
    """Judgment rows whose candidate verdicts are given labels per example."""
    return _example_rows


@pytest.fixture()
def agreement_examples() -> pd.DataFrame:
    """Human examples of a baseline and a context setting, with Tie votes (hand-computed)."""
    return _agreement_examples()


@pytest.fixture()
def ratings() -> Callable[[Sequence[tuple[str, str, str, float]]], pd.DataFrame]:
    """Long default ratings from (query, attribute, value, rating) rows."""
    return _ratings
