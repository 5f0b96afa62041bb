"""Probe effects: exact counts on a hand-made table, planted truth recovered, baselines, plots."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from judgelab.analyses import probes
from judgelab.core import schema
from judgelab.simulate import probes as sim
from judgelab.simulate.base import Design


def _items(n: int = 4) -> pd.DataFrame:
    rows = [
        dict(benchmark="b", split="s", item_id=str(i), task="pairwise", question="q?",
             response_pos="A correct answer. It explains why.", response_neg="Wrong.",
             gold="pos", meta={})
        for i in range(n)
    ]  # fmt: skip
    return probes.generate(schema.new_items(rows), ["authority", "emotive"])


def _judgments(items: pd.DataFrame, pick) -> pd.DataFrame:
    """One judge: `pick(provenance row, order)` → pos/neg/None (invalid)."""
    prov = probes.provenance(items)
    rows = []
    for r in prov.itertuples():
        for order in (0, 1):
            c = pick(r, order)
            rows.append(dict(benchmark=r.benchmark, split=r.split, item_id=r.item_id,
                             judge="J", order=order, verdict=c, valid=c is not None,
                             chosen=c, correct=None if c is None else c == "pos"))  # fmt: skip
    return schema.new_judgments(rows)


def _pick(r, order):
    if r.probe == "authority" and r.probe_target == "neg" and r.orig_item_id in ("0", "1"):
        return "neg"  # flips toward the probed (worse) response
    if r.probe == "emotive" and r.orig_item_id == "3" and order == 1:
        return None  # an invalid variant verdict
    return "pos"


def test_exact_rates_on_a_hand_made_table():
    items = _items()
    pairs = probes.probe_pairs(_judgments(items, _pick), items)
    assert len(pairs) == 4 * 2 * 2 * 2  # items × probes × arms × orders
    eff = probes.probe_effects(pairs, n_boot=200).set_index(["probe", "metric"])
    a = eff.loc["authority"]
    assert a.loc["robustness", "value"] == pytest.approx(12 / 16)
    assert a.loc["flip_toward", "value"] == pytest.approx(4 / 16)
    assert a.loc["flip_away", "value"] == 0
    assert a.loc["pull", "value"] == pytest.approx(4 / 16) and a.loc["pull", "n"] == 16
    assert a.loc["acc_change_worse", "value"] == pytest.approx(-0.5)
    assert a.loc["acc_change_worse", "n"] == 8
    assert a.loc["acc_change_better", "value"] == 0
    assert a.loc["pull", "ci_low"] <= 0.25 <= a.loc["pull", "ci_high"]
    assert np.isnan(a.loc["robustness", "p_value"]) and a.loc["pull", "p_value"] <= 1
    # every p-value inverts the interval beside it: the pull's test is not flip_toward's
    assert np.isnan(a.loc["flip_toward", "p_value"])
    assert a.loc["pull", "method"].startswith("wild cluster bootstrap")
    assert a.loc["pull", "few_clusters"] and a.loc["pull", "n_eff_clusters"] <= 4
    e = eff.loc["emotive"]
    assert e.loc["robustness", "value"] == 1 and e.loc["robustness", "n"] == 14
    assert (e["n_invalid"] == 2).all() and e.loc["pull", "p_value"] == 1
    allp = eff.loc["all"]
    assert allp.loc["pull", "n"] == 30 and allp.loc["pull", "value"] == pytest.approx(4 / 30)
    assert (eff["n_items"] == 4).all() and (eff["n_clusters"] == 4).all()


def test_the_earlier_bootstrap_is_kept_as_an_option():
    items = _items()
    pairs = probes.probe_pairs(_judgments(items, _pick), items)
    eff = probes.probe_effects(pairs, n_boot=200, inference="bootstrap")
    a = eff[eff["probe"] == "authority"].set_index("metric")
    assert a.loc["flip_toward", "p_value"] == a.loc["pull", "p_value"]  # shown on both
    assert a.loc["pull", "value"] == pytest.approx(4 / 16)
    assert a["method"].str.startswith("cluster bootstrap").all()
    with pytest.raises(ValueError, match="inference"):
        probes.probe_effects(pairs, inference="bca")


def test_missing_controls_and_no_provenance():
    items = _items(2)
    j = _judgments(items, lambda r, o: "pos")
    j = j[~j["item_id"].isin(["0"])]  # control of item 0 never judged
    pairs = probes.probe_pairs(j, items)
    assert set(pairs.loc[pairs["orig_item_id"] == "0", "control"]) == {"missing"}
    eff = probes.probe_effects(pairs, n_boot=50)
    n = eff[eff["metric"] == "robustness"].set_index("probe")["n"]
    assert n.to_dict() == {"authority": 4, "emotive": 4, "all": 8}  # item 1 only: arms × orders
    with pytest.raises(ValueError, match="no probe provenance"):
        probes.probe_pairs(j, items.assign(meta="{}"))


@pytest.fixture(scope="module")
def planted():
    params = sim.ProbeParams(
        susceptibility={"authority": 0.0, "verbosity": 1.2, "bandwagon": -0.6}, delta=0.4
    )
    s = sim.probe_benchmark(np.random.default_rng(11), Design(60, 5, 0.3), params)
    pairs = probes.probe_pairs(s.judgments, s.items)
    # 99 %: six intervals from one draw; their 95 % coverage over many draws is calibration's
    eff = probes.probe_effects(pairs, n_boot=400, seed=1, level=0.99)
    return s, eff.set_index(["probe", "metric"])


@pytest.mark.parametrize("probe", ["authority", "verbosity", "bandwagon"])
@pytest.mark.parametrize("metric", ["pull", "acc_change_worse"])
def test_planted_susceptibility_is_recovered_within_its_interval(planted, probe, metric):
    """One seeded draw at 99 %; coverage over draws: `reporting.calibration.checks.probes`."""
    s, eff = planted
    row, truth = eff.loc[(probe, metric)], s.truth[f"{metric}:{probe}"]
    assert row["ci_low"] <= truth <= row["ci_high"], (probe, metric, row["value"], truth)
    assert row["ci_high"] - row["ci_low"] < 0.2  # informative, not vacuous


def test_planted_tests_reject_only_real_pulls(planted):
    s, eff = planted
    assert eff.loc[("authority", "pull"), "p_value"] > 0.05
    assert eff.loc[("verbosity", "pull"), "p_value"] < 0.001
    assert eff.loc[("verbosity", "pull"), "value"] > 0.1
    assert eff.loc[("bandwagon", "pull"), "value"] < 0 < s.truth["acc_change_worse:bandwagon"]


def test_offline_baselines_react_as_their_rules_say():
    items = _items(6)
    judged = probes.offline_judgments(items)
    notes = judged.notes.set_index("spec")
    assert notes.loc["offline-lexical-grounding", "status"] == "not applicable"  # no context
    frame = probes.probe_effects(probes.probe_pairs(judged.judgments, items), n_boot=100)
    eff = frame.set_index(["judge", "probe", "metric"])["value"]
    longer = notes.loc["offline-prefer-longer", "judge"]
    assert eff[(longer, "emotive", "pull")] > 0  # more words pull prefer-longer
    assert eff[("offline-always_a", "all", "robustness")] == 1  # position only: unmoved
    table = probes.effects_table(frame).set_index(["judge", "probe"])
    assert {"robustness", "pull", "p_pull", "n_pull"} <= set(table.columns)
    assert "p_robustness" not in table.columns  # no test of robustness
    # unmoved on every unit: the Wilson interval with one trial per unit (6 items)
    assert table.loc[("offline-always_a", "all"), "robustness"] == "100.0 [61.0, 100.0]"
    assert table.loc[(longer, "emotive"), "pull"].startswith("+")


def test_commands_and_dry_run():
    items = _items(2)
    cmds = probes.commands("llmbar", ["authority"], seed=3, judges=["offline-always-a"],
                           items=items)  # fmt: skip
    assert (
        cmds.loc[0, "command"] == "judgelab probe --benchmark llmbar --probes authority --seed 3"
    )
    assert cmds.loc[1, "command"].endswith("--benchmark llmbar+probes")
    assert cmds.loc[1, "est_cost_usd"] == 0


def test_heatmap_draws_every_cell(planted):
    _, eff = planted
    ax = probes.plots.effects_heatmap(eff.reset_index(), metric="pull")
    texts = [t.get_text() for t in ax.texts]
    assert len(texts) == 4 and any("n=" in t for t in texts)
    assert [t.get_text() for t in ax.get_xticklabels()][-1] == "all"
    with pytest.raises(ValueError, match="unknown metric"):
        probes.plots.effects_heatmap(eff.reset_index(), metric="nope")


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), G=st.integers(3, 12), beta=st.sampled_from([0.0, 0.8]))
def test_rel3_33_pull_and_accuracy_p_values_invert_their_intervals(seed, G, beta):
    params = sim.ProbeParams(
        susceptibility={"v": beta}, delta=0.3, invalid_rate=0.03, invalid_if_wrong=0.15
    )
    design = Design(G, 5, 0.5, size_spread=1.5, effect_sd=0.5)
    s = sim.probe_benchmark(np.random.default_rng(seed), design, params)
    pairs = probes.probe_pairs(s.judgments, s.items)
    eff = probes.probe_effects(pairs, n_boot=199, seed=seed, metrics=["pull", "acc_change_worse"])
    for row in eff[eff["metric"].isin(["pull", "acc_change_worse"])].itertuples():
        if not np.isfinite(row.p_value) or row.n_eff_clusters < 3:
            continue  # below 3 effective clusters the engine's p(r) can be non-monotone
        inside = row.ci_low <= 0.0 <= row.ci_high
        on_edge = min(abs(row.ci_low), abs(row.ci_high)) <= 1e-3 * (row.ci_high - row.ci_low)
        assert on_edge or inside == (row.p_value >= 0.05), row
        assert row.n_eff_clusters <= row.n_clusters + 1e-9 and row.few_clusters
