"""Small-R smoke of the ContextEval calibration checks (real assertions, R = 20)."""

from judgelab.reporting.calibration import run, summarise
from judgelab.reporting.calibration.checks.contexteval import CHECKS
from judgelab.simulate.base import BALANCED

BY_NAME = {c.name: c for c in CHECKS}


def test_weird_gap_calibrates_and_the_legacy_interval_is_too_narrow():
    check = BY_NAME["contexteval.weird_gap"]
    reps = run([check], scenarios=[BALANCED], reps=20, variants=("after", "before"), seed=1)
    s = summarise(reps, [check]).set_index("variant")
    assert (reps["error"] == "").all()
    assert s.loc["after", "coverage"] >= 0.85 and s.loc["after", "type_i"] <= 0.15
    assert s.loc["after", "power"] >= 0.5
    # Pooling 5 raters per query as independent rows: the legacy interval is too narrow.
    assert s.loc["before", "width"] < 0.8 * s.loc["after", "width"]


def test_win_rate_margin_calibrates():
    check = BY_NAME["contexteval.win_rate_margin"]
    reps = run([check], scenarios=[BALANCED], reps=20, variants=("after",), seed=1)
    s = summarise(reps, [check]).iloc[0]
    assert (reps["error"] == "").all()
    assert s["coverage"] >= 0.85 and s["type_i"] <= 0.15 and s["power"] >= 0.5
