"""Planted-truth pairwise benchmarks: judges in both orders, position bias, ties, invalid outputs.

`pairwise_benchmark(rng, design, params)` draws a ContextualJudgeBench-shaped benchmark:
items (`response_pos` better than `response_neg`, heavy-tailed lengths via `base.words`)
in the clusters of `design` — realised once per draw (`Design.realise`: unequal sizes when
`design.size_spread` > 0, singletons next to a cluster holding a third of the items) —,
judged by every judge of `params` in both orders (order 0 shows `response_pos` as A) and
`params.samples` times.

The latent model, per judge j, item i in cluster c, order o (s_0 = +1, s_1 = −1), sample s:

- η_jic = `accuracy[j]` + u_jc + a_jc + v_i: u_jc is the judge's cluster effect (N(0, σ_c²)
  with σ_c from `design.icc`; a share `judge_corr` of its variance is common to all judges,
  so a hard source is hard for every judge), a_jc ~ N(0, `design.effect_sd`²) the judge's
  accuracy slope in the cluster (so judge differences vary by cluster), v_i ~
  N(0, `item_sd`²) a judge-correlated item effect (shared by all judges and orders);
- the verdict is `tie` with probability `tie_rate[j]`, else `pos` with probability
  σ(η + s_o·δ_jc): δ_jc = `delta[j]` + N(0, `design.effect_sd`²) is the judge's position
  bias in the cluster (logit; > 0 favours position A) — a random slope, symmetric around
  `delta[j]`, so with `delta` 0 a judge prefers A in some sources and B in others and
  P(A | decisive) = 1/2 holds in the population exactly (the A − B difference is odd in δ);
- the output is invalid with probability σ(logit r + `invalid_length[j]`·z_i): r is
  `invalid_rate[j]`, or `invalid_if_wrong[j]` when the verdict is not `pos` (missing not at
  random: more often invalid when wrong), and z_i = (log(len_pos + len_neg) − log(median
  sum)) / `LENGTH_SCALE` the pair's standardised log length (long pairs fail more often
  with a positive slope). Verdicts are independent over orders and samples given η, δ.

Truths (`population`) are super-population values from the planted parameters: the
closed-form verdict probabilities given (η, δ, z), averaged over one large fixed-seed draw
of η, δ (antithetic: δ and its mirror image, so a null position bias is exactly null) and of
the heavy-tailed lengths — the ratio estimands as ratios of expectations: `a1`, `a2`, `ca`,
`oa`, `cons` (repo invalid policy), `pos_a_rate` (A-verdicts over all valid verdicts, spec
000 §4.7), `pos_a_rate_decisive` (over valid non-tie verdicts), `flip_rate`,
`share_biased_first`, `share_biased_second`, per judge as `<metric>:<judge>` and for the
first judge unprefixed, and `ca_diff` / `a1_diff` (first judge − second judge).
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
    invalid_length: tuple[float, ...] | None = None  # MNAR: logit slope per SD of log length
    item_sd: float = 0.0  # judge-correlated item effect (shared by judges and orders)
    judge_corr: float = 0.5  # share of the cluster-effect variance common to all judges
    samples: int = 1
    length_median: tuple[float, float] = (180.0, 150.0)  # words of response_pos, response_neg

    def __post_init__(self) -> None:
        k = len(self.judges)
        if self.invalid_length is None:
            object.__setattr__(self, "invalid_length", (0.0,) * k)
        names = ("accuracy", "delta", "tie_rate", "invalid_rate", "invalid_if_wrong")
        for name in (*names, "invalid_length"):
            if len(getattr(self, name)) != k:
                raise ValueError(
                    f"{name} needs one value per judge ({k}), got {getattr(self, name)}"
                )
        if self.samples < 1 or not 0.0 <= self.judge_corr <= 1.0 or self.item_sd < 0:
            raise ValueError(f"bad samples/judge_corr/item_sd in {self}")


#: Scale of the standardised log pair length z (the SD of log(len_pos + len_neg), ~0.6).
LENGTH_SCALE = 0.6


def _logit(p: float) -> float:
    p = min(max(float(p), 1e-12), 1.0 - 1e-12)
    return float(np.log(p / (1.0 - p)))


def invalid_prob(params: PairwiseParams, j: int, wrong: np.ndarray, z: np.ndarray) -> np.ndarray:
    """Return P(invalid output) of judge j's verdicts: by correctness and pair length z."""
    right = _logit(params.invalid_rate[j]) if params.invalid_rate[j] > 0 else -np.inf
    rate_w = params.invalid_if_wrong[j]
    wrong_l = right if rate_w is None else (_logit(rate_w) if rate_w > 0 else -np.inf)
    base_logit = np.where(np.asarray(wrong, dtype=bool), wrong_l, right)
    with np.errstate(invalid="ignore"):
        return np.nan_to_num(base.sigmoid(base_logit + params.invalid_length[j] * z), nan=0.0)


def length_z(lp: np.ndarray, ln: np.ndarray, params: PairwiseParams) -> np.ndarray:
    """Return the standardised log length of each pair (0 at the planted medians)."""
    mid = np.log(params.length_median[0] + params.length_median[1])
    return (np.log(np.asarray(lp, float) + np.asarray(ln, float)) - mid) / LENGTH_SCALE


def verdict_probs(
    eta: np.ndarray, delta: np.ndarray | float, params: PairwiseParams, j: int, z: np.ndarray
):
    """Return (P(valid pos), P(valid neg), P(valid tie), P(invalid)) per order (2 × n each)."""
    tie = params.tie_rate[j]
    right = 1.0 - invalid_prob(params, j, np.zeros(np.shape(z), dtype=bool), z)
    wrong = 1.0 - invalid_prob(params, j, np.ones(np.shape(z), dtype=bool), z)
    out = []
    for sign in (1.0, -1.0):
        pos = (1.0 - tie) * base.sigmoid(eta + sign * delta)
        neg = (1.0 - tie) - pos
        out.append((pos * right, neg * wrong, tie * wrong))
    p = np.array([o[0] for o in out])
    q = np.array([o[1] for o in out])
    t = np.array([np.broadcast_to(o[2], np.shape(o[0])) for o in out])
    return p, q, t, 1.0 - p - q - t


def _judge_truth(
    eta: np.ndarray, delta: np.ndarray, z: np.ndarray, params: PairwiseParams, j: int
) -> dict[str, float]:
    p, q, t, i = verdict_probs(eta, delta, params, j, z)
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
def population(
    params: PairwiseParams, icc: float, effect_sd: float = 0.0, n: int = 400_000
) -> dict[str, float]:
    """Return the population truths of `params` at latent ICC `icc`, slopes SD `effect_sd`.

    Each judge's η marginalises over its cluster, slope and item effects (N(0, σ_c² +
    effect_sd² + item_sd²)), its position bias over N(δ_j, effect_sd²) (antithetic), the
    lengths over the generator's heavy-tailed law: one fixed-seed draw (seed 12345) shared
    by all parameter sets and judges.
    """
    rng = np.random.default_rng(12345)
    half = n // 2
    z_eta = rng.standard_normal(half)
    z_delta = rng.standard_normal(half)
    lp = base.heavy_tailed(rng, half, median=params.length_median[0])
    ln = base.heavy_tailed(rng, half, median=params.length_median[1])
    z_len = np.tile(length_z(lp, ln, params), 2)
    z_eta = np.tile(z_eta, 2)
    z_delta = np.concatenate([z_delta, -z_delta])  # δ's law mirrored: a null bias is null
    sd = float(np.sqrt(base.cluster_sd(icc) ** 2 + effect_sd**2 + params.item_sd**2))
    truth: dict[str, float] = {}
    for j, judge in enumerate(params.judges):
        eta = params.accuracy[j] + sd * z_eta
        delta = params.delta[j] + effect_sd * z_delta
        per = _judge_truth(eta, delta, z_len, params, j)
        truth.update({f"{k}:{judge}": v for k, v in per.items()})
        if j == 0:
            truth.update(per)
    if len(params.judges) >= 2:
        a, b = params.judges[:2]
        truth["ca_diff"] = truth[f"ca:{a}"] - truth[f"ca:{b}"]
        truth["a1_diff"] = truth[f"a1:{a}"] - truth[f"a1:{b}"]
    return truth


def _latent(rng: np.random.Generator, design: Design, params: PairwiseParams) -> np.ndarray:
    """Return η per judge × item (k × n): accuracy, cluster effects and slopes, item effects."""
    sd = base.cluster_sd(design.icc)
    common = rng.normal(0.0, sd, design.n_clusters)
    own = rng.normal(0.0, sd, (len(params.judges), design.n_clusters))
    u = np.sqrt(params.judge_corr) * common + np.sqrt(1 - params.judge_corr) * own
    v = rng.normal(0.0, params.item_sd, design.n_items) if params.item_sd > 0 else 0.0
    acc = np.asarray(params.accuracy, dtype=float)[:, None]
    eta = acc + u[:, base.cluster_index(design)] + v
    if design.effect_sd > 0:  # each judge's accuracy varies by cluster around its mean
        eta = eta + np.stack([base.cluster_slopes(rng, design, 0.0) for _ in params.judges])
    return eta


def _items(
    rng: np.random.Generator, design: Design, params: PairwiseParams
) -> tuple[pd.DataFrame, np.ndarray]:
    """Return the items table and the standardised log length z of every pair."""
    n = design.n_items
    lp = base.heavy_tailed(rng, n, median=params.length_median[0])
    ln = base.heavy_tailed(rng, n, median=params.length_median[1])
    table = base.items_table(
        design,
        "pairwise",
        {
            "question": "Which response answers better?",
            "response_pos": [base.words(int(k), "p") for k in lp],
            "response_neg": [base.words(int(k), "n") for k in ln],
            "gold": "pos",
        },
    )
    return table, length_z(lp, ln, params)


def _verdicts(
    rng: np.random.Generator,
    eta: np.ndarray,
    delta: np.ndarray,
    z: np.ndarray,
    params: PairwiseParams,
    j: int,
):
    """Return the chosen code (pos/neg/tie/None) per order × sample × item for judge j."""
    n = eta.shape[0]
    shape = (2, params.samples, n)
    sign = np.array([1.0, -1.0])[:, None, None]
    pos = rng.random(shape) < base.sigmoid(eta[None, None, :] + sign * delta[None, None, :])
    tie = rng.random(shape) < params.tie_rate[j]
    chosen = np.where(tie, "tie", np.where(pos, "pos", "neg")).astype(object)
    p_bad = invalid_prob(params, j, chosen != "pos", np.broadcast_to(z, shape))
    chosen[rng.random(shape) < p_bad] = None
    return chosen


def pairwise_benchmark(
    rng: np.random.Generator, design: Design | None = None, params: PairwiseParams | None = None
) -> Simulation:
    """Draw one simulated pairwise benchmark (see the module docstring).

    Args:
        rng: The only source of randomness.
        design: Clusters, items per cluster, latent ICC, size spread and the SD of the
            cluster-varying effects (default `Design()`); realised here.
        params: What is planted (default `PairwiseParams()`).

    Returns:
        A `Simulation`: items (with `cluster`), judgments of every judge × item × order ×
        sample (with `cluster` attached, as the data layer does), the population truths and
        the parameters.
    """
    design = (design or Design()).realise(rng)
    params = params or PairwiseParams()
    items, z = _items(rng, design, params)
    eta = _latent(rng, design, params)
    ids = items["item_id"].to_numpy(dtype=object)
    frames = []
    for j, judge in enumerate(params.judges):
        delta = base.cluster_slopes(rng, design, params.delta[j])
        chosen = _verdicts(rng, eta[j], delta, z, params, j)
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
    truth = population(params, design.icc, design.effect_sd)
    return Simulation(items, judgments, dict(truth), _as_dict(params) | {"design": design})


def _as_dict(params: PairwiseParams) -> dict:
    return {k: getattr(params, k) for k in PairwiseParams.__dataclass_fields__}


def stack_splits(sims: Sequence[Simulation]) -> Simulation:
    """Return one simulation whose tables concatenate `sims` (e.g. two splits of a design).

    Truths are those of the first simulation (meaningful when all plant the same params).
    """
    items = pd.concat([s.items for s in sims], ignore_index=True)
    judgments = pd.concat([s.judgments for s in sims], ignore_index=True)
    return Simulation(items, judgments, dict(sims[0].truth), dict(sims[0].params))
