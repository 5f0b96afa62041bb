"""Small-R smoke of the correctness / reference calibration checks (real assertions)."""

from dataclasses import replace

import pytest

from judgelab.reporting.calibration import run, summarise
from judgelab.reporting.calibration.checks import correctness, reference
from judgelab.simulate.base import BALANCED

R = 40


@pytest.fixture(scope="module")
def table():
    names = {"correctness.self_fpr_diff", "reference.condition_diff"}
    checks = [
        replace(c, options={"n_boot": 300})
        for c in correctness.CHECKS + reference.CHECKS
        if c.name in names
    ]
    reps = run(checks, scenarios=[BALANCED], reps=R, variants=("after",))
    assert (reps["error"] == "").all(), reps.loc[reps["error"] != "", "error"].iloc[0]
    return summarise(reps, checks).set_index("check")


def test_checks_are_registered_with_unique_names():
    names = [c.name for c in correctness.CHECKS + reference.CHECKS]
    assert len(names) == len(set(names)) >= 6
    assert all(c.before is not None for c in correctness.CHECKS + reference.CHECKS)


@pytest.mark.parametrize("name", ["correctness.self_fpr_diff", "reference.condition_diff"])
def test_after_variant_covers_and_holds_its_level(table, name):
    row = table.loc[name]
    assert row["coverage"] >= 0.85
    assert row["type_i"] <= 0.15
    assert row["power"] >= 0.3  # the stated alternatives are detectable at 50 clusters
