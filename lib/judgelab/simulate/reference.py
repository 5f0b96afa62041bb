"""Planted-truth reference conditions (notebook 06): `reference_sim` and its truths.

`reference_sim`: pairwise items in clusters of unequal size judged in both orders under several
reference conditions; P(correct in an order) = σ(base + δ_condition + u_cluster + v_item ±
position), the human-reference effect varying by cluster (split ± symmetrically between
reference=human and reference=none, so a zero mean effect is an exact null), invalid verdicts
more frequent on wrong verdicts; each condition's consistent accuracy and their differences
by expectation.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import pandas as pd

from judgelab.simulate import base
from judgelab.simulate.base import Design, Simulation, sigmoid

CONDITIONS = ("reference=none", "reference=human", "reference=self")


def reference_sim(
    rng: np.random.Generator,
    *,
    design: Design | None = None,
    effects: tuple[float, ...] = (0.0, 0.0, 0.0),
    base_logit: float = 1.0,
    item_sd: float = 0.5,
    position: float = 0.4,
    effect_sd: float | None = None,
    invalid_rate: float = 0.02,
    invalid_wrong_rate: float = 0.1,
) -> Simulation:
    """Return pairwise items judged in both orders under each of `CONDITIONS`.

    Args:
        rng: The only source of randomness.
        design: Clusters (sources; unequal sizes when `size_spread` > 0), items and the ICC of
            the judge's latent accuracy; realised here.
        effects: Mean logit effect of each condition (`CONDITIONS` order) on accuracy.
        base_logit: Accuracy logit of a median item.
        item_sd: SD of an item's own latent effect (shared by its conditions: pairing).
        position: Logit bonus when the better response is shown first (minus when second).
        effect_sd: SD over clusters of the human − none contrast (None: `design.effect_sd`),
            split symmetrically between the two conditions (+v/2, −v/2).
        invalid_rate: Share of invalid verdicts where the verdict would be right.
        invalid_wrong_rate: Share where it would be wrong (missing not at random; an invalid
            verdict is never correct).

    Returns:
        A `Simulation` with judge "ref.judge", conditions `CONDITIONS`, judgments carrying
        `cluster`; truth `ca_<condition>` and `ca_diff_<i>_<j>` (condition i − j, by index).
    """
    design = (design or Design(n_clusters=50, per_cluster=5, icc=0.3)).realise(rng)
    sd_v = design.effect_sd if effect_sd is None else effect_sd
    n = design.n_items
    v = rng.normal(0.0, sd_v, design.n_clusters)[base.cluster_index(design)]
    eta = base_logit + base.cluster_effects(rng, design) + rng.normal(0.0, item_sd, n)
    split = (-0.5 * v, 0.5 * v, np.zeros(n))  # the human − none contrast varies by cluster
    items = base.items_table(
        design,
        "pairwise",
        {"question": "q", "response_pos": "better", "response_neg": "worse", "gold": "pos"},
    )
    parts = []
    for c, delta, vary in zip(CONDITIONS, effects, split, strict=True):
        for order, sign in ((0, 1.0), (1, -1.0)):
            ok = rng.random(n) < sigmoid(eta + delta + vary + sign * position)
            valid = rng.random(n) >= np.where(ok, invalid_rate, invalid_wrong_rate)
            chosen = np.where(ok, "pos", "neg").astype(object)
            chosen[~valid] = None
            parts.append(
                pd.DataFrame(
                    {
                        "item_id": items["item_id"].to_numpy(),
                        "condition": c,
                        "order": order,
                        "valid": valid,
                        "chosen": chosen,
                        "correct": ok & valid,
                        "verdict": chosen,
                    }  # fmt: skip
                )
            )
    frame = pd.concat(parts, ignore_index=True)
    judgments = base.judgments_table(
        {
            "benchmark": design.benchmark,
            "split": design.split,
            "judge": "ref.judge",
            "sample": 0,
            "cluster": np.tile(items["cluster"].to_numpy(), 2 * len(CONDITIONS)),
            **{k: frame[k].to_numpy() for k in frame.columns},
        }  # fmt: skip
    )
    truth = reference_truths(
        tuple(effects), base_logit, item_sd, position, invalid_rate, design.icc, sd_v
    )
    params = {"effects": effects, "base_logit": base_logit, "position": position,
              "effect_sd": sd_v}  # fmt: skip
    return Simulation(items, judgments, truth, params)


@lru_cache(maxsize=64)
def reference_truths(
    effects: tuple[float, ...],
    base_logit: float,
    item_sd: float,
    position: float,
    invalid_rate: float,
    icc: float,
    effect_sd: float = 0.0,
) -> dict[str, float]:
    """Return each condition's consistent accuracy and every pairwise difference.

    CA = P(right and valid in both orders) = (1 − invalid_rate)² σ(η + p) σ(η − p), averaged
    over η (cluster, item and the cluster-varying contrast, the latter mirrored: exact null).
    """
    sd = np.hypot(base.cluster_sd(icc), item_sd)
    split = (-0.5, 0.5, 0.0)
    out = {}
    for i, delta in enumerate(effects):

        def ca(r: np.random.Generator, k: int, delta: float = delta, i: int = i) -> np.ndarray:
            eta = np.tile(base_logit + delta + r.normal(0.0, sd, k), 2)
            v = r.normal(0.0, effect_sd, k)
            eta = eta + split[i] * np.concatenate([v, -v])
            return (1.0 - invalid_rate) ** 2 * sigmoid(eta + position) * sigmoid(eta - position)

        out[f"ca_{CONDITIONS[i]}"] = base.expectation(ca)
    for i in range(len(effects)):
        for j in range(len(effects)):
            if i != j:
                out[f"ca_diff_{i}_{j}"] = out[f"ca_{CONDITIONS[i]}"] - out[f"ca_{CONDITIONS[j]}"]
    return out


__all__ = ["CONDITIONS", "reference_sim", "reference_truths"]
