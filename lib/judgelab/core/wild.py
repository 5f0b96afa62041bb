r"""Wild cluster bootstrap tests, restricted under the null, and the intervals that invert them.

The default inference of every test in judgelab (DESIGN §9). A statistic is a linear
combination θ = a'β of the coefficients of a weighted least-squares problem whose rows fall
into clusters (the independent units); ratios of sums are such problems (`ratio_problem`:
Σ num / Σ den is the WLS fit of num = θ·den with weights 1/den), and so are differences of
ratios over the same or different items (`ratios_problem`: one coefficient per group). A
problem is kept only through its per-cluster sums: H_g = X_g'W_gX_g and b_g = X_g'W_gy_g,
which is all the bootstrap needs (Roodman, MacKinnon, Nielsen & Webb 2019, "Fast and wild").

**The test of a'β = r** (WCR: MacKinnon & Webb 2017). The statistic is the CR1 t statistic.
The bootstrap imposes the null: y* = Xβ̃ + v_g·ũ_g with β̃ the restricted fit, ũ its
residuals, and one weight v_g per cluster; each replicate's t* is studentized with its own
CR1 variance, and p = share of replicates with |t*| ≥ |t| (symmetric). Weights: Rademacher
(±1), or Webb's six-point distribution (±√(1/2), ±1, ±√(3/2)) with fewer than
`WEBB_BELOW` clusters, where Rademacher has too few distinct draws; when all
distinct draws number at most `n_boot` they are enumerated (an exact randomization p-value).

**The interval** is the set of r the test does not reject at 1 − `level`. Because the
restricted fit is affine in r, each replicate's numerator is affine and its CR1 variance
quadratic in r: the bootstrap is computed once (O(B·G·k)) and p(r) then costs O(B) per r.
With many clusters p(r) falls monotonically away from θ̂ and bisection on each side finds the
interval. With few (fewer than `EXACT_BELOW` clusters by their share of the information) it
need not: the accepted set can be two intervals, and the p-value at the null can then
contradict a first-crossing interval. There `core.wild_hull` computes p(r) exactly (a step
function) and reports its hull with the hull p-value min(sup_{r ≤ r₀} p, sup_{r ≥ r₀} p) ≥ p(r₀),
which inverts it at every level; so does any bisection result that would contradict its p.

The CR1 standard error and its t(G − 1) Wald interval are returned too, as the analytic
companion (`WildResult.se`, `wald_low`, `wald_high`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from judgelab.core import wild_hull

#: Below this many clusters the weights are Webb's six-point distribution (else Rademacher).
WEBB_BELOW = 12
#: Below this many information-effective clusters p(r) is computed exactly (`core.wild_hull`).
EXACT_BELOW = 12
#: Default bootstrap replicates (α·(B + 1) is an integer at α = 0.05, 0.01).
N_BOOT = 1999
#: Weight distributions by name (`"auto"`: Webb below `WEBB_BELOW` clusters, else Rademacher).
WEIGHTS = ("auto", "rademacher", "webb")
#: Largest B × G the bootstrap is run on (its arrays are B × G floats, several of them);
#: beyond it callers take the analytic companion, which the bootstrap approaches with that
#: many clusters (`beyond_limit`).
MAX_CELLS = 5_000_000
_WEBB = np.array([-np.sqrt(1.5), -1.0, -np.sqrt(0.5), np.sqrt(0.5), 1.0, np.sqrt(1.5)])


def beyond_limit(n_clusters: int, n_boot: int) -> bool:
    """Whether B × G is beyond `MAX_CELLS` (the bootstrap's arrays would not fit).

    >>> beyond_limit(2_000, 1_999), beyond_limit(10_000, 1_000)
    (False, True)
    """
    return n_clusters * n_boot > MAX_CELLS


class Linear(NamedTuple):
    """A weighted least-squares problem summarised per cluster (G clusters, k coefficients)."""

    H: np.ndarray  # (G, k, k): X_g' W_g X_g
    b: np.ndarray  # (G, k): X_g' W_g y_g

    @property
    def n_clusters(self) -> int:
        """Clusters that carry any weight."""
        return int(np.sum(np.abs(self.H).reshape(len(self.H), -1).sum(axis=1) > 0))


class WildResult(NamedTuple):
    """A wild-cluster-bootstrap test of a'β = null, with the interval that inverts it."""

    estimate: float
    ci_low: float
    ci_high: float
    p_value: float
    null: float
    se: float  # CR1 standard error
    wald_low: float  # estimate ∓ t(G−1) · se
    wald_high: float
    n_clusters: int
    weights: str
    n_boot: int  # replicates (all distinct draws when enumerated)


def wls_problem(
    X: np.ndarray, y: np.ndarray, codes: np.ndarray, weights: np.ndarray | None = None
) -> Linear:
    """Summarise a WLS problem (rows X, y, optional weights) per cluster `codes` (0..G−1)."""
    X = np.asarray(X, dtype=np.float64)
    if X.ndim == 1:
        X = X[:, None]
    y = np.asarray(y, dtype=np.float64)
    w = np.ones(len(y)) if weights is None else np.asarray(weights, dtype=np.float64)
    codes = np.asarray(codes, dtype=np.int64)
    G = int(codes.max()) + 1 if codes.size else 0
    k = X.shape[1]
    H = np.zeros((G, k, k))
    np.add.at(H, codes, (X * w[:, None])[:, :, None] * X[:, None, :])
    b = np.zeros((G, k))
    np.add.at(b, codes, X * (w * y)[:, None])
    return Linear(H, b)


def ratio_problem(num: np.ndarray, den: np.ndarray, codes: np.ndarray) -> Linear:
    """Return the problem whose one coefficient is Σ num / Σ den (rows with den = 0 add nothing).

    >>> num, den = np.array([1.0, 0.0, 2.0]), np.array([1.0, 1.0, 2.0])
    >>> p = ratio_problem(num, den, np.array([0, 0, 1]))
    >>> p.b[:, 0].tolist(), p.H[:, 0, 0].tolist()
    ([1.0, 2.0], [2.0, 2.0])
    """
    return ratios_problem(num, den, np.zeros(len(np.asarray(num)), dtype=np.int64), codes, 1)


def ratios_problem(
    num: np.ndarray, den: np.ndarray, group: np.ndarray, codes: np.ndarray, n_groups: int
) -> Linear:
    """Return the saturated problem with β_j = Σ num / Σ den over the rows of group j.

    Rows of several groups may share a cluster (two judges on the same items: a paired
    difference; own-model and other answers to one question); the clusters are the units.
    Per cluster, H_g is diagonal with the group's Σ den and b_g holds its Σ num.
    """
    num = np.asarray(num, dtype=np.float64)
    den = np.asarray(den, dtype=np.float64)
    group = np.asarray(group, dtype=np.int64)
    codes = np.asarray(codes, dtype=np.int64)
    G = int(codes.max()) + 1 if codes.size else 0
    D = np.zeros((G, n_groups))
    Y = np.zeros((G, n_groups))
    np.add.at(D, (codes, group), den)
    np.add.at(Y, (codes, group), num)
    H = np.zeros((G, n_groups, n_groups))
    idx = np.arange(n_groups)
    H[:, idx, idx] = D
    return Linear(H, Y)


def draw_weights(
    n_clusters: int, n_boot: int, rng: np.random.Generator, kind: str = "auto"
) -> tuple[np.ndarray, str]:
    """Return a (B × G) matrix of cluster weights and the distribution's name.

    All distinct draws are enumerated when they number at most `n_boot` (then B = their count).
    """
    if kind not in WEIGHTS:
        raise ValueError(f"unknown wild weights {kind!r}; known: {list(WEIGHTS)}")
    if kind == "auto":
        kind = "webb" if n_clusters < WEBB_BELOW else "rademacher"
    values = np.array([-1.0, 1.0]) if kind == "rademacher" else _WEBB
    if len(values) ** n_clusters <= n_boot:
        grid = np.array(np.meshgrid(*[values] * n_clusters, indexing="ij"))
        return grid.reshape(n_clusters, -1).T.copy(), f"{kind} (all {len(values) ** n_clusters})"
    # = rng.choice(values, size), the same draws without its checks
    return values.take(rng.integers(0, len(values), size=(n_boot, n_clusters))), kind


class _Prepared(NamedTuple):
    """The bootstrap of one problem and contrast, as coefficients of r (see `_prepare`)."""

    theta: float
    kappa: float
    se: float
    num0: np.ndarray
    num1: np.ndarray
    den0: np.ndarray
    den1: np.ndarray
    den2: np.ndarray
    n_clusters: int
    weights: str
    g_info: float  # 1 / Σ w_g², w_g the clusters' shares of the information about a'β


def _prepare(
    problem: Linear, a: np.ndarray, *, n_boot: int, rng: np.random.Generator, weights: str
) -> _Prepared | None:
    """Precompute the WCR bootstrap of a'β as functions of δ = (θ̂ − r) / κ (None: no test)."""
    keep = np.abs(problem.H).reshape(len(problem.H), -1).sum(axis=1) > 0
    H, b = problem.H[keep], problem.b[keep]
    G = len(H)
    if G < 2:
        return None
    Hs = H.sum(axis=0)
    try:
        M = np.linalg.inv(Hs)
    except np.linalg.LinAlgError:
        M = np.linalg.pinv(Hs)
    beta = M @ b.sum(axis=0)
    m = M @ a
    kappa = float(a @ m)
    if not np.isfinite(kappa) or kappa <= 0:
        return None
    s_hat = b - H @ beta  # unrestricted scores per cluster (G × k)
    q_hat = s_hat @ m
    c = G / (G - 1)
    se = float(np.sqrt(c * np.sum(q_hat**2)))
    # Scores that cancel to rounding (every cluster shows the same effect) carry no variance.
    size = (np.linalg.norm(b, axis=1) + np.linalg.norm(H @ beta, axis=1)) * np.linalg.norm(m)
    if se <= 1e-12 * float(np.sqrt(c * np.sum(size**2))):
        se = 0.0
    Hm = H @ m  # (G × k)
    d = Hm @ M  # rows d_g' = (M H_g m)' (M symmetric)
    mHm = Hm @ m
    V, kind = draw_weights(G, n_boot, rng, weights)
    # Replicate b's scores are E0 + δ·E1 with E0 = v∘q̂ − S0·d', E1 = v∘mHm − T·d' (B × G);
    # their sums of squares expand into products of V with G-vectors: one pass over V
    # instead of a dozen over B × G arrays (identical up to rounding).
    k = len(m)
    P = V @ np.column_stack([s_hat, Hm, q_hat[:, None] * d, mHm[:, None] * d])
    S0, T, Vqd, Vmd = P[:, :k], P[:, k : 2 * k], P[:, 2 * k : 3 * k], P[:, 3 * k :]
    squares = np.column_stack([q_hat**2, q_hat * mHm, mHm**2])
    V2 = squares.sum(axis=0)[None, :] if _unit_weights(kind) else (V * V) @ squares
    D = d.T @ d
    S0D, TD = S0 @ D, T @ D
    return _Prepared(
        theta=float(a @ beta),
        kappa=kappa,
        se=se,
        num0=S0 @ m,
        num1=T @ m,
        den0=c * (V2[:, 0] - 2 * np.sum(S0 * Vqd, axis=1) + np.sum(S0D * S0, axis=1)),
        den1=2
        * c
        * (
            V2[:, 1] - np.sum(T * Vqd, axis=1) - np.sum(S0 * Vmd, axis=1) + np.sum(S0D * T, axis=1)
        ),
        den2=c * (V2[:, 2] - 2 * np.sum(T * Vmd, axis=1) + np.sum(TD * T, axis=1)),
        n_clusters=G,
        weights=kind,
        g_info=float(kappa**2 / np.sum(mHm**2)) if np.sum(mHm**2) > 0 else float(G),
    )


def _unit_weights(kind: str) -> bool:
    """Return whether every weight is ±1 (Rademacher: v² = 1, so Σ v²x = Σ x).

    Read off the distribution's name (`draw_weights`), not the (B × G) matrix: the check
    over the matrix cost 0.5 ms a test, a tenth of notebook 09's jury tables.
    """
    return kind.startswith("rademacher")


def _p_at(prep: _Prepared, r: np.ndarray) -> np.ndarray:
    """Return the WCR p-value of a'β = r for every r (vectorised over r)."""
    r = np.atleast_1d(np.asarray(r, dtype=np.float64))
    delta = (prep.theta - r) / prep.kappa  # (R,)
    out = wild_hull.extreme(prep, delta[None, :]).mean(axis=0)
    # r = θ̂ exactly: t = 0, every replicate is at least as extreme
    return np.where(delta == 0.0, 1.0, out)


def _bound(prep: _Prepared, alpha: float, side: int, tol: float, limit: float | None) -> float:
    """Return the end of the acceptance region {r: p(r) ≥ alpha} on one side of θ̂.

    With discrete outcomes p(r) can jump at a single point: paired 0/1 differences whose
    discordant clusters all point one way give p(0) = the sign test's p (the identity draw ties
    the observed t) but p(r) ≈ 0 for every r < 0. Bisection then stops within `tol` of the
    point; `wild_test` closes the interval over its tested null when that null is accepted.
    """
    step = max(prep.se, tol, 1e-8) * 4.0
    inside, outside = prep.theta, prep.theta + side * step
    for _ in range(60):
        if limit is not None and side * (outside - limit) >= 0:
            if _p_at(prep, np.array([limit]))[0] >= alpha:
                return limit
            outside = limit
            break
        if _p_at(prep, np.array([outside]))[0] < alpha:
            break
        inside, outside = outside, outside + side * step
        step *= 2.0
    else:  # never rejected: the data cannot bound this side
        return float(side * np.inf)
    for _ in range(80):
        if abs(outside - inside) <= tol:
            break
        mid = 0.5 * (inside + outside)
        if _p_at(prep, np.array([mid]))[0] >= alpha:
            inside = mid
        else:
            outside = mid
    return float(inside)


def _invert(
    prep: _Prepared,
    null: float,
    alpha: float,
    bounds: tuple[float, float] | None,
    interval: bool,
) -> tuple[float, float, float]:
    """Return (p, low, high): the test of `null` and the interval it inverts (see module doc)."""
    p = float(_p_at(prep, np.array([null]))[0])
    low = high = float("nan")
    exact = prep.se > 0 and prep.g_info < EXACT_BELOW
    if interval and not exact:
        tol = max(prep.se, 1e-12) * 1e-4
        lo_lim, hi_lim = bounds if bounds is not None else (None, None)
        low = _bound(prep, alpha, -1, tol, lo_lim)
        high = _bound(prep, alpha, +1, tol, hi_lim)
        # A null inside a first-crossing interval that its p rejects: p(r) is not monotone.
        exact = prep.se > 0 and low <= null <= high and p < alpha
    if exact:
        lo_lim, hi_lim = bounds if bounds is not None else (-np.inf, np.inf)
        d_lo, d_hi = (prep.theta - hi_lim) / prep.kappa, (prep.theta - lo_lim) / prep.kappa
        steps = wild_hull.steps(prep)
        p = wild_hull.hull_p(steps, (prep.theta - null) / prep.kappa, p, d_lo, d_hi)
        if interval:
            d_low, d_high = wild_hull.hull(steps, alpha, d_lo, d_hi)
            low = max(prep.theta - prep.kappa * d_high, lo_lim)  # exact at a bound
            high = min(prep.theta - prep.kappa * d_low, hi_lim)
    if interval and p >= alpha:  # an accepted null lies in its interval (see `_bound`)
        low, high = np.fmin(low, null), np.fmax(high, null)
    return p, float(low), float(high)


def wild_test(
    problem: Linear,
    contrast: Sequence[float] | np.ndarray | None = None,
    *,
    null: float = 0.0,
    level: float = 0.95,
    n_boot: int = N_BOOT,
    rng: np.random.Generator | None = None,
    weights: str = "auto",
    bounds: tuple[float, float] | None = None,
    interval: bool = True,
) -> WildResult:
    """Test a'β = `null` by the restricted wild cluster bootstrap; invert it for the interval.

    Args:
        problem: The per-cluster problem (`ratio_problem`, `ratios_problem`, `wls_problem`).
        contrast: a (default: the first coefficient).
        null: The value of a'β under the null hypothesis.
        level: Confidence level of the interval (the test's size is 1 − level for it).
        n_boot: Bootstrap replicates B (fewer when every distinct draw is enumerated).
        rng: Generator of the weights (seed it: the same draws for p and both bounds).
        weights: "auto" (Webb below `WEBB_BELOW` clusters, else Rademacher), "rademacher",
            "webb".
        bounds: The parameter space (e.g. (0, 1) for a rate): the interval is cut to it.
        interval: Compute the interval (False: only the p-value; bounds are NaN).

    Returns:
        A `WildResult`; NaN throughout (n_clusters < 2) when the data cannot support a test.
    """
    from scipy import stats as sps

    k = problem.H.shape[1] if problem.H.ndim == 3 else 1
    a = np.zeros(k) if contrast is None else np.asarray(contrast, dtype=np.float64)
    if contrast is None:
        a[0] = 1.0
    rng = rng if rng is not None else np.random.default_rng(0)
    prep = _prepare(problem, a, n_boot=n_boot, rng=rng, weights=weights)
    if prep is None:
        nan = float("nan")
        est = _point(problem, a)
        return WildResult(est, nan, nan, nan, null, nan, nan, nan, problem.n_clusters, "", 0)
    p, low, high = _invert(prep, float(null), 1.0 - level, bounds, interval)
    tq = float(sps.t.ppf(0.5 + level / 2.0, prep.n_clusters - 1))
    return WildResult(
        estimate=prep.theta,
        ci_low=low,
        ci_high=high,
        p_value=p,
        null=float(null),
        se=prep.se,
        wald_low=prep.theta - tq * prep.se,
        wald_high=prep.theta + tq * prep.se,
        n_clusters=prep.n_clusters,
        weights=prep.weights,
        n_boot=len(prep.num0),
    )


def _point(problem: Linear, a: np.ndarray) -> float:
    """Return a'β̂ of `problem` (NaN when it has no weight)."""
    Hs = problem.H.sum(axis=0)
    if not np.any(Hs):
        return float("nan")
    return float(a @ (np.linalg.pinv(Hs) @ problem.b.sum(axis=0)))


def wild_p_values(
    problem: Linear,
    nulls: Sequence[float] | np.ndarray,
    contrast: Sequence[float] | np.ndarray | None = None,
    *,
    n_boot: int = N_BOOT,
    rng: np.random.Generator | None = None,
    weights: str = "auto",
) -> np.ndarray:
    """Return the WCR p-value of a'β = r for every r in `nulls` (one bootstrap for all)."""
    k = problem.H.shape[1]
    a = np.zeros(k) if contrast is None else np.asarray(contrast, dtype=np.float64)
    if contrast is None:
        a[0] = 1.0
    prep = _prepare(
        problem, a, n_boot=n_boot, rng=rng or np.random.default_rng(0), weights=weights
    )
    if prep is None:
        return np.full(len(np.atleast_1d(nulls)), np.nan)
    return _p_at(prep, np.asarray(nulls, dtype=np.float64))


def result_fields(res: WildResult, *, prefix: str = "") -> dict[str, Any]:
    """Return a `WildResult` as row fields (`ci_low`, `ci_high`, `p_value`, `method`, …)."""
    return {
        f"{prefix}ci_low": res.ci_low,
        f"{prefix}ci_high": res.ci_high,
        f"{prefix}p_value": res.p_value,
        f"{prefix}se": res.se,
        f"{prefix}method": f"wild cluster bootstrap, restricted ({res.weights}, B={res.n_boot})"
        if res.weights
        else "no test: fewer than 2 clusters",
    }


__all__ = [
    "MAX_CELLS",
    "N_BOOT",
    "WEBB_BELOW",
    "WEIGHTS",
    "Linear",
    "WildResult",
    "beyond_limit",
    "draw_weights",
    "ratio_problem",
    "ratios_problem",
    "result_fields",
    "wild_p_values",
    "wild_test",
    "wls_problem",
]
