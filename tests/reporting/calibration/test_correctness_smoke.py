"""Small-R smoke of the correctness / reference calibration checks (real assertions)."""

from dataclasses import replace

import numpy as np
import pytest

from judgelab.reporting.calibration import run, summarise
from judgelab.reporting.calibration.checks import correctness, reference
from judgelab.simulate.base import scenario

R = 12
SCENARIOS = [scenario("balanced/constant/G50/n250"), scenario("unequal/varying/G15/n240")]
NAMES = {"correctness.fpr", "correctness.self_fpr_diff", "reference.condition_diff"}


@pytest.fixture(scope="module")
def table():
    checks = [
        replace(c, options={"n_boot": 199})
        for c in correctness.CHECKS + reference.CHECKS
        if c.name in NAMES
    ]
    reps = run(checks, scenarios=SCENARIOS, reps=R, variants=("after",))
    assert (reps["error"] == "").all(), reps.loc[reps["error"] != "", "error"].iloc[0]
    return summarise(reps, checks).set_index(["check", "scenario"])


def test_checks_are_registered_with_unique_names():
    names = [c.name for c in correctness.CHECKS + reference.CHECKS]
    assert len(names) == len(set(names)) >= 7
    assert all(c.before is not None for c in correctness.CHECKS + reference.CHECKS)


@pytest.mark.parametrize("name", sorted(NAMES))
@pytest.mark.parametrize("scen", [s.name for s in SCENARIOS])
def test_after_variant_covers_and_holds_its_level(table, name, scen):
    row = table.loc[(name, scen)]
    assert row["failed"] == 0  # no silent NaN: a missing number is declined with a reason
    assert row["coverage_null"] >= 0.75 and row["coverage_alt"] >= 0.75
    if name != "correctness.fpr":
        assert row["type_i"] <= 0.2
    assert row["n_eff"] > 1


def test_the_stated_alternatives_are_detectable_at_50_clusters(table):
    assert table.loc[("reference.condition_diff", SCENARIOS[0].name), "power"] >= 0.4
    assert table.loc[("correctness.self_fpr_diff", SCENARIOS[0].name), "power"] >= 0.3


def test_few_own_negatives_are_declined_with_the_reason_not_failed():
    check = next(c for c in correctness.CHECKS if c.name == "correctness.self_fpr_diff")
    sim = check.simulate(np.random.default_rng(3), "null", scenario("unequal/varying/G8/n48"))
    after = check.estimate(sim, {"n_boot": 199})
    assert after.declined.startswith("too few own-model negatives")
    assert np.isnan(after.p_value) and np.isfinite(after.estimate)
    before = check.estimate(sim, dict(check.before, n_boot=199))  # the earlier default tests
    assert before.declined == "" and np.isfinite(before.p_value)
