"""Tests from bootstrap replicates, their Monte-Carlo precision, and multiplicity control.

- `bootstrap_p(replicates, null)`: the two-sided p-value of "the statistic equals `null`"
  read from its bootstrap distribution (twice the smaller tail beyond `null`; the p-value
  that inverts the percentile interval);
- `adaptive_p(draw, ...)`: the same, drawing more replicates until the Monte-Carlo standard
  error of p is below `rel_error` × p — a p of 0.005 needs ~40,000 replicates, one of 0.3 a
  few hundred — or, at `max_boot`, reporting p as a bound (`PValue.bound`: p is at most this);
- `adjust(p, method)`: Holm (family-wise) or Benjamini–Hochberg (false discovery rate)
  adjusted p-values across a family of tests, NaNs left out of the family;
- `mc_se(rate, n)`: the Monte-Carlo standard error of a rate estimated from n replicates.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np

#: Multiplicity corrections `adjust` knows (Holm: family-wise error; BH: false discovery rate).
ADJUSTMENTS = ("holm", "bh", "none")


class PValue(NamedTuple):
    """A bootstrap p-value, the replicates behind it and its Monte-Carlo standard error."""

    p: float
    n_boot: int
    mc_se: float
    bound: bool  # True: p is an upper bound (too few replicates beyond the null to resolve it)


def _tails(replicates: np.ndarray, null: float) -> tuple[int, int, int]:
    reps = np.asarray(replicates, dtype=np.float64).ravel()
    reps = reps[~np.isnan(reps)]
    return int(np.sum(reps <= null)), int(np.sum(reps >= null)), int(reps.size)


def _p_from(low: int, high: int, n: int) -> PValue:
    if n == 0:
        return PValue(float("nan"), 0, float("nan"), False)
    q = min(low, high) / n
    p = min(1.0, 2.0 * q)
    se = 2.0 * np.sqrt(max(q * (1.0 - q), 0.0) / n)
    if min(low, high) == 0:
        # No replicate beyond the null: p is below what n replicates resolve.
        return PValue(min(1.0, 2.0 / n), n, float("nan"), True)
    return PValue(p, n, float(se), False)


def bootstrap_p(replicates: np.ndarray, null: float = 0.0) -> float:
    """Return the two-sided bootstrap p-value of `statistic == null` (NaN replicates ignored).

    >>> bootstrap_p(np.array([-1.0, 1.0, 2.0, 3.0]))
    0.5
    """
    low, high, n = _tails(replicates, null)
    if n == 0:
        return float("nan")
    return float(min(1.0, 2.0 * min(low, high) / n))


def adaptive_p(
    draw: Callable[[int], np.ndarray],
    *,
    null: float = 0.0,
    first: np.ndarray | None = None,
    n_boot: int = 1000,
    max_boot: int = 40_000,
    rel_error: float = 0.10,
) -> PValue:
    """Return a bootstrap p-value resolved to `rel_error` relative Monte-Carlo error.

    `draw(k)` returns k more replicates of the statistic (1-D; NaNs ignored); `first`, when
    given, are replicates already drawn (e.g. those behind the interval). Replicates are
    added, doubling, until MC-SE(p) < `rel_error` × p or `max_boot` is reached; then, if
    still unresolved, `bound` is True and `p` is the upper end (p + 2 MC-SE, or 2 / B when
    no replicate crossed the null).
    """
    if n_boot < 1 or max_boot < n_boot:
        raise ValueError(f"need 1 <= n_boot <= max_boot, got {n_boot}, {max_boot}")
    reps = first if first is not None else draw(n_boot)
    low, high, n = _tails(reps, null)
    total = len(np.asarray(reps).ravel())
    while True:
        out = _p_from(low, high, n)
        if n == 0:
            return out
        resolved = not out.bound and out.mc_se < rel_error * out.p
        if resolved or out.p >= 1.0 or total >= max_boot:
            break
        k = min(total, max_boot - total)
        more = draw(k)
        dl, dh, dn = _tails(more, null)
        low, high, n, total = low + dl, high + dh, n + dn, total + k
    if not out.bound and out.mc_se >= rel_error * out.p and out.p < 1.0:
        return PValue(min(1.0, out.p + 2 * out.mc_se), out.n_boot, out.mc_se, True)
    return out


def adjust(p_values: np.ndarray, method: str = "holm") -> np.ndarray:
    """Return multiplicity-adjusted p-values (`ADJUSTMENTS`); NaNs stay NaN, outside the family.

    >>> adjust(np.array([0.01, 0.04, np.nan]), "holm").round(3).tolist()
    [0.02, 0.04, nan]
    """
    if method not in ADJUSTMENTS:
        raise ValueError(f"unknown adjustment {method!r}; known: {list(ADJUSTMENTS)}")
    p = np.asarray(p_values, dtype=np.float64)
    out = p.copy()
    ok = ~np.isnan(p)
    if method == "none" or not ok.any():
        return out
    out[ok] = _holm(p[ok]) if method == "holm" else _bh(p[ok])
    return out


def _holm(p: np.ndarray) -> np.ndarray:
    """Holm's step-down adjustment: max over j ≤ i of (m − j) · p_(j), capped at 1."""
    m = p.size
    order = np.argsort(p, kind="stable")
    steps = np.maximum.accumulate((m - np.arange(m)) * p[order])
    out = np.empty(m)
    out[order] = np.minimum(steps, 1.0)
    return out


def _bh(p: np.ndarray) -> np.ndarray:
    """Benjamini–Hochberg: min over j ≥ i of m · p_(j) / j, capped at 1."""
    m = p.size
    order = np.argsort(p, kind="stable")
    scaled = p[order] * m / np.arange(1, m + 1)
    steps = np.minimum.accumulate(scaled[::-1])[::-1]
    out = np.empty(m)
    out[order] = np.minimum(steps, 1.0)
    return out


def mc_se(rate: float, n: int) -> float:
    """Return the Monte-Carlo standard error of a rate estimated from `n` replicates.

    >>> round(mc_se(0.95, 500), 4)
    0.0097
    """
    if n <= 0:
        return float("nan")
    return float(np.sqrt(rate * (1.0 - rate) / n))
