"""Small-R smoke of the faithfulness / prompting calibration checks (real assertions).

Two scenarios of the grid (issue 33): balanced clusters with constant effects, and 15
clusters of very unequal size with cluster-varying effects. A replicate runs the whole
pipeline (schema tables, pairs, grading), so R is small and the bounds wide.
"""

from __future__ import annotations

from judgelab.reporting.calibration import run, summarise
from judgelab.reporting.calibration.checks import faithfulness as checks
from judgelab.simulate.base import scenario

R = 8
BALANCED = scenario("balanced/constant/G15/n60")
UNEQUAL = scenario("unequal/varying/G15/n60")


def _summary(name: str, scenarios, variants=("after",)):
    check = next(c for c in checks.CHECKS if c.name == name)
    reps = run([check], scenarios=scenarios, reps=R, variants=variants, seed=7)
    return summarise(reps, [check]).set_index(["scenario", "variant"])


def test_inf2_5_ragas_alignment_calibrates_on_both_shapes():
    s = _summary("faithfulness.ragas_alignment", [BALANCED, UNEQUAL])
    assert (s["failed"] == 0).all()
    assert (s["coverage"] >= 0.75).all(), s["coverage"]
    assert (s["type_i"] <= 0.3).all(), s["type_i"]
    assert s.loc[(UNEQUAL.name, "after"), "n_eff"] < s.loc[(BALANCED.name, "after"), "n_eff"]


def test_inf2_5_faitheval_accuracy_and_strategy_checks_cover():
    acc = _summary("faithfulness.faitheval_accuracy", [UNEQUAL])
    assert acc["failed"].eq(0).all() and acc["coverage"].ge(0.75).all()
    strat = _summary("prompting.strategy_ca", [BALANCED])
    assert strat["failed"].eq(0).all() and strat["coverage"].ge(0.75).all()
    assert strat["type_i"].le(0.3).all()
