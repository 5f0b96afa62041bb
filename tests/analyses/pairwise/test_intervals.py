"""Wave 2 of issue 20: t-expanded percentile intervals and the position test's row."""

from __future__ import annotations

import numpy as np
import pytest

from judgelab.analyses import pairwise
from judgelab.analyses.pairwise import resample
from judgelab.errors import ChoiceError
from judgelab.simulate.base import Design
from judgelab.simulate.pairwise import PairwiseParams, pairwise_benchmark

PARAMS = PairwiseParams(
    accuracy=(1.0,), delta=(0.0,), tie_rate=(0.1,), invalid_rate=(0.03,),
    invalid_if_wrong=(None,), item_sd=0.5,
)  # fmt: skip


def _outcomes(seed: int, n_clusters: int = 12):
    rng = np.random.default_rng(seed)
    sim = pairwise_benchmark(rng, Design(n_clusters=n_clusters, per_cluster=5, icc=0.3), PARAMS)
    return pairwise.item_outcomes(sim.judgments), sim.truth


def test_expanded_level_is_the_t_quantile_read_on_the_normal_scale():
    assert resample.expanded_level(0.95, 49) == pytest.approx(0.9555, abs=1e-4)
    assert resample.expanded_level(0.95, 11) > resample.expanded_level(0.95, 49) > 0.95
    assert resample.expanded_level(0.95, 1e6) == pytest.approx(0.95, abs=1e-5)
    assert resample.expanded_level(0.95, 1) < 1.0  # capped: a valid percentile level


def test_expanded_interval_widens_the_percentile_interval_with_few_clusters():
    out, _ = _outcomes(3)
    boot = dict(across=None, n_boot=2000, inference="bootstrap")  # the earlier default
    new = pairwise.pairwise_rates(out, **boot).set_index("metric")
    old = pairwise.pairwise_rates(out, **boot, interval="percentile")
    old = old.set_index("metric")
    assert np.allclose(new["value"], old["value"], equal_nan=True)
    metrics = ["a1", "ca", "pos_a_rate"]
    new, old = new.loc[metrics], old.loc[metrics]
    assert (new["ci_low"] <= old["ci_low"]).all() and (new["ci_high"] >= old["ci_high"]).all()
    assert ((new["ci_low"] >= 0) & (new["ci_high"] <= 1)).all()
    # 12 clusters: t_11 against normal quantiles, about 12 % wider (replicates are discrete)
    ratio = (new["ci_high"] - new["ci_low"]).sum() / (old["ci_high"] - old["ci_low"]).sum()
    assert 1.04 < ratio < 1.25
    with pytest.raises(ChoiceError):
        pairwise.pairwise_rates(out, across=None, n_boot=50, interval="bca")


def test_position_p_value_only_on_the_decisive_row_whose_null_holds():
    out, truth = _outcomes(5, n_clusters=40)
    table = pairwise.pairwise_rates(out, across=None, n_boot=500)
    rates = table.set_index("metric")
    # planted: no position preference, 10 % ties, so the spec rate's value is below 0.5
    assert truth["pos_a_rate_decisive"] == pytest.approx(0.5)
    assert truth["pos_a_rate"] < 0.47
    assert np.isnan(rates.loc["pos_a_rate", "p_value"])
    assert rates.loc["pos_a_rate_decisive", "p_value"] > 0.01
    pref = pairwise.position_preference(table).iloc[0]
    assert pref["p_value"] == rates.loc["pos_a_rate_decisive", "p_value"]
    assert pref["ci_low"] < truth["pos_a_rate"] < pref["ci_high"]
