"""The length generators plant what they say (large draws, checked against the truths).

Issue 33 item 1: the draws are shaped like real corpora (unequal clusters, ICC 0.5, length
slopes varying by cluster, heavy-tailed length ratios, invalid outputs missing not at
random) and the truths are super-population values of a very large draw — a null planted
as a null mean slope is exactly the value the estimators test.
"""

import json

import numpy as np
import pytest
import statsmodels.api as sm

from judgelab.analyses import length
from judgelab.simulate import length as sim
from judgelab.simulate import length_context as sim_ctx
from judgelab.simulate.base import Design, scenario

BIG = Design(n_clusters=600, per_cluster=5, icc=0.3)
#: Large and shaped like the hard cells: ICC 0.5, slopes varying by cluster (SD 0.5).
VARYING = Design(n_clusters=1500, per_cluster=10, icc=0.5, effect_sd=0.5)


def test_i33_1_null_truths_are_the_tested_values_with_varying_slopes():
    for name in ("unequal/varying/G8/n48", "balanced/constant/G50/n250"):
        design = scenario(name).design()
        s = sim.pairwise_lengths(np.random.default_rng(1), design, p_longer_better=0.5)
        assert abs(s.truth["length_coef"] - 0.0) < 0.002
        assert abs(s.truth["p_longer_balanced"] - 0.5) < 0.002
        c = sim_ctx.context_lengths(np.random.default_rng(1), design)
        assert abs(c.truth["context_slope"]) < 0.002
    # with a gold/length confound the balanced rate stays 0.5 (non-collapsibility shifts
    # only the logistic working model's coefficient, and only a little)
    s = sim.pairwise_lengths(np.random.default_rng(1), scenario("unequal/varying/G8/n48").design())
    assert abs(s.truth["p_longer_balanced"] - 0.5) < 0.002
    assert abs(s.truth["length_coef"]) < 0.01


@pytest.mark.slow
def test_i33_1_population_fit_on_a_large_plain_draw_is_null_under_the_null():
    # a plain draw (not the mirrored one behind the truths): the same GLM on 30,000
    # verdicts of 1,500 clusters whose slopes vary finds ~0
    s = sim.pairwise_lengths(np.random.default_rng(7), VARYING, p_longer_better=0.5)
    v = length.pairwise_verdicts(s.items, s.judgments)
    reg = length.length_regression(v, wild="none").set_index("term")
    coef, se = reg.loc["length", "coef"], reg.loc["length", "std_error"]
    assert abs(coef) < 2.5 * se and se < 0.05
    # under the alternative the large draw recovers the pseudo-true value, not the mean
    s = sim.pairwise_lengths(np.random.default_rng(8), VARYING, bias=0.5, p_longer_better=0.5)
    v = length.pairwise_verdicts(s.items, s.judgments)
    reg = length.length_regression(v, wild="none").set_index("term")
    assert 0.2 < s.truth["length_coef"] < 0.45  # attenuated below the planted mean 0.5
    assert reg.loc["length", "coef"] == pytest.approx(s.truth["length_coef"], abs=0.06)


@pytest.mark.slow
def test_i33_1_unequal_clusters_heavy_ratios_and_mnar_invalids():
    design = scenario("unequal/varying/G8/n240").design()
    s = sim.pairwise_lengths(np.random.default_rng(3), design)
    sizes = s.items.groupby("cluster").size()
    assert len(sizes) == 8 and sizes.max() >= 3 * sizes.min()  # unequal sizes
    big = sim.pairwise_lengths(np.random.default_rng(4), VARYING)
    it = big.items
    r = np.log2(
        np.maximum(it["len_pos"], it["len_neg"]) / np.minimum(it["len_pos"], it["len_neg"])
    )
    assert ((r - r.mean()) ** 4).mean() / r.var() ** 2 > 4  # heavy-tailed log ratios
    assert r.max() > 4  # some responses 16x longer than their pair
    v = length.pairwise_verdicts(it, big.judgments)
    bad = v["chosen"].isna()
    assert 0.03 < bad.mean() < 0.12
    # MNAR: invalid more often on long pairs (the wrong-verdict tie is checked on context)
    long = (v["len_pos"] + v["len_neg"]) > 2 * sim.PAIR_REFERENCE
    assert bad[long].mean() > 1.3 * bad[~long].mean()


@pytest.mark.slow
def test_i33_1_context_invalids_tied_to_correctness_and_summary_length():
    s = sim_ctx.context_lengths(
        np.random.default_rng(5), VARYING, intercept=0.0, invalid=0.1, invalid_wrong=2.0
    )
    j = s.judgments.merge(s.items[["item_id", "len_response"]], on="item_id")
    # the latent correctness of invalid rows is unobserved; the valid share of wrong
    # verdicts (~0.38) falls below the planted P(wrong) = 0.5: wrong ones go missing more
    valid = j[j["correct"].notna()]
    assert (~valid["correct"].astype(bool)).mean() < 0.45
    long = j["len_response"] > 2 * sim.RESPONSE_REFERENCE
    assert j["verdict"].isna()[long].mean() > 1.3 * j["verdict"].isna()[~long].mean()


def test_pairwise_null_truth_and_confound():
    s = sim.pairwise_lengths(np.random.default_rng(1), BIG)
    assert s.truth["p_longer_balanced"] == pytest.approx(0.5, abs=1e-9)
    it = s.items
    assert (it["len_pos"] > it["len_neg"]).mean() == pytest.approx(0.6, abs=0.03)
    diff = (it["len_pos"] - it["len_neg"]).abs()
    assert ((diff - diff.mean()) ** 4).mean() / diff.var() ** 2 > 5  # heavy-tailed |Δlength|
    v = length.pairwise_verdicts(it, s.judgments)
    assert v["cluster"].nunique() == 600 and len(v) == 2 * BIG.n_items
    bal = length.picks_longer(v, conditions=("balanced",), n_boot=200)["value"].iloc[0]
    assert bal == pytest.approx(0.5, abs=0.03)


def test_pairwise_alternative_plants_the_balanced_truth():
    s = sim.pairwise_lengths(np.random.default_rng(2), BIG, bias=0.5)
    v = length.pairwise_verdicts(s.items, s.judgments)
    bal = length.picks_longer(v, conditions=("balanced",), n_boot=200)["value"].iloc[0]
    assert s.truth["p_longer_balanced"] > 0.58
    assert bal == pytest.approx(s.truth["p_longer_balanced"], abs=0.03)
    coef = length.length_regression(v, wild="none").set_index("term").loc["length", "coef"]
    # pseudo-true: attenuated below the planted 0.5 by the latent effects, and recovered
    assert 0.2 < s.truth["length_coef"] < 0.5
    assert coef == pytest.approx(s.truth["length_coef"], abs=0.08)


def test_context_documents_share_lengths_and_trend():
    s = sim_ctx.context_lengths(np.random.default_rng(3), BIG, slope=-0.4)
    it = s.items
    assert it.groupby("cluster")["len_context"].nunique().eq(1).all()  # a document property
    assert it["len_context"].max() > 8 * it["len_context"].median()  # heavy right tail
    table = length.item_table(it, s.judgments)
    table = table[table["correct"].notna()]
    X = sm.add_constant(np.log2(table["len_context"].to_numpy() / 400.0))
    fit = sm.GLM(table["correct"].to_numpy(float), X, family=sm.families.Binomial()).fit()
    assert -0.4 < s.truth["context_slope"] < -0.2  # attenuated by the document effect
    assert fit.params[1] == pytest.approx(s.truth["context_slope"], abs=0.08)


def test_lc_winrate_null_truth_is_the_marginal_win_rate():
    s = sim_ctx.lc_winrate(np.random.default_rng(4), BIG)
    chosen = s.judgments["chosen"].dropna()
    assert (chosen == "neg").mean() == pytest.approx(s.truth["lc_winrate"], abs=0.03)
    assert (s.items["len_neg"].median() / s.items["len_pos"].median()) == pytest.approx(1.3, 0.1)


def test_lc_winrate_meta_is_json_text_the_verdicts_read():
    s = sim_ctx.lc_winrate(np.random.default_rng(5), Design(n_clusters=4, per_cluster=5, icc=0.3))
    assert all(
        json.loads(m) == {"model_pos": "baseline", "model_neg": "model"} for m in s.items["meta"]
    )
    v = length.pairwise_verdicts(s.items, s.judgments)
    assert set(v["model_neg"]) == {"model"} and set(v["model_pos"]) == {"baseline"}


def test_unknown_form_and_kind_are_refused():
    with pytest.raises(ValueError, match="unknown bias form"):
        sim.pairwise_lengths(np.random.default_rng(0), form="cubic")
    with pytest.raises(ValueError, match="unknown length-ratio distribution"):
        sim.pairwise_lengths(np.random.default_rng(0), length_kind="pareto")
