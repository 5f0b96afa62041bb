"""Small-R smoke of the probes calibration checks (coverage itself: `make calibration`)."""

from dataclasses import replace

import numpy as np

from judgelab.reporting.calibration import run
from judgelab.reporting.calibration.checks import all_checks, probes
from judgelab.simulate.base import BALANCED


def test_checks_are_registered():
    names = {c.name for c in all_checks(["probes"])}
    assert names == {"probes.pull", "probes.acc_change_worse", "probes.robustness"}
    assert all(c.before == {"cluster": None} for c in probes.CHECKS)


def test_pull_check_runs_and_detects_the_planted_pull():
    check = replace(probes.CHECKS[0], options={"n_boot": 100})
    reps = run([check], scenarios=[BALANCED], reps=2, variants=("after",))
    assert (reps["error"] == "").all(), reps["error"].tolist()
    null = reps[reps["scenario"] == "null"]
    alt = reps[reps["scenario"] == "alternative"]
    assert np.allclose(null["truth"], 0.0) and (alt["truth"] > 0.05).all()
    assert (alt["p_value"] < 0.01).all()
    assert ((reps["low"] <= reps["estimate"]) & (reps["estimate"] <= reps["high"])).all()


def test_checks_are_picklable():
    import pickle

    for check in probes.CHECKS:
        pickle.loads(pickle.dumps(check))
