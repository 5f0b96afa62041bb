"""FaithEval accuracy with intervals, per cell and averaged over source datasets (spec 003 §2.2).

Accuracy gets Wilson intervals per cell; the task AVG is the unweighted macro-mean over the
source datasets (spec 003 §2.2: it reproduces every printed AVG, the micro-mean does not),
with a bootstrap interval that resamples items within each dataset.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from judgelab.analyses.faithfulness.faitheval_grading import MODES
from judgelab.analyses.faithfulness.grouped import Rows, per_group
from judgelab.core import stats
from judgelab.core.schema import require_columns as _need
from judgelab.errors import check_choice

AVERAGES = ("macro", "micro")


def accuracy(
    graded: pd.DataFrame,
    *,
    by: Sequence[str] = ("label", "task", "context_kind", "source_dataset"),
    level: float = 0.95,
) -> pd.DataFrame:
    """Accuracy per group and matching mode with Wilson intervals.

    Args:
        graded: Output of `grade_answers`.
        by: Group columns.
        level: Confidence level.

    Returns:
        One row per group × mode: the `by` columns, `mode`, `n`, `k`, `accuracy`,
        `ci_low`, `ci_high`.
    """
    _need(graded, [*by, "strict", "nonstrict"], "graded answers")
    rows = []
    for mode in MODES:
        g = graded.groupby(list(by), sort=True, observed=True)[mode].agg(["size", "sum"])
        g = g.reset_index().rename(columns={"size": "n", "sum": "k"})
        g.insert(len(by), "mode", mode)
        rows.append(g)
    out = pd.concat(rows, ignore_index=True)
    out["k"] = out["k"].astype(int)
    out["accuracy"] = out["k"] / out["n"]
    low, high = stats.wilson_interval(out["k"].to_numpy(), out["n"].to_numpy(), level=level)
    out["ci_low"], out["ci_high"] = low, high
    return out


def _dataset_average(
    grp: pd.DataFrame, key: tuple[Any, ...], *, avg: str, n_boot: int, seed: int, level: float
) -> Rows:
    """One group's AVG per mode: the mean over its source datasets, with a stratified interval."""
    rows = []
    for mode in MODES:
        parts = [g[mode].to_numpy(dtype=float) for _, g in grp.groupby("source_dataset")]
        names = sorted(grp["source_dataset"].unique())
        sizes = np.array([len(p) for p in parts], dtype=float)
        means = np.array([p.mean() for p in parts])
        reps = np.column_stack(
            [
                stats.bootstrap_sums(p, n_boot=n_boot, rng=stats.rng_for(seed, *key, mode, name))[
                    :, 0
                ]
                / len(p)
                for p, name in zip(parts, names, strict=True)
            ]
        )
        weights = np.full(len(parts), 1 / len(parts)) if avg == "macro" else sizes / sizes.sum()
        low, high = stats.percentile_interval(reps @ weights, level=level)
        rows.append(
            {
                "mode": mode,
                "n": int(sizes.sum()),
                "n_datasets": len(parts),
                "accuracy": float(means @ weights),
                "ci_low": float(low),
                "ci_high": float(high),
            }
        )
    return rows


def task_average(
    graded: pd.DataFrame,
    *,
    avg: str = "macro",
    by: Sequence[str] = ("label", "task", "context_kind"),
    n_boot: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> pd.DataFrame:
    """The AVG column: accuracy averaged over source datasets, with a bootstrap interval.

    `macro` (default, the paper's AVG, spec 003 §2.2) is the unweighted mean of the
    per-dataset accuracies; `micro` the item-level mean. The interval resamples items
    within each source dataset (stratified, seeded per group).

    Args:
        graded: Output of `grade_answers`.
        avg: `macro` or `micro`.
        by: Group columns (the average is taken over `source_dataset` inside each group).
        n_boot: Bootstrap resamples.
        seed: Bootstrap seed.
        level: Confidence level.

    Returns:
        One row per group × mode: the `by` columns, `mode`, `n` (items), `n_datasets`,
        `accuracy`, `ci_low`, `ci_high`.
    """
    check_choice("avg", avg, AVERAGES)
    _need(graded, [*by, "source_dataset", "strict", "nonstrict"], "graded answers")
    return per_group(
        graded,
        by,
        lambda key, grp: _dataset_average(
            grp, key, avg=avg, n_boot=n_boot, seed=seed, level=level
        ),
        columns=[*by, "mode", "n", "n_datasets", "accuracy", "ci_low", "ci_high"],
    )
