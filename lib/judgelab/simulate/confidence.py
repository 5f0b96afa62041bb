"""Planted-truth judge confidence: a judge's probability against 0/1 human labels.

`confidence_sim`: item i of the design gets a judge logit x_i = `offset` + u_c + e_i (u_c the
cluster's effect of the design's ICC, e_i ~ N(0, `item_sd`²)); the judge says p_i = σ(x_i) and
the human label is Y_i ~ Bernoulli(σ(b_c · x_i)): a slope b below 1 makes the judge
over-confident. The slope varies by cluster in the varying scenarios (b_c = `slope` ·
exp(effect_sd · z_c / 2)). Both hypotheses plant an over-confident judge (ECE 0, a calibrated
judge, sits on its parameter's boundary): the null mildly (slope 0.8), the alternative more
(0.6).

The truths are super-population values from a large independent draw of the same model
(`confidence_truths`, not the estimator's algebra): the Brier score E[p² − 2pq + q] and the
binned ECE Σ_b P(b) |E[p | b] − E[q | b]| with q = σ(b_c · x), over `bins` equal-width bins.
Table `extra["labels"]`: `cluster`, `judge_label` (p), `human_label` (0/1).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import pandas as pd

from judgelab.simulate import base
from judgelab.simulate.base import Design, Simulation, sigmoid

#: Slope of the human logit on the judge's, per hypothesis (below 1: over-confident).
SLOPES = {"null": 0.8, "alternative": 0.6}


def _draw(rng, design: Design, slope: float, offset: float, item_sd: float):
    cl = base.cluster_index(design)
    x = offset + base.cluster_effects(rng, design) + rng.normal(0.0, item_sd, design.n_items)
    z = rng.standard_normal(design.n_clusters)[cl]
    b = slope * np.exp(design.effect_sd * z / 2.0)
    return cl, sigmoid(x), sigmoid(b * x)


@lru_cache(maxsize=64)
def confidence_truths(
    icc: float, effect_sd: float, slope: float, offset: float, item_sd: float, bins: int = 10
) -> dict[str, float]:
    """Brier score and binned ECE of the population, from 400,000 items in 20,000 clusters."""
    big = Design(n_clusters=20_000, per_cluster=20, icc=icc, effect_sd=effect_sd)
    _, p, q = _draw(np.random.default_rng(20261128), big, slope, offset, item_sd)
    b = np.minimum((p * bins).astype(np.int64), bins - 1)
    count = np.bincount(b, minlength=bins).astype(np.float64)
    gap = np.abs(np.bincount(b, p, bins) - np.bincount(b, q, bins))
    return {"brier": float(np.mean(p**2 - 2 * p * q + q)), "ece": float(gap.sum() / count.sum())}


def confidence_sim(
    rng: np.random.Generator,
    *,
    design: Design,
    slope: float,
    offset: float = 0.3,
    item_sd: float = 1.2,
    bins: int = 10,
) -> Simulation:
    """Draw one benchmark: the judge's probability and the human label of every item."""
    d = design.realise(rng)
    cl, p, q = _draw(rng, d, slope, offset, item_sd)
    y = (rng.random(d.n_items) < q).astype(float)
    labels = pd.DataFrame({"cluster": cl, "judge_label": p, "human_label": y})
    truth = confidence_truths(d.icc, d.effect_sd, slope, offset, item_sd, bins)
    params = {"slope": slope, "offset": offset, "item_sd": item_sd, "bins": bins,
              "icc": d.icc, "n_clusters": d.n_clusters}  # fmt: skip
    empty = pd.DataFrame()
    return Simulation(empty, empty, dict(truth), params, extra={"labels": labels})


__all__ = ["SLOPES", "confidence_sim", "confidence_truths"]
