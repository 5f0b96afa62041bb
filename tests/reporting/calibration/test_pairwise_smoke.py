"""Small-R smoke of the pairwise calibration checks: real assertions on coverage and type-I."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from judgelab.reporting.calibration import run, summarise
from judgelab.reporting.calibration.checks import all_checks
from judgelab.reporting.calibration.checks.pairwise import CHECKS
from judgelab.simulate.base import BALANCED


def test_checks_are_registered_and_named():
    names = {c.name for c in all_checks(["pairwise"])}
    assert {"pairwise.ca", "pairwise.pos_a_rate", "pairwise.compare_ca"} <= names
    assert all(c.name.startswith("pairwise.") and c.family == "pairwise" for c in CHECKS)


def test_position_and_judge_difference_calibrated_at_small_r():
    fast = {"n_boot": 200}
    picked = [
        replace(c, options=fast, before={**c.before, **fast})
        for c in CHECKS
        if c.name in ("pairwise.pos_a_rate", "pairwise.pos_a_rate_decisive", "pairwise.compare_ca")
    ]
    reps = run(picked, scenarios=[BALANCED], reps=20, seed=1, variants=("after",))
    s = summarise(reps, picked).set_index("check")
    assert (s["failed"] == 0).all()
    assert (s["coverage"] >= 0.85).all(), s["coverage"]
    # the spec rate reports no p-value (its no-preference value depends on the tie rate)
    assert np.isnan(s.loc["pairwise.pos_a_rate", "type_i"])
    tested = s.drop(index="pairwise.pos_a_rate")
    assert (tested["type_i"] <= 0.16).all(), tested["type_i"]
    assert s.loc["pairwise.pos_a_rate_decisive", "power"] >= 0.5
