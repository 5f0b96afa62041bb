"""Planted-truth position-bias studies: pilots and studies for checking study plans.

`position_study(rng, design, params)` draws a pairwise study shaped like `design` (its
clusters, unequal sizes and ICC) judged by one judge in both orders (or one random order per
item). The latent model, for item i in cluster c and order o (order 0 shows the better
response, `pos`, as A):

- η_i = `accuracy` + u_c + v_i: u_c the cluster effect (σ from `design.icc`, on the logit
  scale), v_i ~ N(0, `item_sd`²) the item's difficulty;
- the judge's position bias varies by cluster: δ_c = `delta` + N(0, `design.effect_sd`²)
  (`base.cluster_slopes`);
- the verdict is `tie` with probability `tie_rate`, else `pos` with probability σ(η + δ_c)
  in order 0 and σ(η − δ_c) in order 1;
- the output is invalid with probability σ(logit(q) + `length_effect` · z_i), q =
  `invalid_rate` where the verdict is `pos` and `invalid_if_wrong` where it is not, z_i the
  standardised log length ratio of the pair (heavy-tailed: `base.heavy_tailed`): missing
  not at random, tied to correctness and to length.

"Picked A" is `pos` in order 0 and `neg` in order 1. The truth `p_a` is P(A | decisive):
E[A verdicts] / E[decisive valid verdicts], from the closed-form verdict probabilities given
(η, δ_c, z) averaged over a large fixed-seed draw of them (`base.expectation`'s convention),
never from the sample. With `delta` 0 it is ½ by symmetry (order 1 mirrors order 0 with
−δ_c, and δ_c is symmetric around 0), whatever the ICC, ties or invalid outputs.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache

import numpy as np
import pandas as pd

from judgelab.simulate import base
from judgelab.simulate.base import Design, Simulation, sigmoid

JUDGE = "sim.position"
#: Designs of a study: both orders of every item, or one order drawn at random per item.
ORDERS = ("both", "one")


@dataclass(frozen=True)
class PositionParams:
    """What a simulated position-bias study plants (logit scale)."""

    delta: float = 0.0  # mean position bias over clusters, > 0 favours A
    accuracy: float = 1.0  # logit of choosing the better response
    item_sd: float = 0.5  # item difficulty SD
    tie_rate: float = 0.1
    invalid_rate: float = 0.05  # where the verdict is pos (right)
    invalid_if_wrong: float = 0.15  # where it is neg or tie (missing not at random)
    length_effect: float = 0.5  # invalid log-odds per SD of the log length ratio


def _logit(p: float) -> float:
    return float(np.log(p / (1.0 - p)))


def _lengths(rng: np.random.Generator, n: int) -> np.ndarray:
    """Standardised log length ratio of n pairs (two heavy-tailed lengths each)."""
    r = np.log(base.heavy_tailed(rng, n, kind="t") / base.heavy_tailed(rng, n, kind="t"))
    return r / 0.55  # the log ratio of two such lengths has SD ≈ 0.55


def _probs(eta: np.ndarray, d: np.ndarray, z: np.ndarray, p: PositionParams) -> tuple:
    """Return (E[A], E[decisive]) per item summed over both orders (closed form)."""
    qr = sigmoid(_logit(p.invalid_rate) + p.length_effect * z)
    qw = sigmoid(_logit(p.invalid_if_wrong) + p.length_effect * z)
    keep = 1.0 - p.tie_rate
    p0, p1 = sigmoid(eta + d), sigmoid(eta - d)
    a = keep * (p0 * (1 - qr) + (1 - p1) * (1 - qw))
    dec = keep * ((p0 + p1) * (1 - qr) + (2 - p0 - p1) * (1 - qw))
    return a, dec


@lru_cache(maxsize=256)
def truth(params: PositionParams, icc: float, effect_sd: float) -> float:
    """Return P(A | decisive) of `params` in clusters of `icc` with slopes SD `effect_sd`."""

    def draw(rng: np.random.Generator, n: int) -> np.ndarray:
        eta = params.accuracy + rng.normal(0.0, base.cluster_sd(icc), n)
        eta = eta + rng.normal(0.0, params.item_sd, n)
        d = params.delta + rng.normal(0.0, effect_sd, n)
        a, dec = _probs(eta, d, _lengths(rng, n), params)
        return np.stack([a, dec])

    both = draw(np.random.default_rng(12345), 400_000)
    a, dec = both.mean(axis=1)
    return float(a / dec)


@lru_cache(maxsize=256)
def delta_for(gap: float, params: PositionParams, icc: float, effect_sd: float) -> float:
    """Return the logit bias `delta` whose P(A | decisive) is ½ + `gap` (bisection)."""
    if gap == 0:
        return 0.0
    lo, hi = (0.0, 4.0) if gap > 0 else (-4.0, 0.0)
    for _ in range(40):
        mid = 0.5 * (lo + hi)
        if truth(replace(params, delta=mid), icc, effect_sd) - 0.5 < gap:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def position_study(
    rng: np.random.Generator,
    design: Design,
    params: PositionParams,
    *,
    orders: str = "both",
    tables: bool = True,
) -> Simulation:
    """Return one simulated study: every item judged in both orders, or in one at random.

    Args:
        rng: The only source of randomness.
        design: Clusters, sizes (unequal when `size_spread` > 0), ICC, `effect_sd`.
        params: The planted judge.
        orders: `both` or `one` (`ORDERS`).
        tables: Judgments in the library's schema (False: a plain frame of the columns a
            position analysis reads, for calibration speed).

    Returns:
        A `Simulation` with `truth["p_a"]` (P(A | decisive)) and `params["cluster_sizes"]`.
    """
    if orders not in ORDERS:
        raise ValueError(f"unknown orders {orders!r}; known: {list(ORDERS)}")
    design = design.realise(rng)
    n = design.n_items
    eta = params.accuracy + base.cluster_effects(rng, design) + rng.normal(0, params.item_sd, n)
    d = base.cluster_slopes(rng, design, params.delta)
    z = _lengths(rng, n)
    item = np.arange(n)
    if orders == "both":
        item, order = np.repeat(item, 2), np.tile([0, 1], n)
    else:
        order = rng.integers(0, 2, n)
    m = len(item)
    p_pos = sigmoid(eta[item] + np.where(order == 0, d[item], -d[item]))
    tie = rng.random(m) < params.tie_rate
    pos = ~tie & (rng.random(m) < p_pos)
    chosen = np.where(tie, "tie", np.where(pos, "pos", "neg")).astype(object)
    q = np.where(pos, _logit(params.invalid_rate), _logit(params.invalid_if_wrong))
    valid = rng.random(m) >= sigmoid(q + params.length_effect * z[item])
    ids, clusters = base.item_ids(design)
    cols = {
        "benchmark": design.benchmark,
        "split": design.split,
        "item_id": ids[item],
        "judge": JUDGE,
        "order": order,
        "verdict": np.where(valid, chosen, None),
        "chosen": np.where(valid, chosen, None),
        "valid": valid,
        "cluster": clusters[item],
    }
    if tables:
        judgments = base.judgments_table(cols)
        items = base.items_table(design, "pairwise", {"gold": "pos"})
    else:
        judgments = pd.DataFrame(cols)
        items = pd.DataFrame({"item_id": ids, "cluster": clusters})
    value = truth(params, design.icc, design.effect_sd)
    sizes = design.cluster_sizes.tolist()
    return Simulation(items, judgments, {"p_a": value}, {"orders": orders, "cluster_sizes": sizes})


__all__ = ["JUDGE", "ORDERS", "PositionParams", "delta_for", "position_study", "truth"]
