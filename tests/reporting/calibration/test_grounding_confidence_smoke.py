"""Issue 36 item 7: Brier and ECE intervals of judge-confidence calibration on planted truth."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from judgelab.reporting.calibration import run, summarise
from judgelab.reporting.calibration.checks import grounding_confidence as checks
from judgelab.simulate import confidence as sim
from judgelab.simulate.base import Design, scenario

SCENARIOS = [scenario("balanced/constant/G50/n250"), scenario("unequal/varying/G15/n60")]


def test_i36_7_confidence_truths_match_an_independent_large_draw():
    big = Design(n_clusters=3000, per_cluster=40, icc=0.5, effect_sd=0.5)
    s = sim.confidence_sim(np.random.default_rng(3), design=big, slope=0.6)
    t = s.extra["labels"]
    p, y = t["judge_label"].to_numpy(), t["human_label"].to_numpy()
    assert abs(np.mean((p - y) ** 2) - s.truth["brier"]) < 0.005
    b = np.minimum((p * 10).astype(int), 9)
    ece = sum(abs(p[b == k].sum() - y[b == k].sum()) for k in range(10)) / len(p)
    assert abs(ece - s.truth["ece"]) < 0.01, (ece, s.truth["ece"])
    mild = sim.confidence_truths(0.5, 0.5, sim.SLOPES["null"], 0.3, 1.2)
    assert 0 < mild["ece"] < s.truth["ece"]  # both over-confident; the alternative more


@pytest.fixture(scope="module")
def table():
    cks = [replace(c, options={"n_boot": 299}) for c in checks.CHECKS]
    reps = run(cks, scenarios=SCENARIOS, reps=40, variants=("after", "before"))
    assert (reps["error"] == "").all(), reps.loc[reps["error"] != "", "error"].iloc[0]
    return summarise(reps, cks).set_index(["check", "scenario", "variant"])


def test_i36_7_brier_and_ece_intervals_cover_on_the_grid(table):
    for scen in SCENARIOS:
        for name in ("grounding_confidence.brier", "grounding_confidence.ece"):
            row = table.loc[(name, scen.name, "after")]
            assert row["failed"] == 0 and row["declined"] == 0
            assert row["coverage"] >= 0.85, (name, scen.name, row["coverage"])
    assert ("grounding_confidence.ece", SCENARIOS[0].name, "before") in table.index
