"""Calibration checks of the pairwise family: rates, position preference, judge differences.

Every check draws a benchmark shaped like its scenario (`simulate.base.Scenario`: balanced
or unequal cluster sizes, constant or cluster-varying effects, 8 / 15 / 50 clusters, small
or moderate n, latent ICC 0.5) from `simulate.pairwise`: heavy-tailed response lengths,
8 % ties, invalid outputs missing not at random (15 % when the verdict is wrong against
3 % when right, more often for long pairs), a position bias that varies by cluster around
its mean in the "varying" scenarios (symmetric around 0 under the null, so P(A | decisive)
= 1/2 holds in the population) and judge accuracies that vary by cluster.

"after" runs the library's estimators at their defaults (`core.estimates`: the interval
inverting the restricted wild cluster bootstrap test); "before" runs the earlier defaults
(`inference="bootstrap"`: the t-expanded percentile cluster bootstrap and its adaptive
bootstrap p-value — the test the outside calibration found at 9–11 % type-I error).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from functools import partial
from typing import Any

import numpy as np
import pandas as pd

from judgelab.analyses import pairwise
from judgelab.reporting.calibration.harness import Check, Outcome
from judgelab.simulate import pairwise as simpw
from judgelab.simulate.base import BALANCED, Scenario, Simulation

FAMILY = "pairwise"
#: One judge: accurate, position-biased under the alternative (δ = 0.35 on the logit scale).
ONE = {
    hyp: simpw.PairwiseParams(
        accuracy=(1.0,), delta=(delta,), tie_rate=(0.08,), invalid_rate=(0.03,),
        invalid_if_wrong=(0.15,), invalid_length=(0.7,), item_sd=0.5,
    )
    for hyp, delta in (("null", 0.0), ("alternative", 0.35))
}  # fmt: skip
#: The earlier defaults of the estimators ("before").
BEFORE = {"inference": "bootstrap"}
#: Two judges: equal accuracy (null: the same CA; position biases of opposite sign) or 1.2
#: vs 0.6 on the logit scale (alternative); the second judge's outputs are invalid more
#: often when wrong (missing not at random: such a verdict was wrong anyway, so CA is
#: unchanged), both more often on long pairs.
TWO = {
    hyp: simpw.PairwiseParams(
        judges=("J1", "J2"), accuracy=(1.2, acc2), delta=(0.2, -0.2), tie_rate=(0.05, 0.05),
        invalid_rate=(0.02, 0.02), invalid_if_wrong=(None, 0.10), invalid_length=(0.5, 0.5),
        item_sd=0.5, judge_corr=0.5,
    )
    for hyp, acc2 in (("null", 1.2), ("alternative", 0.6))
}  # fmt: skip
#: The metrics the one-judge checks read (computed once per draw and options).
ONE_METRICS = ("a1", "ca", "cons", "flip_rate", *pairwise.position.NEEDED)


def sim_one(
    rng: np.random.Generator, hypothesis: str, shape: Scenario | None = None
) -> Simulation:
    """One judge on one split, shaped like `shape`."""
    return simpw.pairwise_benchmark(rng, (shape or BALANCED).design(), ONE[hypothesis])


def sim_two(
    rng: np.random.Generator, hypothesis: str, shape: Scenario | None = None
) -> Simulation:
    """Two judges on one split, shaped like `shape`."""
    return simpw.pairwise_benchmark(rng, (shape or BALANCED).design(), TWO[hypothesis])


def sim_splits(
    rng: np.random.Generator, hypothesis: str, shape: Scenario | None = None
) -> Simulation:
    """One judge on two splits of different difficulty (60 % / 40 % of the clusters).

    The second split is hard (accuracy 0.2); its sources are distinct from the first's.
    The pooled CA's truth weights the splits by their (fixed) numbers of items.
    """
    shape = shape or BALANCED
    g1 = max(2, round(0.6 * shape.n_clusters))
    g2 = max(2, shape.n_clusters - g1)
    easy = ONE[hypothesis]
    hard = replace(easy, accuracy=(0.2,))
    d1 = shape.design(n_clusters=g1, split="s1")
    d2 = shape.design(n_clusters=g2, split="s2")
    a = simpw.pairwise_benchmark(rng, d1, easy)
    b = simpw.pairwise_benchmark(rng, d2, hard)
    for table in (b.items, b.judgments):
        table["cluster"] = table["cluster"].astype(str) + "/s2"
    out = simpw.stack_splits([a, b])
    n1, n2 = d1.n_items, d2.n_items
    out.truth["ca_pooled"] = (n1 * a.truth["ca"] + n2 * b.truth["ca"]) / (n1 + n2)
    return out


class _Memo:
    """The last draw's item outcomes and rates per options (checks share a draw)."""

    def __init__(self) -> None:
        self.sim: Simulation | None = None
        self.store: dict[Any, Any] = {}

    def get(self, sim: Simulation, key: Any, build: Any) -> Any:
        if self.sim is not sim:
            self.sim, self.store = sim, {}
        if key not in self.store:
            self.store[key] = build()
        return self.store[key]


_MEMO = _Memo()


def _outcomes(sim: Simulation) -> pd.DataFrame:
    return _MEMO.get(sim, "outcomes", lambda: pairwise.item_outcomes(sim.judgments))


def _rates(sim: Simulation, options: Mapping[str, Any], across: str | None) -> pd.DataFrame:
    opts = dict(options)
    key = ("rates", across, tuple(sorted(opts.items())))
    metrics = [*ONE_METRICS] if across is None else ["ca"]  # the pooled check reads CA only
    return _MEMO.get(
        sim,
        key,
        lambda: pairwise.pairwise_rates(_outcomes(sim), across=across, metrics=metrics, **opts),
    )


def _outcome(value: float, low: float, high: float, p: float, row: Mapping[str, Any]) -> Outcome:
    return Outcome(
        float(value), float(low), float(high), float(p), n_eff=float(row["n_eff_clusters"])
    )


def est_rate(
    sim: Simulation, options: Mapping[str, Any], *, metric: str, aggregation: str = "split"
) -> Outcome:
    """A rate of `pairwise_rates` (one judge; `aggregation` split or pooled)."""
    across = "split" if aggregation != "split" else None
    rates = _rates(sim, options, across)
    row = rates[(rates["metric"] == metric) & (rates["aggregation"] == aggregation)].iloc[0]
    return _outcome(row["value"], row["ci_low"], row["ci_high"], np.nan, row)


def est_position(sim: Simulation, options: Mapping[str, Any], *, decisive: bool) -> Outcome:
    """P(position A) of `position_preference` (either denominator) with its test."""
    opts = dict(options)
    test = opts.pop("test", "bootstrap")
    row = pairwise.position_preference(_rates(sim, opts, None), test=test).iloc[0]
    if decisive:
        low, high = row["decisive_low"], row["decisive_high"]
        return _outcome(row["pos_a_rate_decisive"], low, high, row["p_value"], row)
    return _outcome(row["pos_a_rate"], row["ci_low"], row["ci_high"], np.nan, row)


def est_compare(sim: Simulation, options: Mapping[str, Any], *, metric: str = "ca") -> Outcome:
    """`compare_judges` difference J1 − J2 with its test."""
    cmp = pairwise.compare_judges(_outcomes(sim), metric=metric, across=None, **dict(options))
    row = cmp.iloc[0]
    return _outcome(row["diff"], row["ci_low"], row["ci_high"], row["p_value"], row)


def _rate_check(metric: str, what: str, **kw: Any) -> Check:
    return Check(
        name=f"{FAMILY}.{metric}",
        family=FAMILY,
        estimator=f"analyses.pairwise.pairwise_rates ({metric}: {what})",
        estimand=metric,
        simulate=sim_one,
        estimate=partial(est_rate, metric=metric),
        test=False,
        before=BEFORE,
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
        before=BEFORE,
        effect="position bias δ = 0.35 (logit)",
        notes="splits of 60 % and 40 % of the clusters, accuracy 1.0 and 0.2",
    ),
    Check(
        name=f"{FAMILY}.pos_a_rate",
        family=FAMILY,
        estimator="analyses.pairwise.position_preference (spec: over all valid verdicts)",
        estimand="pos_a_rate",
        simulate=sim_one,
        estimate=partial(est_position, decisive=False),
        test=False,
        before=BEFORE,
        effect="position bias δ = 0.35 (logit): P(A | decisive) ≈ 0.57",
        notes="interval only: with ties the spec rate's no-preference value is below 0.5; "
        "the test of A = B is on the decisive share (pairwise.pos_a_rate_decisive)",
    ),
    Check(
        name=f"{FAMILY}.pos_a_rate_decisive",
        family=FAMILY,
        estimator="analyses.pairwise.position_preference (over valid non-tie verdicts)",
        estimand="pos_a_rate_decisive",
        simulate=sim_one,
        estimate=partial(est_position, decisive=True),
        before=BEFORE,
        effect="position bias δ = 0.35 (logit): P(A | decisive) ≈ 0.57",
        notes="H0: P(A | decisive) = 1/2; in 'varying' scenarios δ varies by cluster "
        "(symmetric around 0 under H0)",
    ),
    Check(
        name=f"{FAMILY}.compare_ca",
        family=FAMILY,
        estimator="analyses.pairwise.compare_judges (ca difference)",
        estimand="ca_diff",
        simulate=sim_two,
        estimate=partial(est_compare, metric="ca"),
        before=BEFORE,
        effect="accuracy 1.2 vs 0.6 (logit): CA difference ≈ 0.12",
        notes="J2 invalid 10 % when wrong (MNAR); judges share half the cluster variance; "
        "accuracies vary by cluster in 'varying' scenarios",
    ),
]
