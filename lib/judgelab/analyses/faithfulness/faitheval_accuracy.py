"""FaithEval accuracy with intervals, per cell and averaged over source datasets (spec 003 §2.2).

Accuracy gets a cluster-bootstrap interval per cell (Wilson, the legacy, beside it) and the
count of unparsed answers; the task AVG is the unweighted macro-mean over the
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
from judgelab.core import clusters, stats
from judgelab.core.schema import require_columns as _need
from judgelab.errors import check_choice

AVERAGES = ("macro", "micro")
ACCURACY_COLUMNS = (
    "mode",
    "n",
    "k",
    "accuracy",
    "ci_low",
    "ci_high",
    "wilson_low",
    "wilson_high",
    "n_clusters",
    "n_unparsed",
    "unparsed_share",
    "accuracy_parsed",
)


def _unparsed(graded: pd.DataFrame) -> np.ndarray:
    """1 per unparsed answer (`parsed` False; all parsed when the column is absent)."""
    if "parsed" not in graded.columns:
        return np.zeros(len(graded))
    return (~graded["parsed"].astype(bool)).to_numpy(dtype=float)


def _cluster_interval(
    grp: pd.DataFrame,
    key: tuple[Any, ...],
    *,
    cluster: str | None,
    n_boot: int,
    seed: int,
    level: float,
) -> list[float]:
    """Per mode: the cluster-bootstrap percentile interval of the group's accuracy."""
    unit = clusters.codes(grp, cluster)
    values = np.column_stack([grp[m].to_numpy(dtype=float) for m in MODES] + [np.ones(len(grp))])
    sums = stats.bootstrap_sums(
        clusters.sum_by(values, unit), n_boot=n_boot, rng=stats.rng_for(seed, "acc", *key)
    )
    out = []
    for j in range(len(MODES)):
        low, high = stats.percentile_interval(
            stats.ratio_replicates(sums[:, j], sums[:, -1]), level=level
        )
        out += [float(low), float(high)]
    return out


def accuracy(
    graded: pd.DataFrame,
    *,
    by: Sequence[str] = ("label", "task", "context_kind", "source_dataset"),
    cluster: str | None = "cluster",
    n_boot: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> pd.DataFrame:
    """Accuracy per group and matching mode, with a cluster-bootstrap interval.

    Answers to related questions (one source passage, one question family) are not
    independent, so the interval resamples the `cluster` column's units (issue 20; items
    without a cluster are their own unit). `cluster=None` gives the legacy Wilson interval
    (independent items). Unparsed answers (a multiple-choice answer naming no option) are
    graded wrong and counted beside the accuracy.

    Args:
        graded: Output of `grade_answers`.
        by: Group columns.
        cluster: Resampling unit column; None: Wilson intervals over independent items.
        n_boot: Bootstrap resamples.
        seed: Bootstrap seed (per group and key).
        level: Confidence level.

    Returns:
        One row per group × mode: the `by` columns, `mode`, `n`, `k`, `accuracy`,
        `ci_low`, `ci_high` (cluster bootstrap; Wilson when `cluster` is None),
        `wilson_low`, `wilson_high`, `n_clusters`, `n_unparsed`, `unparsed_share`,
        `accuracy_parsed` (accuracy among parsed answers, a sensitivity).
    """
    _need(graded, [*by, "strict", "nonstrict"], "graded answers")
    df = graded.assign(_unparsed=_unparsed(graded))
    rows = []
    for key, grp in df.groupby(list(by), sort=True, observed=True):
        key = key if isinstance(key, tuple) else (key,)
        bounds = (
            _cluster_interval(grp, key, cluster=cluster, n_boot=n_boot, seed=seed, level=level)
            if cluster is not None
            else [np.nan] * (2 * len(MODES))
        )
        n_un = int(grp["_unparsed"].sum())
        for j, mode in enumerate(MODES):
            k = int(grp[mode].astype(bool).sum())
            n = len(grp)
            wl, wh = stats.wilson_interval(k, n, level=level)
            lo, hi = (bounds[2 * j], bounds[2 * j + 1]) if cluster is not None else (wl, wh)
            rows.append(
                {
                    **dict(zip(by, key, strict=True)),
                    "mode": mode,
                    "n": n,
                    "k": k,
                    "accuracy": k / n,
                    "ci_low": float(lo),
                    "ci_high": float(hi),
                    "wilson_low": float(wl),
                    "wilson_high": float(wh),
                    "n_clusters": clusters.count(grp, cluster),
                    "n_unparsed": n_un,
                    "unparsed_share": n_un / n,
                    "accuracy_parsed": k / (n - n_un) if n > n_un else np.nan,
                }
            )
    return pd.DataFrame(rows, columns=[*by, *ACCURACY_COLUMNS])


def _dataset_replicates(
    g: pd.DataFrame, mode: str, cluster: str | None, n_boot: int, rng: np.random.Generator
) -> np.ndarray:
    """One dataset's accuracy replicates: a ratio of resampled per-cluster sums."""
    per = clusters.sum_by(
        np.column_stack([g[mode].to_numpy(dtype=float), np.ones(len(g))]),
        clusters.codes(g, cluster),
    )
    sums = stats.bootstrap_sums(per, n_boot=n_boot, rng=rng)
    return stats.ratio_replicates(sums[:, 0], sums[:, 1])


def _dataset_average(
    grp: pd.DataFrame,
    key: tuple[Any, ...],
    *,
    avg: str,
    cluster: str | None,
    n_boot: int,
    seed: int,
    level: float,
) -> Rows:
    """One group's AVG per mode: the mean over its source datasets, with a stratified interval."""
    rows = []
    for mode in MODES:
        groups = list(grp.groupby("source_dataset", sort=True))
        sizes = np.array([len(g) for _, g in groups], dtype=float)
        means = np.array([g[mode].to_numpy(dtype=float).mean() for _, g in groups])
        reps = np.column_stack(
            [
                _dataset_replicates(
                    g, mode, cluster, n_boot, stats.rng_for(seed, *key, mode, name)
                )
                for name, g in groups
            ]
        )
        weights = np.full(len(groups), 1 / len(groups)) if avg == "macro" else sizes / sizes.sum()
        low, high = stats.percentile_interval(reps @ weights, level=level)
        rows.append(
            {
                "mode": mode,
                "n": int(sizes.sum()),
                "n_datasets": len(groups),
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
    cluster: str | None = "cluster",
    n_boot: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> pd.DataFrame:
    """The AVG column: accuracy averaged over source datasets, with a bootstrap interval.

    `macro` (default, the paper's AVG, spec 003 §2.2) is the unweighted mean of the
    per-dataset accuracies; `micro` the item-level mean. The interval resamples clusters
    (the `cluster` column; items without one are their own unit) within each source dataset
    (stratified, seeded per group).

    Args:
        graded: Output of `grade_answers`.
        avg: `macro` or `micro`.
        by: Group columns (the average is taken over `source_dataset` inside each group).
        cluster: Resampling unit column; None resamples items (the legacy interval).
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
            grp, key, avg=avg, cluster=cluster, n_boot=n_boot, seed=seed, level=level
        ),
        columns=[*by, "mode", "n", "n_datasets", "accuracy", "ci_low", "ci_high"],
    )
