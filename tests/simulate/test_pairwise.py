"""The pairwise generator plants what it says (`simulate.pairwise`), checked on large draws."""

from __future__ import annotations

import numpy as np
import pytest

from judgelab.analyses import pairwise
from judgelab.core import schema
from judgelab.simulate import pairwise as simpw
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


# ---------------------------------------------------------------- issue 33: real-shaped data

SHAPED = PairwiseParams(
    accuracy=(1.0,), delta=(0.0,), tie_rate=(0.08,), invalid_rate=(0.03,),
    invalid_if_wrong=(0.15,), invalid_length=(0.7,), item_sd=0.5,
)  # fmt: skip


@pytest.fixture(scope="module")
def shaped():
    design = Design(n_clusters=2500, per_cluster=8, icc=0.5, size_spread=1.5, effect_sd=0.5)
    return pairwise_benchmark(np.random.default_rng(33), design, SHAPED)


def test_rel3_33_null_position_holds_with_cluster_varying_bias(shaped):
    # δ varies by cluster (SD 0.5) around 0: some sources favour A, others B; the population
    # share of A among decisive verdicts is exactly 1/2 (antithetic truth), the draw agrees
    truth = population(SHAPED, 0.5, 0.5)
    assert abs(truth["pos_a_rate_decisive"] - 0.5) < 0.002
    assert truth["pos_a_rate"] < 0.5  # 8 % ties: the spec rate's no-preference value
    out = pairwise.item_outcomes(shaped.judgments)
    dec = out["decisive"].astype(float).to_numpy()
    a = out["picks_a"].astype(float).to_numpy()
    assert a.sum() / dec.sum() == pytest.approx(0.5, abs=0.01)
    # ... and the bias really varies: per-cluster A-shares spread beyond binomial noise
    big = out.assign(a=a, d=dec).groupby("cluster")[["a", "d"]].sum()
    big = big[big["d"] >= 40]
    share = big["a"] / big["d"]
    binomial_var = (0.25 / big["d"]).mean()
    assert share.var() > 2 * binomial_var


def test_rel3_33_unequal_cluster_sizes_are_realised_per_draw(shaped):
    sizes = shaped.params["design"].sizes
    assert len(sizes) == 2500 and sum(sizes) == 2500 * 8
    assert min(sizes) == 1 and max(sizes) > 10 * np.median(sizes)
    assert shaped.items.groupby("cluster").size().max() == max(sizes)


def test_rel3_33_invalid_outputs_missing_not_at_random(shaped):
    j = shaped.judgments
    invalid = ~j["valid"].astype(bool)
    # an invalid verdict hides whether it was right; the planted rates (3 % right, 15 %
    # wrong, at the median length) put the overall share between them
    assert 0.04 < invalid.mean() < 0.12
    right = simpw.invalid_prob(SHAPED, 0, np.array([False]), np.zeros(1))[0]
    wrong = simpw.invalid_prob(SHAPED, 0, np.array([True]), np.zeros(1))[0]
    assert (right, wrong) == pytest.approx((0.03, 0.15))
    lengths = shaped.items["response_pos"].str.count(" ") + shaped.items["response_neg"].str.count(
        " "
    )
    by_item = dict(zip(shaped.items["item_id"], lengths, strict=True))
    length = j["item_id"].map(by_item)
    long, short = length >= length.quantile(0.75), length <= length.quantile(0.25)
    assert invalid[long].mean() > 1.5 * invalid[short].mean()


def test_rel3_33_truths_match_a_large_draw_with_varying_effects_and_mnar():
    # equal sizes here: with size spread 1.5 even 2500 clusters are ~50 effective ones
    design = Design(n_clusters=2500, per_cluster=8, icc=0.5, effect_sd=0.5)
    sim = pairwise_benchmark(np.random.default_rng(34), design, SHAPED)
    rates = pairwise.pairwise_rates(
        pairwise.item_outcomes(sim.judgments),
        across=None,
        metrics=["a1", "ca", "cons", "pos_a_rate", "flip_rate"],
        n_boot=99,
    ).set_index("metric")
    for m in ("a1", "ca", "cons", "pos_a_rate", "flip_rate"):
        assert rates.loc[m, "value"] == pytest.approx(sim.truth[m], abs=0.012), m
