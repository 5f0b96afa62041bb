"""Calibration checks of the length family: length bias, context trends, LC win rate.

Every check runs the library's public estimator (what notebooks 03 and 04 and the report
card call) on `judgelab.simulate.length` draws shaped by the harness's scenario (unequal
cluster sizes, ICC 0.5, length slopes varying by cluster, heavy-tailed length ratios,
invalid outputs missing not at random, small n); without a scenario, the issue-20 design
(60 clusters of 5, ICC 0.3). "after" is the current default; "before" the earlier one
(issue 20): percentile cluster bootstraps for rates, CR1 errors with t(G − 1) for GLMs.
The wild cluster score bootstrap beside CR2 is checked on its own (`*_wild`, test only:
its interval inverts the test, and under the null the truth is exactly the tested 0).

The regression and context checks draw pairs whose length ratio is independent of gold
(`p_longer_better` = 0.5): with a gold/length confound *and* slopes varying by cluster the
logistic working model's population coefficient is not exactly 0 under a null mean bias
(`simulate.length` docstring); P(picks longer) keeps the 60 % confound — its balanced
estimand is 0.5 under the null whatever the confound.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import Any

import numpy as np
import pandas as pd

from judgelab.analyses import length
from judgelab.reporting.calibration.harness import Check, Outcome
from judgelab.simulate import length as sim
from judgelab.simulate import length_context as sim_ctx
from judgelab.simulate.base import Design, Scenario, Simulation

FAMILY = "length"
#: Without a scenario: the issue-20 design.
DESIGN = Design(n_clusters=60, per_cluster=5, icc=0.3)
#: The alternatives (realistic effects, stated in each check's `effect`).
PAIR_BIAS = 0.35  # log-odds per doubling of the length ratio (mean over clusters)
CONTEXT_SLOPE = -0.5  # log-odds per doubling of the context (mean over documents)
LC_BIAS = 0.8  # log-odds per tanh unit of the standardized length difference


def _design(shape: Scenario | None) -> Design:
    return DESIGN if shape is None else shape.design()


def simulate_pairs(
    rng: np.random.Generator,
    hypothesis: str,
    shape: Scenario | None = None,
    *,
    p_better: float = 0.6,
    kind: str = "t",
) -> Simulation:
    """Pairwise items judged in both orders; the alternative plants a length bias."""
    bias = 0.0 if hypothesis == "null" else PAIR_BIAS
    return sim.pairwise_lengths(
        rng, _design(shape), bias=bias, p_longer_better=p_better, length_kind=kind
    )


def simulate_context(
    rng: np.random.Generator, hypothesis: str, shape: Scenario | None = None
) -> Simulation:
    """Documents with heavy-tailed contexts; the alternative plants a falling trend."""
    slope = 0.0 if hypothesis == "null" else CONTEXT_SLOPE
    return sim_ctx.context_lengths(rng, _design(shape), slope=slope)


def simulate_lc(
    rng: np.random.Generator, hypothesis: str, shape: Scenario | None = None
) -> Simulation:
    """A longer-writing model against a baseline; the alternative plants a length preference."""
    bias = 0.0 if hypothesis == "null" else LC_BIAS
    return sim_ctx.lc_winrate(rng, _design(shape), bias=bias)


#: Pairs without a gold/length confound (regression checks).
simulate_pairs_unconfounded = partial(simulate_pairs, p_better=0.5)

_VERDICTS: dict[str, Any] = {}


def _verdicts(s: Simulation) -> pd.DataFrame:
    """`pairwise_verdicts` of a draw, built once for all the checks that share the draw."""
    if _VERDICTS.get("judgments") is not s.judgments:
        _VERDICTS.update(
            judgments=s.judgments, verdicts=length.pairwise_verdicts(s.items, s.judgments)
        )
    return _VERDICTS["verdicts"]


def _items(s: Simulation) -> pd.DataFrame:
    if _VERDICTS.get("item_judgments") is not s.judgments:
        _VERDICTS.update(item_judgments=s.judgments, items=length.item_table(s.items, s.judgments))
    return _VERDICTS["items"]


def _outcome(row: Mapping[str, Any], value: str = "value", p: str = "p_value") -> Outcome:
    """The Outcome of a row; an interval the estimator could not give is declined, with why."""
    low, high = float(row["ci_low"]), float(row["ci_high"])
    declined = ""
    method = str(row.get("method", ""))
    if not (np.isfinite(low) and np.isfinite(high)) and method.startswith("no "):
        declined = method  # e.g. "no interval: fewer than 2 clusters"
    return Outcome(
        float(row[value]),
        low,
        high,
        float(row[p]) if p in row else np.nan,
        declined=declined,
        n_eff=float(row.get("n_eff_clusters", np.nan)),
    )


def estimate_picks(s: Simulation, options: Mapping[str, Any]) -> Outcome:
    """Balanced P(picks longer), its interval and test of 0.5."""
    out = length.picks_longer(_verdicts(s), conditions=("balanced",), **options).iloc[0]
    return _outcome(out)


def _length_row(s: Simulation, options: Mapping[str, Any]) -> pd.Series:
    reg = length.length_regression(_verdicts(s), **options)
    return reg[reg["term"] == "length"].iloc[0]


def estimate_regression(s: Simulation, options: Mapping[str, Any]) -> Outcome:
    """The length term of `length_regression`: coefficient, interval, p-value."""
    return _outcome(_length_row(s, options), value="coef")


def estimate_regression_wild(s: Simulation, options: Mapping[str, Any]) -> Outcome:
    """The wild cluster score bootstrap p-value of the length term (beside CR2)."""
    row = _length_row(s, options)
    return Outcome(float(row["coef"]), p_value=float(row["wild_p"]), n_eff=row["n_eff_clusters"])


def _trend_row(s: Simulation, options: Mapping[str, Any]) -> pd.Series:
    return length.context_trend(_items(s), **options).iloc[0]


def estimate_trend(s: Simulation, options: Mapping[str, Any]) -> Outcome:
    """The context-length trend (log-odds per doubling), its interval and p-value."""
    return _outcome(_trend_row(s, options), value="coef")


def estimate_trend_wild(s: Simulation, options: Mapping[str, Any]) -> Outcome:
    """The wild cluster score bootstrap p-value of the context trend (beside CR2)."""
    row = _trend_row(s, options)
    return Outcome(float(row["coef"]), p_value=float(row["wild_p"]), n_eff=row["n_eff_clusters"])


def estimate_long_bin(s: Simulation, options: Mapping[str, Any]) -> Outcome:
    """Accuracy on long contexts (≥ 1.5 × the median), a value bin of `accuracy_by_length`."""
    edge = sim.LONG_CONTEXT * s.params["median"]
    out = length.accuracy_by_length(
        _items(s),
        edges=[0, edge],
        by="value",
        column="len_context",
        metrics_=("correct",),
        **options,
    )
    row = out.iloc[-1]
    if int(row["n"]) == 0:
        return Outcome(np.nan, declined="no item in the long-context bin")
    return _outcome(row)


def estimate_lc(s: Simulation, options: Mapping[str, Any]) -> Outcome:
    """The length-controlled win rate (a fraction) and its interval."""
    out = length.length_controlled_winrate(_verdicts(s), by=("judge",), **options).iloc[0]
    return Outcome(
        out["lc_winrate"] / 100,
        out["lc_low"] / 100,
        out["lc_high"] / 100,
        n_eff=float(out["n_eff_clusters"]),
    )


_GLM_BEFORE = {"inference": "cluster", "wild": "none"}

CHECKS: list[Check] = [
    Check(
        name="length.picks_longer_balanced",
        family=FAMILY,
        estimator="analyses.length.picks_longer (balanced)",
        estimand="p_longer_balanced",
        simulate=simulate_pairs,
        estimate=estimate_picks,
        before={"inference": "bootstrap"},
        effect=f"length bias {PAIR_BIAS} log-odds per doubling of the length ratio",
        notes="H0: P = 0.5; longer is the gold positive in 60 % of pairs (confound)",
    ),
    Check(
        name="length.regression_log_ratio",
        family=FAMILY,
        estimator="analyses.length.length_regression (log_ratio, CR2 Bell-McCaffrey)",
        estimand="length_coef",
        simulate=simulate_pairs_unconfounded,
        estimate=estimate_regression,
        options={"wild": "none"},  # the CR2 columns do not depend on it
        before=_GLM_BEFORE,
        effect=f"bias {PAIR_BIAS} per doubling, SD by cluster (truth: pseudo-true coef)",
    ),
    Check(
        name="length.regression_wild",
        family=FAMILY,
        estimator="analyses.length.length_regression (wild score bootstrap beside CR2)",
        estimand="length_coef",
        simulate=simulate_pairs_unconfounded,
        estimate=estimate_regression_wild,
        interval=False,
        options={"wild": "p"},
        effect=f"bias {PAIR_BIAS} per doubling (test only: the interval inverts it)",
    ),
    Check(
        name="length.regression_linear",
        family=FAMILY,
        estimator="analyses.length.length_regression (linear, sensitivity row)",
        estimand="length_coef",
        simulate=simulate_pairs_unconfounded,
        estimate=estimate_regression,
        interval=False,
        options={"transform": "linear", "wild": "none"},
        before={"transform": "linear", **_GLM_BEFORE},
        effect=f"bounded bias {PAIR_BIAS} per doubling; Student-t ratio tails (test only)",
        notes="misspecified term: only its test of no length effect is checked",
    ),
    Check(
        name="length.context_trend",
        family=FAMILY,
        estimator="analyses.length.context_trend (CR2 Bell-McCaffrey)",
        estimand="context_slope",
        simulate=simulate_context,
        estimate=estimate_trend,
        options={"wild": "none"},
        before=_GLM_BEFORE,
        effect=f"slope {CONTEXT_SLOPE} per doubling, SD by document (pseudo-true truth)",
    ),
    Check(
        name="length.context_trend_wild",
        family=FAMILY,
        estimator="analyses.length.context_trend (wild score bootstrap beside CR2)",
        estimand="context_slope",
        simulate=simulate_context,
        estimate=estimate_trend_wild,
        interval=False,
        options={"wild": "p"},
        effect=f"slope {CONTEXT_SLOPE} per doubling (test only: the interval inverts it)",
    ),
    Check(
        name="length.accuracy_by_context_bin",
        family=FAMILY,
        estimator="analyses.length.accuracy_by_length (context value bin)",
        estimand="long_context_accuracy",
        simulate=simulate_context,
        estimate=estimate_long_bin,
        test=False,
        before={"inference": "bootstrap"},
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
        options={"wild": "none"},
        before=_GLM_BEFORE,
        effect=f"length preference {LC_BIAS} per tanh unit, SD by cluster; model 1.3x longer",
    ),
]
