"""Issue 33 item 4: position-bias plans on decisive verdicts, with the cluster-size spread,
a floor, t(G − 1) and the study's test — verified by replaying the pilot."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from judgelab.analyses import design
from judgelab.analyses.design import pilot, planner, sizes, verify
from judgelab.core import estimates
from judgelab.simulate import design as sim_design
from judgelab.simulate.base import Design


def _study(rng, n_clusters=40, per=6, delta=0.0, spread=0.0, effect_sd=0.0, icc=0.3, **kw):
    params = sim_design.PositionParams(delta=delta, **kw)
    d = Design(n_clusters, per, icc=icc, size_spread=spread, effect_sd=effect_sd)
    return sim_design.position_study(rng, d, params, tables=False)


def test_inf2_4_design_effect_counts_the_size_spread_and_the_decisive_share():
    # the formula, one order and every verdict decisive: 1 + ((1 + CV²)·m̄ − 1)·ICC
    assert sizes.verdict_design_effect(10, 0.1, size_cv=1.5) == pytest.approx(
        1 + ((1 + 1.5**2) * 10 - 1) * 0.1
    )
    base = sizes.position_bias(0.1, both_orders=False, t_quantiles=False)
    # a decisive share of 0.8 needs 1/0.8 the items for the same decisive verdicts
    fewer = sizes.position_bias(0.1, both_orders=False, t_quantiles=False, decisive_share=0.8)
    assert fewer.n == pytest.approx(base.n / 0.8, abs=1)
    spread = sizes.position_bias(0.1, both_orders=False, cluster_size=10, icc=0.1, size_cv=1.0)
    equal = sizes.position_bias(0.1, both_orders=False, cluster_size=10, icc=0.1)
    assert spread.n > 1.45 * equal.n and spread.n_clusters == math.ceil(spread.n / 10)


def test_inf2_4_t_quantiles_with_the_plans_clusters():
    # clusters of 30: the plan needs few clusters, so t(G − 1) asks for more than z
    z = sizes.position_bias(0.1, cluster_size=30, icc=0.2, t_quantiles=False)
    t = sizes.position_bias(0.1, cluster_size=30, icc=0.2)
    g = t.n_clusters
    assert t.n > z.n and g < 50
    # the closed-form power at the planned size, with t(G − 1), reaches the target
    power = sizes.position_power(t.n, 0.1, cluster_size=30, deff=t.deff, per_item=2.0)
    assert 0.8 <= float(power) < 0.85


def test_inf2_4_an_estimated_order_correlation_never_pushes_the_deff_below_the_floor():
    strong = sizes.position_bias(0.1, order_corr=-0.9, decisive_share=0.9)
    assert strong.assumptions["deff_estimated"] == pytest.approx(1 - 0.9 * 0.9)
    assert strong.deff == 1.0  # the default floor
    banked = sizes.position_bias(0.1, order_corr=-0.9, decisive_share=0.9, deff_floor=0.0)
    assert banked.deff == pytest.approx(0.19) and banked.n < strong.n / 4
    with pytest.raises(ValueError, match="deff_floor"):
        sizes.position_bias(0.1, deff_floor=-1)


def test_inf2_4_assurance_inflates_only_for_an_uncertain_clustering_term():
    exact = sizes.position_bias(0.1, cluster_size=20, icc=0.05)
    unsure = sizes.position_bias(0.1, cluster_size=20, icc=0.05, pilot_df=7)
    assert unsure.n > 1.1 * exact.n
    assert unsure.assumptions["uncertainty_factor"] == pytest.approx(unsure.n / exact.n)
    # no clustering term to doubt: the pilot's clusters do not matter
    flat = sizes.position_bias(0.1, cluster_size=20, icc=0.0, pilot_df=7)
    assert flat.n == sizes.position_bias(0.1, cluster_size=20, icc=0.0).n


def test_inf2_4_pilot_moments_reproduce_the_pilots_own_design_effect(rng):
    sim = _study(rng, n_clusters=60, per=8, spread=1.0, effect_sd=0.5, delta=0.3)
    fig = pilot.position(sim.judgments)
    assert 0.75 < fig["decisive_share"] < 0.9  # ties 10 %, invalid outputs 5-15 %
    assert fig["n_clusters"] == 60 and fig["size_cv"] > 0.3
    counts = pilot.position_counts(sim.judgments)
    per_item = counts.groupby("item")["d"].sum()
    v = per_item.mean()
    formula = sizes.verdict_design_effect(
        fig["cluster_size"], fig["icc"], size_cv=fig["size_cv"], orders=2,
        order_corr=fig["order_corr"], decisive_share=fig["decisive_share"],
    )  # fmt: skip
    # the decomposition at the pilot's own shape gives back its empirical design effect
    assert formula == pytest.approx(fig["deff"], rel=0.15)
    assert v == pytest.approx(2 * fig["decisive_share"], rel=0.02)


def test_inf2_4_position_test_is_the_wild_ratio_of_per_item_counts(rng):
    sim = _study(rng, n_clusters=12, per=5, delta=0.4)
    e = design.position_test(sim.judgments)
    counts = pilot.position_counts(sim.judgments)
    items = counts.groupby(["unit", "item"])[["a", "d"]].sum().reset_index()
    direct = estimates.ratio(items["a"], items["d"], items["unit"], null=0.5,
                             rng=estimates.seeded(0, "design.position_test"))  # fmt: skip
    assert e == direct
    assert e.value == pytest.approx(items["a"].sum() / items["d"].sum())
    assert e.n_clusters == 12 and "wild cluster bootstrap" in e.method


@settings(max_examples=25, deadline=None)
@given(
    st.integers(min_value=0, max_value=10_000),
    st.integers(min_value=3, max_value=14),
    st.floats(min_value=0.0, max_value=0.8),
)
def test_inf2_4_the_position_tests_p_value_inverts_its_interval(seed, n_clusters, delta):
    rng = np.random.default_rng(seed)
    sim = _study(rng, n_clusters=n_clusters, per=4, delta=delta)
    e = design.position_test(sim.judgments, n_boot=399)
    if not np.isfinite(e.p_value):
        return
    outside = not (e.ci_low <= 0.5 <= e.ci_high)
    near = min(abs(e.ci_low - 0.5), abs(e.ci_high - 0.5)) < 1e-3
    if not near:
        assert (e.p_value < 0.05) == outside


def test_inf2_4_replay_measures_power_and_type_i_of_a_plan(rng):
    # a pilot of 60 equal clusters, no clustering: the closed form is right, the replay agrees
    sim = _study(rng, n_clusters=60, per=5, icc=0.0, delta=0.2)
    counts = pilot.position_counts(sim.judgments)
    plan = planner.position_bias_plan(0.08, judgments=sim.judgments, reps=200, n_boot=399,
                                      assurance=False, deff_floor=0.0)  # fmt: skip
    assert list(plan.columns[-7:]) == list(planner.VERIFIED)
    one = plan.set_index("design").loc["one random order"]
    assert one["replays"] == 200 and one["note"] == ""
    assert abs(one["verified_power"] - one["power"]) < 3 * one["verified_power_se"] + 0.03
    assert one["verified_type_i"] < 0.1
    res = verify.replay(counts, n_clusters=int(one["n_clusters"]), delta=0.0, orders="one",
                        reps=100, n_boot=199)  # fmt: skip
    assert res["power"] == pytest.approx(res["type_i"], abs=0.08)  # δ = 0: power is type I


def test_inf2_4_plans_without_a_replayable_pilot_say_why():
    stated = planner.position_bias_plan(0.1, icc=0.05, cluster_size=10)
    assert (stated["replays"] == 0).all()
    assert stated["note"].str.contains("closed form only").all()
    one_order = pd.DataFrame(
        {"benchmark": "b", "split": "s", "item_id": [f"i{k}" for k in range(40)],
         "order": 0, "chosen": ["pos", "neg"] * 20, "valid": True,
         "cluster": [f"c{k // 4}" for k in range(40)]}
    )  # fmt: skip
    plan = planner.position_bias_plan(0.1, judgments=one_order, reps=20, n_boot=99)
    both = plan.set_index("design").loc["both orders"]
    assert both["replays"] == 0 and "one order per item" in both["note"]
    assert plan.set_index("design").loc["one random order", "replays"] == 20


def test_i34_6_the_plans_fast_replay_equals_the_wild_test_replay_within_mc_error(rng):
    # The plan's verified power comes from `wild_replays.ratio_p_values` (batched); replaying
    # the same plan with `wild.wild_test` on every replay (the reference, ~5x the CPU) on the same
    # seed sees the same replayed data, so the two differ only by the bootstrap draws near α.
    sim = _study(rng, n_clusters=30, per=5, icc=0.2, delta=0.2)
    plan = planner.position_bias_plan(0.12, judgments=sim.judgments, seed=3)
    one = plan.set_index("design").loc["one random order"]
    assert one["replays"] == 200 and 0.5 < one["verified_power"] < 0.97  # not at a bound
    counts = pilot.position_counts(sim.judgments)
    slow = verify.replay(counts, n_clusters=int(one["n_clusters"]), delta=0.12, orders="one",
                         seed=3, batched=False)  # fmt: skip
    assert one["verified_power"] == pytest.approx(slow["power"], abs=0.025)
    assert one["verified_type_i"] == pytest.approx(slow["type_i"], abs=0.025)
    assert one["verified_power_se"] == pytest.approx(slow["power_se"], abs=0.01)
