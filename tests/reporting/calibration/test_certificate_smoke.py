"""Issue 36 item 7: the certificate's grades on planted truth — false PASS at the margin ≤ 5 %."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from judgelab.reporting import certificate
from judgelab.reporting.calibration import checks as registered
from judgelab.reporting.calibration import run, summarise
from judgelab.reporting.calibration.checks import certificate as cc
from judgelab.simulate.base import scenario

BALANCED = scenario("balanced/constant/G50/n250")
UNEQUAL = scenario("unequal/varying/G15/n60")


def test_i36_7_every_criterion_has_a_registered_grade_check():
    names = {c.name for c in registered.all_checks()}
    assert "certificate" in registered.FAMILIES
    for key in certificate.CRITERIA:
        assert set(certificate.grade_checks(key)) <= names, key


def test_i36_7_the_null_puts_the_truth_at_the_margin():
    """Under the null the planted value is on the margin's edge: PASS needs it outside."""
    rng = np.random.default_rng(0)
    for key, crit in certificate.CRITERIA.items():
        s = cc.simulate(rng, "null", BALANCED, criterion=key)
        t = cc.truth(s, "null", criterion=key)
        m = cc.margin_for(t, crit.how, "null")
        assert m > 0, key
        # an interval that covers the truth can never PASS at the margin's edge
        assert certificate.grade(t - 1e-3, t + 1e-3, m, crit.how) != "PASS", key
        inside = cc.margin_for(t, crit.how, "alternative")
        assert certificate.grade(t - 1e-3, t + 1e-3, inside, crit.how) == "PASS", key


@pytest.fixture(scope="module")
def fast():
    """The two cheapest criteria, 30 replicates, one balanced and one unequal cell (~20 s)."""
    cks = [c for c in cc.CHECKS if c.name.split(".")[1] in ("stability", "transport")]
    cks = [replace(c, options={"n_boot": 299}) if "transport" in c.name else c for c in cks]
    reps = run(cks, scenarios=[BALANCED, UNEQUAL], reps=30, variants=("after",))
    assert (reps["error"] == "").all(), reps.loc[reps["error"] != "", "error"].iloc[0]
    return summarise(reps, cks).set_index(["check", "scenario"])


def test_i36_7_false_pass_small_and_pass_when_inside(fast):
    for (check, scen), row in fast.iterrows():
        assert row["failed"] == 0, (check, scen)
        # false PASS at the margin: at most 1 of 30 expected (≤ 5 %); 3 would be 10 %
        assert row["type_i"] <= 0.07, (check, scen, row["type_i"])
    assert fast.loc[("certificate.stability", BALANCED.name), "power"] >= 0.8
    assert fast.loc[("certificate.transport", BALANCED.name), "power"] >= 0.8


@pytest.mark.slow
@pytest.mark.timeout(1500)
def test_i36_7_every_criterion_false_pass_at_most_5_percent_r100():
    """R = 100, every criterion, 15 unequal clusters (about 3 CPU-minutes: `nice -n 10`).

    Measured (R = 100, false PASS with its MC interval): balanced G50/n250 0.00–0.04,
    unequal/varying G15/n60 0.00–0.04 for every criterion (self-preference there: 181 of
    200 draws declined by its estimator, too few own-model negatives).
    """
    reps = run(cc.CHECKS, scenarios=[UNEQUAL], reps=100, variants=("after",))
    assert (reps["error"] == "").all(), reps.loc[reps["error"] != "", "error"].iloc[0]
    table = summarise(reps, cc.CHECKS).set_index(["check", "scenario"])
    for (check, scen), row in table.iterrows():
        assert row["type_i"] <= 0.05 + 0.03, (check, scen, row["type_i"])  # MC SE ≈ 0.02
