"""Calibration checks of the pairwise family: rates, position preference, judge differences.

Every check draws a clustered benchmark from `simulate.pairwise` (50 sources × 5 items,
latent ICC 0.3, heavy-tailed response lengths, 5 % ties, invalid outputs) and runs the
library's estimator at its defaults ("after": cluster bootstrap, t_{G−1}-expanded percentile
intervals, bootstrap tests) and with the legacy options ("before": `cluster=None`, i.e. items
resampled as independent, plain percentile intervals, and the sign / McNemar tests that
assume independent items).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import Any

import numpy as np

from judgelab.analyses import pairwise
from judgelab.reporting.calibration.harness import Check, Outcome
from judgelab.simulate import pairwise as simpw
from judgelab.simulate.base import Design, Scenario, Simulation

FAMILY = "pairwise"
DESIGN = Design(n_clusters=50, per_cluster=5, icc=0.3)
#: One judge: accurate, a little position-biased under the alternative.
ONE = {
    "null": simpw.PairwiseParams(
        accuracy=(1.0,), delta=(0.0,), tie_rate=(0.05,), invalid_rate=(0.03,),
        invalid_if_wrong=(None,), item_sd=0.5,
    ),
    "alternative": simpw.PairwiseParams(
        accuracy=(1.0,), delta=(0.35,), tie_rate=(0.05,), invalid_rate=(0.03,),
        invalid_if_wrong=(None,), item_sd=0.5,
    ),
}  # fmt: skip
#: The legacy options of the rate estimators ("before").
LEGACY_RATES = {"cluster": None, "interval": "percentile"}
#: Two judges: equal accuracy (null: the same CA, δ of opposite sign) or 1.2 vs 0.6 on the
#: logit scale (alternative); the second judge's outputs are invalid more often when wrong
#: (missing not at random: such a verdict was wrong anyway, so CA is unchanged).
TWO = {
    scenario: simpw.PairwiseParams(
        judges=("J1", "J2"), accuracy=(1.2, acc2), delta=(0.2, -0.2), tie_rate=(0.05, 0.05),
        invalid_rate=(0.02, 0.02), invalid_if_wrong=(None, 0.10), item_sd=0.5, judge_corr=0.5,
    )
    for scenario, acc2 in (("null", 1.2), ("alternative", 0.6))
}  # fmt: skip


def sim_one(rng: np.random.Generator, scenario: str, shape: Scenario | None = None) -> Simulation:
    """One judge on one split."""
    return simpw.pairwise_benchmark(rng, DESIGN, ONE[scenario])


def sim_two(rng: np.random.Generator, scenario: str, shape: Scenario | None = None) -> Simulation:
    """Two judges on one split."""
    return simpw.pairwise_benchmark(rng, DESIGN, TWO[scenario])


def sim_splits(
    rng: np.random.Generator, scenario: str, shape: Scenario | None = None
) -> Simulation:
    """One judge on two splits of different difficulty (30 and 20 sources): the pooled row."""
    hard = ONE[scenario].__class__(**{**_fields(ONE[scenario]), "accuracy": (0.2,)})
    a = simpw.pairwise_benchmark(
        rng, Design(n_clusters=30, per_cluster=5, icc=0.3, split="s1"), ONE[scenario]
    )
    b = simpw.pairwise_benchmark(
        rng, Design(n_clusters=20, per_cluster=5, icc=0.3, split="s2"), hard
    )
    out = simpw.stack_splits([a, b])
    out.truth["ca_pooled"] = 0.6 * a.truth["ca"] + 0.4 * b.truth["ca"]
    return out


def _fields(params: simpw.PairwiseParams) -> dict:
    return {k: getattr(params, k) for k in type(params).__dataclass_fields__}


def _rate_options(options: Mapping[str, Any]) -> tuple[dict, str]:
    opts = dict(options)
    test = opts.pop("test", "bootstrap")
    return opts, test


def est_rate(
    sim: Simulation, options: Mapping[str, Any], *, metric: str, aggregation: str = "split"
) -> Outcome:
    """A rate of `pairwise_rates` (one judge; `aggregation` split or pooled)."""
    opts, _ = _rate_options(options)
    across = "split" if aggregation != "split" else None
    rates = pairwise.pairwise_rates(pairwise.item_outcomes(sim.judgments), across=across, **opts)
    row = rates[(rates["metric"] == metric) & (rates["aggregation"] == aggregation)].iloc[0]
    return Outcome(float(row["value"]), float(row["ci_low"]), float(row["ci_high"]))


def est_position(sim: Simulation, options: Mapping[str, Any], *, decisive: bool) -> Outcome:
    """P(position A) of `position_preference` (either denominator) with its test."""
    opts, test = _rate_options(options)
    rates = pairwise.pairwise_rates(pairwise.item_outcomes(sim.judgments), across=None, **opts)
    row = pairwise.position_preference(rates, test=test).iloc[0]
    if decisive:
        return Outcome(
            row["pos_a_rate_decisive"], row["decisive_low"], row["decisive_high"], row["p_value"]
        )
    return Outcome(row["pos_a_rate"], row["ci_low"], row["ci_high"], row["p_value"])


def est_compare(sim: Simulation, options: Mapping[str, Any], *, metric: str = "ca") -> Outcome:
    """`compare_judges` difference J1 − J2 with its test."""
    outcomes = pairwise.item_outcomes(sim.judgments)
    cmp = pairwise.compare_judges(outcomes, metric=metric, across=None, **dict(options))
    row = cmp.iloc[0]
    return Outcome(row["diff"], row["ci_low"], row["ci_high"], row["p_value"])


def _rate_check(metric: str, what: str, **kw: Any) -> Check:
    return Check(
        name=f"{FAMILY}.{metric}",
        family=FAMILY,
        estimator=f"analyses.pairwise.pairwise_rates ({metric}: {what})",
        estimand=metric,
        simulate=sim_one,
        estimate=partial(est_rate, metric=metric),
        test=False,
        before=LEGACY_RATES,
        effect="position bias δ = 0.35 (logit)",
        **kw,
    )


CHECKS: list[Check] = [
    _rate_check("ca", "consistent accuracy"),
    _rate_check("a1", "run-1 accuracy"),
    _rate_check("cons", "consistency"),
    _rate_check("flip_rate", "verdict flips with the order"),
    Check(
        name=f"{FAMILY}.ca_pooled",
        family=FAMILY,
        estimator="analyses.pairwise.pairwise_rates (ca, pooled over two splits)",
        estimand="ca_pooled",
        simulate=sim_splits,
        estimate=partial(est_rate, metric="ca", aggregation="pooled"),
        test=False,
        before=LEGACY_RATES,
        effect="position bias δ = 0.35 (logit)",
        notes="splits of 30 and 20 sources, accuracy 1.0 and 0.2; stratified by split",
    ),
    Check(
        name=f"{FAMILY}.pos_a_rate",
        family=FAMILY,
        estimator="analyses.pairwise.position_preference (spec: over all valid verdicts)",
        estimand="pos_a_rate",
        simulate=sim_one,
        estimate=partial(est_position, decisive=False),
        test=False,
        before=LEGACY_RATES,
        effect="position bias δ = 0.35 (logit): P(A | decisive) ≈ 0.56",
        notes="interval only: with 5 % ties the spec rate's no-preference value is below 0.5; "
        "the test of A = B is on the decisive share (pairwise.pos_a_rate_decisive)",
    ),
    Check(
        name=f"{FAMILY}.pos_a_rate_decisive",
        family=FAMILY,
        estimator="analyses.pairwise.position_preference (over valid non-tie verdicts)",
        estimand="pos_a_rate_decisive",
        simulate=sim_one,
        estimate=partial(est_position, decisive=True),
        before={**LEGACY_RATES, "test": "sign"},
        effect="position bias δ = 0.35 (logit): P(A | decisive) ≈ 0.56",
    ),
    Check(
        name=f"{FAMILY}.compare_ca",
        family=FAMILY,
        estimator="analyses.pairwise.compare_judges (ca difference)",
        estimand="ca_diff",
        simulate=sim_two,
        estimate=partial(est_compare, metric="ca"),
        before={"cluster": None, "test": "mcnemar"},
        effect="accuracy 1.2 vs 0.6 (logit): CA difference ≈ 0.12",
        notes="J2 invalid 10 % when wrong (MNAR); judges share half the cluster variance",
    ),
]
