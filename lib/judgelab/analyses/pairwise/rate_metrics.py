"""What the pairwise rates are: the metric table and the per-item values they sum.

`METRICS` maps each rate to its numerator and denominator columns; `_value_matrix` builds
those columns from `item_outcomes` and `_layout` locates them. Shared by both inference
paths of `rates` and by `scan`.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pandas as pd

from judgelab.analyses.pairwise.outcomes import BOOLEAN_OUTCOMES, CATEGORIES

POOLED = "pooled"
MEAN_OF_SPLITS = "mean_of_splits"
AGGREGATIONS = (POOLED, MEAN_OF_SPLITS)

#: metric → (numerator column, denominator column, Wilson applies) in `item_outcomes` terms.
#: A rate is Σ numerator / Σ denominator over the complete items of a group.
METRICS: dict[str, tuple[str, str, bool]] = {
    "a1": ("correct_0", "has_gold", True),
    "a2": ("correct_1", "has_gold", True),
    "ca": ("consistently_correct", "has_gold", True),
    "oa": ("optimistically_correct", "has_gold", True),
    "cons": ("consistent", "complete", True),
    "run_gap": ("run_gap", "has_gold", False),
    "pos_a_rate": ("picks_a", "valid_verdicts", True),
    "pos_a_rate_decisive": ("picks_a", "decisive", True),
    "flip_rate": ("flipped", "both_valid", True),
    "share_consistent": ("is_consistent", "complete", True),
    "share_biased_first": ("is_biased_first", "complete", True),
    "share_biased_second": ("is_biased_second", "complete", True),
    "share_inconsistent_tie": ("is_inconsistent_tie", "complete", True),
    "share_invalid": ("is_invalid", "complete", True),
    "both_invalid": ("both_invalid", "complete", True),
    "invalid_0": ("invalid_0", "complete", True),
    "invalid_1": ("invalid_1", "complete", True),
}


#: The position test: "the judge picks position A as often as B" — the share of A among the
#: valid non-tie verdicts equals 1/2. With ties the spec's `pos_a_rate` is below 1/2 under
#: this null, so the p-value is a statement about the decisive share and sits on its row only.
POSITION_TEST = ("pos_a_rate_decisive", 0.5)
#: The metrics whose rows carry the position test's p-value.
TESTED = ("pos_a_rate_decisive",)
#: Metrics that are differences (their interval lives in [-1, 1]).
SIGNED = ("run_gap",)
#: The two denominators of the position-A preference (`position_preference` reads both).
POSITION_RATES = ("pos_a_rate", "pos_a_rate_decisive")


class _Layout(NamedTuple):
    """Where each metric's numerator and denominator sit among the per-item value columns."""

    num: np.ndarray
    den: np.ndarray
    binomial: np.ndarray
    complete: int
    has_gold: int
    n_values: int


def _value_matrix(outcomes: pd.DataFrame) -> tuple[np.ndarray, list[str]]:
    """Return per-item numerator/denominator columns (0 for incomplete items) and their names."""
    f = {}
    complete = outcomes["complete"].to_numpy(dtype=bool)
    f["complete"] = complete.astype(float)
    f["has_gold"] = (complete & outcomes["has_gold"].to_numpy(dtype=bool)).astype(float)
    for col in BOOLEAN_OUTCOMES:
        f[col] = outcomes[col].astype("boolean").fillna(False).to_numpy(dtype=float)
    f["run_gap"] = f["correct_1"] - f["correct_0"]
    f["picks_a"] = outcomes["picks_a"].astype("Float64").fillna(0).to_numpy(dtype=float)
    f["decisive"] = outcomes["decisive"].astype("Float64").fillna(0).to_numpy(dtype=float)
    c0, c1 = outcomes["chosen_0"].to_numpy(), outcomes["chosen_1"].to_numpy()
    valid0 = complete & np.isin(c0, ("pos", "neg", "tie"))
    valid1 = complete & np.isin(c1, ("pos", "neg", "tie"))
    f["valid_verdicts"] = valid0.astype(float) + valid1.astype(float)
    f["both_valid"] = (valid0 & valid1).astype(float)
    f["flipped"] = (valid0 & valid1 & (c0 != c1)).astype(float)
    category = outcomes["category"].to_numpy()
    for cat in CATEGORIES:
        f[f"is_{cat}"] = (category == cat).astype(float)
    f["invalid_0"] = (complete & (c0 == "invalid")).astype(float)
    f["invalid_1"] = (complete & (c1 == "invalid")).astype(float)
    names = list(f)
    return np.column_stack([f[k] for k in names]), names


def _layout(names: list[str]) -> _Layout:
    col = {name: i for i, name in enumerate(names)}
    return _Layout(
        num=np.array([col[m[0]] for m in METRICS.values()]),
        den=np.array([col[m[1]] for m in METRICS.values()]),
        binomial=np.array([m[2] for m in METRICS.values()]),
        complete=col["complete"],
        has_gold=col["has_gold"],
        n_values=len(names),
    )


class _Boot(NamedTuple):
    """Bootstrap settings shared by the cells of one call."""

    n_boot: int
    seed: int
    level: float
    cluster: str | None
    interval: str = "expanded"


#: What each metric's denominator counts, for the reason of a row that has none.
_DENOMINATORS = {
    "has_gold": "item with a gold label judged in both orders",
    "complete": "item judged in both orders",
    "valid_verdicts": "valid verdict of an item judged in both orders",
    "decisive": "decisive (non-tie) verdict of an item judged in both orders",
    "both_valid": "item with a valid verdict in both orders",
}


def reasons(out: pd.DataFrame) -> pd.Series:
    """Return why each row of a rates table has no value ("" where it has one).

    Every pairwise rate pairs the two presentation orders of an item, so a cell whose items
    were judged in one order only has none of them: its rows say so and count those items,
    never a silent NaN.
    """
    text = []
    for metric, value, n_items, n_incomplete in zip(
        out["metric"], out["value"], out["n_items"], out["n_incomplete"], strict=True
    ):
        if not np.isnan(value):
            text.append("")
        elif n_items == 0 and n_incomplete > 0:
            text.append(
                f"no item judged in both presentation orders ({int(n_incomplete)} judged in "
                f"one order only): {metric} pairs the two orders of each item"
            )
        else:
            text.append(f"no {_DENOMINATORS[METRICS[metric][1]]} in this cell")
    return pd.Series(text, index=out.index, dtype=object)
