"""Check the planner's closed forms against the simulator (notebook 17, `make calibrate`).

`position_bias_check` plants a judge whose P(A) is 0.5 + δ in `simulate.pairwise`
(clustered items, a judge-correlated item effect, both orders), reads the planner's inputs
(ICC, order correlation, cluster size) from one large pilot draw with `design.pilot`, asks
`design.position_bias_plan` for the items that give the target power, then draws `reps`
benchmarks of that size and counts how often a cluster-robust test (t with G − 1 df)
rejects P(A) = 0.5 (and, at δ = 0, how often it rejects wrongly). One random order per
item is checked by keeping one order of each simulated item at random.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy import optimize
from scipy import stats as sps

from judgelab.analyses.design import pilot, planner
from judgelab.core.stats import rng_for
from judgelab.simulate import pairwise as simpw
from judgelab.simulate.base import Design


def params_for(delta: float, *, accuracy: float = 1.0, item_sd: float = 0.5, icc: float = 0.3):
    """Return `PairwiseParams` whose population P(A) among decisive verdicts is 0.5 + δ."""

    def gap(d: float) -> float:
        p = simpw.PairwiseParams(accuracy=(accuracy,), delta=(d,), item_sd=item_sd)
        return simpw.population(p, icc, n=100_000)["pos_a_rate_decisive"] - 0.5 - delta

    d = 0.0 if delta == 0 else optimize.brentq(gap, -6.0, 6.0, xtol=1e-6)
    return simpw.PairwiseParams(accuracy=(accuracy,), delta=(d,), item_sd=item_sd)


def _picked_a(j: pd.DataFrame) -> pd.DataFrame:
    j = j[j["chosen"].isin(["pos", "neg"])]
    a = ((j["order"] == 0) & (j["chosen"] == "pos")) | ((j["order"] == 1) & (j["chosen"] == "neg"))
    return j.assign(a=a.astype(float))


def cluster_t_rejects(j: pd.DataFrame, *, alpha: float = 0.05) -> bool:
    """Two-sided cluster-robust test of P(A) = 0.5 (ratio estimator, linearised SE, t_{G−1})."""
    g = _picked_a(j).groupby("cluster", sort=False)["a"]
    s, n = g.sum().to_numpy(), g.size().to_numpy(float)
    k = len(n)
    p = s.sum() / n.sum()
    var = k / (k - 1) * float(((s - p * n) ** 2).sum()) / n.sum() ** 2
    crit = sps.t.ppf(1 - alpha / 2, k - 1)
    return bool(abs(p - 0.5) / math.sqrt(var) > crit) if var > 0 else False


def _one_order(j: pd.DataFrame, rng: np.random.Generator) -> pd.DataFrame:
    items = j["item_id"].unique()
    keep = dict(zip(items, rng.integers(0, 2, len(items)), strict=True))
    return j[j["order"].to_numpy() == j["item_id"].map(keep).to_numpy()]


def position_bias_check(
    delta: float = 0.05,
    *,
    power: float = 0.8,
    alpha: float = 0.05,
    per_cluster: int = 5,
    icc: float = 0.3,
    reps: int = 200,
    pilot_clusters: int = 400,
    seed: int = 0,
) -> pd.DataFrame:
    """Planned items vs simulated power and type-I error, for one order and both orders."""
    alt, null = params_for(delta, icc=icc), params_for(0.0, icc=icc)
    rng = rng_for(seed, "design-check", "pilot")
    pilot_sim = simpw.pairwise_benchmark(rng, Design(pilot_clusters, per_cluster, icc=icc), alt)
    figures = pilot.position(pilot_sim.judgments)
    plan = planner.position_bias_plan(delta, pilot=figures, alpha=alpha, power=power)
    rows = []
    for _, row in plan.iterrows():
        both = row["design"].startswith("both")
        n_clusters = max(2, math.ceil(row["n"] / per_cluster))
        design = Design(n_clusters, per_cluster, icc=icc)
        hits = {"alternative": 0, "null": 0}
        for r in range(reps):
            for scenario, params in (("alternative", alt), ("null", null)):
                rng = rng_for(seed, "design-check", row["design"], scenario, r)
                j = simpw.pairwise_benchmark(rng, design, params).judgments
                hits[scenario] += cluster_t_rejects(j if both else _one_order(j, rng), alpha=alpha)
        sim_power, type1 = hits["alternative"] / reps, hits["null"] / reps
        rows.append(
            {
                "design": row["design"],
                "n_items": n_clusters * per_cluster,
                "n_clusters": n_clusters,
                "planned_power": power,
                "simulated_power": sim_power,
                "power_mc_se": math.sqrt(sim_power * (1 - sim_power) / reps),
                "type1": type1,
                "type1_mc_se": math.sqrt(max(type1 * (1 - type1), alpha * (1 - alpha)) / reps),
                "reps": reps,
                "pilot_icc": figures["icc"],
                "pilot_order_corr": figures["order_corr"],
                "pilot_p_a": figures["p_a"],
            }
        )
    return pd.DataFrame(rows)


def _ratio_ci(y: pd.Series, cluster: pd.Series, level: float) -> tuple[float, float]:
    """Return (estimate, half-width) of a mean by the cluster-robust linearised SE."""
    g = y.groupby(cluster.to_numpy(), sort=False)
    s, n = g.sum().to_numpy(float), g.size().to_numpy(float)
    k, p = len(n), s.sum() / n.sum()
    se = math.sqrt(k / (k - 1) * float(((s - p * n) ** 2).sum())) / n.sum()
    return p, sps.norm.ppf(0.5 + level / 2) * se


def rate_width_check(
    width: float = 0.1,
    *,
    per_cluster: int = 5,
    icc: float = 0.3,
    level: float = 0.95,
    reps: int = 200,
    pilot_clusters: int = 400,
    seed: int = 0,
) -> pd.DataFrame:
    """Planned items for a first-order accuracy interval of `width` vs simulated width.

    The judge's order-0 accuracy (`correct`, one judgment per item) is planned from a pilot
    (`design.pilot.rate`), then `reps` benchmarks of the planned size give the mean full
    width of the cluster-robust interval and its coverage of the planted accuracy.
    """
    params = simpw.PairwiseParams(accuracy=(1.0,), item_sd=0.5)
    truth = simpw.population(params, icc)["a1"]
    rng = rng_for(seed, "design-check", "rate-pilot")
    sim = simpw.pairwise_benchmark(rng, Design(pilot_clusters, per_cluster, icc=icc), params)
    figures = pilot.rate(sim.judgments[sim.judgments["order"] == 0])
    plan = planner.rate_plan([width], pilot=figures, level=level)
    rows = []
    for _, row in plan.iterrows():
        n_clusters = max(2, math.ceil(row["n"] / per_cluster))
        widths, covered = [], 0
        for r in range(reps):
            rng = rng_for(seed, "design-check", "rate", row["design"], r)
            j = simpw.pairwise_benchmark(rng, Design(n_clusters, per_cluster, icc=icc), params)
            j1 = j.judgments[j.judgments["order"] == 0]
            p, half = _ratio_ci(j1["correct"].astype(float), j1["cluster"], level)
            widths.append(2 * half)
            covered += abs(p - truth) <= half
        rows.append(
            {
                "design": row["design"],
                "n_items": n_clusters * per_cluster,
                "n_clusters": n_clusters,
                "planned_width": width,
                "simulated_width": float(np.mean(widths)),
                "width_sd": float(np.std(widths)),
                "coverage": covered / reps,
                "reps": reps,
                "pilot_icc": figures["icc"],
                "pilot_p": figures["p"],
            }
        )
    return pd.DataFrame(rows)


__all__ = ["cluster_t_rejects", "params_for", "position_bias_check", "rate_width_check"]
