"""Agreement, Cohen's kappa, FPR and FNR against human labels (spec 001 §4.1, §4.3, §4.4).

The positive class is "Correct" (spec 001 §4.3):

- FPR = P(judge says Correct | human says Incorrect) = FP / (FP + TN);
- FNR = P(judge says Incorrect | human says Correct) = FN / (FN + TP);
- agreement = (TP + TN) / N; Cohen's kappa = (p_o − p_e) / (1 − p_e), NaN when p_e = 1.

Every rate is computed from six confusion counts (`CELLS`), so a cluster ("block") bootstrap
over questions (spec 001 §4.4) is one `stats.bootstrap_sums` over per-question counts: the
resampled sums are the counts of a resample, and every metric follows by arithmetic.
Invalid verdicts follow `invalid_policy`: `exclude` drops them from every denominator;
`error` keeps them as a third judge category that never agrees (kappa, agreement) and counts
them as errors in FPR/FNR. Either way `n_invalid` reports them.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np
import pandas as pd

from judgelab.analyses.correctness.table import confusion_counts
from judgelab.core import clusters, stats
from judgelab.core.schema import require_columns as _require
from judgelab.errors import check_choice

RATE_METRICS = ("agreement", "kappa", "fpr", "fnr")
INVALID_POLICIES = ("exclude", "error")
#: The default bootstrap unit column (`core.clusters`).
CLUSTER = "cluster"


def cohen_kappa(
    human: Sequence[object], judge: Sequence[object], *, labels: Sequence[object] | None = None
) -> float:
    """Return unweighted Cohen's kappa of two label sequences (NaN when p_e = 1 or empty).

    A label that only one rater uses (e.g. an `invalid` verdict) is a category of its own: it
    lowers p_o and enters p_e with the other rater's marginal 0. When both raters put every
    item in one and the same class, p_e = 1 and kappa is undefined: NaN (spec 001 §4.1).

    >>> cohen_kappa(["C", "C", "I", "I"], ["C", "I", "I", "I"])  # p_o=3/4, p_e=.5·.25+.5·.75
    0.5
    """
    h = np.asarray(list(human), dtype=object)
    j = np.asarray(list(judge), dtype=object)
    if h.shape != j.shape:
        raise ValueError(f"cohen_kappa: {len(h)} human labels but {len(j)} judge labels")
    if h.size == 0:
        return float("nan")
    cats = list(labels) if labels is not None else sorted({*h, *j}, key=str)
    index = {c: i for i, c in enumerate(cats)}
    conf = np.zeros((len(cats), len(cats)))
    np.add.at(conf, ([index[x] for x in h], [index[x] for x in j]), 1)
    return float(stats.kappa_from_confusion(conf))


def _split_cells(c: np.ndarray, invalid_policy: str) -> tuple[np.ndarray, ...]:
    c = np.asarray(c, dtype=np.float64)
    tp, fn, fp, tn, ip, ineg = (c[..., i] for i in range(6))
    check_choice("invalid_policy", invalid_policy, INVALID_POLICIES)
    if invalid_policy == "exclude":
        ip, ineg = np.zeros_like(ip), np.zeros_like(ineg)
    return tp, fn, fp, tn, ip, ineg


def rates_from_counts(counts: np.ndarray, *, invalid_policy: str = "exclude") -> dict:
    """Return agreement, kappa, FPR and FNR from confusion counts (last axis = `CELLS`).

    Vectorised over leading axes (e.g. bootstrap replicates); a rate with an empty
    denominator, and kappa with p_e = 1, is NaN.

    >>> r = rates_from_counts(np.array([40, 10, 5, 45, 0, 0]))
    >>> round(float(r["kappa"]), 4), float(r["fpr"]), float(r["fnr"])  # p_o=.85, p_e=.5
    (0.7, 0.1, 0.2)
    """
    tp, fn, fp, tn, ip, ineg = _split_cells(counts, invalid_policy)
    n = tp + fn + fp + tn + ip + ineg
    # Human Correct/Incorrect x judge Correct/Incorrect/invalid (invalid is never agreement).
    zero = np.zeros_like(tp)
    conf = np.stack(
        [np.stack(row, axis=-1) for row in ((tp, fn, ip), (fp, tn, ineg), (zero, zero, zero))],
        axis=-2,
    )
    return {
        "agreement": stats.ratio_replicates(tp + tn, n),
        "kappa": stats.kappa_from_confusion(conf),
        "fpr": stats.ratio_replicates(fp + ineg, fp + tn + ineg),
        "fnr": stats.ratio_replicates(fn + ip, tp + fn + ip),
    }


def denominators(counts: np.ndarray, invalid_policy: str) -> dict:
    """Return the denominator of each rate metric from confusion counts."""
    tp, fn, fp, tn, ip, ineg = _split_cells(counts, invalid_policy)
    n = tp + fn + fp + tn + ip + ineg
    return {"agreement": n, "kappa": n, "fpr": fp + tn + ineg, "fnr": tp + fn + ip}


def resolve_cluster(table: pd.DataFrame, cluster: str | None) -> str | None:
    """Return the column whose values are the bootstrap units.

    The default `"cluster"` (the items' resampling unit, `core.clusters`) falls back to
    `question_uid` (spec 001 §4.4) when the table has no `cluster` column; None stays None
    (i.i.d. rows, the legacy / spec 001 §4.4 step 7 check).
    """
    if cluster == CLUSTER and CLUSTER not in table.columns and "question_uid" in table.columns:
        return "question_uid"
    return cluster


def cluster_matrix(block: pd.DataFrame, cells: np.ndarray, cluster: str | None) -> np.ndarray:
    """Return per-row cells summed per `cluster` value (the bootstrap units; rows when None)."""
    cluster = resolve_cluster(block, cluster)
    if cluster is None:
        return cells
    codes = clusters.codes(block, cluster)
    return clusters.sum_by(cells, codes) if len(codes) else np.zeros((0, cells.shape[1]))


def groups_of(table: pd.DataFrame, by: Sequence[str]) -> Iterator[tuple[tuple, pd.DataFrame]]:
    """Yield (key tuple, rows) per group of `by` (one group, key (), when `by` is empty)."""
    if not by:
        yield (), table
        return
    for key, block in table.groupby(list(by), sort=True, dropna=False, observed=True):
        yield (key if isinstance(key, tuple) else (key,)), block


def correctness_rates(
    table: pd.DataFrame,
    *,
    by: Sequence[str] = ("judge",),
    invalid_policy: str = "exclude",
    cluster: str | None = CLUSTER,
    n_boot: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> pd.DataFrame:
    """Return agreement, kappa, FPR and FNR per group with cluster-bootstrap intervals.

    The bootstrap resamples `cluster` values (by default the items' `cluster`, else questions:
    spec 001 §4.4 block bootstrap; None = i.i.d. over rows, the legacy option), seeded by
    `seed` and the group key; the interval is the percentile
    interval ignoring NaN replicates (counted in `n_boot_nan`); the point estimate is the
    statistic on the full data; `half_width` = max(value − low, high − value) is the paper's
    symmetric display (spec 001 §4.4 step 5).

    Args:
        table: A correctness table (`correctness_table`); needs `by`, `cluster`, `human`,
            `verdict`.
        by: Group columns.
        invalid_policy: `exclude` or `error` (see the module docstring).
        cluster: Column whose values are resampled (`resolve_cluster`), or None.
        n_boot: Bootstrap resamples B.
        seed: Seed of the bootstrap.
        level: Confidence level.

    Returns:
        One row per group × metric: the `by` columns, `metric` (agreement, kappa, fpr, fnr),
        `value`, `ci_low`, `ci_high`, `half_width`, `n` (the metric's denominator),
        `n_items`, `n_clusters`, `n_invalid`, `n_boot_nan`, `note` (why a value is NaN).
    """
    by = list(by)
    cluster = resolve_cluster(table, cluster)
    named = [cluster] if cluster not in (None, CLUSTER) else []
    _require(table, [*by, "human", "verdict", *named], "rates")
    rows = []
    for key, block in groups_of(table, by):
        cells = confusion_counts(block)
        total = cells.sum(axis=0)
        mat = cluster_matrix(block, cells, cluster)
        reps = stats.bootstrap_sums(mat, n_boot=n_boot, rng=stats.rng_for(seed, "rates", *key))
        point = rates_from_counts(total, invalid_policy=invalid_policy)
        boot = rates_from_counts(reps, invalid_policy=invalid_policy)
        dens = denominators(total, invalid_policy)
        for m in RATE_METRICS:
            rows.append(
                {
                    **dict(zip(by, key, strict=True)),
                    "metric": m,
                    **stats.interval_fields(point[m], boot[m], level=level, half_width=True),
                    "n": int(dens[m]),
                    "n_items": len(block),
                    "n_clusters": len(mat),
                    "n_invalid": int(total[4] + total[5]),
                    "n_boot_nan": int(np.isnan(boot[m]).sum()),
                    "note": _note(m, total, float(point[m])),
                }
            )
    cols = [*by, "metric", "value", "ci_low", "ci_high", "half_width", "n", "n_items",
            "n_clusters", "n_invalid", "n_boot_nan", "note"]  # fmt: skip
    return pd.DataFrame(rows, columns=cols)


def _note(metric: str, total: np.ndarray, value: float) -> str:
    if not np.isnan(value):
        return ""
    if metric == "kappa":
        return (
            "kappa undefined: p_e = 1 (both raters use one class only)"
            if total.sum()
            else ("no items")
        )
    return "no items in the denominator class"


def rates_display(
    rates: pd.DataFrame, *, index: Sequence[str], columns: str = "metric", digits: int = 2
) -> pd.DataFrame:
    """Return a wide display table of "value±half_width (n)" strings (spec 001 §4.4).

    Args:
        rates: `correctness_rates` or `pairwise_kappa` output.
        index: Columns that form the rows.
        columns: The column whose values become table columns.
        digits: Decimals.
    """
    _require(rates, [*index, columns, "value", "half_width", "n"], "rates_display")

    def fmt(r: pd.Series) -> str:
        if pd.isna(r["value"]):
            return f"– (n={int(r['n'])})"
        return f"{r['value']:.{digits}f}±{r['half_width']:.{digits}f} (n={int(r['n'])})"

    data = rates.assign(_text=rates.apply(fmt, axis=1))
    wide = data.pivot_table(
        index=list(index), columns=columns, values="_text", aggfunc="first", observed=True
    )
    wide.columns.name = None
    return wide.reset_index()
