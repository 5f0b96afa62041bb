r"""The wild cluster *score* bootstrap for one coefficient of a GLM (logistic, Poisson).

For a nonlinear model the restricted wild bootstrap perturbs scores, not residuals (Kline &
Santos 2012; Roodman et al. 2019 §4): to test β_k = r the model is refitted with β_k fixed
at r (an offset), each cluster's *efficient* score for β_k is taken at that fit,
s_g = U_gk − H_{k,−k} H_{−k,−k}^{-1} U_{g,−k} (U_g: the cluster's score vector, H: the
information), and the studentized statistic t = Σ s_g / √(Σ s_g²) is compared with
t*_b = Σ v_bg s_g / √(Σ (v_bg s_g)²) under the same cluster weights as `core.wild`
(Webb below `wild.WEBB_BELOW` clusters, else Rademacher; enumerated when few). The interval
inverts the test (one restricted fit per candidate r), so the p-value beside it inverts it.

`glm_wild_test` also returns the CR2 / Bell–McCaffrey test of the unrestricted fit
(`core.cr2`), the analytic companion.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from judgelab.core import clusters, cr2, threads, wild

#: GLM families by name.
FAMILIES = ("binomial", "poisson")
#: IRLS iterations of one restricted fit (warm-started from the previous one).
MAX_ITER = 50
#: Interval ends are located to this share of the CR2 standard error (display precision).
TOLERANCE = 0.01


class GlmWildResult(NamedTuple):
    """Score-bootstrap test and interval of one GLM coefficient, with its CR2 companion."""

    estimate: float
    ci_low: float
    ci_high: float
    p_value: float
    null: float
    n_clusters: int
    weights: str
    n_boot: int
    cr2: cr2.CR2Result


def _family(name: str) -> Any:
    import statsmodels.api as sm

    if name not in FAMILIES:
        raise ValueError(f"unknown GLM family {name!r}; known: {list(FAMILIES)}")
    return sm.families.Binomial() if name == "binomial" else sm.families.Poisson()


def _fit(y: np.ndarray, X: np.ndarray, family: str, offset: np.ndarray | None, start: Any) -> Any:
    import warnings

    import statsmodels.api as sm

    with threads.caught_warnings():  # one thread at a time: `threads.ordered_map`
        warnings.simplefilter("ignore")
        model = sm.GLM(y, X, family=_family(family), offset=offset)
        return model.fit(start_params=start, maxiter=MAX_ITER)


class _Scores:
    """Restricted fits and efficient cluster scores of β_k = r, for one dataset."""

    def __init__(self, y: np.ndarray, X: np.ndarray, codes: np.ndarray, k: int, family: str):
        self.y, self.X, self.codes, self.k, self.family = y, X, codes, k, family
        self.rest = np.delete(X, k, axis=1)
        self.G = int(codes.max()) + 1
        self.start: np.ndarray | None = None

    def efficient(self, r: float) -> np.ndarray:
        """Return the efficient score of β_k per cluster at the fit restricted to β_k = r."""
        offset = r * self.X[:, self.k]
        if self.rest.shape[1]:
            fit = _fit(self.y, self.rest, self.family, offset, self.start)
            self.start = np.asarray(fit.params)
            eta = self.rest @ self.start + offset
        else:
            eta = offset
        mu = _family(self.family).link.inverse(eta)
        var = _family(self.family).variance(mu)
        u = self.X * (self.y - mu)[:, None]  # canonical link: score rows x_i (y_i − μ_i)
        U = np.zeros((self.G, self.X.shape[1]))
        np.add.at(U, self.codes, u)
        info = (self.X * var[:, None]).T @ self.X
        others = [j for j in range(self.X.shape[1]) if j != self.k]
        if not others:
            return U[:, self.k]
        proj = info[self.k, others] @ np.linalg.pinv(info[np.ix_(others, others)])
        return U[:, self.k] - U[:, others] @ proj


def _p(scores: np.ndarray, V: np.ndarray) -> float:
    total = float(np.sum(scores**2))
    if total <= 0:
        return float("nan")
    t = abs(float(scores.sum())) / np.sqrt(total)
    vs = V * scores[None, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        tb = np.abs(vs.sum(axis=1)) / np.sqrt(np.sum(vs * vs, axis=1))
    return float(np.mean(tb >= t - 1e-12 * max(t, 1.0)))


def glm_wild_test(
    y: np.ndarray,
    X: np.ndarray,
    codes: np.ndarray,
    *,
    column: int,
    null: float = 0.0,
    family: str = "binomial",
    level: float = 0.95,
    n_boot: int = wild.N_BOOT,
    rng: np.random.Generator | None = None,
    weights: str = "auto",
    interval: bool = True,
    fit: Any = None,
    companion: cr2.CR2Result | None = None,
) -> GlmWildResult:
    """Test β_column = `null` of a GLM by the wild cluster score bootstrap; invert it.

    Args:
        y: Outcomes (0/1 for binomial).
        X: Design matrix (include the intercept column).
        codes: Cluster code per row (0..G−1).
        column: Index of the tested coefficient.
        null: Its value under the null.
        family: "binomial" (logit) or "poisson" (log).
        level: Confidence level of the interval.
        n_boot: Bootstrap replicates (all distinct weight draws when fewer).
        rng: Generator of the weights.
        weights: "auto", "rademacher" or "webb" (`core.wild.WEIGHTS`).
        interval: Invert the test for the interval (one restricted fit per step).
        fit: The unrestricted statsmodels fit, when the caller already has it.
        companion: The CR2 test of β_column = `null` at that fit, when the caller has it
            (`cr2.cr2_from_moments` on `cr2.glm_inputs`): computed here otherwise.
    """
    y = np.asarray(y, dtype=np.float64)
    X = np.asarray(X, dtype=np.float64)
    codes = clusters.sorted_codes(np.asarray(codes))
    G = int(codes.max()) + 1 if codes.size else 0
    nan = float("nan")
    fit = fit if fit is not None else _fit(y, X, family, None, None)
    est = float(np.asarray(fit.params)[column])
    if companion is None:
        mu = np.asarray(fit.fittedvalues if hasattr(fit, "fittedvalues") else fit.mu)
        xw, rw = cr2.glm_inputs(X, y, mu, _family(family).variance(mu))
        a = np.zeros(X.shape[1])
        a[column] = 1.0
        companion = cr2.cr2_test(xw, rw, codes, a, estimate=est, null=null, level=level)
    if G < 2:
        return GlmWildResult(est, nan, nan, nan, null, G, "", 0, companion)
    V, kind = wild.draw_weights(G, n_boot, rng or np.random.default_rng(0), weights)
    scores = _Scores(y, X, codes, column, family)
    p = _p(scores.efficient(null), V)
    low = high = nan
    if interval:
        alpha = 1.0 - level
        se = companion.se if np.isfinite(companion.se) and companion.se > 0 else 1.0
        seen: list[tuple[float, float]] = []  # (r, p(r)) the searches evaluated
        low = _bound(scores, V, est, se, alpha, -1, seen)
        high = _bound(scores, V, est, se, alpha, +1, seen)
        p, low, high = _consistent(p, low, high, null, est, alpha, seen)
    return GlmWildResult(est, low, high, p, null, G, kind, len(V), companion)


def _consistent(
    p: float, low: float, high: float, null: float, est: float, alpha: float, seen: list
) -> tuple[float, float, float]:
    """Make the p-value and the interval agree where p(r) is not monotone (few clusters).

    The interval is the hull of the accepted r the searches found; a null inside it whose own
    p rejects gets the hull p-value: the largest p seen at or beyond the null, away from the
    estimate (≥ alpha there, since the hull's end was accepted), as `core.wild` does exactly.
    An accepted null outside the interval widens it to the null.
    """
    if low <= null <= high and p < alpha:  # an unbounded hull too (NaN ends compare False)
        beyond = [q for r, q in seen if (r - null) * (est - null) <= 0]
        p = max([p, *beyond])
    if p >= alpha:
        low, high = min(low, null), max(high, null)
    return p, low, high


def _bound(
    scores: _Scores,
    V: np.ndarray,
    est: float,
    se: float,
    alpha: float,
    side: int,
    seen: list[tuple[float, float]],
) -> float:
    """Return the end of {r: p(r) ≥ alpha} on one side of the estimate (bisection)."""
    scores.start = None

    def p_at(r: float) -> float:
        q = _p(scores.efficient(r), V)
        seen.append((r, q))
        return q

    inside, step = est, 2.0 * se
    outside = est + side * step
    for _ in range(12):
        if p_at(outside) < alpha:
            break
        inside, outside = outside, outside + side * step
        step *= 2.0
    else:
        return float(side * np.inf)
    tol = TOLERANCE * se
    for _ in range(30):
        if abs(outside - inside) <= tol:
            break
        mid = 0.5 * (inside + outside)
        if p_at(mid) >= alpha:
            inside = mid
        else:
            outside = mid
    return float(inside)


__all__ = ["FAMILIES", "GlmWildResult", "glm_wild_test"]
