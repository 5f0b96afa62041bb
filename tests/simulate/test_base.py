"""The simulator's building blocks plant what they say (checked on large draws)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

from judgelab.core import clusters, schema
from judgelab.simulate import base


def test_cluster_effects_give_the_requested_latent_icc():
    design = base.Design(n_clusters=4000, per_cluster=5, icc=0.3)
    u = base.cluster_effects(np.random.default_rng(1), design)
    # latent y = u + logistic noise: ICC = var(u) / (var(u) + π²/3)
    icc = u[:: design.per_cluster].var() / (u[:: design.per_cluster].var() + base.LOGISTIC_VAR)
    assert icc == pytest.approx(0.3, abs=0.02)
    assert np.all(u.reshape(-1, 5) == u.reshape(-1, 5)[:, :1])  # shared within a cluster


def test_heavy_tailed_lengths_have_heavy_tails():
    rng = np.random.default_rng(2)
    x = base.heavy_tailed(rng, 200_000, median=150, spread=0.8)
    assert np.median(x) == pytest.approx(150, rel=0.03)
    assert sps.kurtosis(x) > 3  # excess kurtosis: far heavier than normal
    t = base.heavy_tailed(rng, 200_000, kind="t", df=3)
    assert t.min() >= 1 and sps.kurtosis(t) > 6
    with pytest.raises(ValueError, match="unknown length"):
        base.heavy_tailed(rng, 3, kind="cauchy")


def test_items_table_is_schema_valid_with_clusters():
    design = base.Design(n_clusters=3, per_cluster=4)
    items = base.items_table(
        design, "pairwise", {"response_pos": base.words(5), "gold": "A"}, validate=True
    )
    schema.validate_items(items)
    assert len(items) == 12 and items["item_id"].is_unique
    assert clusters.count(items) == 3
    assert items["response_pos"].str.split().str.len().eq(5).all()


def test_judgments_table_fills_model_output_and_valid():
    j = base.judgments_table(
        {
            "benchmark": "sim",
            "split": "test",
            "item_id": ["a", "b"],
            "judge": "J",
            "verdict": ["A", None],
            "chosen": ["pos", None],
            "cluster": ["c1", "c2"],
        },
        validate=True,
    )
    schema.validate_judgments(j)  # `cluster` is a derived column a loader may add
    assert j["valid"].tolist() == [True, False]
    assert j["output"].tolist() == ["A", "unparseable"]
    assert j["model"].tolist() == ["J", "J"]
    assert j["cluster"].tolist() == ["c1", "c2"]
    assert j["condition"].tolist() == ["", ""] and j["order"].tolist() == [0, 0]


def test_expectation_is_a_fixed_population_value():
    f = lambda rng, n: base.sigmoid(rng.normal(0.5, 1.0, n))  # noqa: E731
    assert base.expectation(f) == base.expectation(f)
    assert base.expectation(f) == pytest.approx(0.6, abs=0.01)


def test_missing_mask_at_random_and_not_at_random():
    rng = np.random.default_rng(3)
    wrong = rng.random(100_000) < 0.3
    mar = base.missing_mask(rng, 100_000, rate=0.1)
    assert mar.mean() == pytest.approx(0.1, abs=0.005)
    mnar = base.missing_mask(rng, 100_000, rate=0.02, wrong=wrong, rate_if_wrong=0.2)
    assert mnar[wrong].mean() == pytest.approx(0.2, abs=0.01)
    assert mnar[~wrong].mean() == pytest.approx(0.02, abs=0.005)
    with pytest.raises(ValueError, match="needs `wrong`"):
        base.missing_mask(rng, 3, rate_if_wrong=0.5)


def test_design_rejects_nonsense():
    with pytest.raises(ValueError, match="icc"):
        base.Design(icc=1.0)
    with pytest.raises(ValueError, match="cluster"):
        base.Design(n_clusters=0)
