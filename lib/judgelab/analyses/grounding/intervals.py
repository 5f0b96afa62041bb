"""The intervals of the PPI estimates (`ppi`): which construction, and the rows that report it.

`resolve_interval` picks the construction for the estimand (`ppi.TARGETS`); `jackknife` and
`deletions` give the delete-one-unit variances, `bootstrap_methods` and `boot_interval` the
cluster bootstrap; `method_rows` lays out one row per method with its interval.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from judgelab.analyses.grounding.ppi import (
    BOOTSTRAP_CIS,
    INTERVALS,
    JACKKNIFED,
    METHODS,
    TARGETS,
    all_methods,
    z_quantile,
)
from judgelab.core import clusters, stats
from judgelab.errors import check_choice


def resolve_interval(
    interval: str, n_items: int, n_clusters: int, has_cluster: bool, target: str = "population"
) -> str:
    """Return the construction `interval` names (`auto`: see `INTERVALS`)."""
    check_choice("interval", interval, INTERVALS)
    check_choice("target", target, TARGETS)
    if interval != "auto":
        return interval
    if target == "items":
        return "finite"
    return "wild" if has_cluster and n_clusters < n_items else "jackknife"


def jackknife(
    sums: np.ndarray,
    deleted: np.ndarray,
    k: int,
    *,
    lam: float | str,
    ratio: bool,
    target: str,
    fpc: np.ndarray | float = 1.0,
    methods: tuple[str, ...] = JACKKNIFED,
) -> dict[str, np.ndarray]:
    """Return the delete-one-unit jackknife variance of `methods`, per row of `sums`.

    Args:
        sums: Summed moment rows of each data set (R × p).
        deleted: The sums of every deletion (R × m × p, NaN rows ignored; `deletions`).
        k: Label columns.
        lam: λ rule ("tuned": re-tuned on every deletion, which is what the plug-in
            variance misses with few labels).
        ratio: A ratio estimand.
        target: `population` or `items` (the estimate's formula is the same).
        fpc: Finite-population correction per row (`deletions`).
        methods: The methods to return.

    Returns:
        {method: variance (R,)}: fpc · (m − 1)/m · Σ_i (θ̂_(i) − θ̄)², m the deletions.
    """
    R, m, p = deleted.shape
    fits = all_methods(deleted.reshape(R * m, p), k, lam=lam, ratio=ratio, target=target)
    used = np.isfinite(deleted[:, :, 0])
    count = used.sum(axis=1)
    out = {}
    for method in methods:
        theta = np.where(used, fits[method][0].reshape(R, m), np.nan)
        dev = theta - np.nanmean(theta, axis=1, keepdims=True)
        with np.errstate(divide="ignore", invalid="ignore"):
            out[method] = np.asarray(fpc) * (count - 1) / count * np.nansum(dev**2, axis=1)
    return out


def deletions(
    lab_rows: np.ndarray,
    unl_rows: np.ndarray,
    labelled: np.ndarray,
    units: np.ndarray,
    *,
    target: str,
) -> tuple[np.ndarray, np.ndarray, float, int]:
    """Return (sums (1 × p), deletions (1 × m × p), fpc, m) of one data set for `jackknife`.

    `lab_rows` / `unl_rows` hold every item's moment rows as if labelled / unlabelled;
    `units` the integer unit of every item (the item itself, or its cluster). For the
    `population` target a deletion drops one unit (labelled items and all); for `items`
    it moves one labelled unit's items to the unlabelled set — the finite population
    stays, the labelled sample loses the unit — and fpc = 1 − (labelled units) / (units).
    """
    lab = np.asarray(labelled, dtype=bool)
    rows = np.where(lab[:, None], lab_rows, unl_rows)
    total = rows.sum(axis=0)
    n_units = int(units.max()) + 1
    if target == "items":
        moved = clusters.sum_by(np.where(lab[:, None], lab_rows - unl_rows, 0.0), units)
        chosen = np.bincount(units, weights=lab.astype(float), minlength=n_units) > 0
        deleted = total[None] - moved[chosen]
        fpc = 1.0 - chosen.sum() / n_units
    else:
        deleted = total[None] - clusters.sum_by(rows, units)
        fpc = 1.0
    return total[None], deleted[None], fpc, len(deleted)


def bootstrap_methods(
    rows: np.ndarray,
    units: np.ndarray,
    k: int,
    *,
    lam: float | str,
    ratio: bool,
    n_boot: int,
    rng: np.random.Generator,
) -> dict:
    """Return `all_methods` on `n_boot` cluster-bootstrap replicates (Rao–Wu, λ̂ re-tuned)."""
    per_unit = clusters.sum_by(rows, units)
    reps = stats.bootstrap_sums(per_unit, n_boot=n_boot, rng=rng)
    return all_methods(reps, k, lam=lam, ratio=ratio)


def boot_interval(
    theta: float, replicates: np.ndarray, *, level: float, ci: str, df: int
) -> tuple[float, float, float]:
    """Return (low, high, se) of a cluster-bootstrap interval around `theta`.

    `t`: θ̂ ± t_{df} · SE, SE the replicates' standard deviation, clipped to their range;
    `percentile`: the replicates' quantiles. NaN replicates are ignored.
    """
    check_choice("bootstrap_ci", ci, BOOTSTRAP_CIS)
    r = np.asarray(replicates, dtype=np.float64)
    r = r[np.isfinite(r)]
    if r.size < 2 or not np.isfinite(theta):
        return np.nan, np.nan, np.nan
    se = float(np.std(r, ddof=1))
    if ci == "percentile":
        low, high = stats.percentile_interval(r, level=level)
        return float(low), float(high), se
    q = z_quantile(level, int(df))
    return float(max(theta - q * se, r.min())), float(min(theta + q * se, r.max())), se


def method_rows(
    point: dict,
    *,
    reps: dict | None,
    wilson: dict | None,
    level: float,
    counts: dict[str, Any],
    bootstrap_ci: str = "t",
    df: int = 1,
    finite_df: int | None = None,
    jack: dict[str, float] | None = None,
    jack_df: int | None = None,
    jack_label: str = "jackknife",
) -> list[dict[str, Any]]:
    """Return one row per method: z (or Wilson) interval, or one from bootstrap `reps`.

    Args:
        point: `all_methods` on the full data (one row of sums).
        reps: `all_methods` on bootstrap replicates, or None for closed-form intervals.
        wilson: {method: (successes, trials)} for methods whose interval is Wilson.
        level: Confidence level.
        counts: `n_labelled`, `n_total`, `n_clusters` of every row.
        bootstrap_ci: `t` or `percentile` (`boot_interval`).
        df: Degrees of freedom of the bootstrap-t interval (clusters − strata).
        finite_df: With the `items` target: the t degrees of freedom of the labelled rows'
            finite-population intervals (labelled units − strata); None: z intervals.
        jack: {method: jackknife variance} of methods whose interval is θ̂ ± t · √(var).
        jack_df: Degrees of freedom of those t intervals (labelled items − strata).
        jack_label: The `interval` name of those rows.
    """
    z = z_quantile(level)
    zf = z if finite_df is None else z_quantile(level, max(int(finite_df), 1))
    out = []
    for method in METHODS:
        theta, var, lam = (float(np.asarray(v).ravel()[0]) for v in point[method])
        if reps is not None:
            low, high, se = boot_interval(
                theta, reps[method][0], level=level, ci=bootstrap_ci, df=df
            )
            how = f"bootstrap_{bootstrap_ci}"
        elif jack is not None and method in jack:
            se = float(np.sqrt(jack[method]))
            q = z_quantile(level, max(int(jack_df or 1), 1))
            low, high, how = theta - q * se, theta + q * se, f"{jack_label} t({int(jack_df or 1)})"
        elif wilson is not None and method in wilson:
            bounds = stats.wilson_interval(*wilson[method], level=level)
            low, high = (float(np.ravel(v)[0]) for v in bounds)
            se, how = float(np.sqrt(var)), "wilson"
        elif finite_df is not None and method != "naive":
            se = float(np.sqrt(var)) if var >= 0 else np.nan
            low, high, how = theta - zf * se, theta + zf * se, f"finite t({int(finite_df)})"
        else:
            se = float(np.sqrt(var)) if var >= 0 else np.nan
            low, high, how = theta - z * se, theta + z * se, "z"
        out.append(
            {"method": method, "estimate": theta, "ci_low": low, "ci_high": high,
             "width": high - low, "se": se, **counts, "lambda": lam, "interval": how}
        )  # fmt: skip
    return out
