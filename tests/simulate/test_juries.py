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
