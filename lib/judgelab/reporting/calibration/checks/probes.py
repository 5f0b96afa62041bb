"""Calibration checks of the probes family (issues 25, 33): a probe's pull and accuracy cost.

Every check runs `analyses.probes.probe_effects` on `judgelab.simulate.probes` draws shaped
like the scenario (`simulate.base.Scenario`: balanced or unequal cluster sizes, constant or
cluster-varying effects, 8 / 15 / 50 clusters, small or moderate n, latent ICC 0.5): each
original item with its control and both arms of one probe, judged in both orders; a
position bias that varies by cluster; invalid outputs missing not at random (15 % when the
verdict is wrong against 3 % when right, more often for long pairs). The null plants no
susceptibility (in "varying" scenarios the probe pulls toward the probed response in some
sources and away in others, symmetrically); the alternative a pull of `BETA` logits.

"after": the defaults (`core.estimates` rows: the interval inverting the restricted wild
cluster bootstrap test); "before": the earlier defaults (`inference="bootstrap"`: the
t-expanded percentile cluster bootstrap and adaptive bootstrap p-values).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import Any

import numpy as np

from judgelab.analyses import probes
from judgelab.reporting.calibration.harness import Check, Outcome
from judgelab.simulate import probes as sim
from judgelab.simulate.base import BALANCED, Scenario, Simulation

FAMILY = "probes"
PROBE = "verbosity"
#: The metrics the checks read.
METRICS = ("pull", "acc_change_worse", "robustness")
#: The earlier defaults ("before").
BEFORE = {"inference": "bootstrap"}
#: The alternative: the probe pulls the verdict this many logits toward the probed response.
BETA = 0.6


def params_of(hypothesis: str) -> sim.ProbeParams:
    """The planted judge: no pull (null) or `BETA` (alternative); MNAR invalid outputs."""
    return sim.ProbeParams(
        susceptibility={PROBE: 0.0 if hypothesis == "null" else BETA},
        accuracy=1.0,
        delta=0.3,
        invalid_rate=0.03,
        invalid_if_wrong=0.15,
        invalid_length=0.7,
    )


def simulate(
    rng: np.random.Generator, hypothesis: str, shape: Scenario | None = None
) -> Simulation:
    """One probe, both arms, both orders, shaped like `shape`."""
    return sim.probe_benchmark(rng, (shape or BALANCED).design(), params_of(hypothesis))


class _Memo:
    """The last draw's effects per options (the three checks share a draw)."""

    sim: Simulation | None = None
    store: dict[Any, Any] = {}


def _effects(s: Simulation, options: Mapping[str, Any]) -> Any:
    if _Memo.sim is not s:
        _Memo.sim, _Memo.store = s, {}
    if "pairs" not in _Memo.store:
        _Memo.store["pairs"] = probes.probe_pairs(s.judgments, s.items)
    key = tuple(sorted(options.items()))
    if key not in _Memo.store:
        _Memo.store[key] = probes.probe_effects(
            _Memo.store["pairs"], pooled=False, metrics=METRICS, **options
        )
    return _Memo.store[key]


def _metric(s: Simulation, options: Mapping[str, Any], metric: str) -> Outcome:
    out = _effects(s, options)
    row = out[out["metric"] == metric].iloc[0]
    return Outcome(
        float(row["value"]),
        float(row["ci_low"]),
        float(row["ci_high"]),
        float(row["p_value"]),
        n_eff=float(row["n_eff_clusters"]),
    )


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
        before=BEFORE,
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
        before=BEFORE,
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
        before=BEFORE,
        effect=f"{PROBE} pulls {BETA} logits (verdicts drawn independently given the item)",
    ),
]
