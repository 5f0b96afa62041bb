"""CR2 cluster-robust standard errors with Bell–McCaffrey degrees of freedom (the analytic test).

The companion of the wild bootstrap (`core.wild`) for regressions: the bias-reduced
linearization of Bell & McCaffrey (2002) — each cluster's residuals scaled by
A_g = (I − H_gg)^{-1/2} before the sandwich — with the Satterthwaite degrees of freedom of
Imbens & Kolesár (2016, working model Ω = I): ν = (Σ λ)² / Σ λ², λ the eigenvalues of G'G
with G_g = (I − H)_{·g} A_g X_g (X'X)^{-1} a. With one dominant cluster ν falls far below
G − 1, which is what keeps the t test honest there.

A GLM is handled in its working (IRLS) form at the fit: rows scaled by √w with
w = the variance function's value, residuals (y − μ)/√w (`glm_inputs`).

Everything is computed per cluster from thin SVDs (no n × n matrix), so it scales with n.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np


class CR2Result(NamedTuple):
    """The CR2 test of a'β = null: standard error, Bell–McCaffrey df, t interval and p."""

    estimate: float
    se: float
    dof: float
    ci_low: float
    ci_high: float
    p_value: float


def _inv_sqrt_factors(s2: np.ndarray) -> np.ndarray:
    """Return (1 − s²)^{-1/2} − 1 (0 − 1 on a leverage-1 direction: the Moore–Penrose root)."""
    rest = 1.0 - s2
    full = rest > 1e-10
    return np.where(full, 1.0 / np.sqrt(np.where(full, rest, 1.0)), 0.0) - 1.0


def cr2_test(
    X: np.ndarray,
    resid: np.ndarray,
    codes: np.ndarray,
    contrast: np.ndarray,
    *,
    estimate: float,
    null: float = 0.0,
    level: float = 0.95,
) -> CR2Result:
    """Return the CR2 / Bell–McCaffrey t test of a'β = `null` for a fitted linear model.

    Args:
        X: Design rows (already scaled by √weight for WLS / GLM working form).
        resid: Residuals on the same scale.
        codes: Cluster code (0..G−1) per row.
        contrast: a.
        estimate: a'β̂ of the fit.
        null: The value under the null hypothesis.
        level: Confidence level of the interval.
    """
    from scipy import stats as sps

    X = np.asarray(X, dtype=np.float64)
    if X.ndim == 1:
        X = X[:, None]
    u = np.asarray(resid, dtype=np.float64)
    a = np.asarray(contrast, dtype=np.float64)
    codes = np.asarray(codes, dtype=np.int64)
    G = len(np.unique(codes))
    nan = float("nan")
    if G < 2:
        return CR2Result(estimate, nan, nan, nan, nan, nan)
    M = np.linalg.pinv(X.T @ X)
    w_eig, w_vec = np.linalg.eigh(M)
    root = w_vec * np.sqrt(np.clip(w_eig, 0.0, None))  # M = root @ root.T
    Ma = M @ a
    order = np.argsort(codes, kind="stable")
    bounds = np.flatnonzero(np.diff(codes[order])) + 1
    var = 0.0
    vv = []
    q = []
    for rows in np.split(order, bounds):
        Xg = X[rows]
        Q, s, _ = np.linalg.svd(Xg @ root, full_matrices=False)
        xma = Xg @ Ma
        v = xma + Q @ (_inv_sqrt_factors(s**2) * (Q.T @ xma))
        var += float(v @ u[rows]) ** 2
        vv.append(float(v @ v))
        q.append(Xg.T @ v)
    Qm = np.array(q)
    GtG = np.diag(vv) - Qm @ M @ Qm.T
    tr = float(np.trace(GtG))
    tr2 = float(np.sum(GtG * GtG))
    dof = tr**2 / tr2 if tr2 > 0 else nan
    se = float(np.sqrt(var))
    if not se > 0 or not np.isfinite(dof):
        return CR2Result(estimate, se, dof, nan, nan, nan)
    tq = float(sps.t.ppf(0.5 + level / 2.0, dof))
    p = float(2.0 * sps.t.sf(abs(estimate - null) / se, dof))
    return CR2Result(estimate, se, dof, estimate - tq * se, estimate + tq * se, p)


def glm_inputs(
    X: np.ndarray, y: np.ndarray, mu: np.ndarray, variance: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Return (√w·X, (y − μ)/√w): a canonical-link GLM fit in the working form CR2 takes."""
    w = np.clip(np.asarray(variance, dtype=np.float64), 1e-12, None)
    root = np.sqrt(w)
    X = np.asarray(X, dtype=np.float64)
    return X * root[:, None], (np.asarray(y, dtype=np.float64) - mu) / root


__all__ = ["CR2Result", "cr2_test", "glm_inputs"]
