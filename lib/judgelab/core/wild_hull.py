r"""The exact p(r) of the restricted wild cluster bootstrap, and the hull that inverts it.

`core.wild` precomputes each replicate's statistic as a function of δ = (θ̂ − r)/κ: its
numerator is affine and its CR1 variance quadratic in δ, and the observed t² is c·δ² with
c = (κ/se)². Replicate b is "at least as extreme" where

    g_b(δ) = num_b(δ)² − c·δ²·den_b(δ) ≥ 0,

a quartic in δ; so p(r) — the share of extreme replicates — is a step function whose steps
sit at the real roots of B quartics. With a few dominant clusters p(r) is not monotone on
either side of θ̂: the set {r: p(r) ≥ α} can be two intervals, and a root search that stops
at the first crossing reports an interval the p-value at the null contradicts.

`steps` finds every step (batched companion-matrix roots, then each replicate's sign on
each side of its own roots); `hull` is the smallest interval holding every accepted r, and
`hull_p` the p-value that inverts it exactly at every level:

    p_hull(r₀) = min(sup_{r ≤ r₀} p(r), sup_{r ≥ r₀} p(r)) ≥ p(r₀),

since r₀ lies in the hull of {p ≥ α} iff accepted points exist on both sides of it. The side
holding θ̂ has p = 1, so p_hull is the largest p at or beyond r₀, away from the estimate.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

#: Relative slack of "at least as extreme" (a replicate that reproduces |t| ties it).
TIE = 1e-9
#: Steps narrower than this (relative to |δ|) are rounding, not p (see `_merge_slivers`).
SLIVER = 1e-7


class Steps(NamedTuple):
    """p as a step function of δ: `p[k]` holds on the open interval (edges[k-1], edges[k])."""

    edges: np.ndarray  # (m,) sorted breakpoints in δ
    p: np.ndarray  # (m + 1,) p on (−∞, e₀), (e₀, e₁), …, (e_{m−1}, ∞)


def extreme(prep: Any, delta: np.ndarray) -> np.ndarray:
    """Return whether each replicate is at least as extreme at δ (broadcast over `delta`).

    `prep` carries the replicate coefficients of `core.wild` (num0, num1, den0, den1, den2 as
    (B,) arrays, kappa, se); `delta` broadcasts against (B, 1) (e.g. shape (1, R) or (B, P)).
    A tie within `TIE` of the terms' size counts as extreme: the draws that rescale every
    cluster alike (v_g = c) reproduce |t| exactly, and rounding must not decide them.
    """
    n0, n1 = prep.num0[:, None], prep.num1[:, None]
    d0, d1, d2 = prep.den0[:, None], prep.den1[:, None], prep.den2[:, None]
    t2 = (prep.kappa * delta / prep.se) ** 2 if prep.se > 0 else np.inf * np.ones_like(delta)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        num2 = (n0 + delta * n1) ** 2
        rhs = t2 * (d0 + delta * d1 + delta**2 * d2)
        slack = TIE * ((np.abs(n0) + np.abs(delta * n1)) ** 2 + t2 * (d0 + np.abs(delta * d1)))
        return num2 >= rhs - slack


def _quartic_roots(coef: np.ndarray) -> np.ndarray:
    """Return the real parts of every root of each row's polynomial (NaN padded).

    `coef` is (B, 5), highest power first. Complex roots are kept as candidates too (their
    real parts only add probes where nothing changes), so a real double root that rounding
    makes a complex pair is never missed. Rows whose leading terms vanish fall back to
    `np.roots` one by one; the rest share one batched eigenvalue call.
    """
    B = len(coef)
    scale = np.max(np.abs(coef), axis=1, keepdims=True)
    scale[scale == 0] = 1.0
    c = coef / scale
    out = np.full((B, 4), np.nan)
    full = np.abs(c[:, 0]) > 1e-10
    if full.any():
        f = c[full]
        comp = np.zeros((len(f), 4, 4))
        comp[:, 0, :] = -f[:, 1:] / f[:, :1]
        comp[:, np.arange(1, 4), np.arange(3)] = 1.0
        out[full] = np.linalg.eigvals(comp).real
    for b in np.flatnonzero(~full):
        r = np.roots(np.trim_zeros(c[b], "f")).real if np.any(c[b]) else np.array([])
        out[b, : len(r)] = r
    return out


def steps(prep: Any) -> Steps:
    """Return p(δ) of a prepared bootstrap as a step function (see the module docstring)."""
    c = (prep.kappa / prep.se) ** 2
    n0, n1, d0, d1, d2 = prep.num0, prep.num1, prep.den0, prep.den1, prep.den2
    coef = np.column_stack([-c * d2, -c * d1, n1**2 - c * d0, 2 * n0 * n1, n0**2])
    # Draws that rescale every cluster alike reproduce |t| at every r: g ≡ 0 up to rounding,
    # and its "roots" are noise. Such a replicate has no steps (its state is read below).
    size = n0**2 + 2 * np.abs(n0 * n1) + n1**2 + c * (np.abs(d0) + np.abs(d1) + np.abs(d2))
    tied = np.max(np.abs(coef), axis=1) <= 1e-9 * size
    roots = _quartic_roots(np.where(tied[:, None], 0.0, coef))
    roots = np.sort(np.where(tied[:, None], np.nan, roots), axis=1)  # NaN last
    finite = np.isfinite(roots)
    # Probe each replicate between its own roots (and beyond them) to read its sign there.
    lo = np.where(finite[:, 0], roots[:, 0], 0.0)
    hi = np.nanmax(np.where(finite, roots, -np.inf), axis=1)
    hi = np.where(np.isfinite(hi), hi, 0.0)
    probes = np.empty((len(roots), 5))
    probes[:, 0] = lo - (1.0 + np.abs(lo))
    for j in range(1, 4):
        nxt = np.where(finite[:, j], roots[:, j], np.nan)
        probes[:, j] = np.where(finite[:, j], 0.5 * (roots[:, j - 1] + nxt), np.nan)
    probes[:, 4] = hi + (1.0 + np.abs(hi))
    # The probe after the last real root is the "beyond" probe: move it into place.
    n_real = finite.sum(axis=1)
    after = probes[:, 4].copy()
    probes[:, 4] = np.nan
    probes[np.arange(len(roots)), n_real] = after
    inside = np.where(np.isfinite(probes), probes, 0.0)
    state = extreme(prep, inside) & np.isfinite(probes)
    # A replicate's count changes at its root j by state[j + 1] − state[j].
    change = state[:, 1:].astype(np.int64) - state[:, :-1].astype(np.int64)
    keep = finite
    edges = roots[keep]
    jumps = change[:, :4][keep]
    order = np.argsort(edges, kind="stable")
    edges, jumps = edges[order], jumps[order]
    counts = state[:, 0].sum() + np.concatenate([[0], np.cumsum(jumps)])
    return _merge_slivers(Steps(edges=edges, p=counts / len(roots)), prep.se / prep.kappa)


def _merge_slivers(st: Steps, unit: float) -> Steps:
    """Drop steps narrower than `SLIVER` of |δ| or of `unit` (one standard error in δ).

    Rounding splits a double root in two and scatters the roots that sit at δ = 0 around it;
    between such twins the sign of the quartic is rounding noise, so that step's p is not a
    value of p(r). The steps on either side meet at its midpoint.
    """
    left = np.concatenate([[-np.inf], st.edges])
    right = np.concatenate([st.edges, [np.inf]])
    keep = (right - left) > SLIVER * np.maximum(unit, np.maximum(np.abs(left), np.abs(right)))
    keep[[0, -1]] = True
    if keep.all():
        return st
    kept = np.flatnonzero(keep)
    edges = 0.5 * (right[kept[:-1]] + left[kept[1:]])
    return Steps(edges=edges, p=st.p[kept])


def _window(st: Steps, d_lo: float, d_hi: float) -> np.ndarray:
    """Return which open intervals of `st` meet the closed δ-window [d_lo, d_hi]."""
    left = np.concatenate([[-np.inf], st.edges])
    right = np.concatenate([st.edges, [np.inf]])
    return (right >= d_lo) & (left <= d_hi)


def hull(st: Steps, alpha: float, d_lo: float, d_hi: float) -> tuple[float, float]:
    """Return the δ-hull of {δ in [d_lo, d_hi]: p(δ) ≥ alpha} (NaN, NaN when it is empty)."""
    left = np.concatenate([[-np.inf], st.edges])
    right = np.concatenate([st.edges, [np.inf]])
    ok = np.flatnonzero((st.p >= alpha) & _window(st, d_lo, d_hi))
    if not len(ok):
        return float("nan"), float("nan")
    return max(float(left[ok[0]]), d_lo), min(float(right[ok[-1]]), d_hi)


def hull_p(st: Steps, delta0: float, p0: float, d_lo: float, d_hi: float) -> float:
    """Return p_hull at δ₀: the largest p at or beyond δ₀ away from δ = 0, and p(δ₀) itself."""
    if delta0 == 0:
        return 1.0
    if delta0 > 0:
        window = _window(st, delta0, d_hi)
    else:
        window = _window(st, d_lo, delta0)
    beyond = st.p[window]
    return float(max(p0, beyond.max())) if len(beyond) else float(p0)


__all__ = ["TIE", "Steps", "extreme", "hull", "hull_p", "steps"]
