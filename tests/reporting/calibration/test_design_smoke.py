"""Small-R smoke of the planner checks: plans from scenario-shaped pilots (issue 33 item 4)."""

from dataclasses import replace

import numpy as np
import pytest

from judgelab.reporting.calibration import run, summarise
from judgelab.reporting.calibration.checks import all_checks, design
from judgelab.simulate.base import scenario

R = 10
SCENARIOS = [scenario("balanced/constant/G50/n100"), scenario("unequal/varying/G15/n60")]


def test_checks_are_registered():
    names = {c.name for c in all_checks(["design"])}
    assert names == {"design.position_plan_one", "design.position_plan_both"}
    assert all(c.test and c.before == {"legacy": True} for c in design.CHECKS)


def test_inf2_4_a_replicate_plans_from_the_pilot_and_tests_the_planned_study():
    sim = design.CHECKS[0].simulate(np.random.default_rng(0), "alternative", SCENARIOS[1])
    p = sim.params
    assert p["pilot"]["n_clusters"] == 15 and 0.7 < p["pilot"]["decisive_share"] < 0.95
    assert p["planned_clusters"] == len(p["cluster_sizes"])
    # the earlier planner asked for fewer items (z, every verdict decisive, no spread)
    assert p["before"]["planned_items"] < p["planned_items"]
    out = design.estimate(sim, {})
    assert 0 <= out.p_value <= 1 and out.low < out.estimate < out.high
    assert sim.truth["p_a"] == pytest.approx(0.58, abs=1e-4)


@pytest.fixture(scope="module")
def table():
    checks = [replace(c) for c in design.CHECKS]
    reps = run(checks, scenarios=SCENARIOS, reps=R, variants=("after", "before"))
    assert (reps["error"] == "").all(), reps.loc[reps["error"] != "", "error"].iloc[0]
    return summarise(reps, checks).set_index(["check", "scenario", "variant"])


def test_inf2_4_plans_deliver_more_power_than_the_earlier_planner(table):
    assert (table["failed"] == 0).all()
    after = table.xs("after", level="variant")["power"]
    before = table.xs("before", level="variant")["power"]
    assert after.mean() > before.mean() + 0.1
    assert (after >= 0.5).all()
    # the planned test keeps its level at the planned size (loose at R = 10)
    assert (table.xs("after", level="variant")["type_i"] <= 0.25).all()
