"""Small-R smoke of the length family's calibration checks (real assertions, a few seconds).

The full table (R >= 200 per cell) comes from `make calibrate`; here the cheapest checks run
at R = 20 per scenario so that a broken estimator or generator fails `make test`.
"""

from judgelab.reporting.calibration import run, summarise
from judgelab.reporting.calibration.checks.length import CHECKS
from judgelab.simulate.base import BALANCED

NAMES = ("length.context_trend", "length.accuracy_by_context_bin")


def test_length_checks_are_registered_and_picklable():
    import pickle

    names = [c.name for c in CHECKS]
    assert len(names) == len(set(names)) and all(n.startswith("length.") for n in names)
    for c in CHECKS:
        pickle.dumps((c.simulate, c.estimate))
        assert c.before is not None  # every length estimator had a legacy choice


def test_context_checks_cover_and_hold_their_level():
    checks = [c for c in CHECKS if c.name in NAMES]
    reps = run(checks, scenarios=[BALANCED], reps=20, seed=3, variants=("after",))
    assert (reps["error"] == "").all(), reps.loc[reps["error"] != "", "error"].iloc[0]
    table = summarise(reps, checks).set_index("check")
    assert (table["coverage"] >= 0.85).all()
    assert table.loc["length.context_trend", "type_i"] <= 0.15
