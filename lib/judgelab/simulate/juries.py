"""Planted juries: several judges rate clustered pairwise items with correlated errors.

Every item i (in cluster c) has a latent difficulty d_i = u_c + e_i: the cluster effect u_c
(`base.cluster_effects`, latent ICC `Design.icc`) plus an item effect e_i ~ N(0, item_sd²),
shared by every judge — so the judges' errors are correlated. Judge j sees
z_ji = a_j + d_i + ε_ji with its own noise ε_ji ~ N(0, judge_sd²) and its own intercept a_j
(different accuracies: the "best member" of a jury is a real selection). Each presentation
(order o, sample k) is drawn independently given z_ji: invalid with `invalid_rate`, else a tie
with `tie_rate`, else `pos` with probability sigmoid(z_ji ± position) (+ when the positive
response is in position A, order 0). Sample 0 is the greedy run; samples 1.. are the
self-consistency draws.

A judge's consolidated label (spec 000 §4.5: pos/neg in both orders, tie otherwise) given z
has probabilities `label_probs`; given the item's latent values the judges are independent,
so population truths are exact expectations over a large fixed-seed draw of the latent
values (`population`): each judge's consistent accuracy `ca_<j>`, the jury's majority
accuracy `jury_ca` (and `jury_ca_<rule>` for every vote rule), the best member (`best`,
`best_ca`) and `jury_minus_best` = jury_ca − max_j ca_j, Cohen's kappa of judges 0 and 1
(`kappa_01`), the self-consistency accuracy of judge 0 (`sc_ca_0`, `sc_minus_greedy_0`), and
Krippendorff's nominal alpha of all judges (`alpha_item`: consolidated labels; `alpha_item_order`:
raw verdicts per presentation, invalid missing) from a large draw of ratings.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache
from itertools import product

import numpy as np
import pandas as pd
from scipy.optimize import brentq

from judgelab.core import clusters
from judgelab.simulate import base

#: Vote rules whose accuracy is planted (same names as `analyses.juries.VOTE_RULES`).
RULES = ("plurality_with_tie_class", "strict_majority", "plurality_ignore_ties")
POS, NEG, TIE = 0, 1, 2
_POP_N = 100_000
_POP_SEED = 20_240_520


@dataclass(frozen=True)
class JuryParams:
    """Planted judge behaviour (logit scale; see the module docstring)."""

    intercepts: tuple[float, ...] = (1.3, 1.0, 0.6)
    item_sd: float = 0.8
    judge_sd: float = 0.8
    position: float = 0.4
    tie_rate: float = 0.05
    invalid_rate: float = 0.03
    n_samples: int = 1

    @property
    def n_judges(self) -> int:
        """Number of judges."""
        return len(self.intercepts)


def judge_names(params: JuryParams) -> list[str]:
    """Return the judges' names: 'judge-0', 'judge-1', ... (judge 0 has intercept 0)."""
    return [f"judge-{j}" for j in range(params.n_judges)]


def label_probs(z: np.ndarray, params: JuryParams) -> np.ndarray:
    """Return P(consolidated label = pos, neg, tie | z) (shape z.shape + (3,))."""
    keep = (1.0 - params.invalid_rate) * (1.0 - params.tie_rate)
    a = keep * base.sigmoid(z + params.position)  # order 0: pos in position A
    b = keep * base.sigmoid(z - params.position)
    pos = a * b
    neg = (keep - a) * (keep - b)
    return np.stack([pos, neg, 1.0 - pos - neg], axis=-1)


def _latent(rng: np.random.Generator, n: int, icc: float, params: JuryParams) -> np.ndarray:
    """Return n independent items' z (n × judges), marginal over clusters."""
    sd = np.sqrt(base.cluster_sd(icc) ** 2 + params.item_sd**2)
    d = rng.normal(0.0, sd, size=n)
    eps = rng.normal(0.0, params.judge_sd, size=(n, params.n_judges))
    return np.asarray(params.intercepts)[None, :] + d[:, None] + eps


def vote_pos(counts: np.ndarray, rule: str) -> np.ndarray:
    """Return whether `pos` is the clear winner of vote counts (..., 3) under `rule`."""
    pos, neg, tie = counts[..., POS], counts[..., NEG], counts[..., TIE]
    if rule == "plurality_ignore_ties":
        return pos > neg
    if rule == "strict_majority":
        return 2 * pos > counts.sum(axis=-1)
    if rule == "plurality_with_tie_class":
        return (pos > neg) & (pos > tie)
    raise ValueError(f"unknown vote rule {rule!r}; known: {list(RULES)}")


def _vote_prob(probs: np.ndarray, rule: str) -> np.ndarray:
    """Return P(pos wins) for independent voters with label probabilities (n × k × 3)."""
    k = probs.shape[1]
    combos = np.array(list(product(range(3), repeat=k)))  # 3^k × k
    counts = np.stack([(combos == c).sum(axis=1) for c in range(3)], axis=1)
    wins = combos[vote_pos(counts, rule)]
    out = np.zeros(probs.shape[0])
    for combo in wins:
        out += np.prod(probs[:, np.arange(k), combo], axis=1)
    return out


def _kappa(joint: np.ndarray) -> float:
    p_o = np.trace(joint)
    p_e = float(joint.sum(axis=1) @ joint.sum(axis=0))
    return float((p_o - p_e) / (1.0 - p_e))


def _alpha(values: np.ndarray) -> float:
    """Nominal alpha of a large (units × coders) matrix of codes 0..2 (NaN missing)."""
    ok = ~np.isnan(values)
    counts = np.stack([((values == v) & ok).sum(axis=1) for v in range(3)], axis=1)
    m = counts.sum(axis=1)
    keep = m >= 2
    if not keep.any():
        return float("nan")
    counts, m = counts[keep].astype(float), m[keep].astype(float)
    outer = counts[:, :, None] * counts[:, None, :] - counts[:, :, None] * np.eye(3)
    o = (outer / (m - 1)[:, None, None]).sum(axis=0)
    n_c = o.sum(axis=1)
    n = n_c.sum()
    return float(1.0 - (n - 1) * (n - np.trace(o)) / (n**2 - (n_c**2).sum()))


def _draw_verdicts(rng: np.random.Generator, z: np.ndarray, params: JuryParams) -> np.ndarray:
    """Return codes (…, 2 orders) of raw verdicts given z: 0 pos, 1 neg, 2 tie, NaN invalid."""
    shift = np.array([params.position, -params.position])
    p_pos = base.sigmoid(z[..., None] + shift)
    u = rng.random(p_pos.shape)
    invalid = rng.random(p_pos.shape) < params.invalid_rate
    tie = rng.random(p_pos.shape) < params.tie_rate
    out = np.where(tie, TIE, np.where(u < p_pos, POS, NEG)).astype(float)
    return np.where(invalid, np.nan, out)


@lru_cache(maxsize=64)
def population(params: JuryParams, icc: float) -> dict[str, float]:
    """Return the population truths of `params` (see the module docstring)."""
    rng = np.random.default_rng(_POP_SEED)
    z = _latent(rng, _POP_N, icc, params)
    probs = label_probs(z, params)
    ca = probs[..., POS].mean(axis=0)
    out = {f"ca_{j}": float(c) for j, c in enumerate(ca)}
    best = int(np.argmax(ca))
    out |= {"best": float(best), "best_ca": float(ca[best])}
    for rule in RULES:
        out[f"jury_ca_{rule}"] = float(_vote_prob(probs, rule).mean())
        out[f"jury_minus_best_{rule}"] = out[f"jury_ca_{rule}"] - float(ca[best])
    out["jury_ca"] = out[f"jury_ca_{RULES[0]}"]
    out["jury_minus_best"] = out[f"jury_minus_best_{RULES[0]}"]
    if params.n_judges >= 2:
        joint = np.einsum("na,nb->ab", probs[:, 0], probs[:, 1]) / len(z)
        out["kappa_01"] = _kappa(joint)
    s = params.n_samples
    sc = _vote_prob(np.repeat(probs[:, :1], s, axis=1), RULES[0]) if s <= 7 else np.nan
    out["sc_ca_0"] = float(np.mean(sc))
    out["sc_minus_greedy_0"] = out["sc_ca_0"] - out["ca_0"]
    labels = _consolidate(_draw_verdicts(rng, z, params))
    out["alpha_item"] = _alpha(labels)
    raw = _draw_verdicts(rng, z, params)  # units = (item, order): n·2 units × judges
    out["alpha_item_order"] = _alpha(np.concatenate([raw[..., 0], raw[..., 1]], axis=0))
    return out


def _consolidate(codes: np.ndarray) -> np.ndarray:
    """Return consolidated labels from (…, 2) raw codes: pos/neg when both agree, else tie."""
    a, b = codes[..., 0], codes[..., 1]
    same = (a == b) & (a != TIE)
    return np.where(same, a, TIE).astype(float)


def null_params(params: JuryParams, icc: float, rule: str = RULES[0]) -> JuryParams:
    """Return `params` with judge 0's intercept moved so the jury equals its best member.

    Judge 0 stays the best member; its intercept a_0 solves jury_ca(a_0) = ca_0(a_0) on the
    fixed population draw (a jury no better than its best member: the null of the test).
    """
    rest = max(params.intercepts[1:])

    def gap(a0: float) -> float:
        trial = replace(params, intercepts=(a0, *params.intercepts[1:]), n_samples=1)
        return population(trial, icc)[f"jury_minus_best_{rule}"]

    a0 = brentq(gap, rest + 0.05, rest + 2.0, xtol=1e-3)
    return replace(params, intercepts=(float(a0), *params.intercepts[1:]))


@lru_cache(maxsize=16)
def _template(design: base.Design, n_judges: int, n_samples: int, pool: str) -> tuple:
    """Return (items, judgments skeleton, index arrays) of a design, built once per shape.

    The skeleton goes through the real schema (`base.items_table`, `base.judgments_table`,
    `clusters.attach`) with every verdict `pos`; a replicate copies it and writes its drawn
    verdicts (values of the schema's domains) into `chosen`, `verdict`, `valid`, `correct`,
    `output`: the same table the schema would build, without re-validating it each time.
    """
    items = base.items_table(
        design, "pairwise", {"question": "q", "response_pos": "a", "response_neg": "b"}
    )
    idx = np.indices((design.n_items, n_judges, n_samples, 2)).reshape(4, -1)
    frame = {
        "benchmark": design.benchmark,
        "split": design.split,
        "item_id": items["item_id"].to_numpy()[idx[0]],
        "judge": np.array([f"judge-{j}" for j in range(n_judges)], dtype=object)[idx[1]],
        "prompt": pool,
        "sample": idx[2],
        "order": idx[3],
        "verdict": "A",
        "chosen": "pos",
        "correct": True,
    }
    judgments = clusters.attach(base.judgments_table(frame), items)
    return items, judgments, idx


def jury_benchmark(
    rng: np.random.Generator,
    design: base.Design | None = None,
    params: JuryParams | None = None,
    *,
    pool: str = "vanilla",
) -> base.Simulation:
    """Return a simulated pairwise benchmark rated by the judges of `params` in both orders.

    Args:
        rng: The only source of randomness.
        design: Clusters × items per cluster and latent ICC (default `base.Design()`).
        params: Judge behaviour (default `JuryParams()`).
        pool: Value of the judgments' `prompt` column (one pool of judges).

    Returns:
        A `Simulation`: items (with `cluster`), judgments (with `cluster` attached, as the
        data layer does; judges `judge-0`, …), `truth` = `population(params, design.icc)`,
        `params`.
    """
    design = design or base.Design()
    params = params or JuryParams()
    n, k, s = design.n_items, params.n_judges, params.n_samples
    d = base.cluster_effects(rng, design) + rng.normal(0.0, params.item_sd, size=n)
    z = np.asarray(params.intercepts)[None, :] + d[:, None]
    z = z + rng.normal(0.0, params.judge_sd, size=(n, k))
    codes = _draw_verdicts(rng, np.repeat(z[:, :, None], s, axis=2), params)  # n × k × s × 2
    items, skeleton, idx = _template(design, k, s, pool)
    names = np.array(["pos", "neg", "tie"], dtype=object)
    flat = codes.ravel()
    valid = ~np.isnan(flat)
    chosen = np.where(valid, names[np.where(valid, flat, 0).astype(int)], None)
    first = (chosen == "pos") == (idx[3] == 0)
    verdict = np.where(valid, np.where(chosen == "tie", "tie", np.where(first, "A", "B")), None)
    judgments = skeleton.copy()
    judgments["valid"] = pd.array(valid, dtype=skeleton["valid"].dtype)
    judgments["chosen"] = pd.array(chosen, dtype=skeleton["chosen"].dtype)
    judgments["verdict"] = pd.array(verdict, dtype=skeleton["verdict"].dtype)
    judgments["output"] = pd.array(
        np.where(valid, verdict, "unparseable"), dtype=skeleton["output"].dtype
    )
    judgments["correct"] = pd.array(chosen == "pos", dtype=skeleton["correct"].dtype)
    truth = population(params, design.icc)
    return base.Simulation(items, judgments, dict(truth), {"params": params, "design": design})
