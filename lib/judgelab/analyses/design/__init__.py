"""Study design (notebook 17, `judgelab plan`): how many items, orders, repeats, human labels.

`sizes` holds the closed forms (the design effects they apply: `effects`), `pilot` reads
their inputs from the user's own judgments (and `pilot.position_test` is the test a
position study runs), `planner` lays the alternatives side by side, and `verify` replays
the pilot at a plan's size to measure the power the plan achieves with that test.
`judgelab.reporting.calibration.checks.design` checks the plans against planted truth.
"""

from judgelab.analyses.design import effects, pilot, planner, plots, sizes, tables, verify
from judgelab.analyses.design.pilot import position_test
from judgelab.analyses.design.planner import (
    human_labels_plan,
    judges_plan,
    position_bias_plan,
    power_curve,
    rate_plan,
)

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
