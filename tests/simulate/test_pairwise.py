"""The pairwise generator plants what it says (`simulate.pairwise`), checked on large draws."""

from __future__ import annotations

import numpy as np
import pytest

from judgelab.analyses import pairwise
from judgelab.core import schema
from judgelab.simulate.base import Design
from judgelab.simulate.pairwise import PairwiseParams, pairwise_benchmark, population

PARAMS = PairwiseParams(
    judges=("A", "B"),
    accuracy=(1.0, 0.4),
    delta=(0.5, 0.0),
    tie_rate=(0.1, 0.0),
    invalid_rate=(0.02, 0.02),
    invalid_if_wrong=(None, 0.2),
    item_sd=0.4,
)


@pytest.fixture(scope="module")
def big():
    design = Design(n_clusters=1500, per_cluster=5, icc=0.3)
    return pairwise_benchmark(np.random.default_rng(7), design, PARAMS)


def test_tables_follow_the_schema_and_carry_clusters(big):
    schema.validate_items(big.items.drop(columns="cluster"))
    assert big.items["cluster"].nunique() == 1500
    assert len(big.judgments) == 2 * 2 * 7500  # judges x orders x items
    assert big.judgments["cluster"].notna().all()
    lengths = big.items["response_pos"].str.count(" ") + 1
    # heavy right tail: the largest response is many times the median
    assert lengths.max() > 5 * lengths.median()


def test_rates_match_planted_truths(big):
    rates = pairwise.pairwise_rates(pairwise.item_outcomes(big.judgments), n_boot=20, across=None)
    for judge in ("A", "B"):
        r = rates[rates["judge"] == judge].set_index("metric")
        for m in ("a1", "a2", "ca", "cons", "pos_a_rate", "pos_a_rate_decisive", "flip_rate"):
            assert r.loc[m, "value"] == pytest.approx(big.truth[f"{m}:{judge}"], abs=0.02), m
    # B ties never and is unbiased: both denominators ~ 1/2; A's spec rate < decisive rate
    assert big.truth["pos_a_rate:B"] == pytest.approx(0.5, abs=0.03)
    assert big.truth["pos_a_rate:A"] < big.truth["pos_a_rate_decisive:A"]
    assert big.truth["ca_diff"] == pytest.approx(big.truth["ca:A"] - big.truth["ca:B"])


def test_ties_and_missing_not_at_random(big):
    j = big.judgments
    a, b = j[j["judge"] == "A"], j[j["judge"] == "B"]
    assert (a["chosen"] == "tie").sum() / a["valid"].sum() == pytest.approx(0.1, abs=0.01)
    # B: invalid 20 % when the verdict was wrong, 2 % when right -> rate well above 2 %
    p_wrong = 1 - population(PARAMS, 0.3)["a1:B"] * 0.5 - population(PARAMS, 0.3)["a2:B"] * 0.5
    expected = 0.02 * (1 - p_wrong) + 0.2 * p_wrong
    assert (~b["valid"]).mean() == pytest.approx(expected, abs=0.01)
    assert (~a["valid"]).mean() == pytest.approx(0.02, abs=0.005)


def test_clusters_are_correlated(big):
    out = pairwise.item_outcomes(big.judgments)
    a = out[out["judge"] == "A"]
    ca = a["consistently_correct"].astype(float).to_numpy().reshape(1500, 5)
    # one-way ANOVA ICC of the outcome: clearly positive with a latent ICC of 0.3
    msb = 5 * ca.mean(axis=1).var(ddof=1)
    msw = ca.var(axis=1, ddof=1).mean()
    assert (msb - msw) / (msb + 4 * msw) > 0.05


def test_seeded_and_validated():
    d = Design(n_clusters=5, per_cluster=5)
    one = pairwise_benchmark(np.random.default_rng(1), d)
    two = pairwise_benchmark(np.random.default_rng(1), d)
    assert one.judgments.equals(two.judgments)
    with pytest.raises(ValueError, match="one value per judge"):
        PairwiseParams(judges=("a", "b"))
