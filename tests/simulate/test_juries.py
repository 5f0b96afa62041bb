"""The jury generator plants what it says (checked on large draws)."""

from __future__ import annotations

import numpy as np
import pytest

from judgelab.analyses import juries
from judgelab.core import clusters, schema
from judgelab.simulate import base
from judgelab.simulate import juries as sj

PARAMS = sj.JuryParams(intercepts=(2.3, 2.0, 1.6))


@pytest.fixture(scope="module")
def big() -> base.Simulation:
    design = base.Design(n_clusters=800, per_cluster=5, icc=0.3)
    return sj.jury_benchmark(np.random.default_rng(7), design, PARAMS)


def test_tables_are_schema_valid_with_clusters(big):
    schema.validate_items(big.items)
    schema.validate_judgments(big.judgments.drop(columns="cluster"))
    assert clusters.count(big.judgments) == 800
    assert set(big.judgments["order"]) == {0, 1}
    assert big.judgments["chosen"].eq("tie").mean() == pytest.approx(0.05, abs=0.01)
    assert (~big.judgments["valid"]).mean() == pytest.approx(0.03, abs=0.01)


def test_accuracies_and_jury_match_the_population(big):
    t = big.truth
    single = juries.jury_table(big.judgments, size=[1, 3], across=None, n_boot=20)
    ca = single[single["size"] == 1].set_index("jury")["ca"]
    for j in range(3):
        assert ca[f"judge-{j}"] == pytest.approx(t[f"ca_{j}"], abs=0.04)
    assert t["ca_0"] > t["ca_1"] > t["ca_2"]  # different accuracies: a real best member
    jury = single[single["size"] == 3].iloc[0]
    assert jury["ca"] == pytest.approx(t["jury_ca"], abs=0.04)
    assert t["jury_minus_best"] == pytest.approx(t["jury_ca"] - t["ca_0"])


def test_errors_are_correlated_across_judges_and_within_clusters(big):
    kappa = juries.cohen_kappa_matrix(big.judgments, across=None, n_boot=20)
    row = juries.pick(kappa, judge_1="judge-0", judge_2="judge-1").iloc[0]
    assert row["kappa"] == pytest.approx(big.truth["kappa_01"], abs=0.04)
    assert big.truth["kappa_01"] > 0.05  # shared item difficulty
    lab = juries.consolidated_labels(big.judgments[big.judgments["judge"] == "judge-0"])
    ok = (lab["label"] == "pos").to_numpy(float).reshape(-1, 5)
    between = ok.mean(axis=1).var() - ok.var(axis=1, ddof=1).mean() / 5
    assert between / ok.var() > 0.05  # items of a cluster share their difficulty


def test_alpha_truth_matches_a_large_sample(big):
    table = juries.alpha_table(big.judgments, across=None, n_boot=20)
    assert table["alpha"].iloc[0] == pytest.approx(big.truth["alpha_item"], abs=0.04)
    table = juries.alpha_table(big.judgments, units="item_order", across=None, n_boot=20)
    assert table["alpha"].iloc[0] == pytest.approx(big.truth["alpha_item_order"], abs=0.04)


def test_null_params_plant_a_jury_equal_to_its_best_member():
    null = sj.null_params(PARAMS, 0.3)
    t = sj.population(null, 0.3)
    assert t["jury_minus_best"] == pytest.approx(0.0, abs=1e-3)
    assert t["best"] == 0 and t["ca_0"] > t["ca_1"]


def test_self_consistency_truth():
    params = sj.JuryParams(intercepts=(2.0,), n_samples=5)
    design = base.Design(n_clusters=300, per_cluster=5)
    sim = sj.jury_benchmark(np.random.default_rng(3), design, params)
    rates = juries.self_consistency_rates(
        juries.self_consistency(sim.judgments), across=None, n_boot=20
    )
    row = juries.pick(rates, metric="sc_ca").iloc[0]
    assert row["value"] == pytest.approx(sim.truth["sc_ca_0"], abs=0.04)
    assert sim.truth["sc_ca_0"] > sim.truth["ca_0"] + 0.05  # the vote over samples helps


def test_inf2_1_scenario_shaped_draws_plant_unequal_clusters_and_varying_biases():
    design = base.scenario("unequal/varying/G8/n240").design()
    params = sj.JuryParams(intercepts=(2.3, 2.0, 1.8), invalid_rate=0.02, invalid_if_wrong=0.2)
    sim = sj.jury_benchmark(np.random.default_rng(4), design, params)
    sizes = sim.judgments.drop_duplicates("item_id").groupby("cluster").size()
    assert len(sizes) == 8 and sizes.sum() == 240 and sizes.max() >= 3 * sizes.min()
    assert sim.params["design"].sizes is not None
    schema.validate_judgments(sim.judgments.drop(columns="cluster"))
    # missing not at random: a wrong (neg) or tie verdict is invalid 10x as often as a right one
    probs = sj.verdict_probs(np.array([0.0]), params)[0, 0]  # z = 0, order 0: pos, neg, tie, inv
    right = 1 / (1 + np.exp(-params.position)) * (1 - params.tie_rate)
    assert probs[0] == pytest.approx(right * 0.98)
    assert probs[3] == pytest.approx(right * 0.02 + (1 - right) * 0.2)
    # the truth knows the varying effects: judges' accuracies shrink toward the middle
    flat = sj.population(params, 0.5, 0.0)
    varying = sj.population(params, 0.5, 0.5)
    assert varying["ca_0"] != pytest.approx(flat["ca_0"], abs=1e-3)


def test_inf2_1_nulls_hold_in_the_super_population_with_varying_effects():
    params = sj.JuryParams(intercepts=(2.3, 2.0, 1.8), item_sd=0.5, judge_sd=1.5)
    for es in (0.0, 0.5):
        null = sj.null_params(params, 0.5, effect_sd=es)
        assert abs(sj.population(null, 0.5, es)["jury_minus_best"]) < 0.002
        sc = sj.null_sc_params(sj.JuryParams(intercepts=(0.5,), n_samples=5), 0.5, es)
        assert abs(sj.population(sc, 0.5, es)["sc_minus_greedy_0"]) < 0.002
    # no intercept brings the jury down to its best member: said, not a bare brentq error
    with pytest.raises(ValueError, match="no intercept"):
        sj.null_params(params, 0.5, rule="plurality_ignore_ties")


def test_inf2_1_alpha_truth_is_the_super_population_value():
    # the plug-in alpha of a very large draw (many clusters) converges to the truth, while a
    # small draw's plug-in is biased low (the bias the jackknife interval corrects)
    params = sj.JuryParams(intercepts=(2.3, 2.0, 1.8), invalid_if_wrong=0.1)
    design = base.Design(n_clusters=4000, per_cluster=5, icc=0.5, effect_sd=0.5)
    sim = sj.jury_benchmark(np.random.default_rng(8), design, params)
    table = juries.alpha_table(sim.judgments, across=None, interval="percentile", n_boot=2)
    assert table["alpha"].iloc[0] == pytest.approx(sim.truth["alpha_item"], abs=0.01)
    truth = sim.truth["alpha_item_order"]
    order = juries.alpha_table(
        sim.judgments, units="item_order", across=None, interval="percentile", n_boot=2
    )
    assert order["alpha"].iloc[0] == pytest.approx(truth, abs=0.01)
    # expected coincidences of two coders who always agree give alpha 1
    probs = np.tile(np.array([[[1.0, 0.0, 0.0]], [[0.0, 1.0, 0.0]]]), (1, 2, 1))
    assert sj.alpha_from_coincidences(sj.expected_coincidences(probs)) == pytest.approx(1.0)
