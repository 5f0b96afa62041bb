"""The exact p(r) of the wild cluster bootstrap (core.wild_hull): steps, hull, hull p-value."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from judgelab.core import wild, wild_hull


def _problem(seed: int, G: int, skew: float):
    """A paired 0/1 difference over G clusters of very unequal size (one may dominate)."""
    rng = np.random.default_rng(seed)
    sizes = 1 + rng.multinomial(6 * G, rng.dirichlet(np.full(G, skew)))
    codes = np.repeat(np.arange(G), sizes)
    n = len(codes)
    num = np.concatenate([rng.integers(0, 2, n), rng.integers(0, 2, n)]).astype(float)
    group = np.repeat([0, 1], n)
    prob = wild.ratios_problem(num, np.ones(2 * n), group, np.concatenate([codes, codes]), 2)
    return prob, np.array([1.0, -1.0])


def _prep(prob, a, seed, n_boot=499):
    return wild._prepare(prob, a, n_boot=n_boot, rng=np.random.default_rng(seed), weights="auto")


@settings(max_examples=30, deadline=None, derandomize=True)
@given(seed=st.integers(0, 10_000), G=st.integers(3, 14), skew=st.sampled_from([0.3, 1.0, 5.0]))
def test_the_step_function_is_p_everywhere_between_its_steps(seed, G, skew):
    prep = _prep(*_problem(seed, G, skew), seed)
    if prep is None or prep.se == 0:
        return
    steps = wild_hull.steps(prep)
    assert np.all(np.diff(steps.edges) >= 0) and len(steps.p) == len(steps.edges) + 1
    # Midpoints of every step (and beyond both ends) against the direct definition.
    e = steps.edges
    span = 1.0 + np.abs(e).max() if len(e) else 1.0
    probes = np.concatenate([[e[0] - span], 0.5 * (e[1:] + e[:-1]), [e[-1] + span]])
    scale = np.maximum(np.abs(e[1:]), np.abs(e[:-1]))
    wide = np.concatenate([[True], np.diff(e) > 10 * wild_hull.SLIVER * scale, [True]])
    direct = wild_hull.extreme(prep, probes[None, :]).mean(axis=0)
    assert np.allclose(direct[wide], steps.p[wide], atol=0.5 / len(prep.num0))


@settings(max_examples=40, deadline=None, derandomize=True)
@given(
    seed=st.integers(0, 10_000),
    G=st.integers(3, 14),
    skew=st.sampled_from([0.3, 1.0, 5.0]),
    null=st.floats(-0.6, 0.6),
)
def test_the_hull_p_value_inverts_the_hull_at_every_level(seed, G, skew, null):
    prob, a = _problem(seed, G, skew)
    ps = set()
    for level in (0.8, 0.9, 0.95, 0.99):
        res = wild.wild_test(
            prob, a, null=null, level=level, n_boot=499, rng=np.random.default_rng(seed),
            bounds=(-1.0, 1.0),
        )  # fmt: skip
        if not np.isfinite(res.p_value):
            return
        ps.add(res.p_value)
        inside = res.ci_low <= null <= res.ci_high
        assert inside == (res.p_value >= 1 - level), (level, res)
    assert len(ps) == 1  # one p-value, whatever the level of the interval beside it


def test_the_hull_p_is_at_least_the_point_p_and_equals_it_where_p_is_monotone():
    prob, a = _problem(7, 40, 50.0)  # 40 near-equal clusters: p(r) monotone on each side
    prep = _prep(prob, a, 7, n_boot=999)
    steps = wild_hull.steps(prep)
    for null in np.linspace(-0.3, 0.3, 13):
        p0 = float(wild._p_at(prep, np.array([null]))[0])
        ph = wild_hull.hull_p(steps, (prep.theta - null) / prep.kappa, p0, -np.inf, np.inf)
        assert ph >= p0 - 1e-12 and ph == pytest.approx(p0, abs=2.0 / len(prep.num0))
    # ... and the exact hull is the bisection interval there.
    tol = prep.se * 1e-4
    low, high = wild._bound(prep, 0.05, -1, tol, None), wild._bound(prep, 0.05, 1, tol, None)
    d_lo, d_hi = wild_hull.hull(steps, 0.05, -np.inf, np.inf)
    assert prep.theta - prep.kappa * d_hi == pytest.approx(low, abs=1e-3 * prep.se)
    assert prep.theta - prep.kappa * d_lo == pytest.approx(high, abs=1e-3 * prep.se)


def test_a_split_acceptance_region_is_reported_as_its_hull():
    """Search seeds for a p(r) with a rejected dip between accepted points, then check it."""
    for seed in range(400):
        prob, a = _problem(seed, 5, 0.3)
        prep = _prep(prob, a, seed)
        if prep is None or prep.se == 0:
            continue
        steps = wild_hull.steps(prep)
        ok = steps.p >= 0.05
        first, last = np.flatnonzero(ok)[[0, -1]]
        if not ok[first : last + 1].all():
            break
    else:
        pytest.skip("no split acceptance region among 400 designs")
    dip = first + int(np.flatnonzero(~ok[first : last + 1])[0])
    d_null = 0.5 * (steps.edges[dip - 1] + steps.edges[dip])  # inside the rejected dip
    null = prep.theta - prep.kappa * d_null
    res = wild.wild_test(prob, a, null=null, n_boot=499, rng=np.random.default_rng(seed))
    p_point = float(wild._p_at(prep, np.array([null]))[0])
    assert p_point < 0.05 <= res.p_value  # the dip is inside the hull: not a rejection
    assert res.ci_low <= null <= res.ci_high
