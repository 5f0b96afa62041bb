"""Small-R smoke of the ContextEval calibration checks (real assertions, R = 20).

One balanced scenario (the earlier simulator's 50 × 5, ICC 0.3) and one of the hardest
(8 conversations of very unequal size, effects varying by conversation, ICC 0.5).
"""

from judgelab.reporting.calibration import run, summarise
from judgelab.reporting.calibration.checks.contexteval import CHECKS
from judgelab.simulate.base import BALANCED, scenario

BY_NAME = {c.name: c for c in CHECKS}
HARD = scenario("unequal/varying/G8/n48")


def _summary(names, scenarios, variants=("after",)):
    checks = [BY_NAME[n] for n in names]
    reps = run(checks, scenarios=scenarios, reps=20, variants=variants, seed=1)
    assert (reps["error"] == "").all() and (reps["declined"] == "").all()
    return summarise(reps, checks).set_index(["check", "scenario", "variant"])


def test_margin_and_gap_calibrate_on_balanced_and_unequal_clusters():
    names = ["contexteval.win_rate_margin", "contexteval.weird_gap"]
    s = _summary(names, [BALANCED, HARD])
    for name in names:
        for scen in (BALANCED, HARD):
            row = s.loc[(name, scen.name, "after")]
            assert row["failed"] == 0 and row["reps"] == 20
            assert row["coverage_null"] >= 0.85 and row["coverage_alt"] >= 0.85
            assert row["type_i"] <= 0.15
        # the balanced scenario has power; 8 unequal conversations have few effective ones
        assert s.loc[(name, BALANCED.name, "after"), "power"] >= 0.5
        assert s.loc[(name, BALANCED.name, "after"), "n_eff"] > 30
        assert s.loc[(name, HARD.name, "after"), "n_eff"] < 6


def test_mean_rating_over_clusters_covers_where_the_row_bootstrap_does_not():
    name = "contexteval.mean_rating"
    s = _summary([name], [HARD], variants=("after", "before"))
    after, before = s.loc[(name, HARD.name, "after")], s.loc[(name, HARD.name, "before")]
    assert after["coverage"] >= 0.85
    # 48 queries × 5 raters treated as 240 independent ratings: far too narrow
    assert before["coverage"] < 0.7 and before["width"] < 0.4 * after["width"]
