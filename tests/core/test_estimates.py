"""One estimate row: values, the sums path, bounds, inversion, and effective clusters."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from judgelab.core import clusters, estimates


def _data(seed: int, G: int = 10, n: int = 80):
    rng = np.random.default_rng(seed)
    unit = np.sort(rng.integers(0, G, n))
    num = (rng.random(n) < 0.3 + 0.4 * rng.random(G)[unit]).astype(float)
    return rng, unit, num


def test_ratio_difference_and_contrast_values():
    _, unit, num = _data(0)
    den = np.ones(len(num))
    group = (np.arange(len(num)) % 2).astype(int)
    r = estimates.ratio(num, den, unit, rng=np.random.default_rng(0))
    assert r.value == pytest.approx(num.mean()) and r.n == len(num)
    d = estimates.difference(num, den, group, unit, rng=np.random.default_rng(0))
    assert d.value == pytest.approx(num[group == 1].mean() - num[group == 0].mean())
    m = estimates.contrast(num, den, group, unit, [0.5, 0.5], rng=np.random.default_rng(0))
    assert m.value == pytest.approx(0.5 * num[group == 0].mean() + 0.5 * num[group == 1].mean())
    assert np.isnan(r.p_value) and np.isfinite(d.p_value)  # a test only where a null is given
    assert r.ci_low <= r.value <= r.ci_high and 0 <= r.ci_low and r.ci_high <= 1


def test_the_sums_path_gives_the_same_row():
    _, unit, num = _data(1)
    den = np.where(np.arange(len(num)) % 3 == 0, 2.0, 1.0)
    num = np.minimum(num * den, den)
    group = (np.arange(len(num)) % 2).astype(int)
    rows = estimates.difference(num, den, group, unit, rng=np.random.default_rng(5))
    s = estimates.sums(num, den, group, unit, 2)
    summed = estimates.from_sums(
        s, [-1, 1], null=0.0, bounds=(-1, 1), rng=np.random.default_rng(5)
    )
    assert rows == summed


def test_effective_clusters_use_the_rows():
    _, unit, num = _data(2, G=12, n=120)
    r = estimates.ratio(num, np.ones(len(num)), unit)
    resid = num - num.mean()
    assert r.n_eff_clusters == pytest.approx(
        clusters.effective(np.ones(len(num)), unit, resid=resid)
    )
    assert r.few_clusters  # 12 clusters: below 20 effective
    assert r.n_clusters == len(np.unique(unit))


def test_a_rate_at_its_bound_gets_a_wilson_interval_by_cluster():
    unit = np.repeat(np.arange(8), 5)
    r = estimates.ratio(np.ones(40), np.ones(40), unit, null=0.5)
    assert r.value == 1.0 and r.ci_high == 1.0 and 0.6 < r.ci_low < 0.75  # Wilson(8 of 8)
    assert r.method.startswith("Wilson") and r.p_value < 0.05


def test_no_data_is_said():
    r = estimates.ratio(np.zeros(3), np.zeros(3), np.arange(3))
    assert np.isnan(r.value) and r.method == "no data"


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), G=st.integers(2, 25), null=st.floats(0.01, 0.99))
def test_p_value_inverts_the_reported_interval(seed, G, null):
    _, unit, num = _data(seed, G=G, n=max(2 * G, 30))
    if np.unique(unit).size < 2:
        return
    r = estimates.ratio(num, np.ones(len(num)), unit, null=null, rng=np.random.default_rng(seed))
    inside = r.ci_low <= null <= r.ci_high
    near = min(abs(null - r.ci_low), abs(null - r.ci_high)) < 1e-6
    assert near or inside == (r.p_value >= 0.05)


def test_beyond_the_wild_limit_the_row_is_the_wald_row(monkeypatch):
    """Where B × G would not fit the bootstrap's arrays, the CR1 t(G − 1) Wald row, said so;
    with many clusters it agrees with the wild interval it stands in for."""
    from judgelab.core import wild

    rng = np.random.default_rng(4)
    unit = np.repeat(np.arange(400), 5)
    num = (rng.random(2000) < 0.3 + 0.2 * rng.random(400)[unit]).astype(float)
    boot = estimates.ratio(
        num, np.ones(2000), unit, null=0.35, n_boot=999, rng=np.random.default_rng(1)
    )
    monkeypatch.setattr(wild, "MAX_CELLS", 400 * 999 - 1)
    wald = estimates.ratio(num, np.ones(2000), unit, null=0.35, n_boot=999)
    assert boot.method != estimates.WALD and wald.method == estimates.WALD
    assert wald.value == boot.value and wald.n_clusters == boot.n_clusters == 400
    assert wald.ci_high - wald.ci_low == pytest.approx(boot.ci_high - boot.ci_low, rel=0.1)
    assert wald.p_value == pytest.approx(boot.p_value, abs=0.03)


@pytest.mark.parametrize("rate", [0.0, 1.0])
def test_every_unit_at_a_bound_gets_the_wilson_row_beyond_the_wild_limit(monkeypatch, rate):
    """All-0 or all-1 rates: the clustered Wilson row on either side of the wild limit,
    from labelled units and from distinct patterns with counts (`wald`)."""
    from judgelab.core import wild

    unit = np.repeat(np.arange(300), 4)
    num = np.full(1200, rate)
    want = estimates.ratio(num, np.ones(1200), unit, null=0.5, n_boot=999)
    monkeypatch.setattr(wild, "MAX_CELLS", 10)
    got = estimates.ratio(num, np.ones(1200), unit, null=0.5, n_boot=999)
    assert got.method == want.method != estimates.WALD
    assert got.ci_low == pytest.approx(want.ci_low) and got.ci_high == pytest.approx(want.ci_high)
    assert got.n_eff_clusters == pytest.approx(want.n_eff_clusters) and got.n_clusters == 300
    s = estimates.sums(num, np.ones(1200), np.zeros(1200, dtype=int), unit, 1)
    one = estimates.Sums(*(x[:1] for x in s))  # every unit alike: one pattern, 300 units
    pat = estimates.wald(one, np.array([300.0]), [1.0], null=0.5, bounds=(0.0, 1.0))
    assert pat.method == want.method and pat.ci_low == pytest.approx(want.ci_low)
