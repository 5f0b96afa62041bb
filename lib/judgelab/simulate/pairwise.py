"""Planted-truth pairwise benchmarks: judges in both orders, position bias, ties, invalid outputs.

`pairwise_benchmark(rng, design, params)` draws a ContextualJudgeBench-shaped benchmark:
items (`response_pos` better than `response_neg`, heavy-tailed lengths via `base.words`)
in clusters of `design.per_cluster`, judged by every judge of `params` in both orders
(order 0 shows `response_pos` as A) and `params.samples` times.

The latent model, per judge j, item i in cluster c, order o and sample s:

- η_jic = `accuracy[j]` + u_jc + v_i: u_jc is the judge's cluster effect (N(0, σ_c²) with
  σ_c from `design.icc`; a share `judge_corr` of its variance is common to all judges, so a
  hard source is hard for every judge), v_i ~ N(0, `item_sd`²) a judge-correlated item
  effect (shared by all judges and orders);
- the verdict is `tie` with probability `tie_rate[j]`, else `pos` with probability
  σ(η + δ_j) in order 0 and σ(η − δ_j) in order 1 (δ_j = `delta[j]`: position bias on the
  logit scale, > 0 favours position A), independently over orders and samples given η;
- the output is invalid with probability `invalid_rate[j]` (missing at random) or, where
  `invalid_if_wrong` is set, with that probability when the verdict is not `pos` (missing
  not at random, `base.missing_mask`).

Truths (`population`) come from the planted parameters: the closed-form verdict
probabilities given η, averaged over a large fixed-seed draw of η (`base.expectation`'s
convention) — the ratio estimands as ratios of expectations: `a1`, `a2`, `ca`, `oa`, `cons`
(repo invalid policy), `pos_a_rate` (A-verdicts over all valid verdicts, spec 000 §4.7),
`pos_a_rate_decisive` (over valid non-tie verdicts), `flip_rate`, `share_biased_first`,
`share_biased_second`, per judge as `<metric>:<judge>` and for the first judge unprefixed,
and `ca_diff` / `a1_diff` (first judge − second judge).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import pandas as pd

from judgelab.core import clusters
from judgelab.simulate import base
from judgelab.simulate.base import Design, Simulation

__all__ = ["TRUTH_METRICS", "PairwiseParams", "pairwise_benchmark", "population", "stack_splits"]

TRUTH_METRICS = (
    "a1",
    "a2",
    "ca",
    "oa",
    "cons",
    "pos_a_rate",
    "pos_a_rate_decisive",
    "flip_rate",
    "share_biased_first",
    "share_biased_second",
)


@dataclass(frozen=True)
class PairwiseParams:
    """What a simulated pairwise benchmark plants (per-judge tuples, one entry per judge)."""

    judges: tuple[str, ...] = ("J1",)
    accuracy: tuple[float, ...] = (1.0,)  # latent logit of choosing pos (mean over items)
    delta: tuple[float, ...] = (0.0,)  # position bias (logit), > 0: favours position A
    tie_rate: tuple[float, ...] = (0.0,)
    invalid_rate: tuple[float, ...] = (0.0,)
    invalid_if_wrong: tuple[float | None, ...] = (None,)  # MNAR: invalid rate when not pos
    item_sd: float = 0.0  # judge-correlated item effect (shared by judges and orders)
    judge_corr: float = 0.5  # share of the cluster-effect variance common to all judges
    samples: int = 1
    length_median: tuple[float, float] = (180.0, 150.0)  # words of response_pos, response_neg

    def __post_init__(self) -> None:
        k = len(self.judges)
        for name in ("accuracy", "delta", "tie_rate", "invalid_rate", "invalid_if_wrong"):
            if len(getattr(self, name)) != k:
                raise ValueError(
                    f"{name} needs one value per judge ({k}), got {getattr(self, name)}"
                )
        if self.samples < 1 or not 0.0 <= self.judge_corr <= 1.0 or self.item_sd < 0:
            raise ValueError(f"bad samples/judge_corr/item_sd in {self}")


def verdict_probs(eta: np.ndarray, delta: float, tie: float, inv: float, inv_wrong: float | None):
    """Return (P(valid pos), P(valid neg), P(valid tie), P(invalid)) per order (2 × n each)."""
    out = []
    for sign in (1.0, -1.0):
        pos = (1.0 - tie) * base.sigmoid(eta + sign * delta)
        neg = (1.0 - tie) - pos
        r_wrong = inv if inv_wrong is None else inv_wrong
        out.append((pos * (1 - inv), neg * (1 - r_wrong), tie * (1 - r_wrong)))
    p = np.array([o[0] for o in out])
    q = np.array([o[1] for o in out])
    t = np.array([np.broadcast_to(o[2], np.shape(o[0])) for o in out])
    return p, q, t, 1.0 - p - q - t


def _judge_truth(eta: np.ndarray, params: PairwiseParams, j: int) -> dict[str, float]:
    p, q, t, i = verdict_probs(
        eta,
        params.delta[j],
        params.tie_rate[j],
        params.invalid_rate[j],
        params.invalid_if_wrong[j],
    )
    both_valid = (1 - i[0]) * (1 - i[1])
    same_valid = p[0] * p[1] + q[0] * q[1] + t[0] * t[1]
    m = {
        k: float(np.mean(v))
        for k, v in {
            "a1": p[0],
            "a2": p[1],
            "ca": p[0] * p[1],
            "cons": same_valid + i[0] * i[1],
            "picks_a": p[0] + q[1],
            "valid": 2 - i[0] - i[1],
            "decisive": p[0] + q[0] + p[1] + q[1],
            "flip": both_valid - same_valid,
            "both_valid": both_valid,
            "biased_first": p[0] * q[1],
            "biased_second": q[0] * p[1],
        }.items()
    }
    return {
        "a1": m["a1"],
        "a2": m["a2"],
        "ca": m["ca"],
        "oa": m["a1"] + m["a2"] - m["ca"],
        "cons": m["cons"],
        "pos_a_rate": m["picks_a"] / m["valid"],
        "pos_a_rate_decisive": m["picks_a"] / m["decisive"],
        "flip_rate": m["flip"] / m["both_valid"],
        "share_biased_first": m["biased_first"],
        "share_biased_second": m["biased_second"],
    }


@lru_cache(maxsize=256)
def population(params: PairwiseParams, icc: float, n: int = 400_000) -> dict[str, float]:
    """Return the population truths of `params` at latent intra-cluster correlation `icc`.

    Each judge's η marginalises over its cluster and item effects (N(0, σ_c² + item_sd²)),
    one fixed-seed draw (seed 12345) shared by all parameter sets.
    """
    z = np.random.default_rng(12345).standard_normal(n)
    sd = float(np.sqrt(base.cluster_sd(icc) ** 2 + params.item_sd**2))
    truth: dict[str, float] = {}
    for j, judge in enumerate(params.judges):
        per = _judge_truth(params.accuracy[j] + sd * z, params, j)
        truth.update({f"{k}:{judge}": v for k, v in per.items()})
        if j == 0:
            truth.update(per)
    if len(params.judges) >= 2:
        a, b = params.judges[:2]
        truth["ca_diff"] = truth[f"ca:{a}"] - truth[f"ca:{b}"]
        truth["a1_diff"] = truth[f"a1:{a}"] - truth[f"a1:{b}"]
    return truth


def _latent(rng: np.random.Generator, design: Design, params: PairwiseParams) -> np.ndarray:
    """Return η per judge × item (k × n)."""
    sd = base.cluster_sd(design.icc)
    common = rng.normal(0.0, sd, design.n_clusters)
    own = rng.normal(0.0, sd, (len(params.judges), design.n_clusters))
    u = np.sqrt(params.judge_corr) * common + np.sqrt(1 - params.judge_corr) * own
    v = rng.normal(0.0, params.item_sd, design.n_items) if params.item_sd > 0 else 0.0
    acc = np.asarray(params.accuracy, dtype=float)[:, None]
    return acc + u[:, base.cluster_index(design)] + v


def _items(rng: np.random.Generator, design: Design, params: PairwiseParams) -> pd.DataFrame:
    n = design.n_items
    lp = base.heavy_tailed(rng, n, median=params.length_median[0])
    ln = base.heavy_tailed(rng, n, median=params.length_median[1])
    return base.items_table(
        design,
        "pairwise",
        {
            "question": "Which response answers better?",
            "response_pos": [base.words(int(k), "p") for k in lp],
            "response_neg": [base.words(int(k), "n") for k in ln],
            "gold": "pos",
        },
    )


def _verdicts(rng: np.random.Generator, eta: np.ndarray, params: PairwiseParams, j: int):
    """Return the chosen code (pos/neg/tie/None) per order × sample × item for judge j."""
    n = eta.shape[0]
    shape = (2, params.samples, n)
    sign = np.array([1.0, -1.0])[:, None, None]
    pos = rng.random(shape) < base.sigmoid(eta[None, None, :] + sign * params.delta[j])
    tie = rng.random(shape) < params.tie_rate[j]
    chosen = np.where(tie, "tie", np.where(pos, "pos", "neg")).astype(object)
    bad = base.missing_mask(
        rng,
        chosen.size,
        rate=params.invalid_rate[j],
        wrong=(chosen != "pos").ravel(),
        rate_if_wrong=params.invalid_if_wrong[j],
    ).reshape(shape)
    chosen[bad] = None
    return chosen


def pairwise_benchmark(
    rng: np.random.Generator, design: Design | None = None, params: PairwiseParams | None = None
) -> Simulation:
    """Draw one simulated pairwise benchmark (see the module docstring).

    Args:
        rng: The only source of randomness.
        design: Clusters, items per cluster and latent ICC (default `Design()`).
        params: What is planted (default `PairwiseParams()`).

    Returns:
        A `Simulation`: items (with `cluster`), judgments of every judge × item × order ×
        sample (with `cluster` attached, as the data layer does), the population truths and
        the parameters.
    """
    design = design or Design()
    params = params or PairwiseParams()
    items = _items(rng, design, params)
    eta = _latent(rng, design, params)
    ids = items["item_id"].to_numpy(dtype=object)
    frames = []
    for j, judge in enumerate(params.judges):
        chosen = _verdicts(rng, eta[j], params, j)
        o, s, i = np.meshgrid(
            np.arange(2), np.arange(params.samples), np.arange(len(ids)), indexing="ij"
        )
        flat = chosen.ravel()
        frames.append(
            pd.DataFrame(
                {
                    "benchmark": design.benchmark,
                    "split": design.split,
                    "item_id": ids[i.ravel()],
                    "judge": judge,
                    "order": o.ravel(),
                    "sample": s.ravel(),
                    "verdict": flat,
                    "chosen": flat,
                    "correct": pd.array(
                        np.where(pd.isna(flat), False, flat == "pos"), dtype="boolean"
                    ),
                }
            )
        )
    judgments = base.judgments_table(pd.concat(frames, ignore_index=True))
    # what `clusters.attach` does, by position (every row's item is known): cheaper
    rows = np.tile(np.arange(len(ids)), 2 * params.samples * len(params.judges))
    judgments[clusters.COLUMN] = items[clusters.COLUMN].to_numpy(dtype=object)[rows]
    truth = population(params, design.icc)
    return Simulation(items, judgments, dict(truth), _as_dict(params))


def _as_dict(params: PairwiseParams) -> dict:
    return {k: getattr(params, k) for k in PairwiseParams.__dataclass_fields__}


def stack_splits(sims: Sequence[Simulation]) -> Simulation:
    """Return one simulation whose tables concatenate `sims` (e.g. two splits of a design).

    Truths are those of the first simulation (meaningful when all plant the same params).
    """
    items = pd.concat([s.items for s in sims], ignore_index=True)
    judgments = pd.concat([s.judgments for s in sims], ignore_index=True)
    return Simulation(items, judgments, dict(sims[0].truth), dict(sims[0].params))
