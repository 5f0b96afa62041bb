"""CR2 cluster-robust standard errors with Bell–McCaffrey degrees of freedom (the analytic test).

The companion of the wild bootstrap (`core.wild`) for regressions: the bias-reduced
linearization of Bell & McCaffrey (2002) — each cluster's residuals scaled by
A_g = (I − H_gg)^{-1/2} before the sandwich — with the Satterthwaite degrees of freedom of
Imbens & Kolesár (2016, working model Ω = I): ν = (Σ λ)² / Σ λ², λ the eigenvalues of G'G
with G_g = (I − H)_{·g} A_g X_g (X'X)^{-1} a. With one dominant cluster ν falls far below
G − 1, which is what keeps the t test honest there.

A GLM is handled in its working (IRLS) form at the fit: rows scaled by √w with
w = the variance function's value, residuals (y − μ)/√w (`glm_inputs`).

Everything is computed from per-cluster moments (Σ x xᵀ, Σ x·u: `cluster_moments`) with
p × p algebra per cluster (no n × n nor G × G matrix), so it scales with n and G.
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


def _h(s2: np.ndarray) -> np.ndarray:
    """Return ((1 − s²)^{-1/2} − 1) / s², the CR2 factor per eigenvalue s² of a cluster's H_gg.

    Its limit ½ at s² = 0 (a direction the cluster's rows do not span: the value never
    matters there); −1/s² on a leverage-1 direction (the Moore–Penrose root of I − H_gg).
    """
    rest = 1.0 - s2
    full = rest > 1e-10
    f = np.where(full, 1.0 / np.sqrt(np.where(full, rest, 1.0)), 0.0) - 1.0
    small = s2 < 1e-8
    safe = np.where(small, 1.0, s2)
    return np.where(small, 0.5 + 0.375 * s2, f / safe)


def cluster_moments(
    X: np.ndarray, resid: np.ndarray, codes: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Return per cluster Σ x xᵀ (G × p × p) and Σ x·u (G × p): all CR2 needs of the rows."""
    X = np.asarray(X, dtype=np.float64)
    if X.ndim == 1:
        X = X[:, None]
    codes = np.asarray(codes, dtype=np.int64)
    G, p = int(codes.max()) + 1 if codes.size else 0, X.shape[1]
    P = np.empty((G, p, p))
    for i in range(p):
        for j in range(i, p):
            P[:, i, j] = P[:, j, i] = np.bincount(codes, weights=X[:, i] * X[:, j], minlength=G)
    u = np.asarray(resid, dtype=np.float64)
    U = np.column_stack([np.bincount(codes, weights=X[:, i] * u, minlength=G) for i in range(p)])
    return P, U.reshape(G, p)


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
    codes = np.unique(np.asarray(codes), return_inverse=True)[1].reshape(-1)
    P, U = cluster_moments(X, resid, codes)
    return cr2_from_moments(P, U, contrast, estimate=estimate, null=null, level=level)


class Basis(NamedTuple):
    """What CR2 needs of a fit's per-cluster Σ x xᵀ whatever the contrast (`cr2_basis`)."""

    M: np.ndarray  # (X'X)⁺
    RV: np.ndarray  # R V_g per cluster (G × p × p)
    h: np.ndarray  # h(s²) per cluster and eigenvalue (G × p)


def cr2_basis(P: np.ndarray) -> Basis:
    """Return the contrast-free part of `cr2_from_moments` for moments `P` (G × p × p).

    The eigen-decompositions of the G clusters' leverages are the costly part of a test;
    a fit's terms share them (`cr2_from_moments(basis=...)`).
    """
    P = np.asarray(P, dtype=np.float64)
    M = np.linalg.pinv(P.sum(axis=0))
    w_eig, w_vec = np.linalg.eigh(M)
    root = w_vec * np.sqrt(np.clip(w_eig, 0.0, None))  # M = root @ root.T
    B = np.einsum("ji,gjk,kl->gil", root, P, root)
    s2, V = np.linalg.eigh(B)
    s2 = np.clip(s2, 0.0, None)
    return Basis(M, np.einsum("ij,gjk->gik", root, V), _h(s2))


def cr2_from_moments(
    P: np.ndarray,
    U: np.ndarray,
    contrast: np.ndarray,
    *,
    estimate: float,
    null: float = 0.0,
    level: float = 0.95,
    basis: Basis | None = None,
) -> CR2Result:
    """`cr2_test` from per-cluster moments (`cluster_moments`; clusters without rows dropped).

    Within cluster g the adjusted weight of a row is linear in it: v = X_g c_g with
    c_g = M a + R V_g diag(h(s²)) V_gᵀ Rᵀ P_g M a (M = (X'X)⁺ = R Rᵀ, V_g diag(s²) V_gᵀ the
    eigen-decomposition of Rᵀ P_g R, the nonzero squared singular values of X_g R), so the
    variance Σ (c_g·U_g)², and Imbens–Kolesár's trace terms of G'G = diag(c_gᵀP_g c_g) −
    Q M Qᵀ (rows q_g = P_g c_g) reduce to p × p products: O(G p³), no G × G matrix.
    `basis`: `cr2_basis(P)`, when several contrasts of one fit are tested.
    """
    from scipy import stats as sps

    P = np.asarray(P, dtype=np.float64)
    U = np.asarray(U, dtype=np.float64)
    a = np.asarray(contrast, dtype=np.float64)
    G = len(P)
    nan = float("nan")
    if G < 2:
        return CR2Result(estimate, nan, nan, nan, nan, nan)
    M, RV, h = cr2_basis(P) if basis is None else basis
    Ma = M @ a
    PMa = P @ Ma
    inner = np.einsum("gji,gj->gi", RV, PMa) * h
    c = Ma[None, :] + np.einsum("gij,gj->gi", RV, inner)
    var = float(np.sum(np.einsum("gi,gi->g", c, U) ** 2))
    q = np.einsum("gij,gj->gi", P, c)
    vv = np.einsum("gi,gi->g", c, q)
    qmq = np.einsum("gi,ij,gj->g", q, M, q)
    S = q.T @ q
    tr = float(vv.sum() - qmq.sum())
    MS = M @ S
    tr2 = float(np.sum(vv**2) - 2.0 * np.sum(vv * qmq) + np.trace(MS @ MS))
    dof = tr**2 / tr2 if tr2 > 0 else nan
    se = float(np.sqrt(var))
    if not se > 0 or not np.isfinite(dof):
        return CR2Result(estimate, se, dof, nan, nan, nan)
    tq = float(sps.t.ppf(0.5 + level / 2.0, dof))
    p = float(2.0 * sps.t.sf(abs(estimate - null) / se, dof))
    return CR2Result(estimate, se, dof, estimate - tq * se, estimate + tq * se, p)


def glm_inputs(
    X: np.ndarray, y: np.ndarray, mu: np.ndarray, variance: np.ndarray, *, overwrite: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """Return (√w·X, (y − μ)/√w): a canonical-link GLM fit in the working form CR2 takes.

    `overwrite`: √w·X is written over `X` (a writable float64 array no one reads afterwards).
    """
    root = np.clip(np.asarray(variance, dtype=np.float64), 1e-12, None)
    np.sqrt(root, out=root)  # in place: a 2·10^6-row fit's temporaries are 16 MB each
    resid = np.asarray(y, dtype=np.float64) - mu
    resid /= root
    if overwrite and isinstance(X, np.ndarray) and X.dtype == np.float64 and X.flags.writeable:
        X *= root[:, None]
        return X, resid
    return np.asarray(X, dtype=np.float64) * root[:, None], resid


__all__ = [
    "Basis",
    "CR2Result",
    "cluster_moments",
    "cr2_basis",
    "cr2_from_moments",
    "cr2_test",
    "glm_inputs",
]
