"""Calibration checks of the probes family (issue 25): a probe's pull and its accuracy cost.

Every check runs `analyses.probes.probe_effects` on `judgelab.simulate.probes` draws: 60
clusters of 5 original items (latent ICC 0.3, an item effect), each with its control and
both arms of one probe, judged in both orders. The null plants no susceptibility; the
alternative a pull of `BETA` logits toward the probed response. "before" resamples original
items as if they were independent (`cluster=None`; pairs still stay together).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import Any

import numpy as np

from judgelab.analyses import probes
from judgelab.reporting.calibration.harness import Check, Outcome
from judgelab.simulate import probes as sim
from judgelab.simulate.base import Design, Scenario, Simulation

FAMILY = "probes"
DESIGN = Design(n_clusters=60, per_cluster=5, icc=0.3)
PROBE = "verbosity"
#: The alternative: the probe pulls the verdict this many logits toward the probed response.
BETA = 0.6


def simulate(rng: np.random.Generator, scenario: str, shape: Scenario | None = None) -> Simulation:
    """One probe, both arms, both orders; the alternative plants a pull of `BETA`."""
    beta = 0.0 if scenario == "null" else BETA
    params = sim.ProbeParams(susceptibility={PROBE: beta}, accuracy=1.0, delta=0.3)
    return sim.probe_benchmark(rng, DESIGN, params)


def _metric(s: Simulation, options: Mapping[str, Any], metric: str) -> Outcome:
    pairs = probes.probe_pairs(s.judgments, s.items)
    out = probes.probe_effects(pairs, pooled=False, **options)
    row = out[out["metric"] == metric].iloc[0]
    return Outcome(row["value"], row["ci_low"], row["ci_high"], row["p_value"])


def estimate_pull(s: Simulation, options: Mapping[str, Any]) -> Outcome:
    """The net pull toward the probed response, its paired interval and test of 0."""
    return _metric(s, options, "pull")


def estimate_acc_worse(s: Simulation, options: Mapping[str, Any]) -> Outcome:
    """The accuracy change when the probe favours the worse response, interval and test."""
    return _metric(s, options, "acc_change_worse")


def estimate_robustness(s: Simulation, options: Mapping[str, Any]) -> Outcome:
    """The share of verdicts the probe leaves unchanged and its interval (no test)."""
    return _metric(s, options, "robustness")


def truth_of(s: Simulation, scenario: str, *, metric: str) -> float:
    """The planted population value of `metric` for the probe (picklable via `partial`)."""
    return float(s.truth[f"{metric}:{PROBE}"])


def _truth(metric: str):
    return partial(truth_of, metric=metric)


CHECKS: list[Check] = [
    Check(
        name="probes.pull",
        family=FAMILY,
        estimator="analyses.probes.probe_effects (pull)",
        estimand="pull",
        simulate=simulate,
        estimate=estimate_pull,
        truth=_truth("pull"),
        before={"cluster": None},
        effect=f"{PROBE} pulls {BETA} logits toward the probed response",
        notes="H0: no pull (flips toward = flips away); both arms, both orders",
    ),
    Check(
        name="probes.acc_change_worse",
        family=FAMILY,
        estimator="analyses.probes.probe_effects (acc_change_worse)",
        estimand="acc_change_worse",
        simulate=simulate,
        estimate=estimate_acc_worse,
        truth=_truth("acc_change_worse"),
        before={"cluster": None},
        effect=f"{PROBE} on the worse response pulls {BETA} logits toward it",
    ),
    Check(
        name="probes.robustness",
        family=FAMILY,
        estimator="analyses.probes.probe_effects (robustness)",
        estimand="robustness",
        simulate=simulate,
        estimate=estimate_robustness,
        truth=_truth("robustness"),
        test=False,
        before={"cluster": None},
        effect=f"{PROBE} pulls {BETA} logits (verdicts drawn independently given the item)",
    ),
]
