"""Planted-truth judges beside human annotators (notebook 19, `stability.human_gap`).

`humans_sim`: pairwise items in clusters, each with a true slot (`response1`, `response2` or
`tie`); every rater — `annotators` humans and one judge — gives the true slot with probability
σ(accuracy + s_rater,cluster − d_item) and otherwise one of the two other slots at random.
d_item = u_cluster + w_item (the design's intra-cluster correlation) makes some items hard for
everyone; s ~ N(0, `design.effect_sd`²) per rater and cluster makes each rater's skill vary by
topic (annotators too, so that under the null the judge is one more annotator). The judge's
accuracy is `judge_shift` logits below the annotators' (0 under the null).

Truths are population values by one large independent draw, never by the estimator's formula:
`judge_human` = P(the judge gives an annotator's slot), `human_human` = P(two annotators agree),
`human_gap` their difference. The judge and the compared annotator reuse the draws of two
annotators, so with `judge_shift` = 0 the gap is 0 exactly.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import pandas as pd

from judgelab.simulate import base
from judgelab.simulate.base import Design, Simulation, sigmoid

SLOTS = ("response1", "response2", "tie")
#: Probability of each true slot.
SLOT_P = (0.45, 0.45, 0.10)
_DEFAULT = Design(n_clusters=50, per_cluster=5, icc=0.3)
#: Columns of the raters table (as `analyses.stability.with_humans` returns it).
_COLUMNS = ("benchmark", "split", "item_id", "order", "judge", "rater_kind", "sample", "valid",
            "slot", "cluster")  # fmt: skip


def _labels(rng: np.random.Generator, truth: np.ndarray, right: np.ndarray) -> np.ndarray:
    """The true slot where `right`, else one of the two other slots at random."""
    other = (truth + rng.integers(1, 3, len(truth))) % 3
    return np.where(right, truth, other)


def humans_sim(
    rng: np.random.Generator,
    *,
    design: Design | None = None,
    annotators: int = 3,
    accuracy: float = 1.5,
    judge_shift: float = 0.0,
    item_sd: float = 0.8,
) -> Simulation:
    """Return a raters table of `annotators` humans and judge `J` on the same items.

    Args:
        rng: The only source of randomness.
        design: Clusters (sizes, ICC of item difficulty) and `effect_sd` (each rater's skill
            varying by cluster).
        annotators: Human annotators (two or more).
        accuracy: Logit of a rater's P(true slot) on an item of median difficulty.
        judge_shift: How many logits the judge's accuracy lies below the annotators'.
        item_sd: SD of the item difficulty within a cluster (logit scale).

    Returns:
        A `Simulation` whose `judgments` is the raters table (`analyses.stability.with_humans`
        columns) and whose truth holds `judge_human`, `human_human` and `human_gap`.
    """
    design = (design or _DEFAULT).realise(rng)
    n, cl = design.n_items, base.cluster_index(design)
    difficulty = base.cluster_effects(rng, design) + rng.normal(0.0, item_sd, n)
    truth = rng.choice(3, n, p=SLOT_P)
    items = base.items_table(design, "pairwise", {"question": "q"})
    raters = [(f"annotator{k + 1}", "annotator", 0.0) for k in range(annotators)]
    parts = []
    for name, kind, shift in [*raters, ("J", "judge", judge_shift)]:
        skill = rng.normal(0.0, design.effect_sd, design.n_clusters)[cl] if design.effect_sd else 0
        right = rng.random(n) < sigmoid(accuracy - shift + skill - difficulty)
        slot = np.asarray(SLOTS, dtype=object)[_labels(rng, truth, right)]
        parts.append(
            pd.DataFrame(
                {
                    "benchmark": items["benchmark"],
                    "split": items["split"],
                    "item_id": items["item_id"],
                    "order": 0,
                    "judge": name,
                    "rater_kind": kind,
                    "sample": 0,
                    "valid": True,
                    "slot": slot,
                    "cluster": items["cluster"],
                }
            )  # fmt: skip
        )
    table = pd.concat(parts, ignore_index=True)[list(_COLUMNS)]
    sd = float(np.hypot(base.cluster_sd(design.icc), item_sd))
    out = human_truths(accuracy, judge_shift, sd, design.effect_sd)
    params = {"annotators": annotators, "accuracy": accuracy, "judge_shift": judge_shift}
    return Simulation(items, table, out, params)


@lru_cache(maxsize=64)
def human_truths(
    accuracy: float, judge_shift: float, difficulty_sd: float, skill_sd: float
) -> dict[str, float]:
    """Return P(judge gives an annotator's slot), P(two annotators agree) and their gap."""
    r = np.random.default_rng(12345)
    m = 400_000
    d = r.normal(0.0, difficulty_sd, m)
    s1, s2 = r.normal(0.0, skill_sd, m), r.normal(0.0, skill_sd, m)

    def agree(q1: np.ndarray, q2: np.ndarray) -> float:
        """P(same slot): both right, or both wrong and on the same one of two other slots."""
        return float(np.mean(q1 * q2 + (1 - q1) * (1 - q2) / 2))

    human = agree(sigmoid(accuracy + s1 - d), sigmoid(accuracy + s2 - d))
    judge = agree(sigmoid(accuracy - judge_shift + s1 - d), sigmoid(accuracy + s2 - d))
    return {"judge_human": judge, "human_human": human, "human_gap": judge - human}


__all__ = ["SLOTS", "human_truths", "humans_sim"]
