"""Calibration checks of the reference family (notebook 06; spec 001 §4.5, Table 5).

`simulate.correctness.reference_sim` shaped like the scenario (source clusters of unequal
size, the scenario's ICC, the human-reference effect varying by cluster, invalid verdicts more
frequent on wrong verdicts), one judge in both orders under reference=none / human / self; the
check compares reference=human with reference=none on CA. "before" is the earlier default:
the paired percentile cluster bootstrap with an adaptive bootstrap p-value.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from judgelab.analyses import pairwise, reference
from judgelab.reporting.calibration.harness import Check, Outcome
from judgelab.simulate import correctness as sim_correctness
from judgelab.simulate.base import BALANCED, Scenario, Simulation

#: The alternative: a human reference raises the judge's accuracy logit by 0.6 on average.
HUMAN_EFFECT = 0.6
PAIR = ("reference=human", "reference=none")


def simulate(
    rng: np.random.Generator, hypothesis: str, scenario: Scenario | None = None
) -> Simulation:
    """Draw one benchmark shaped like `scenario`; the alternative plants the human effect."""
    effect = HUMAN_EFFECT if hypothesis == "alternative" else 0.0
    return sim_correctness.reference_sim(
        rng, design=(scenario or BALANCED).design(), effects=(0.0, effect, 0.2)
    )


def estimate(sim: Simulation, options: Mapping[str, Any]) -> Outcome:
    """`reference.compare_conditions` (CA): human − none, interval and p (split row)."""
    judged = sim.judgments[sim.judgments["condition"].isin(PAIR)]
    outcomes = pairwise.item_outcomes(judged, groups=("judge", "condition", "benchmark", "split"))
    cmp = reference.compare_conditions(outcomes, across=None, missing_as_error=False, **options)
    row = cmp.iloc[0]
    sign = 1.0 if row["condition_1"] == PAIR[0] else -1.0
    low, high = sorted((sign * float(row["ci_low"]), sign * float(row["ci_high"])))
    return Outcome(
        sign * float(row["diff"]),
        low,
        high,
        float(row["p_value"]),
        declined=str(row["declined"]),
        n_eff=float(row["n_eff_clusters"]),
    )


def truth(sim: Simulation, hypothesis: str) -> float:
    """CA(reference=human) − CA(reference=none)."""
    return float(sim.truth["ca_diff_1_0"])


CHECKS: list[Check] = [
    Check(
        name="reference.condition_diff",
        family="reference",
        estimator="analyses.reference.compare_conditions (ca, human − none)",
        estimand="ca_diff_1_0",
        simulate=simulate,
        estimate=estimate,
        truth=truth,
        before={"test": "bootstrap"},
        effect=f"reference=human +{HUMAN_EFFECT} accuracy logit on average (CA ≈ +0.12), "
        "varying by cluster",
    ),
]
