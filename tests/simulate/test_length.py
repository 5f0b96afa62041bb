"""The length generators plant what they say (large draws, checked against the truths)."""

import json

import numpy as np
import pytest
import statsmodels.api as sm

from judgelab.analyses import length
from judgelab.simulate import length as sim
from judgelab.simulate.base import Design

BIG = Design(n_clusters=600, per_cluster=5, icc=0.3)


def test_pairwise_null_truth_and_confound():
    s = sim.pairwise_lengths(np.random.default_rng(1), BIG)
    assert s.truth["p_longer_balanced"] == pytest.approx(0.5, abs=1e-9)
    assert s.truth["length_coef"] == 0.0
    it = s.items
    assert (it["len_pos"] > it["len_neg"]).mean() == pytest.approx(0.6, abs=0.03)
    diff = (it["len_pos"] - it["len_neg"]).abs()
    assert ((diff - diff.mean()) ** 4).mean() / diff.var() ** 2 > 5  # heavy-tailed |Δlength|
    v = length.pairwise_verdicts(it, s.judgments)
    assert v["cluster"].nunique() == 600 and len(v) == 2 * BIG.n_items
    assert v["chosen"].isna().mean() == pytest.approx(0.03, abs=0.01)  # invalid outputs
    bal = length.picks_longer(v, conditions=("balanced",), n_boot=200)["value"].iloc[0]
    assert bal == pytest.approx(0.5, abs=0.03)


def test_pairwise_alternative_plants_the_balanced_truth():
    s = sim.pairwise_lengths(np.random.default_rng(2), BIG, bias=0.5)
    v = length.pairwise_verdicts(s.items, s.judgments)
    bal = length.picks_longer(v, conditions=("balanced",), n_boot=200)["value"].iloc[0]
    assert s.truth["p_longer_balanced"] > 0.58
    assert bal == pytest.approx(s.truth["p_longer_balanced"], abs=0.03)
    coef = length.length_regression(v).set_index("term").loc["length", "coef"]
    # pseudo-true: attenuated below the planted 0.5 by the latent effects, and recovered
    assert 0.2 < s.truth["length_coef"] < 0.5
    assert coef == pytest.approx(s.truth["length_coef"], abs=0.08)


def test_context_documents_share_lengths_and_trend():
    s = sim.context_lengths(np.random.default_rng(3), BIG, slope=-0.4)
    it = s.items
    assert it.groupby("cluster")["len_context"].nunique().eq(1).all()  # a document property
    assert it["len_context"].max() > 8 * it["len_context"].median()  # heavy right tail
    table = length.item_table(it, s.judgments)
    X = sm.add_constant(np.log2(table["len_context"].to_numpy() / 400.0))
    fit = sm.GLM(table["correct"].to_numpy(float), X, family=sm.families.Binomial()).fit()
    assert -0.4 < s.truth["context_slope"] < -0.25  # attenuated by the document effect
    assert fit.params[1] == pytest.approx(s.truth["context_slope"], abs=0.08)


def test_lc_winrate_null_truth_is_the_marginal_win_rate():
    s = sim.lc_winrate(np.random.default_rng(4), BIG)
    wins = (s.judgments["chosen"] == "neg").mean()
    assert wins == pytest.approx(s.truth["lc_winrate"], abs=0.03)
    assert (s.items["len_neg"].median() / s.items["len_pos"].median()) == pytest.approx(1.3, 0.1)


def test_lc_winrate_meta_is_json_text_the_verdicts_read():
    s = sim.lc_winrate(np.random.default_rng(5), Design(n_clusters=4, per_cluster=5, icc=0.3))
    assert all(
        json.loads(m) == {"model_pos": "baseline", "model_neg": "model"} for m in s.items["meta"]
    )
    v = length.pairwise_verdicts(s.items, s.judgments)
    assert set(v["model_neg"]) == {"model"} and set(v["model_pos"]) == {"baseline"}


def test_unknown_form_is_refused():
    with pytest.raises(ValueError, match="unknown bias form"):
        sim.pairwise_lengths(np.random.default_rng(0), form="cubic")
