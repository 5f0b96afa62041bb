"""Calibration checks of judge-confidence calibration on planted truth (issue 36 item 7).

`simulate.confidence.confidence_sim` shaped like the scenario (its clusters, unequal sizes,
ICC, a slope varying by cluster in the varying scenarios): an over-confident judge's
probability against 0/1 human labels, mildly under the null (slope 0.8) and more under the
alternative (0.6) — both with a positive ECE, since a calibrated judge's ECE of 0 is a
boundary no interval covers at its level. `analyses.grounding.confidence.scores` (raw, no
recalibration) gives the Brier score (restricted wild cluster interval) and the binned ECE
(the thresholded cluster bootstrap interval; "before": the bias-corrected one). Coverage
only: the rows carry no test.

Measured (R = 400 per cell and hypothesis, all 24 cells): thresholded covers 0.99–1.00
under the null and 0.96–1.00 under the alternative (pooled 99.8 / 98.6 %, mean width
0.158); bias-corrected 0.73–0.97 / 0.86–0.98 (pooled 86.4 / 91.9 %, width 0.139), its
misses almost all from above. At these sizes every bin's true gap is within its noise,
where the plug-in's bias cannot be read from the data; the thresholded interval is built
to hold for a calibrated judge too (ECE 0: covers 0.935–0.98, bias-corrected 0.44–0.56)
and so errs above the band here, not below (`analyses.grounding.confidence`).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import Any

from judgelab.analyses.grounding import confidence
from judgelab.reporting.calibration.harness import Check, Outcome
from judgelab.simulate import confidence as sim_confidence
from judgelab.simulate.base import BALANCED, Scenario, Simulation

FAMILY = "grounding_confidence"


def simulate(rng, hypothesis: str, shape: Scenario | None = None) -> Simulation:
    """Draw one benchmark shaped like `shape`; the slope of the hypothesis."""
    shape = shape or BALANCED
    slope = sim_confidence.SLOPES[hypothesis]
    return sim_confidence.confidence_sim(rng, design=shape.design(), slope=slope)


def estimate(sim: Simulation, options: Mapping[str, Any], *, metric: str) -> Outcome:
    """The raw row of `metric` (`brier` or `ece`) from `confidence.scores`."""
    labels = sim.extra["labels"]
    opts = {"n_boot": 999, **options}
    rows = confidence.scores(labels["judge_label"].to_numpy(), labels["human_label"].to_numpy(),
                             cluster=labels["cluster"].to_numpy(), recalibrate=None,
                             bins=sim.params["bins"], **opts)  # fmt: skip
    r = rows[(rows["version"] == "raw") & (rows["metric"] == metric)].iloc[0]
    return Outcome(float(r["value"]), float(r["ci_low"]), float(r["ci_high"]),
                   n_eff=float(r["n_eff_clusters"]))  # fmt: skip


def _check(
    metric: str, estimator: str, before: Mapping[str, Any] | None, notes: str = ""
) -> Check:
    return Check(
        name=f"{FAMILY}.{metric}",
        family=FAMILY,
        estimator=f"analyses.grounding.confidence.scores ({estimator})",
        estimand=metric,
        simulate=simulate,
        estimate=partial(estimate, metric=metric),
        test=False,
        before=before,
        effect="the judge more over-confident: slope of the human logit 0.6 (null: 0.8)",
        notes=notes,
    )


CHECKS: list[Check] = [
    _check("brier", "Brier score, restricted wild cluster interval", None),
    _check(
        "ece",
        "binned ECE, thresholded cluster bootstrap",
        {"ece_interval": "bias_corrected"},
        notes="conservative by design: valid for a calibrated judge, so above the band where "
        "every bin's gap is within its noise",
    ),
]
