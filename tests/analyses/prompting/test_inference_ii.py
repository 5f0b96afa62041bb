"""Issue 33 (Inference II) in the prompting family: strategy comparisons by the wild bootstrap.

Item 2: a strategy − baseline difference of rates is tested by the restricted wild cluster
bootstrap (`core.estimates.difference`) and its p-value inverts the interval beside it; every
row reports the effective clusters and flags few of them; the earlier default stays reachable.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from judgelab.analyses import prompting
from judgelab.simulate import base
from judgelab.simulate import faithfulness as sim


def _row(cmp, strategy="CoT", split="test"):
    keep = (cmp["strategy"] == strategy) & (cmp["split"] == split)
    return cmp[keep & (cmp["variant"] == "complete_pairs")].iloc[0]


def test_inf2_2_strategy_difference_is_a_wild_bootstrap_difference_of_rates():
    design = base.scenario("unequal/varying/G15/n60").design(benchmark="ps")
    s = sim.prompt_strategies(np.random.default_rng(3), design=design, effects={"CoT": 0.4})
    cmp = prompting.strategy_comparison(s.judgments, baseline="Vanilla", metric_names=("ca",))
    row = _row(cmp)
    assert row["method"].startswith("wild cluster bootstrap") and row["n_clusters"] == 15
    assert row["few_clusters"] and row["n_eff_clusters"] < 15
    assert row["diff"] == pytest.approx(row["value_strategy"] - row["value_baseline"])
    assert (row["p_value"] < 0.05) == (not row["ci_low"] <= 0 <= row["ci_high"])
    before = _row(
        prompting.strategy_comparison(
            s.judgments, baseline="Vanilla", metric_names=("ca",), test="bootstrap", n_boot=300
        )
    )
    assert before["diff"] == pytest.approx(row["diff"]) and np.isnan(before["n_eff_clusters"])
    assert before["method"].startswith("percentile cluster bootstrap")


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), G=st.integers(2, 20), shift=st.floats(-1.0, 1.0))
def test_inf2_2_strategy_p_value_inverts_its_interval(seed, G, shift):
    design = base.Design(n_clusters=G, per_cluster=4, icc=0.5, size_spread=1.5, benchmark="ps")
    s = sim.prompt_strategies(np.random.default_rng(seed), design=design, effects={"CoT": shift})
    cmp = prompting.strategy_comparison(
        s.judgments, baseline="Vanilla", metric_names=("ca", "cons"), seed=seed
    )
    for _, row in cmp.iterrows():
        if not np.isfinite(row["p_value"]):
            continue
        width = row["ci_high"] - row["ci_low"]
        near = min(abs(row["ci_low"]), abs(row["ci_high"])) < 1e-4 * width + 1e-9
        assert near or (row["ci_low"] <= 0 <= row["ci_high"]) == (row["p_value"] >= 0.05)


def test_inf2_2_effect_by_split_is_clustered_and_tested():
    design = base.scenario("unequal/varying/G15/n60").design(benchmark="ps")
    s = sim.prompt_strategies(np.random.default_rng(5), design=design, effects={"CoT": 0.6})
    j = s.judgments
    two = pd.concat([j, j.assign(model="other", judge=j["judge"].str.replace("sim", "o"))])
    new = prompting.strategy_effect_by_split(two, strategies=["CoT"])
    old = prompting.strategy_effect_by_split(two, strategies=["CoT"], interval="bootstrap")
    row, before = new.iloc[0], old.iloc[0]
    assert row["n_models"] == 2 and row["n_clusters"] == 15 and row["few_clusters"]
    assert row["diff"] == pytest.approx(before["diff"]) and np.isnan(before["p_value"])
    assert (row["p_value"] < 0.05) == (not row["ci_low"] <= 0 <= row["ci_high"])
    # clusters, not items: the interval is wider than the items' bootstrap
    assert row["ci_high"] - row["ci_low"] > before["ci_high"] - before["ci_low"]
