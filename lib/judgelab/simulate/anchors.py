"""Planted-truth anchor sensitivity (notebook 19, `stability.anchor_sensitivity`).

`anchor_sim`: systems compared head to head with two baselines (`A1`, `A2`) on every item
of clustered questions. The judge prefers system s over anchor a with probability
σ(β_s − β_a + γ_{s,a} + η_{i,a} + w_{c,s}): β a system's strength, γ a matchup effect (0 for
every pair under the null, where the ranking cannot depend on the anchor), η_{i,a} how hard
item i is for anchor a (cluster effect with the design's ICC plus item noise), and w_{c,s} a
system's strength varying by cluster (SD `design.effect_sd`). Under the alternative one
system does much better against `A2` than its strength says, so the two anchors rank the
systems differently.

Truths are population win rates by one large independent draw each (`base.expectation`),
and Kendall's τ-b between the two anchors' population rankings — never the estimator's
formula.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import pandas as pd
from scipy import stats as sps

from judgelab.simulate import base
from judgelab.simulate.base import Design, Simulation, sigmoid

#: System strengths (logit) of `anchor_sim`, and the two anchors' strengths.
STRENGTHS = (0.8, 0.5, 0.2, -0.1, -0.4)
ANCHORS = {"A1": 0.0, "A2": 0.3}
#: Matchup effects against `A2` under the alternative (s3 jumps above s2: τ = 0.8).
MATCHUP_ALT = (0.0, 0.0, 0.0, 0.45, 0.0)
_DEFAULT = Design(n_clusters=50, per_cluster=5, icc=0.3)
_COLUMNS = ("rater", "system", "opponent", "benchmark", "split", "item_id", "cluster", "value")


def anchor_sim(
    rng: np.random.Generator,
    *,
    design: Design | None = None,
    strengths: tuple[float, ...] = STRENGTHS,
    matchup: tuple[float, ...] = (0.0,) * len(STRENGTHS),
    item_sd: float = 0.8,
) -> Simulation:
    """Return a wins table of judge `J`: every system against `A1` and `A2` on every item.

    Returns:
        A `Simulation` whose `judgments` is the wins table (`anchors.WIN_COLUMNS`, both
        directions of each comparison) and whose truth holds `tau` (τ-b between the rankings
        under `A1` and `A2`) and the population win rates `win_<anchor>_s<k>`.
    """
    design = (design or _DEFAULT).realise(rng)
    n, ci = design.n_items, base.cluster_index(design)
    items = base.items_table(design, "pairwise", {"question": "q"})
    sd_w = design.effect_sd
    parts = []
    for anchor, strength in ANCHORS.items():
        hard = base.cluster_effects(rng, design) + rng.normal(0.0, item_sd, n)
        gamma = matchup if anchor == "A2" else (0.0,) * len(strengths)
        for k, beta in enumerate(strengths):
            w = rng.normal(0.0, sd_w, design.n_clusters)[ci] if sd_w else 0.0
            won = rng.random(n) < sigmoid(beta - strength + gamma[k] + hard + w)
            frame = pd.DataFrame({"rater": "J", "system": f"s{k}", "opponent": anchor,
                                  "value": won.astype(float)})  # fmt: skip
            parts.append(pd.concat([items[["benchmark", "split", "item_id", "cluster"]], frame],
                                   axis=1))  # fmt: skip
    wins = pd.concat(parts, ignore_index=True)
    back = wins.rename(columns={"system": "opponent", "opponent": "system"})
    back["value"] = 1.0 - back["value"]
    wins = pd.concat([wins, back], ignore_index=True)[list(_COLUMNS)]
    sd = float(np.sqrt(base.cluster_sd(design.icc) ** 2 + item_sd**2 + sd_w**2))
    truth = anchor_truths(tuple(strengths), tuple(matchup), sd)
    return Simulation(items, wins, truth, {"strengths": strengths, "matchup": matchup})


@lru_cache(maxsize=64)
def anchor_truths(
    strengths: tuple[float, ...], matchup: tuple[float, ...], sd: float
) -> dict[str, float]:
    """Return each system's population win rate against each anchor and the anchors' τ-b."""
    out: dict[str, float] = {}
    rates = {}
    for anchor, strength in ANCHORS.items():
        gamma = matchup if anchor == "A2" else (0.0,) * len(strengths)
        rates[anchor] = np.array(
            [
                base.expectation(lambda r, m, x=b - strength + g: sigmoid(x + r.normal(0, sd, m)))
                for b, g in zip(strengths, gamma, strict=True)
            ]
        )
        out |= {f"win_{anchor}_s{k}": float(v) for k, v in enumerate(rates[anchor])}
    out["tau"] = float(sps.kendalltau(rates["A1"], rates["A2"]).statistic)
    return out


__all__ = ["ANCHORS", "MATCHUP_ALT", "STRENGTHS", "anchor_sim", "anchor_truths"]
