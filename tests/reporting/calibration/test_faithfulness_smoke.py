"""Small-R smoke of the faithfulness / prompting calibration checks (real assertions).

A replicate here runs the whole pipeline (schema tables, pairs, grading) and costs ~0.2 s,
so R is small; the bounds are wide enough for R = 16 and still fail for the legacy
independent-pairs alignment (coverage ≈ 0.6, type-I ≈ 0.5 at R = 200).
"""

from __future__ import annotations

from judgelab.reporting.calibration import run, summarise
from judgelab.reporting.calibration.checks import faithfulness as checks
from judgelab.simulate.base import BALANCED

R = 16


def _summary(name: str, variants=("after",)):
    check = next(c for c in checks.CHECKS if c.name == name)
    reps = run([check], scenarios=[BALANCED], reps=R, variants=variants, seed=7)
    return summarise(reps, [check]).set_index("variant")


def test_ragas_alignment_clustered_calibrates_and_legacy_does_not():
    s = _summary("faithfulness.ragas_alignment", variants=("after", "before"))
    assert s.loc["after", "failed"] == 0
    assert s.loc["after", "coverage"] >= 0.8
    assert s.loc["after", "type_i"] <= 0.2
    assert s.loc["before", "coverage"] < s.loc["after", "coverage"]
    assert s.loc["after", "power"] > s.loc["after", "type_i"]


def test_faitheval_accuracy_and_strategy_checks_cover():
    acc = _summary("faithfulness.faitheval_accuracy")
    assert acc.loc["after", "failed"] == 0 and acc.loc["after", "coverage"] >= 0.8
    strat = _summary("prompting.strategy_ca")
    assert strat.loc["after", "failed"] == 0 and strat.loc["after", "coverage"] >= 0.8
    assert strat.loc["after", "type_i"] <= 0.2
