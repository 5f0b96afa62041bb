"""Agreement, Cohen's kappa, FPR and FNR against human labels (spec 001 §4.1, §4.3, §4.4).

The positive class is "Correct" (spec 001 §4.3):

- FPR = P(judge says Correct | human says Incorrect) = FP / (FP + TN);
- FNR = P(judge says Incorrect | human says Correct) = FN / (FN + TP);
- agreement = (TP + TN) / N; Cohen's kappa = (p_o − p_e) / (1 − p_e), NaN when p_e = 1.

Every rate is computed from six confusion counts (`CELLS`). Its interval (DESIGN §9) is the
one `core.estimates` gives a ratio of sums over the clusters: agreement, FPR and FNR are
Σ num / Σ den of per-row indicators (`parts`); kappa, a smooth function of the cells, is
written the same way through its linearization — each row's pseudo-value κ̂ + IF_i (the
influence of the row's cells on κ̂, by the chain rule on `rates_from_counts`) averages to κ̂
exactly, and the restricted wild cluster bootstrap of that mean is the delta-method interval,
studentized per replicate. Every row reports the effective clusters behind it and
`few_clusters` below `core.clusters.FEW_EFFECTIVE`. `inference="bootstrap"` keeps the earlier
default: a cluster ("block") bootstrap over questions (spec 001 §4.4), one
`stats.bootstrap_sums` over per-question counts, and its percentile interval.
Invalid verdicts follow `invalid_policy`: `exclude` drops them from every denominator;
`error` keeps them as a third judge category that never agrees (kappa, agreement) and counts
them as errors in FPR/FNR. Either way `n_invalid` reports them.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np
import pandas as pd

from judgelab.analyses.correctness.table import confusion_counts
from judgelab.core import clusters, estimates, stats
from judgelab.core.schema import require_columns as _require
from judgelab.errors import check_choice

RATE_METRICS = ("agreement", "kappa", "fpr", "fnr")
INVALID_POLICIES = ("exclude", "error")
#: How intervals (and tests) are computed: the restricted wild cluster bootstrap through
#: `core.estimates` (default), or the earlier percentile cluster bootstrap.
INFERENCE = ("wild", "bootstrap")
#: The parameter space of each metric (the interval is cut to it).
BOUNDS = {"agreement": (0.0, 1.0), "kappa": (-1.0, 1.0), "fpr": (0.0, 1.0), "fnr": (0.0, 1.0)}
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


def parts(cells: np.ndarray, metric: str, invalid_policy: str) -> tuple[np.ndarray, ...]:
    """Return per-row (num, den) whose ratio of sums is `metric`, and the metric's value.

    FPR: num = judged Correct (or invalid, with `error`) among human-Incorrect rows, den = the
    human-Incorrect rows kept; FNR likewise; agreement: agreeing rows among all kept. Kappa is
    not a ratio of sums: num_i = den_i · κ̂ + IF_i with IF_i = N · ∂κ/∂T · c_i (T the summed
    cells, N the rows kept, c_i the row's cells) — the linearization, whose ratio of sums is κ̂
    exactly (κ is homogeneous of degree 0 in T). An undefined kappa gives NaN numerators.

    Args:
        cells: Per-row one-hot cells (n × 6, `table.CELLS` order).
        metric: One of `RATE_METRICS`.
        invalid_policy: `exclude` or `error`.

    Returns:
        (num, den, value) — per-row arrays and the metric on all rows (NaN when undefined).

    >>> c = np.array([[1, 0, 0, 0, 0, 0], [0, 0, 1, 0, 0, 0], [0, 0, 0, 1, 0, 0.0]])
    >>> num, den, v = parts(c, "fpr", "exclude")
    >>> num.tolist(), den.tolist(), v
    ([0.0, 1.0, 0.0], [0.0, 1.0, 1.0], 0.5)
    """
    kept = np.column_stack(_split_cells(np.asarray(cells, dtype=np.float64), invalid_policy))
    tp, fn, fp, tn, ip, ineg = kept.T
    total = kept.sum(axis=0)
    value = float(rates_from_counts(total, invalid_policy="error")[metric])
    if metric == "fpr":
        return fp + ineg, fp + tn + ineg, value
    if metric == "fnr":
        return fn + ip, tp + fn + ip, value
    den = kept.sum(axis=1)
    if metric == "agreement":
        return tp + tn, den, value
    n = float(total.sum())
    if not np.isfinite(value) or n == 0:
        return np.full(len(den), np.nan), den, float("nan")
    h = 1e-6 * n
    step = np.eye(6) * h
    both = rates_from_counts(np.vstack([total + step, total - step]), invalid_policy="error")
    grad = (both["kappa"][:6] - both["kappa"][6:]) / (2.0 * h)
    return den * value + n * (kept @ grad), den, value


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
    inference: str = "wild",
    n_boot: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> pd.DataFrame:
    """Return agreement, kappa, FPR and FNR per group with cluster-robust intervals.

    By default each interval is the one `core.estimates.ratio` gives the metric's ratio of
    sums (`parts`; kappa through its linearization): it inverts the restricted wild cluster
    bootstrap test over the `cluster` values (by default the items' `cluster`, else questions,
    spec 001 §4.4; None = i.i.d. rows, the legacy option), seeded by `seed` and the row's key.
    `inference="bootstrap"` is the earlier default: the percentile interval of a cluster
    bootstrap, ignoring NaN replicates (counted in `n_boot_nan`). The point estimate is the
    statistic on the full data; `half_width` = max(value − low, high − value) is the paper's
    symmetric display (spec 001 §4.4 step 5).

    Args:
        table: A correctness table (`correctness_table`); needs `by`, `cluster`, `human`,
            `verdict`.
        by: Group columns.
        invalid_policy: `exclude` or `error` (see the module docstring).
        cluster: Column whose values are the clusters (`resolve_cluster`), or None.
        inference: `wild` (default) or `bootstrap` (`INFERENCE`).
        n_boot: Bootstrap replicates B.
        seed: Seed of the bootstrap.
        level: Confidence level.

    Returns:
        One row per group × metric: the `by` columns, `metric` (agreement, kappa, fpr, fnr),
        `value`, `ci_low`, `ci_high`, `half_width`, `n` (the metric's denominator),
        `n_items`, `n_clusters` (clusters holding the denominator's rows), `n_invalid`,
        `n_boot_nan`, `note` (why a value is NaN), `n_eff_clusters`, `few_clusters`, `method`.
    """
    by = list(by)
    check_choice("inference", inference, INFERENCE)
    check_choice("invalid_policy", invalid_policy, INVALID_POLICIES)
    cluster = resolve_cluster(table, cluster)
    named = [cluster] if cluster not in (None, CLUSTER) else []
    _require(table, [*by, "human", "verdict", *named], "rates")
    rows = []
    for key, block in groups_of(table, by):
        cells = confusion_counts(block)
        total = cells.sum(axis=0)
        base = {**dict(zip(by, key, strict=True)), "n_items": len(block),
                "n_invalid": int(total[4] + total[5])}  # fmt: skip
        if inference == "wild":
            unit = clusters.codes(block, cluster)
            for m in RATE_METRICS:
                rows.append({**base, **_wild_rate(cells, unit, m, invalid_policy, n_boot,
                                                  estimates.seeded(seed, "rates", *key, m),
                                                  level)})  # fmt: skip
            continue
        mat = cluster_matrix(block, cells, cluster)
        reps = stats.bootstrap_sums(mat, n_boot=n_boot, rng=stats.rng_for(seed, "rates", *key))
        point = rates_from_counts(total, invalid_policy=invalid_policy)
        boot = rates_from_counts(reps, invalid_policy=invalid_policy)
        dens = denominators(total, invalid_policy)
        for m in RATE_METRICS:
            rows.append(
                {
                    **base,
                    "metric": m,
                    **stats.interval_fields(point[m], boot[m], level=level, half_width=True),
                    "n": int(dens[m]),
                    "n_clusters": len(mat),
                    "n_boot_nan": int(np.isnan(boot[m]).sum()),
                    "note": _note(m, total, float(point[m])),
                    "n_eff_clusters": np.nan,
                    "few_clusters": True,
                    "method": f"cluster bootstrap, percentile (B={n_boot})",
                }
            )
    return pd.DataFrame(rows, columns=[*by, *RATE_COLUMNS])


#: Columns of `correctness_rates` after the group columns.
RATE_COLUMNS = ("metric", "value", "ci_low", "ci_high", "half_width", "n", "n_items",
                "n_clusters", "n_invalid", "n_boot_nan", "note", "n_eff_clusters",
                "few_clusters", "method")  # fmt: skip


def _wild_rate(
    cells: np.ndarray,
    unit: np.ndarray,
    metric: str,
    invalid_policy: str,
    n_boot: int,
    rng: np.random.Generator,
    level: float,
) -> dict:
    """Return one metric's row fields from `core.estimates.ratio` (no test: an interval)."""
    num, den, value = parts(cells, metric, invalid_policy)
    total = cells.sum(axis=0)
    out = {"metric": metric, "n": int(den.sum()), "n_boot_nan": 0,
           "n_clusters": int(np.unique(unit[den > 0]).size)}  # fmt: skip
    if not np.isfinite(value):
        nan = float("nan")
        return {**out, "value": nan, "ci_low": nan, "ci_high": nan, "half_width": nan,
                "note": _note(metric, total, value), "n_eff_clusters": nan,
                "few_clusters": True, "method": "no estimate"}  # fmt: skip
    est = estimates.ratio(
        num, den, unit, level=level, n_boot=n_boot, rng=rng, bounds=BOUNDS[metric]
    )
    note = "" if np.isfinite(est.ci_low) else f"no interval: {est.method}"
    linear = " of the linearized kappa" if metric == "kappa" else ""
    return {
        **out,
        "value": value,
        "ci_low": est.ci_low,
        "ci_high": est.ci_high,
        "half_width": float(max(value - est.ci_low, est.ci_high - value)),
        "note": note,
        "n_eff_clusters": est.n_eff_clusters,
        "few_clusters": est.few_clusters,
        "method": est.method + linear,
    }


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
