"""CR2 / Bell–McCaffrey against its n × n definition; the GLM score bootstrap on planted truth."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import linalg

from judgelab.core import clusters, cr2, wild_glm


def _brute_cr2(X, u, codes, a):
    """CR2 variance and Imbens–Kolesár df with full n × n matrices (the textbook formulas)."""
    n = len(u)
    M = np.linalg.inv(X.T @ X)
    H = X @ M @ X.T
    var = 0.0
    cols = []
    for g in np.unique(codes):
        idx = np.flatnonzero(codes == g)
        A = linalg.sqrtm(np.linalg.pinv(np.eye(len(idx)) - H[np.ix_(idx, idx)])).real
        v = A @ X[idx] @ M @ a
        var += (v @ u[idx]) ** 2
        E = np.zeros((n, len(idx)))
        E[idx, np.arange(len(idx))] = 1.0
        cols.append((np.eye(n) - H) @ E @ v)
    Gm = np.column_stack(cols)
    lam = np.linalg.eigvalsh(Gm.T @ Gm)
    return np.sqrt(var), lam.sum() ** 2 / np.sum(lam**2)


def test_cr2_matches_the_textbook_formulas():
    rng = np.random.default_rng(0)
    codes = np.repeat(np.arange(7), [1, 2, 3, 5, 8, 13, 20])
    X = np.column_stack([np.ones(52), rng.normal(size=52), rng.integers(0, 2, 52)])
    u = rng.normal(size=52)
    a = np.array([0.0, 1.0, 0.0])
    got = cr2.cr2_test(X, u, codes, a, estimate=0.0)
    se, dof = _brute_cr2(X, u, codes, a)
    assert got.se == pytest.approx(se, rel=1e-8)
    assert got.dof == pytest.approx(dof, rel=1e-8)
    assert got.dof < 6  # far below G − 1 with one dominant cluster


def test_cr2_balanced_intercept_has_g_minus_1_df():
    codes = np.repeat(np.arange(9), 4)
    got = cr2.cr2_test(np.ones((36, 1)), np.linspace(-1, 1, 36), codes, np.ones(1), estimate=0.0)
    assert got.dof == pytest.approx(8.0)


def _logit_data(rng, G, slope_sd, beta):
    w = rng.lognormal(0, 1.2, size=G)
    sizes = 1 + rng.multinomial(8 * G, w / w.sum())
    codes = np.repeat(np.arange(G), sizes)
    n = len(codes)
    x = np.log2(rng.lognormal(0, 0.8, size=n) + 0.5)
    slope = beta + rng.normal(0, slope_sd, size=G)[codes]
    eta = slope * x + rng.normal(0, 1.0, size=G)[codes]
    y = (rng.random(n) < 1 / (1 + np.exp(-eta))).astype(float)
    return y, np.column_stack([np.ones(n), x]), codes


def test_glm_wild_estimate_interval_and_p_agree():
    sm = pytest.importorskip("statsmodels.api")
    rng = np.random.default_rng(4)
    y, X, codes = _logit_data(rng, 12, 0.3, 0.5)
    res = wild_glm.glm_wild_test(y, X, codes, column=1, rng=np.random.default_rng(1))
    fit = sm.GLM(y, X, family=sm.families.Binomial()).fit()
    assert res.estimate == pytest.approx(float(fit.params[1]), rel=1e-6)
    assert res.ci_low < res.estimate < res.ci_high
    for r in (res.ci_low - 0.05, res.ci_high + 0.05):
        out = wild_glm.glm_wild_test(
            y, X, codes, column=1, null=r, rng=np.random.default_rng(1), interval=False
        )
        assert out.p_value < 0.05
    inside = wild_glm.glm_wild_test(
        y, X, codes, column=1, null=res.estimate, rng=np.random.default_rng(1), interval=False
    )
    assert inside.p_value > 0.5


@pytest.mark.slow
def test_glm_wild_holds_size_where_cr1_does_not():
    rng = np.random.default_rng(7)
    R = 200
    rej = rej_cr2 = 0
    for _ in range(R):
        y, X, codes = _logit_data(rng, 10, 0.6, 0.0)
        res = wild_glm.glm_wild_test(y, X, codes, column=1, rng=rng, interval=False, n_boot=399)
        rej += res.p_value < 0.05
        rej_cr2 += res.cr2.p_value < 0.05
    assert rej / R <= 0.08
    assert clusters.effective(np.ones(len(codes)), codes) < 10


def test_cr2_matches_the_textbook_with_a_leverage_one_cluster():
    """A column only one cluster spans gives that cluster leverage 1 in its direction (the
    Moore–Penrose root); a one-row cluster has a single direction: both as the n × n formulas."""
    rng = np.random.default_rng(3)
    codes = np.repeat(np.arange(6), [1, 4, 5, 6, 7, 9])
    X = np.column_stack([np.ones(32), rng.normal(size=32), (codes == 2).astype(float)])
    u = rng.normal(size=32)
    a = np.array([0.0, 1.0, 0.0])
    got = cr2.cr2_test(X, u, codes, a, estimate=0.0)
    se, dof = _brute_cr2(X, u, codes, a)
    assert got.se == pytest.approx(se, rel=1e-8)
    assert got.dof == pytest.approx(dof, rel=1e-8)


def test_cr2_memory_grows_with_clusters_not_their_square():
    """At G = 20,000 the G × G matrix of Imbens–Kolesár's df would take 3.2 GB; the moments
    (p × p per cluster) take a few MB."""
    import tracemalloc

    rng = np.random.default_rng(0)
    codes = np.repeat(np.arange(20_000), 3)
    X = np.column_stack([np.ones(len(codes)), rng.normal(size=(len(codes), 2))])
    tracemalloc.start()
    got = cr2.cr2_test(X, rng.normal(size=len(codes)), codes, np.array([0, 1.0, 0]), estimate=0)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 100 * 2**20
    assert 5_000 < got.dof < 20_000  # many equal clusters: thousands of degrees of freedom


def test_cr2_basis_shared_by_a_fits_contrasts_gives_the_same_tests():
    """A fit's terms share `cr2_basis` (the leverages' eigen-decompositions): same results."""
    rng = np.random.default_rng(7)
    codes = np.repeat(np.arange(12), rng.integers(1, 9, size=12))  # unequal clusters
    X = np.column_stack([np.ones(len(codes)), rng.normal(size=len(codes)), codes % 2 - 0.5])
    u = rng.normal(size=len(codes))
    P, U = cr2.cluster_moments(X, u, codes)
    basis = cr2.cr2_basis(P)
    for a in np.eye(3):
        alone = cr2.cr2_from_moments(P, U, a, estimate=0.3)
        shared = cr2.cr2_from_moments(P, U, a, estimate=0.3, basis=basis)
        assert shared == alone
        assert shared == cr2.cr2_test(X, u, codes, a, estimate=0.3)


def test_glm_wild_test_takes_the_callers_cr2_companion_as_its_own(monkeypatch):
    """`term_inference` hands its CR2 test to the wild test: the one it would compute itself."""
    import pandas as pd

    from judgelab.analyses.length import glm

    rng = np.random.default_rng(8)
    y, X, codes = _logit_data(rng, 15, 0.5, 0.4)
    real, calls = wild_glm.glm_wild_test, []

    def spy(*args, **kw):
        calls.append(kw)
        return real(*args, **kw)

    monkeypatch.setattr(wild_glm, "glm_wild_test", spy)
    design = pd.DataFrame(X, columns=["intercept", "length"])
    glm.term_inference(y, design, codes, terms=["length"], wild_terms=["length"], wild_mode="p")
    (kw,) = calls
    own = real(y, X, codes, **{**kw, "companion": None, "rng": np.random.default_rng(1)})
    assert kw["companion"] == own.cr2
    given = real(y, X, codes, **{**kw, "rng": np.random.default_rng(1)})
    assert repr(given) == repr(own)  # NaN-aware: no interval in "p" mode
