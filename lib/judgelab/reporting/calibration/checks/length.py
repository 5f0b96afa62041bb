"""Calibration checks of the length family (issue 20): length bias, context trends, LC win rate.

Every check runs the library's estimator on `judgelab.simulate.length` draws: 60 clusters
(questions / source documents / instructions) of 5 items, latent ICC 0.3, heavy-tailed
lengths. "before" is the legacy choice (items independent: item-level bootstrap, HC0 or
item-clustered errors; for the regression also the legacy linear length term).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import Any

import numpy as np

from judgelab.analyses import length
from judgelab.reporting.calibration.harness import Check, Outcome
from judgelab.simulate import length as sim
from judgelab.simulate.base import Design, Scenario, Simulation

FAMILY = "length"
DESIGN = Design(n_clusters=60, per_cluster=5, icc=0.3)
#: The alternatives (realistic effects, stated in each check's `effect`).
PAIR_BIAS = 0.35  # log-odds per doubling of the length ratio
CONTEXT_SLOPE = -0.3  # log-odds per doubling of the context
LC_BIAS = 0.8  # log-odds per tanh unit of the standardized length difference


def simulate_pairs(
    rng: np.random.Generator,
    scenario: str,
    shape: Scenario | None = None,
    *,
    form: str = "log_ratio",
    kind: str = "lognormal",
) -> Simulation:
    """Pairwise items judged in both orders; the alternative plants a length bias."""
    bias = 0.0 if scenario == "null" else PAIR_BIAS
    if form == "linear" and bias:
        bias = bias * sim.LINEAR_SCALE / 150.0  # about the same effect at typical lengths
    return sim.pairwise_lengths(rng, DESIGN, bias=bias, form=form, length_kind=kind)


def simulate_context(
    rng: np.random.Generator, scenario: str, shape: Scenario | None = None
) -> Simulation:
    """Documents with heavy-tailed contexts; the alternative plants a falling trend."""
    slope = 0.0 if scenario == "null" else CONTEXT_SLOPE
    return sim.context_lengths(rng, DESIGN, slope=slope)


def simulate_lc(
    rng: np.random.Generator, scenario: str, shape: Scenario | None = None
) -> Simulation:
    """A longer-writing model against a baseline; the alternative plants a length preference."""
    bias = 0.0 if scenario == "null" else LC_BIAS
    return sim.lc_winrate(rng, DESIGN, bias=bias)


def _verdicts(s: Simulation):
    return length.pairwise_verdicts(s.items, s.judgments)


def estimate_picks(s: Simulation, options: Mapping[str, Any]) -> Outcome:
    """Balanced P(picks longer), its cluster-bootstrap interval and test of 0.5."""
    out = length.picks_longer(_verdicts(s), conditions=("balanced",), **options).iloc[0]
    return Outcome(out["value"], out["ci_low"], out["ci_high"], out["p_value"])


def estimate_regression(s: Simulation, options: Mapping[str, Any]) -> Outcome:
    """The length term of `length_regression`: coefficient, interval, p-value."""
    reg = length.length_regression(_verdicts(s), **options)
    row = reg[reg["term"] == "length"].iloc[0]
    return Outcome(row["coef"], row["ci_low"], row["ci_high"], row["p_value"])


def estimate_trend(s: Simulation, options: Mapping[str, Any]) -> Outcome:
    """The context-length trend (log-odds per doubling), its interval and p-value."""
    table = length.item_table(s.items, s.judgments)
    row = length.context_trend(table, **options).iloc[0]
    return Outcome(row["coef"], row["ci_low"], row["ci_high"], row["p_value"])


def estimate_long_bin(s: Simulation, options: Mapping[str, Any]) -> Outcome:
    """Accuracy on long contexts (≥ 1.5 × the median), a value bin of `accuracy_by_length`."""
    table = length.item_table(s.items, s.judgments)
    edge = sim.LONG_CONTEXT * s.params["median"]
    out = length.accuracy_by_length(
        table,
        edges=[0, edge],
        by="value",
        column="len_context",
        metrics_=("correct",),
        **options,
    )
    row = out.iloc[-1]
    return Outcome(row["value"], row["ci_low"], row["ci_high"])


def estimate_lc(s: Simulation, options: Mapping[str, Any]) -> Outcome:
    """The length-controlled win rate (a fraction) and its interval."""
    out = length.length_controlled_winrate(_verdicts(s), by=("judge",), **options).iloc[0]
    return Outcome(out["lc_winrate"] / 100, out["lc_low"] / 100, out["lc_high"] / 100)


CHECKS: list[Check] = [
    Check(
        name="length.picks_longer_balanced",
        family=FAMILY,
        estimator="analyses.length.picks_longer (balanced)",
        estimand="p_longer_balanced",
        simulate=simulate_pairs,
        estimate=estimate_picks,
        before={"cluster": None},
        effect=f"length bias {PAIR_BIAS} log-odds per doubling of the length ratio",
        notes="H0: P = 0.5; longer is the gold positive in 60 % of pairs (confound)",
    ),
    Check(
        name="length.regression_log_ratio",
        family=FAMILY,
        estimator="analyses.length.length_regression (log_ratio, default)",
        estimand="length_coef",
        simulate=simulate_pairs,
        estimate=estimate_regression,
        before={"cluster": None},
        effect=f"bounded bias {PAIR_BIAS} log-odds per doubling (truth: pseudo-true coef)",
    ),
    Check(
        name="length.regression_linear",
        family=FAMILY,
        estimator="analyses.length.length_regression (linear, sensitivity row)",
        estimand="length_coef",
        simulate=partial(simulate_pairs, kind="t"),
        estimate=estimate_regression,
        interval=False,
        options={"transform": "linear"},
        before={"transform": "linear", "cluster": None},
        effect=f"bounded bias {PAIR_BIAS} per doubling; Student-t length tails (test only)",
        notes="misspecified term: only its test of no length effect is checked",
    ),
    Check(
        name="length.context_trend",
        family=FAMILY,
        estimator="analyses.length.context_trend",
        estimand="context_slope",
        simulate=simulate_context,
        estimate=estimate_trend,
        before={"cluster": None},
        effect=f"slope {CONTEXT_SLOPE} log-odds per doubling of context (pseudo-true truth)",
    ),
    Check(
        name="length.accuracy_by_context_bin",
        family=FAMILY,
        estimator="analyses.length.accuracy_by_length (context value bin)",
        estimand="long_context_accuracy",
        simulate=simulate_context,
        estimate=estimate_long_bin,
        test=False,
        before={"cluster": None},
        effect=f"slope {CONTEXT_SLOPE} per doubling",
    ),
    Check(
        name="length.lc_winrate",
        family=FAMILY,
        estimator="analyses.length.length_controlled_winrate (LC)",
        estimand="lc_winrate",
        simulate=simulate_lc,
        estimate=estimate_lc,
        test=False,
        before={"cluster": None},
        effect=f"length preference {LC_BIAS} per tanh unit; model 1.3x longer",
    ),
]
