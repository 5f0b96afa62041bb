"""Issue 36 item 7: the transport audit on planted truth (truth, calibration smoke, grades)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from judgelab.analyses.grounding import transport
from judgelab.reporting.calibration import run, summarise
from judgelab.reporting.calibration.checks import grounding_transport as checks
from judgelab.simulate import transport as sim
from judgelab.simulate.base import Design, scenario

SCENARIOS = [scenario("balanced/constant/G50/n250"), scenario("unequal/varying/G15/n60")]


def test_i36_7_planted_truth_matches_a_large_draw():
    big = Design(n_clusters=4000, per_cluster=25, icc=0.3)
    for shift in (0.0, checks.SHIFT):
        s = sim.transport_sim(np.random.default_rng(1), design=big, shift=shift)
        t = s.extra["labels"].assign(d=lambda x: x["human_label"] - x["judge_label"])
        tested = t["group"] == sim.TESTED
        empirical = t.loc[~tested, "d"].mean() - t.loc[tested, "d"].mean()
        assert abs(empirical - s.truth["transport_error"]) < 0.004, (shift, empirical)
    assert sim.transport_error(0.4, 0.3, 0.0) == 0.0


@pytest.fixture(scope="module")
def table():
    cks = [replace(c, options={"n_boot": 399}) for c in checks.CHECKS]
    reps = run(cks, scenarios=SCENARIOS, reps=100, variants=("after",))
    assert (reps["error"] == "").all(), reps.loc[reps["error"] != "", "error"].iloc[0]
    return summarise(reps, cks).set_index(["check", "scenario", "variant"])


def test_i36_7_transport_interval_covers_and_its_test_holds_its_size(table):
    for scen in SCENARIOS:
        row = table.loc[("grounding_transport.rectifier", scen.name, "after")]
        assert row["failed"] == 0 and row["declined"] == 0
        assert row["coverage_null"] >= 0.88 and row["coverage_alt"] >= 0.88, row
        assert row["type_i"] <= 0.10, row
    # 250 items a slice find an error of 0.25 · P₀ ≈ 0.1; 60 items (15 clusters) mostly do not
    assert table.loc[("grounding_transport.rectifier", SCENARIOS[0].name, "after"), "power"] >= 0.8


def test_i36_7_grades_false_pass_at_most_5_percent_and_pass_at_the_planned_n():
    """At the margin's edge PASS ≤ 5 % (+ MC error); with no error PASS ≥ 80 % (R = 100)."""
    design = Design(n_clusters=80, per_cluster=5, icc=0.3)
    margin = 0.1
    p0 = 1.0 - sim.pass_rate(0.4, sim.base.cluster_sd(0.3))
    grades = {}
    for name, shift in (("transports", 0.0), ("edge", margin / p0)):
        rng = np.random.default_rng(7)
        out = []
        for _ in range(100):
            s = sim.transport_sim(rng, design=design, shift=shift)
            labels = s.extra["labels"]
            train = [g for g in labels["group"].unique() if g != sim.TESTED]
            out.append(transport.audit(labels, train=train, margin=margin, n_boot=399)
                       .iloc[0]["grade"])  # fmt: skip
        grades[name] = pd.Series(out).value_counts(normalize=True)
    assert grades["edge"].get("PASS", 0.0) <= 0.05 + 2 * np.sqrt(0.05 * 0.95 / 100)
    assert grades["transports"].get("PASS", 0.0) >= 0.8
