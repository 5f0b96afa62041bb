"""Bootstrap p-values, their adaptive resolution, and multiplicity adjustment."""

from __future__ import annotations

import numpy as np
import pytest

from judgelab.core import inference


def test_bootstrap_p_is_twice_the_smaller_tail():
    reps = np.array([-2.0, -1.0, 0.5, 1.0, 2.0, 3.0, 4.0, 5.0, np.nan])
    assert inference.bootstrap_p(reps) == pytest.approx(2 * 2 / 8)
    assert np.isnan(inference.bootstrap_p(np.array([np.nan])))


def _normal_draw(mean: float, seed: int = 0):
    rng = np.random.default_rng(seed)
    return lambda k: rng.normal(mean, 1.0, size=k)


def test_adaptive_p_resolves_a_small_p_to_its_relative_error():
    # statistic ~ N(2.8, 1): the bootstrap p of "mean 0" is 2·Φ(−2.8) ≈ 0.0051.
    out = inference.adaptive_p(_normal_draw(2.8), n_boot=1000, max_boot=200_000)
    assert not out.bound
    assert out.mc_se < 0.10 * out.p
    assert out.p == pytest.approx(0.0051, rel=0.25)
    assert out.n_boot > 16_000  # 1,000 replicates cannot resolve it


def test_adaptive_p_stops_early_when_p_is_large():
    out = inference.adaptive_p(_normal_draw(0.3), n_boot=1000)
    assert out.n_boot == 1000 and not out.bound and out.p > 0.5


def test_adaptive_p_reports_a_bound_when_nothing_crosses_the_null():
    out = inference.adaptive_p(_normal_draw(12.0), n_boot=500, max_boot=2000)
    assert out.bound and out.n_boot == 2000
    assert out.p == pytest.approx(2 / 2000)


def test_adaptive_p_reports_a_bound_when_max_boot_is_too_small():
    out = inference.adaptive_p(_normal_draw(2.8), n_boot=500, max_boot=1000)
    assert out.bound and out.n_boot == 1000
    assert out.p > inference.bootstrap_p(_normal_draw(2.8)(1000)) * 0.5


def test_adaptive_p_uses_given_replicates_first():
    calls = []

    def draw(k):
        calls.append(k)
        return np.full(k, 1.0)

    out = inference.adaptive_p(draw, first=np.array([-1.0, 1.0, 1.0, -1.0]), n_boot=4)
    assert calls == [] and out.p == 1.0


def test_adaptive_p_rejects_bad_budgets():
    with pytest.raises(ValueError, match="n_boot"):
        inference.adaptive_p(_normal_draw(0.0), n_boot=100, max_boot=10)


def test_adjust_holm_and_bh_leave_nan_out_of_the_family():
    p = np.array([0.01, 0.04, 0.03, np.nan])
    holm = inference.adjust(p, "holm")
    assert holm[:3].tolist() == pytest.approx([0.03, 0.06, 0.06])
    assert np.isnan(holm[3])
    bh = inference.adjust(p, "bh")
    assert bh[:3].tolist() == pytest.approx([0.03, 0.04, 0.04])
    assert inference.adjust(p, "none")[:3].tolist() == pytest.approx(p[:3].tolist())
    with pytest.raises(ValueError, match="unknown adjustment"):
        inference.adjust(p, "bonferonni")


def test_mc_se():
    assert inference.mc_se(0.5, 100) == pytest.approx(0.05)
    assert np.isnan(inference.mc_se(0.5, 0))


def test_adjust_matches_statsmodels():
    from statsmodels.stats.multitest import multipletests

    p = np.random.default_rng(4).uniform(0, 0.2, 25)
    for ours, theirs in (("holm", "holm"), ("bh", "fdr_bh")):
        assert inference.adjust(p, ours) == pytest.approx(multipletests(p, method=theirs)[1])
