"""Small-R smoke of the probes calibration checks on two grid scenarios: real assertions."""

from __future__ import annotations

import pickle
from dataclasses import replace

import numpy as np

from judgelab.reporting.calibration import run, summarise
from judgelab.reporting.calibration.checks import all_checks, probes
from judgelab.simulate.base import scenario

SCENARIOS = [scenario("balanced/constant/G15/n60"), scenario("unequal/varying/G8/n48")]


def test_checks_are_registered():
    names = {c.name for c in all_checks(["probes"])}
    assert names == {"probes.pull", "probes.acc_change_worse", "probes.robustness"}
    assert all(c.before == {"inference": "bootstrap"} for c in probes.CHECKS)


def test_rel3_33_probe_checks_hold_at_small_r_on_balanced_and_unequal_varying():
    fast = {"n_boot": 199}
    picked = [replace(c, options=fast, before={**c.before, **fast}) for c in probes.CHECKS]
    reps = run(picked, scenarios=SCENARIOS, reps=10, seed=2, variants=("after",))
    assert (reps["error"] == "").all(), reps["error"].unique()
    null = reps[reps["hypothesis"] == "null"]
    pull = reps[reps["check"] == "probes.pull"]
    assert np.allclose(null[null["check"] != "probes.robustness"]["truth"], 0.0, atol=1e-9)
    assert (pull.loc[pull["hypothesis"] == "alternative", "truth"] > 0.05).all()
    s = summarise(reps, picked).set_index(["check", "scenario"])
    assert (s["failed"] == 0).all()
    assert (s["coverage_null"] >= 0.7).all() and (s["coverage_alt"] >= 0.7).all(), s
    assert (s.loc[["probes.pull", "probes.acc_change_worse"], "type_i"] <= 0.3).all()
    assert (s.xs("unequal/varying/G8/n48", level="scenario")["n_eff"] < 8).all()
    # with 15 balanced clusters of 4 items the planted pull is found more often than not
    assert s.loc[("probes.pull", "balanced/constant/G15/n60"), "power"] >= 0.5


def test_checks_are_picklable():
    for check in probes.CHECKS:
        pickle.loads(pickle.dumps(check))
