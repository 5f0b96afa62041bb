"""The probe simulator: real schema, the provenance generation writes, truths that add up."""

from __future__ import annotations

import numpy as np
import pytest

from judgelab.analyses import probes
from judgelab.core import schema
from judgelab.simulate import probes as sim
from judgelab.simulate.base import Design


def test_tables_follow_the_schema_and_the_generator_provenance():
    s = sim.probe_benchmark(np.random.default_rng(0), Design(5, 2, 0.3), validate=True)
    assert sim.PROVENANCE == probes.PROVENANCE and sim.CONTROL == probes.CONTROL
    assert sim.TARGETS == probes.TARGETS
    n_probes = len(sim.ProbeParams().susceptibility)
    assert len(s.items) == 10 * (1 + 2 * n_probes) and len(s.judgments) == 2 * len(s.items)
    schema.validate_items(s.items)
    schema.validate_judgments(s.judgments.drop(columns=["cluster"]))
    assert probes.is_probe_benchmark(s.items)
    prov = probes.provenance(s.items)
    assert set(prov["probe_target"]) == {"", "pos", "neg"}
    # every row of one original item shares its cluster
    merged = prov.assign(cluster=s.items["cluster"].to_numpy())
    assert merged.groupby("orig_item_id")["cluster"].nunique().eq(1).all()


def test_truths_add_up():
    params = sim.ProbeParams(susceptibility={"a": 0.0, "b": 1.0, "c": -1.0}, delta=0.5)
    t = sim.population(params, 0.3, n=50_000)
    assert t["pull:a"] == pytest.approx(0.0, abs=1e-12)
    assert t["acc_change_worse:a"] == pytest.approx(0.0, abs=1e-12)
    assert t["pull:b"] > 0.1 and t["pull:c"] == pytest.approx(-t["pull:b"], abs=1e-9)
    assert t["acc_change_worse:b"] < 0 < t["acc_change_better:b"]
    for p in "abc":
        total = t[f"robustness:{p}"] + t[f"flip_toward:{p}"] + t[f"flip_away:{p}"]
        assert total == pytest.approx(1.0)
        assert t[f"pull:{p}"] == pytest.approx(t[f"flip_toward:{p}"] - t[f"flip_away:{p}"])


def test_the_sample_matches_the_truth_on_a_large_draw():
    params = sim.ProbeParams(susceptibility={"v": 1.0}, invalid_rate=0.1)
    s = sim.probe_benchmark(np.random.default_rng(4), Design(800, 1, 0.0), params)
    assert (~s.judgments["valid"]).mean() == pytest.approx(0.1, abs=0.02)
    eff = probes.probe_effects(probes.probe_pairs(s.judgments, s.items), n_boot=20)
    got = eff.set_index("metric")["value"]
    assert got["pull"] == pytest.approx(s.truth["pull:v"], abs=0.04)
    assert got["acc_change_worse"] == pytest.approx(s.truth["acc_change_worse:v"], abs=0.06)


def test_bad_params_are_refused():
    with pytest.raises(ValueError, match="at least one probe"):
        sim.ProbeParams(susceptibility={})
    with pytest.raises(ValueError, match="control"):
        sim.ProbeParams(susceptibility={"none": 1.0})


# ---------------------------------------------------------------- issue 33: real-shaped data

MNAR = dict(accuracy=1.0, delta=0.3, invalid_rate=0.03, invalid_if_wrong=0.15, invalid_length=0.7)


@pytest.mark.slow
def test_rel3_33_a_null_probe_is_null_with_cluster_varying_pull_and_mnar_invalids():
    # the probe pulls toward the probed response in some sources, away in others (SD 0.5,
    # symmetric): pull and accuracy changes are exactly 0 in the population
    t = sim.population(sim.ProbeParams(susceptibility={"v": 0.0}, **MNAR), 0.5, 0.5)
    assert abs(t["pull:v"]) < 0.002 and abs(t["acc_change_worse:v"]) < 0.002
    assert abs(t["acc_change_better:v"]) < 0.002
    s = sim.probe_benchmark(
        np.random.default_rng(5),
        Design(3000, 6, 0.5, effect_sd=0.5),
        sim.ProbeParams(susceptibility={"v": 0.0}, **MNAR),
    )
    eff = probes.probe_effects(probes.probe_pairs(s.judgments, s.items), n_boot=50)
    got = eff.set_index("metric")["value"]
    assert abs(got["pull"]) < 0.01 and abs(got["acc_change_worse"]) < 0.015


@pytest.mark.slow
def test_rel3_33_mnar_truths_match_a_large_draw_and_sizes_are_unequal():
    params = sim.ProbeParams(susceptibility={"v": 0.6}, **MNAR)
    s = sim.probe_benchmark(np.random.default_rng(6), Design(3000, 6, 0.5, effect_sd=0.5), params)
    invalid = ~s.judgments["valid"].astype(bool)
    assert 0.04 < invalid.mean() < 0.12  # between the 3 % (right) and 15 % (wrong) rates
    eff = probes.probe_effects(probes.probe_pairs(s.judgments, s.items), n_boot=50)
    got = eff.set_index("metric")["value"]
    for m in ("pull", "robustness", "acc_change_worse", "acc_change_better"):
        assert got[m] == pytest.approx(s.truth[f"{m}:v"], abs=0.012), m
    # the truth counts valid pairs only: ignoring the MNAR validity would move it
    plain = sim.population(
        sim.ProbeParams(susceptibility={"v": 0.6}, accuracy=1.0, delta=0.3), 0.5, 0.5
    )
    assert plain["acc_change_worse:v"] != pytest.approx(s.truth["acc_change_worse:v"], abs=1e-4)
    uneq = sim.probe_benchmark(
        np.random.default_rng(7), Design(8, 6, 0.5, size_spread=1.5), params
    )
    sizes = uneq.params["design"].sizes
    assert sum(sizes) == 48 and max(sizes) > 2 * min(sizes)
