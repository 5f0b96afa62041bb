"""Paired strategy − baseline differences over items, resampling clusters (issues 20, 33).

The two prompts of one model judge the same items, so the comparison is paired (an item's
two outcomes stay together); items that share a cluster (a question, a source document)
are not independent (`core.clusters`; a frame without a `cluster` column falls back to items).

The default test (`test="wild"`, issue 33) treats the difference as what it is — a
difference of two rates over the same items — and runs the restricted wild cluster
bootstrap of `core.estimates.difference`: the interval inverts the test (the p-value beside
it always agrees with it), with Webb weights below 12 clusters, and the row reports the
effective clusters and `few_clusters`. A pooled row pools the splits' items (a cluster in
several splits is one unit). `test="bootstrap"` (the default before issue 33): the
percentile cluster-bootstrap interval (stratified by split in a pooled row) and the
bootstrap p-value of "difference = 0" resolved by `inference.adaptive_p`; the exact McNemar
test (independent items) is kept as `p_mcnemar`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from judgelab.core import clusters, estimates, inference, stats, wild

#: Tests `paired_difference` reports as `p_value` (`wild`: with its own interval).
TESTS = ("wild", "bootstrap", "mcnemar")


def _per_cluster(x: np.ndarray, y: np.ndarray, unit: np.ndarray) -> np.ndarray:
    """Per-unit sums of (x − y, 1): the rows a cluster bootstrap of the paired mean draws."""
    return clusters.sum_by(np.column_stack([x - y, np.ones(len(x))]), unit)


def _draw(strata: Sequence[np.ndarray], rng: np.random.Generator, k: int) -> np.ndarray:
    """Draw k replicates of the pooled paired mean: clusters resampled within each stratum."""
    sums = sum(stats.bootstrap_sums(per, n_boot=k, rng=rng) for per in strata)
    return stats.ratio_replicates(sums[:, 0], sums[:, 1])


def paired_difference(
    x: np.ndarray,
    y: np.ndarray,
    unit: np.ndarray,
    *,
    strata: np.ndarray | None = None,
    test: str = "wild",
    n_boot: int = 1000,
    rng: np.random.Generator,
    level: float = 0.95,
) -> dict[str, Any]:
    """Return mean(x) − mean(y) over paired items with its cluster interval and test.

    Args:
        x: 0/1 (or real) outcome per item under the strategy.
        y: The same items' outcome under the baseline.
        unit: Resampling unit code of each item (its cluster; codes shared across strata).
        strata: Stratum of each item (e.g. the split of a pooled row); the bootstrap
            (`test="bootstrap"`, `"mcnemar"`) resamples clusters within each stratum. None:
            one stratum.
        test: `wild` (default: restricted wild cluster bootstrap test and the interval that
            inverts it), `bootstrap` (the earlier default: percentile interval, adaptive
            bootstrap p) or `mcnemar` (legacy: the exact McNemar test, independent items,
            beside the percentile interval).
        n_boot: Bootstrap resamples of the percentile interval (the p-value draws more when
            needed); the wild bootstrap uses `core.wild.N_BOOT`.
        rng: The bootstrap's generator.
        level: Confidence level.

    Returns:
        `diff`, `ci_low`, `ci_high`, `n_common`, `n_clusters`, `n_eff_clusters`,
        `few_clusters`, `method`, `p_value`, `p_bound`, `n_boot_p`, `p_mcnemar`,
        `only_strategy`, `only_baseline`.
    """
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    only_x, only_y = int((x > y).sum()), int((y > x).sum())
    mcnemar = stats.sign_test(only_x, only_x + only_y).p_value
    if test == "wild":
        return _wild(x, y, np.asarray(unit), rng=rng, level=level) | {
            "p_mcnemar": mcnemar,
            "only_strategy": only_x,
            "only_baseline": only_y,
        }
    strata = np.zeros(len(x), dtype=int) if strata is None else np.asarray(strata)
    pers = []
    for s in np.unique(strata):
        m = strata == s
        _, local = np.unique(unit[m], return_inverse=True)
        pers.append(_per_cluster(x[m], y[m], local))
    reps = _draw(pers, rng, n_boot) if len(x) else np.full(n_boot, np.nan)
    low, high = stats.percentile_interval(reps, level=level)
    boot = inference.adaptive_p(lambda k: _draw(pers, rng, k), first=reps, n_boot=n_boot)
    use_boot = test == "bootstrap"
    return {
        "diff": float(x.mean() - y.mean()) if len(x) else np.nan,
        "ci_low": float(low),
        "ci_high": float(high),
        "n_common": len(x),
        "n_clusters": int(sum(p.shape[0] for p in pers)),
        "n_eff_clusters": np.nan,
        "few_clusters": True,
        "method": f"percentile cluster bootstrap (B={n_boot}), "
        + ("adaptive bootstrap p" if use_boot else "exact McNemar p"),
        "p_value": boot.p if use_boot else mcnemar,
        "p_bound": bool(boot.bound) if use_boot else False,
        "n_boot_p": int(boot.n_boot),
        "p_mcnemar": mcnemar,
        "only_strategy": only_x,
        "only_baseline": only_y,
    }


def _wild(
    x: np.ndarray, y: np.ndarray, unit: np.ndarray, *, rng: np.random.Generator, level: float
) -> dict[str, Any]:
    """The paired difference by `core.estimates.difference` (baseline group 0, strategy 1)."""
    n = len(x)
    if n == 0:
        nan = float("nan")
        est = estimates.Estimate(nan, nan, nan, nan, 0.0, 0.0, 0, nan, True, "no data")
    else:
        est = estimates.difference(
            np.concatenate([y, x]),
            np.ones(2 * n),
            np.repeat([0, 1], n),
            np.concatenate([unit, unit]),
            null=0.0,
            level=level,
            rng=rng,
        )
    return {
        "diff": est.value,
        "ci_low": est.ci_low,
        "ci_high": est.ci_high,
        "n_common": n,
        "n_clusters": est.n_clusters,
        "n_eff_clusters": est.n_eff_clusters,
        "few_clusters": est.few_clusters,
        "method": est.method,
        "p_value": est.p_value,
        "p_bound": False,
        "n_boot_p": wild.N_BOOT if n else 0,
    }


def holm(p_values: np.ndarray) -> np.ndarray:
    """Holm step-down adjusted p-values (NaNs left out of the family), in numpy.

    The same numbers as `inference.adjust(p, "holm")` without statsmodels' per-call garbage
    collection (which costs ~0.3 s a call in a large process).

    >>> holm(np.array([0.01, 0.04, np.nan])).round(3).tolist()
    [0.02, 0.04, nan]
    """
    p = np.asarray(p_values, dtype=np.float64)
    out = p.copy()
    ok = np.flatnonzero(~np.isnan(p))
    if ok.size == 0:
        return out
    order = ok[np.argsort(p[ok], kind="stable")]
    scaled = p[order] * np.arange(ok.size, 0, -1)
    out[order] = np.minimum(1.0, np.maximum.accumulate(scaled))
    return out


def holm_within(table: pd.DataFrame, family: Sequence[str], *, method: str = "holm") -> np.ndarray:
    """Return `p_value` adjusted within each `family` group of rows (`holm`, `bh`, `none`)."""
    out = np.full(len(table), np.nan)
    if table.empty:
        return out
    p = table["p_value"].to_numpy(dtype=float)
    for _, idx in table.groupby(list(family), sort=False).indices.items():
        out[idx] = holm(p[idx]) if method == "holm" else inference.adjust(p[idx], method)
    return out
