"""Score drift: how a scored judge's scores move when it is swapped for another on the same units.

The mean shift (B − A, paired per unit) is a ratio of sums through `core.estimates.ratio`
(restricted wild cluster bootstrap, inverted: its p-value tests no shift); each quantile
shift (the q-quantile of B's scores − that of A's) takes the percentile cluster bootstrap
(`core.stats.bootstrap_weights` over clusters, weighted quantiles), reported with the same
clusters and effective clusters as the mean.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from judgelab.analyses.stability import units as _units
from judgelab.core import clusters, estimates, stats, wild

#: Quantiles whose shift `score_drift` reports by default.
QUANTILES: tuple[float, ...] = (0.1, 0.25, 0.5, 0.75, 0.9)


def weighted_quantiles(values: np.ndarray, weights: np.ndarray, q: Sequence[float]) -> np.ndarray:
    """Return the q-quantiles (inverse weighted CDF) of `values` per row of `weights` (B × n).

    >>> weighted_quantiles(np.array([3.0, 1.0, 2.0]), np.ones((1, 3)), [0.5]).tolist()
    [[2.0]]
    """
    order = np.argsort(values, kind="stable")
    v = np.asarray(values, dtype=np.float64)[order]
    w = np.atleast_2d(np.asarray(weights, dtype=np.float64))[:, order]
    cum = np.cumsum(w, axis=1)
    total = cum[:, -1:]
    out = np.empty((w.shape[0], len(q)))
    for j, p in enumerate(q):
        idx = (cum < p * total - 1e-12).sum(axis=1)
        out[:, j] = v[np.minimum(idx, len(v) - 1)]
    return out


def score_drift(
    judgments: pd.DataFrame,
    a: str,
    b: str,
    *,
    by: str = "judge",
    quantiles: Sequence[float] = QUANTILES,
    seed: int = 0,
    level: float = 0.95,
    n_boot: int = wild.N_BOOT,
    n_boot_quantiles: int = 999,
) -> pd.DataFrame:
    """Return the mean and quantile shifts of B's numeric verdicts against A's on shared units.

    Args:
        judgments: A judgments table whose `verdict` parses as a number for A and B.
        a: The value of `by` taken as the reference (A).
        b: The value of `by` swapped in (B).
        by: The column whose values are swapped (`judge`, `prompt`, …).
        quantiles: Quantiles whose shift is reported.
        seed: Seed of the bootstraps.
        level: Confidence level.
        n_boot: Wild bootstrap replicates of the mean shift.
        n_boot_quantiles: Cluster bootstrap replicates of the quantile shifts.

    Returns:
        `a`, `b`, `statistic` (`mean` or `q0.5`, …), `value_a`, `value_b`, then
        `estimates.FIELDS` of the shift B − A (p_value only for the mean: of no shift).
    """
    rows = judgments.assign(verdict=pd.to_numeric(judgments["verdict"], errors="coerce"))
    w = _units.wide(rows, by=by, label="verdict")
    for name in (a, b):
        if name not in w.columns:
            raise KeyError(f"score_drift: no numeric verdicts with {by}={name!r}")
    both = w[w[a].notna() & w[b].notna()]
    xa = both[a].astype(float).to_numpy()
    xb = both[b].astype(float).to_numpy()
    codes = _units.unit_codes(both)
    mean = estimates.ratio(
        xb - xa, np.ones(len(xa)), codes, null=0.0, bounds=None, level=level, n_boot=n_boot,
        rng=estimates.seeded(seed, "drift", by, a, b, "mean"),
    )  # fmt: skip
    out = [
        {"a": a, "b": b, "statistic": "mean", "value_a": _mean(xa), "value_b": _mean(xb)}
        | mean.fields()
    ]
    if len(xa) == 0 or not len(quantiles):
        return pd.DataFrame(out)
    G = int(codes.max()) + 1
    qa = weighted_quantiles(xa, np.ones((1, len(xa))), quantiles)[0]
    qb = weighted_quantiles(xb, np.ones((1, len(xb))), quantiles)[0]
    rng = estimates.seeded(seed, "drift", by, a, b, "quantiles")
    wg = stats.bootstrap_weights(G, n_boot=n_boot_quantiles, rng=rng)
    shifts = weighted_quantiles(xb, wg[:, codes], quantiles) - weighted_quantiles(
        xa, wg[:, codes], quantiles
    )
    low, high = stats.percentile_interval(shifts, level=level)
    few = bool(mean.n_eff_clusters < clusters.FEW_EFFECTIVE)
    method = f"percentile cluster bootstrap (B={n_boot_quantiles})"
    for j, q in enumerate(quantiles):
        out.append(
            {"a": a, "b": b, "statistic": f"q{q:g}", "value_a": qa[j], "value_b": qb[j]}
            | {"value": qb[j] - qa[j], "ci_low": low[j], "ci_high": high[j]}
            | {"p_value": np.nan, "n": float(len(xa)), "n_clusters": G}
            | {"n_eff_clusters": mean.n_eff_clusters, "few_clusters": few, "method": method}
        )
    return pd.DataFrame(out)


def drift_reason(judgments: pd.DataFrame, a: str, b: str, *, by: str = "judge") -> str | None:
    """Return why a score drift of B against A cannot be shown, None when it can."""
    if by in judgments.columns and "verdict" in judgments.columns:
        rows = judgments[judgments[by].isin([a, b])]
        scored = rows[pd.to_numeric(rows["verdict"], errors="coerce").notna()]
        if scored[by].nunique() == 2:
            return None
    return (
        f"{a!r} and {b!r} did not both give numeric scores here, so there is no score "
        "distribution to compare; a scored judge (ratings, probabilities) run twice shows it"
    )


def _mean(x: np.ndarray) -> float:
    return float(x.mean()) if len(x) else float("nan")
