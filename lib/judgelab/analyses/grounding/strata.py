"""Stratified prediction-powered estimates: one PPI++ per stratum, combined by population share.

When the human subset was drawn per stratum (say 30 % of hard items, 5 % of easy ones), the
labelled items are not a random sample of all items and an unstratified estimate is biased
wherever the judge's error differs between strata. Each stratum h gets its own estimate
θ̂_h (its own λ̂_h, its own n_h and N_h) and they are combined with the strata's population
weights W_h = (n_h + N_h) / (n + N), the items of h among all items:

    θ̂ = Σ_h W_h θ̂_h,    σ² = Σ_h W_h² σ²_h,    interval θ̂ ± z σ.

With clusters the bootstrap resamples clusters within each stratum (a cluster spanning two
strata is resampled in each separately) and combines the replicates with the same weights;
the interval comes from the combined replicates (t with clusters − strata degrees of freedom,
or percentile). The naive and classical
rows are combined the same way (z intervals: a weighted sum of rates is not binomial), and
the `lambda` column holds Σ_h W_h λ̂_h.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from judgelab.analyses.grounding import ppi
from judgelab.core import stats


def _combine(parts: list[dict], weights: np.ndarray, *, variance: bool) -> dict:
    """Return {method: (Σ W θ, Σ W² σ², Σ W λ)} over strata (replicates stay aligned)."""
    out = {}
    for method in ppi.METHODS:
        theta = sum(w * p[method][0] for w, p in zip(weights, parts, strict=True))
        lam = sum(w * p[method][2] for w, p in zip(weights, parts, strict=True))
        var = (
            sum(w**2 * p[method][1] for w, p in zip(weights, parts, strict=True))
            if variance
            else np.full_like(theta, np.nan)
        )
        out[method] = (theta, var, lam)
    return out


def stratified_rows(
    f: np.ndarray,
    y: np.ndarray,
    labelled: np.ndarray,
    strata: np.ndarray,
    units: np.ndarray,
    *,
    lam: float | str,
    how: str,
    level: float,
    n_boot: int,
    seed: int,
    counts: dict[str, Any],
    bootstrap_ci: str = "t",
) -> list[dict[str, Any]]:
    """Return one row per method of the stratified estimates (see the module docstring).

    Args:
        f: Judge labels (n × 1).
        y: Human labels (n × 1).
        labelled: Which items carry a human label.
        strata: The stratum of every item.
        units: Integer resampling unit of every item (`ppi.unit_codes`).
        lam: "tuned" or a fixed λ, used in every stratum.
        how: `z` or `bootstrap`.
        level: Confidence level.
        n_boot: Bootstrap replicates.
        seed: Seed of the bootstrap (each stratum draws from `rng_for(seed, stratum)`).
        counts: `n_labelled`, `n_total`, `n_clusters` of every row.
        bootstrap_ci: `t` (df = clusters − strata) or `percentile`.

    Raises:
        ValueError: A stratum has fewer than 2 labelled items.
    """
    s = np.asarray(strata, dtype=object)
    if s.shape != (len(f),):
        raise ValueError(f"stratum has {s.shape} entries for {len(f)} items")
    names = sorted({str(v) for v in s})
    s = s.astype(str)
    weights, points, reps = [], [], []
    for name in names:
        idx = np.flatnonzero(s == name)
        n_lab = int(labelled[idx].sum())
        if n_lab < 2:
            raise ValueError(f"stratum {name!r} has {n_lab} labelled item(s); need >= 2")
        rows = ppi.moment_rows(y[idx], f[idx], labelled[idx])
        weights.append(len(idx) / len(f))
        points.append(ppi.all_methods(rows.sum(axis=0)[None], 1, lam=lam, ratio=False))
        if how == "bootstrap":
            local = np.unique(units[idx], return_inverse=True)[1].ravel()
            rng = stats.rng_for(seed, "grounding.stratum", name)
            reps.append(
                ppi.bootstrap_methods(rows, local, 1, lam=lam, ratio=False, n_boot=n_boot, rng=rng)
            )
    w = np.asarray(weights)
    point = _combine(points, w, variance=True)
    boot = _combine(reps, w, variance=False) if reps else None
    df = int(counts["n_clusters"]) - len(names)
    return ppi.method_rows(point, reps=boot, wilson=None, level=level, counts=counts,
                           bootstrap_ci=bootstrap_ci, df=df)  # fmt: skip
