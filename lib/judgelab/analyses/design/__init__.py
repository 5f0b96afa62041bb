"""Study design (notebook 17, `judgelab plan`): how many items, orders, repeats, human labels.

`sizes` holds the closed forms (the design effects they apply: `effects`), `pilot` reads
their inputs from the user's own judgments (and `pilot.position_test` is the test a
position study runs), `planner` lays the alternatives side by side, and `verify` replays
the pilot at a plan's size to measure the power the plan achieves with that test.
`judgelab.reporting.calibration.checks.design` checks the plans against planted truth.
"""

from judgelab.core.lazy import face

# Submodules are imported on first use: `judgelab plan` never needs matplotlib (`plots`).
_WHERE = {
    **{m: m for m in ("effects", "pilot", "planner", "plots", "sizes", "tables", "verify")},
    "position_test": "pilot",
    **{f: "planner" for f in ("human_labels_plan", "judges_plan", "position_bias_plan")},
    **{f: "planner" for f in ("power_curve", "rate_plan")},
}
__getattr__ = face(__name__, _WHERE)

__all__ = [
    "effects",
    "human_labels_plan",
    "judges_plan",
    "pilot",
    "planner",
    "plots",
    "position_bias_plan",
    "position_test",
    "power_curve",
    "rate_plan",
    "sizes",
    "tables",
    "verify",
]
