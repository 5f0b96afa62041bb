"""Small-R smoke of the juries calibration checks (the full table: `make calibrate`)."""

from __future__ import annotations

from judgelab.reporting.calibration import run, summarise
from judgelab.reporting.calibration.checks import juries as checks
from judgelab.simulate.base import BALANCED

R = 10


def _by_name(*names: str):
    return [c for c in checks.CHECKS if c.name in names]


def test_jury_vs_best_member_covers_and_holds_its_level():
    chosen = _by_name("juries.jury_vs_best_member")
    table = summarise(run(chosen, scenarios=[BALANCED], reps=R, seed=1), chosen).iloc[0]
    assert table["failed"] == 0
    assert table["coverage"] >= 0.8  # 2R intervals, target 0.95
    assert table["type_i"] <= 0.2


def test_alpha_item_order_clusters_widen_the_legacy_interval():
    chosen = _by_name("juries.alpha_item_order")
    reps = run(chosen, scenarios=[BALANCED], reps=R, seed=2, variants=("after", "before"))
    table = summarise(reps, chosen).set_index("variant")
    assert table.loc["after", "coverage"] >= 0.8
    # legacy: the two presentations of an item (and the items of a source) as independent
    assert table.loc["after", "width"] > 1.1 * table.loc["before", "width"]
