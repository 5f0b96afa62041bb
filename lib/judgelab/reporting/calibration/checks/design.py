"""Calibration checks of the study planner: do position-bias plans deliver their power?

Each replicate plays a whole study: a *pilot* shaped like the scenario (its clusters, their
unequal sizes, ICC 0.5, a position bias varying by cluster, ties, and invalid outputs more
frequent when the verdict is wrong or the pair long: `simulate.design.position_study`) is
read by `analyses.design.pilot.position`, `analyses.design.position_bias_plan` plans the
items that detect the planted bias δ (P(A | decisive) = ½ + δ) with power 0.8, and a fresh
study of the planned size is drawn from the same judge — its clusters sized like the
pilot's (the plan assumes the pilot's cluster-size distribution), every cluster effect new
— and tested with the test the study runs (`analyses.design.position_test`: the wild
cluster bootstrap test of P(A | decisive) = ½ on per-item A and decisive counts).

Under the alternative the study's judge has the bias: the rejection rate is the plan's
*achieved power* (target: within [0.75, 0.90] for a plan of 0.8; the harness reports it as
`power` with its Monte-Carlo interval). Under the null the study's judge has none (the same
plan): the rejection rate is the planned test's type-I error, and the interval's coverage
of P(A | decisive) is measured under both.

- `design.position_plan_one` / `design.position_plan_both`: one random order per item, or
  both orders. Before: the earlier planner (z quantiles, every verdict decisive, the mean
  cluster size without its spread, no floor on the design effect: `legacy=True`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import replace
from functools import partial
from typing import Any

import numpy as np

from judgelab.analyses import design as plans
from judgelab.reporting.calibration.harness import Check, Outcome
from judgelab.simulate import design as sim_design
from judgelab.simulate.base import BALANCED, Scenario, Simulation

#: The position bias planted and planned for, on the P(A | decisive) scale.
GAP = 0.08
#: The judge (its position bias set per scenario so that P(A | decisive) = ½ + GAP).
JUDGE = sim_design.PositionParams()
#: Largest study a replicate draws (a plan above it is capped, and says so in `params`).
MAX_ITEMS = 20_000


def _plan(pilot: Mapping[str, Any], orders: str, legacy: bool) -> tuple[int, int, float]:
    """Return (items, clusters, closed-form power) of the plan for `orders`."""
    both = orders == "both"
    m = float(pilot["cluster_size"])
    figures = dict(pilot)
    g_eff = _num(figures.get("n_eff_clusters", float("nan")), 1.0)
    opts: dict[str, Any] = {"pilot_df": g_eff - 1 if g_eff > 1 else None}
    if legacy:
        opts = {"t_quantiles": False, "deff_floor": 0.0}
        figures.update(decisive_share=1.0, size_cv=0.0)
    size = plans.sizes.position_bias(
        GAP, power=0.8, cluster_size=m, icc=float(np.clip(_num(figures["icc"]), -0.99, 0.99)),
        both_orders=both, order_corr=float(np.clip(_num(figures["order_corr"]), -1, 1)),
        size_cv=_num(figures["size_cv"]), decisive_share=_num(figures["decisive_share"], 1.0),
        **opts,
    )  # fmt: skip
    n = min(size.n, MAX_ITEMS)
    return n, max(2, math.ceil(n / m)), float(size.deff)


def _num(x: Any, default: float = 0.0) -> float:
    x = float(x)
    return default if math.isnan(x) else x


def simulate(
    rng: np.random.Generator,
    hypothesis: str,
    shape: Scenario | None = None,
    *,
    orders: str,
) -> Simulation:
    """Draw a pilot, plan from it (after and before), draw one study per plan.

    Returns the after-plan's study; the before-plan's judgments are in `extra["before"]`.
    """
    shape = shape or BALANCED
    icc, sd = shape.icc, shape.design().effect_sd
    alt = replace(JUDGE, delta=sim_design.delta_for(GAP, JUDGE, icc, sd))
    judge = alt if hypothesis == "alternative" else JUDGE
    pilot_sim = sim_design.position_study(rng, shape.design(), alt, tables=False)
    pilot = plans.pilot.position(pilot_sim.judgments)
    sizes = np.asarray(pilot_sim.params["cluster_sizes"])
    out = {}
    for variant, legacy in (("after", False), ("before", True)):
        n, g, deff = _plan(pilot, orders, legacy)
        drawn = tuple(int(x) for x in rng.choice(sizes, g))
        study = shape.design(n_clusters=g, sizes=drawn, per_cluster=max(1, round(n / g)))
        sim = sim_design.position_study(rng, study, judge, orders=orders, tables=False)
        out[variant] = (sim, {"planned_items": n, "planned_clusters": g, "deff": deff})
    sim, info = out["after"]
    params = {**sim.params, **info, "pilot": pilot, "before": out["before"][1]}
    return Simulation(sim.items, sim.judgments, sim.truth, params,
                      extra={"before": out["before"][0].judgments})  # fmt: skip


def estimate(sim: Simulation, options: Mapping[str, Any]) -> Outcome:
    """The study's position test (P(A | decisive) = ½): after-plan, or before-plan's study."""
    judgments = sim.extra["before"] if options.get("legacy") else sim.judgments
    e = plans.position_test(judgments)
    return Outcome(e.value, e.ci_low, e.ci_high, e.p_value, n_eff=e.n_eff_clusters)


def _check(orders: str) -> Check:
    label = "both orders" if orders == "both" else "one random order"
    return Check(
        name=f"design.position_plan_{orders}",
        family="design",
        estimator=f"analyses.design.position_bias_plan ({label}) + position_test",
        estimand="p_a",
        simulate=partial(simulate, orders=orders),
        estimate=estimate,
        before={"legacy": True},
        effect=f"P(A | decisive) = 0.5 + {GAP}; power 0.8 planned from a scenario-shaped pilot",
    )


CHECKS: list[Check] = [_check("one"), _check("both")]
