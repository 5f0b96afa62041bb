"""Study design (notebook 17, `judgelab plan`): how many items, orders, repeats, human labels.

`sizes` holds the closed forms, `pilot` reads their inputs from the user's own judgments,
`planner` lays the alternatives side by side. Where a closed form's assumptions may not
hold, `judgelab.reporting.design_check` checks it against the simulator.
"""

from judgelab.analyses.design import pilot, planner, plots, sizes, tables
from judgelab.analyses.design.planner import (
    human_labels_plan,
    judges_plan,
    position_bias_plan,
    power_curve,
    rate_plan,
)

__all__ = [
    "human_labels_plan",
    "judges_plan",
    "pilot",
    "planner",
    "plots",
    "position_bias_plan",
    "power_curve",
    "rate_plan",
    "sizes",
    "tables",
]
