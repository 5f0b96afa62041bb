"""Small-R smoke of the stability calibration checks (issue 35 item 3): real assertions."""

from __future__ import annotations

import pickle
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from judgelab.analyses import stability
from judgelab.reporting.calibration import run, summarise
from judgelab.reporting.calibration.checks import all_checks
from judgelab.reporting.calibration.checks import stability as checks
from judgelab.simulate import anchors as sim_anchors
from judgelab.simulate import humans as sim_humans
from judgelab.simulate import stability as sim
from judgelab.simulate.base import Design, scenario

SCENARIOS = [scenario("balanced/constant/G50/n250"), scenario("unequal/varying/G8/n48")]
FAST = {"n_boot": 199}
BOARD = {"n_boot": 199, "n_boot_wild": 99}


def test_i35_3_checks_are_registered_and_picklable():
    names = {c.name for c in all_checks(["stability"])}
    assert names == {c.name for c in checks.CHECKS} and len(names) == 10
    for check in checks.CHECKS:
        pickle.loads(pickle.dumps(check))


def test_i35_3_switch_truths_match_a_large_draw():
    big = sim.switch_sim(
        np.random.default_rng(3), design=Design(n_clusters=2000, per_cluster=40, icc=0.5)
    )
    rows = stability.verdict_shift(big.judgments, pairs=[("A", "B")], n_boot=9)
    out = rows.set_index("measure")["value"]
    assert abs(out["changed"] - big.truth["changed"]) < 0.005
    assert abs(out["kappa"] - big.truth["kappa"]) < 0.01
    drift = stability.score_drift(big.judgments, "SA", "SB", n_boot=9, n_boot_quantiles=9)
    assert abs(drift["value"].iloc[0] - big.truth["drift_mean"]) < 0.002  # the null: 0


def test_i35_3_board_and_repeat_truths():
    null = sim.board_truths(sim.ABILITIES, sim.FPR_NULL, 0.1, 0.8, 0.5)
    alt = sim.board_truths(sim.ABILITIES, sim.FPR_ALT, 0.1, 0.8, 0.5)
    assert null["tau"] == pytest.approx(1.0) and null["leader"] == 0.0
    # the lenient grading of s3 lifts it past s1 and s2: two discordant pairs of 15
    assert alt["tau"] == pytest.approx(1 - 2 * 2 / 15)
    steady = sim.repeat_truths(3, 1.0, 2.0, 0.5)
    noisy = sim.repeat_truths(3, 1.0, 1.0, 0.5)
    assert noisy["flip"] > steady["flip"]
    assert noisy["trials_needed_0.9"] >= steady["trials_needed_0.9"]


def test_i35_7_human_truths_match_a_large_draw():
    null = sim_humans.human_truths(1.5, 0.0, 1.2, 0.5)
    alt = sim_humans.human_truths(1.5, 1.0, 1.2, 0.5)
    assert null["human_gap"] == 0.0  # the judge is one more annotator
    assert alt["human_gap"] < -0.05 and alt["human_human"] == null["human_human"]
    design = Design(n_clusters=1000, per_cluster=40, icc=0.3, effect_sd=0.5)
    big = sim_humans.humans_sim(np.random.default_rng(4), design=design, judge_shift=1.0)
    gap = stability.human_gap(big.judgments, n_boot=9).set_index("measure")["value"]
    assert abs(gap["judge-human"] - big.truth["judge_human"]) < 0.01
    assert abs(gap["human-human"] - big.truth["human_human"]) < 0.01
    assert abs(gap["gap"] - big.truth["human_gap"]) < 0.01


@pytest.mark.slow
def test_i35_3_stability_checks_hold_at_small_r():
    opts = {c.name: BOARD if c.simulate is checks.simulate_board else FAST for c in checks.CHECKS}
    picked = [replace(c, options=opts[c.name]) for c in checks.CHECKS]
    reps = run(picked, scenarios=SCENARIOS, reps=6, seed=1, variants=("after",))
    assert (reps["error"] == "").all(), reps["error"].unique()
    s = summarise(reps, picked).set_index(["check", "scenario"])
    assert (s["failed"] == 0).all()
    # tau's percentile interval misses a population tau of 1 when systems are close and
    # effective clusters few (R = 100: coverage 0.42 in unequal/varying/G8/n48): a known
    # failure, reported in issue 35; it must hold where clusters are many
    interval = [c.name for c in picked if c.interval and c.name != "stability.tau"]
    cov = s.loc[interval, ["coverage_null", "coverage_alt"]]
    assert (cov >= 0.5).all().all(), cov
    assert s.loc[("stability.tau", "balanced/constant/G50/n250"), "coverage_null"] >= 0.8
    drift = s.xs("stability.drift_mean", level="check")
    assert drift.loc["balanced/constant/G50/n250", "power"] >= 0.5
    lead = reps[reps["check"] == "stability.p_leader_changes"]
    assert lead["estimate"].between(0, 1).all()
    assert set(pd.unique(lead["truth"])) <= {0.0, 1.0}
    forecast = s.xs("stability.p_leader_changes", level="check")
    assert forecast["forecast_gap"].notna().all() and forecast["brier"].between(0, 1).all()
    assert set(forecast["forecast_verdict"]) <= {"pass", "fail", "inconclusive"}


def test_i35_7_anchor_truths_match_a_large_draw():
    null = sim_anchors.anchor_truths(sim_anchors.STRENGTHS, (0.0,) * 5, 1.2)
    alt = sim_anchors.anchor_truths(sim_anchors.STRENGTHS, sim_anchors.MATCHUP_ALT, 1.2)
    assert null["tau"] == pytest.approx(1.0)
    assert alt["tau"] == pytest.approx(1 - 2 * 1 / 10)  # s3 passes s2 against A2 only
    design = Design(n_clusters=1000, per_cluster=30, icc=0.3, effect_sd=0.5)
    rng = np.random.default_rng(5)
    big = sim_anchors.anchor_sim(rng, design=design, matchup=sim_anchors.MATCHUP_ALT)
    a = stability.anchor_sensitivity(big.judgments, min_opponents=3, n_boot=49, n_boot_wild=49)
    board = a.board.set_index(["anchor", "system"])["value"]
    for (anchor, system), value in board.items():
        assert abs(value - big.truth[f"win_{anchor}_{system}"]) < 0.015
    assert a.taus["tau"].iloc[0] == pytest.approx(0.8)
