"""The t_{G−1} reference of the ContextEval cluster bootstrap (issue 20, wave 2)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

from judgelab.analyses import contexteval as ce
from judgelab.analyses.contexteval.resampling import t_reference
from judgelab.simulate import contexteval as sc

BASE = sc.SETTINGS[0]


def test_t_reference_inverts_its_test_and_is_clipped():
    reps = np.random.default_rng(0).normal(2.0, 1.0, 4000)
    out = t_reference(2.0, reps, df=9, level=0.95, null=0.0)
    q = sps.t.ppf(0.975, 9) * np.std(reps, ddof=1)
    assert out["low"] == pytest.approx(2.0 - q) and out["high"] == pytest.approx(2.0 + q)
    # the null at the interval's edge has p = 0.05
    edge = t_reference(2.0, reps, df=9, level=0.95, null=out["low"])
    assert edge["p_value"] == pytest.approx(0.05, abs=1e-9)
    # a rate near its bound: the interval stays inside the replicates' support
    rates = np.clip(np.random.default_rng(1).normal(0.01, 0.02, 1000), 0.0, None)
    near = t_reference(0.01, rates, df=39, level=0.95, null=None)
    assert near["low"] >= 0.0 and np.isnan(near["p_value"])


def test_rank_flips_t_reference_is_wider_than_percentile_and_consistent():
    sim = sc.pairwise(np.random.default_rng(3), quality=0.4, tables=False)
    ex = sim.extra["examples"]
    kw = {"missing_as_error": False, "n_boot": 2000, "p_max_boot": 8000}
    kw["test"] = "cluster_bootstrap"  # the pairs bootstrap (the earlier default)
    t = ce.rank_flips(ex, **kw)
    pc = ce.rank_flips(ex, reference="percentile", **kw)
    rt, rp = (f[f["setting"] == BASE].iloc[0] for f in (t, pc))
    assert rt["margin"] == rp["margin"]
    wt, wp = rt["margin_high"] - rt["margin_low"], rp["margin_high"] - rp["margin_low"]
    # 40 conversations: t_39 / z ≈ 1.03, the percentile width is ±MC noise of that
    assert 0.93 < wt / wp < 1.15
    # the test is the interval's: 0 outside the interval iff p < 0.05
    for r in t.itertuples():
        if np.isfinite(r.p_value):
            assert (r.p_value < 0.05) == (not r.margin_low <= 0.0 <= r.margin_high)
    with pytest.raises(ValueError, match="reference"):
        ce.rank_flips(ex, reference="normal", **kw)
