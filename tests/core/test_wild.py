"""The wild cluster bootstrap: the fast algebra against a brute-force refit, inversion, size."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from judgelab.core import wild, wild_replays


def _brute_p(X, y, codes, a, r, V):
    """WCR p-value by refitting every bootstrap sample (rows, OLS, CR1 t): the slow definition."""
    G = codes.max() + 1
    XtX_inv = np.linalg.inv(X.T @ X)
    beta = XtX_inv @ X.T @ y

    def cr1_t(yv, b, null):
        u = yv - X @ b
        s = np.array([X[codes == g].T @ u[codes == g] for g in range(G)])
        q = s @ (XtX_inv @ a)
        return (a @ b - null) / np.sqrt(G / (G - 1) * np.sum(q**2))

    t = cr1_t(y, beta, r)
    m = XtX_inv @ a
    beta_r = beta - m * (a @ beta - r) / (a @ m)
    u_r = y - X @ beta_r
    extreme = 0
    for v in V:
        ystar = X @ beta_r + v[codes] * u_r
        bstar = XtX_inv @ X.T @ ystar
        extreme += abs(cr1_t(ystar, bstar, r)) >= abs(t) - 1e-12
    return extreme / len(V), t


@pytest.mark.parametrize("G", [5, 9, 14])
def test_fast_p_value_equals_refitting_every_bootstrap_sample(G):
    rng = np.random.default_rng(G)
    codes = np.sort(rng.integers(0, G, size=80))
    codes = np.unique(codes, return_inverse=True)[1]
    G = codes.max() + 1
    X = np.column_stack([np.ones(80), rng.normal(size=80), rng.integers(0, 2, 80)])
    y = X @ np.array([0.3, 0.5, -0.2]) + rng.normal(size=G)[codes] + rng.normal(size=80)
    a = np.array([0.0, 1.0, 0.0])
    V, _ = wild.draw_weights(G, 399, np.random.default_rng(1))
    problem = wild.wls_problem(X, y, codes)
    for r in (0.0, 0.5, 0.9):
        expected, _ = _brute_p(X, y, codes, a, r, V)
        got = wild.wild_p_values(problem, [r], a, n_boot=399, rng=np.random.default_rng(1))[0]
        assert got == pytest.approx(expected, abs=1e-12)


def test_cr1_se_matches_statsmodels():
    sm = pytest.importorskip("statsmodels.api")
    rng = np.random.default_rng(3)
    codes = rng.integers(0, 12, size=200)
    X = np.column_stack([np.ones(200), rng.normal(size=200)])
    y = X @ np.array([1.0, 0.4]) + rng.normal(size=12)[codes] + rng.normal(size=200)
    fit = sm.OLS(y, X).fit(cov_type="cluster", cov_kwds={"groups": codes, "use_correction": False})
    res = wild.wild_test(wild.wls_problem(X, y, codes), [0, 1], interval=False)
    # statsmodels without correction; judgelab's CR1 multiplies the variance by G / (G − 1)
    assert res.se == pytest.approx(float(fit.bse[1]) * np.sqrt(12 / 11), rel=1e-9)
    assert res.estimate == pytest.approx(float(fit.params[1]), rel=1e-12)


def test_ratio_problem_estimates_the_ratio_of_sums():
    num = np.array([1, 0, 1, 1, 0, 2, 1.0])
    den = np.array([1, 1, 1, 2, 1, 2, 2.0])
    codes = np.array([0, 0, 1, 1, 2, 2, 3])
    res = wild.wild_test(
        wild.ratio_problem(num, den, codes), null=0.5, rng=np.random.default_rng(0)
    )
    assert res.estimate == pytest.approx(6 / 10)
    assert res.n_clusters == 4 and res.weights.startswith("webb (all 1296)")
    assert res.ci_low < 0.6 < res.ci_high


def test_enumerated_rademacher_has_every_sign_vector():
    V, kind = wild.draw_weights(3, 1999, np.random.default_rng(0), "rademacher")
    assert kind == "rademacher (all 8)" and len({tuple(v) for v in V}) == 8


def test_difference_of_ratios_over_shared_clusters():
    # judge 0 and judge 1 on the same 6 clusters: β = (ratio of judge 0, ratio of judge 1)
    rng = np.random.default_rng(5)
    codes = np.repeat(np.arange(6), 10)
    num = np.concatenate([rng.integers(0, 2, 60), rng.integers(0, 2, 60)]).astype(float)
    den = np.ones(120)
    group = np.repeat([0, 1], 60)
    prob = wild.ratios_problem(num, den, group, np.concatenate([codes, codes]), 2)
    res = wild.wild_test(prob, [-1, 1], rng=np.random.default_rng(0))
    assert res.estimate == pytest.approx(num[60:].mean() - num[:60].mean())


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), G=st.integers(3, 30), r=st.floats(-1, 1))
def test_p_value_inverts_the_interval(seed, G, r):
    rng = np.random.default_rng(seed)
    codes = np.sort(rng.integers(0, G, size=max(G, 60)))
    codes = np.unique(codes, return_inverse=True)[1]
    G = codes.max() + 1
    if G < 2:
        return
    X = np.column_stack([np.ones(len(codes)), rng.normal(size=len(codes))])
    y = 0.3 * X[:, 1] + rng.normal(size=G)[codes] + rng.standard_t(3, size=len(codes))
    res = wild.wild_test(wild.wls_problem(X, y, codes), [0, 1], null=r, rng=rng)
    inside = res.ci_low <= r <= res.ci_high
    near = min(abs(r - res.ci_low), abs(r - res.ci_high)) < 1e-3 * res.se
    assert near or inside == (res.p_value >= 0.05)


def test_size_on_few_unequal_clusters_with_varying_effects():
    # 10 clusters of very unequal size, cluster-varying slopes: the CR1 t(G-1) test over-rejects,
    # the restricted wild bootstrap holds its size (a small Monte Carlo: MC SE ~0.012)
    rng = np.random.default_rng(11)
    reject_w = reject_t = 0
    R = 300
    from scipy import stats as sps

    for _ in range(R):
        weights = rng.lognormal(0, 1.2, size=10)
        sizes = 1 + rng.multinomial(70, weights / weights.sum())
        codes = np.repeat(np.arange(10), sizes)
        n = len(codes)
        x = rng.normal(size=n)
        slope = rng.normal(0, 0.5, size=10)[codes]
        y = slope * x + rng.normal(size=10)[codes] + rng.normal(size=n)
        X = np.column_stack([np.ones(n), x])
        res = wild.wild_test(wild.wls_problem(X, y, codes), [0, 1], rng=rng, interval=False,
                             n_boot=399)  # fmt: skip
        reject_w += res.p_value < 0.05
        reject_t += 2 * sps.t.sf(abs(res.estimate / res.se), 9) < 0.05
    assert reject_w / R <= 0.075
    assert reject_t / R > reject_w / R


@pytest.mark.parametrize("plus, minus", [(4, 0), (5, 0), (7, 1), (11, 3)])
def test_i33_2_an_accepted_null_lies_in_the_interval_when_p_jumps_there(plus, minus):
    """Paired 0/1 outcomes on 47 items, every other pair concordant: p(r) jumps at r = 0.

    p(0) is about the sign test's p, p(r < 0) is about 0, so the acceptance region ends at
    exactly 0; bisection used to stop 1e-6 above it — an interval excluding 0 beside p > 0.05
    (11 judge pairs of LLMBar in notebook 01 read so).
    """
    n = 47
    a, b = np.zeros(n), np.zeros(n)
    b[:plus], a[plus : plus + minus] = 1, 1
    a[30:], b[30:] = 1, 1
    unit = np.arange(n)
    prob = wild.ratios_problem(
        np.concatenate([a, b]), np.ones(2 * n), np.repeat([0, 1], n), np.tile(unit, 2), 2
    )
    res = wild.wild_test(prob, [-1.0, 1.0], null=0.0, rng=np.random.default_rng(1))
    assert (res.p_value < 0.05) == (not res.ci_low <= 0.0 <= res.ci_high)
    if res.p_value >= 0.05:
        assert res.ci_low == 0.0 < res.estimate < res.ci_high


def _ratio_data(seed: int, G: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    den = rng.integers(0, 12, G).astype(float)  # some clusters without a decisive verdict
    num = rng.binomial(den.astype(int), rng.uniform(0.3, 0.8, G)).astype(float)
    return num, den


@pytest.mark.parametrize(
    ("G", "weights"), [(30, "webb"), (40, "webb"), (8, "auto"), (5, "rademacher"), (11, "auto")]
)
def test_i34_6_ratio_p_values_equal_wild_test_on_the_same_draws(G, weights):
    # Webb weights and enumerated draws come from `draw_weights` in both: the same p-values,
    # the exact hull p of few information-effective clusters (g_info < 12) included.
    for seed in range(4):
        num, den = _ratio_data(seed, G)
        problem = wild.ratio_problem(num, den, np.arange(G))
        for null in (0.35, 0.5, 0.62):
            slow = wild.wild_test(problem, null=null, rng=np.random.default_rng(seed),
                                  weights=weights, interval=False).p_value  # fmt: skip
            fast = wild_replays.ratio_p_values(num[None], den[None], null, weights=weights,
                                       rng=np.random.default_rng(seed))  # fmt: skip
            assert fast[0] == pytest.approx(slow, abs=1e-12), (seed, null)


def test_i34_6_ratio_p_values_with_rademacher_bits_agree_within_monte_carlo_error():
    # G = 60: Rademacher draws from random bits in the fast path, `rng.choice` in `wild_test`;
    # the same data, so the p-values differ only by each one's Monte-Carlo error (B = 1999).
    G, n_boot = 60, 1999
    rows = [_ratio_data(seed, G) for seed in range(12)]
    num, den = np.array([r[0] for r in rows]), np.array([r[1] for r in rows])
    null = float(np.median(num.sum(axis=1) / den.sum(axis=1)))  # p-values across (0, 1)
    fast = wild_replays.ratio_p_values(num, den, null, n_boot=n_boot, rng=np.random.default_rng(7))
    rng = np.random.default_rng(8)
    for i in range(len(rows)):
        problem = wild.ratio_problem(num[i], den[i], np.arange(G))
        slow = wild.wild_test(problem, null=null, n_boot=n_boot, rng=rng, interval=False)
        mc = np.sqrt(2 * max(slow.p_value * (1 - slow.p_value), 1e-4) / n_boot)
        assert abs(fast[i] - slow.p_value) < 4.5 * mc, (i, fast[i], slow.p_value)
    assert 0.05 < np.median(fast) < 0.95
    # a row with one cluster carrying weight has no test, as in `wild_test`
    one = wild_replays.ratio_p_values(np.array([[1.0, 0, 0]]), np.array([[2.0, 0, 0]]), 0.5)
    assert np.isnan(one[0])
