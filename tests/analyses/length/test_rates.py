"""Rates per group with a bootstrap over items and Wilson bounds."""

import numpy as np
import pandas as pd
import pytest

from judgelab.analyses import length


def test_rate_by_group_keeps_empty_bins():
    table = pd.DataFrame(
        {
            "benchmark": "b",
            "split": "s",
            "item_id": ["1", "2", "3"],
            "judge": "j",
            "bin": pd.Categorical(["a", "a", "c"], categories=["a", "b", "c"], ordered=True),
            "correct": [1.0, 0.0, 1.0],
        }
    )
    out = length.rate_by_group(table, by=("judge", "bin"), n_boot=100)
    assert out["bin"].astype(str).tolist() == ["a", "b", "c"]
    assert out["n"].tolist() == [2, 0, 1]
    assert out["value"].iloc[0] == pytest.approx(0.5)  # 1 of 2
    assert np.isnan(out["value"].iloc[1])
    with pytest.raises(KeyError):
        length.rate_by_group(table, value="missing")


def test_cluster_rate_hand_values():
    # items x (two rows: 1, 1) and y (one row: 0, one NaN left out): 2 of 3, two items
    r = length.cluster_rate(
        np.array([1.0, 1.0, 0.0, np.nan]),
        np.array(["x", "x", "y", "y"]),
        n_boot=200,
        rng=np.random.default_rng(0),
        level=0.95,
        inference="bootstrap",
    )
    assert r["value"] == pytest.approx(2 / 3) and r["k"] == 2.0
    assert r["n"] == 3 and r["n_items"] == 2
    assert r["wilson_low"] < 2 / 3 < r["wilson_high"]
    assert len(r["replicates"]) == 200
    # the default: the row of core.estimates.ratio, with what stands behind it
    w = length.cluster_rate(
        np.array([1.0, 1.0, 0.0, np.nan]),
        np.array(["x", "x", "y", "y"]),
        n_boot=200,
        rng=np.random.default_rng(0),
        level=0.95,
    )
    assert w["value"] == pytest.approx(2 / 3) and w["n"] == 3 and w["n_clusters"] == 2
    assert w["few_clusters"] and w["n_eff_clusters"] < 2 and "wild" in w["method"]
    assert 0.0 <= w["ci_low"] <= 2 / 3 <= w["ci_high"] <= 1.0
    empty = length.cluster_rate(
        np.array([np.nan]), np.array(["x"]), n_boot=10, rng=np.random.default_rng(0), level=0.9
    )
    assert empty["n"] == 0 and np.isnan(empty["value"]) and "replicates" not in empty


def test_cluster_rate_of_scores_has_no_wilson_bounds():
    r = length.cluster_rate(
        np.array([3.0, 5.0]),
        np.array(["x", "y"]),
        n_boot=50,
        rng=np.random.default_rng(0),
        level=0.95,
    )
    assert r["value"] == 4.0 and np.isnan(r["wilson_low"]) and np.isnan(r["wilson_high"])
