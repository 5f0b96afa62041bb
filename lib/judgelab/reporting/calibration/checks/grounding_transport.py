"""Calibration check of the transport audit on planted truth (issue 36 item 7).

`grounding_transport.rectifier`: `simulate.transport.transport_sim` shaped like the
scenario (its clusters, unequal sizes and ICC; four slices answering the same items, the
last one tested) and `analyses.grounding.transport.audit` with the other slices as the
training slices. The estimand is the transported error of the PPI rectifier (0 under the
null: every slice alike; `SHIFT` · P₀ under the alternative, the tested slice's judge
falsely passing `SHIFT` more of the human fails). The check reports the interval (coverage)
and the p-value of error 0 (type-I error, power) at level 0.95; the grade itself is the
equivalence reading of the 0.90 interval of the same construction (the false-PASS and PASS
rates at the planned n: `tests/reporting/calibration/test_grounding_transport_smoke.py`).

Registered in `checks.FAMILIES` as `grounding_transport` (`make calibrate` runs it).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import Any

from judgelab.analyses.grounding import transport
from judgelab.reporting.calibration.harness import Check, Outcome
from judgelab.simulate import transport as sim_transport
from judgelab.simulate.base import BALANCED, Scenario, Simulation

#: How much more often the tested slice's judge passes a human fail (alternative).
SHIFT = 0.25


def simulate(rng, hypothesis: str, shape: Scenario | None = None) -> Simulation:
    """Draw one benchmark shaped like `shape`: the null transports, the alternative not."""
    shape = shape or BALANCED
    shift = 0.0 if hypothesis == "null" else SHIFT
    return sim_transport.transport_sim(rng, design=shape.design(), shift=shift)


def estimate(sim: Simulation, options: Mapping[str, Any]) -> Outcome:
    """The audit row of the tested slice (trained on every other slice)."""
    opts = {"level": 0.95, "margin": 0.05, **options}
    labels = sim.extra["labels"]
    train = sorted(set(labels["group"]) - {sim_transport.TESTED})
    row = transport.audit(labels, train=train, **opts).iloc[0]
    if row["grade"] == "REFUSED":
        return Outcome(float("nan"), float("nan"), float("nan"), declined=row["refused"])
    return Outcome(float(row["error"]), float(row["ci_low"]), float(row["ci_high"]),
                   p_value=float(row["p_value"]), n_eff=float(row["n_eff_clusters"]))  # fmt: skip


CHECKS: list[Check] = [
    Check(
        name="grounding_transport.rectifier",
        family="grounding_transport",
        estimator="analyses.grounding.transport.audit (rectifier, trained on 3 slices)",
        estimand="transport_error",
        simulate=simulate,
        estimate=partial(estimate),
        test=True,
        before=None,
        effect=f"the tested slice's judge FPR +{SHIFT} (error {SHIFT} · P(human fail))",
    )
]


__all__ = ["CHECKS", "SHIFT", "estimate", "simulate"]
