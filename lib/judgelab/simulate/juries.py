"""Planted juries: several judges rate clustered pairwise items with correlated errors.

Every item i (in cluster c) has a latent difficulty d_i = u_c + e_i: the cluster effect u_c
(`base.cluster_effects`, latent ICC `Design.icc`) plus an item effect e_i ~ N(0, item_sd²),
shared by every judge — so the judges' errors are correlated. Judge j sees
z_ji = a_j + b_jc + d_i + ε_ji with its own noise ε_ji ~ N(0, judge_sd²), its own intercept a_j
(different accuracies: the "best member" of a jury is a real selection) and, when the design's
effects vary by cluster (`Design.effect_sd`), its own cluster-level bias b_jc ~ N(0,
effect_sd²) (`base.cluster_slopes`: judge j is better on some sources than on others). Each
presentation (order o, sample k) is drawn independently given z_ji: a tie with `tie_rate`,
else `pos` with probability sigmoid(z_ji ± p_c) (+ when the positive response is in position
A, order 0), where the position effect p_c = `position` + N(0, effect_sd²) varies by cluster
too. A verdict is then invalid with `invalid_rate` when it is `pos` (right) and with
`invalid_if_wrong` (default: the same) when it is `neg` or a tie — missing not at random.
Sample 0 is the greedy run; samples 1.. are the self-consistency draws. Designs with unequal
cluster sizes (`Design.size_spread`) are realised once per draw (`Design.realise`).

A judge's consolidated label (spec 000 §4.5: pos/neg in both orders, tie otherwise) given z
and p has probabilities `label_probs`; given the item's latent values the judges are
independent, so population truths are exact expectations over a large fixed-seed draw of the
latent values (`population`; each item of that draw gets its own cluster-level effects, the
item-weighted super-population every ratio of sums converges to): each judge's consistent
accuracy `ca_<j>`, the jury's majority accuracy `jury_ca` (and `jury_ca_<rule>` for every vote
rule), the best member (`best`, `best_ca`) and `jury_minus_best` = jury_ca − max_j ca_j,
Cohen's kappa of judges 0 and 1 (`kappa_01`), the self-consistency accuracy of judge 0
(`sc_ca_0`, `sc_minus_greedy_0`), and Krippendorff's nominal alpha of all judges
(`alpha_item`: consolidated labels; `alpha_item_order`: raw verdicts per presentation, invalid
missing). Alpha's truth is its super-population value: the limit of the plug-in alpha as the
number of units grows, computed from the *expected* coincidence matrix per unit (every
combination of the judges' values enumerated with its probability given the latent values) —
not from the planted parameters, and not the mean of a finite-sample alpha (which is biased).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache
from itertools import product

import numpy as np
import pandas as pd
from scipy.optimize import brentq

from judgelab.simulate import base

#: Vote rules whose accuracy is planted (same names as `analyses.juries.VOTE_RULES`).
RULES = ("plurality_with_tie_class", "strict_majority", "plurality_ignore_ties")
POS, NEG, TIE = 0, 1, 2
_POP_N = 200_000
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
    invalid_if_wrong: float | None = None  # invalid rate of neg / tie verdicts (None: same)

    @property
    def n_judges(self) -> int:
        """Number of judges."""
        return len(self.intercepts)

    @property
    def invalid_wrong(self) -> float:
        """Invalid rate of a wrong (neg) or tie verdict."""
        return self.invalid_rate if self.invalid_if_wrong is None else self.invalid_if_wrong


def judge_names(params: JuryParams) -> list[str]:
    """Return the judges' names: 'judge-0', 'judge-1', ... (judge 0 has intercept 0)."""
    return [f"judge-{j}" for j in range(params.n_judges)]


def verdict_probs(
    z: np.ndarray, params: JuryParams, position: np.ndarray | float | None = None
) -> np.ndarray:
    """Return P(raw verdict = pos, neg, tie, invalid | z) per order (shape z.shape + (2, 4)).

    `position` (broadcastable to z; default `params.position`) shifts order 0 up, order 1 down.
    """
    p = params.position if position is None else np.asarray(position, dtype=np.float64)
    z = np.asarray(z, dtype=np.float64)
    shift = np.stack(np.broadcast_arrays(z + p, z - p), axis=-1)  # (…, 2)
    right = base.sigmoid(shift)
    t = params.tie_rate
    pos = (1.0 - t) * right * (1.0 - params.invalid_rate)
    neg = (1.0 - t) * (1.0 - right) * (1.0 - params.invalid_wrong)
    tie = t * (1.0 - params.invalid_wrong) * np.ones_like(right)
    return np.stack([pos, neg, tie, 1.0 - pos - neg - tie], axis=-1)


def label_probs(
    z: np.ndarray, params: JuryParams, position: np.ndarray | float | None = None
) -> np.ndarray:
    """Return P(consolidated label = pos, neg, tie | z) (shape z.shape + (3,))."""
    v = verdict_probs(z, params, position)
    pos = v[..., 0, POS] * v[..., 1, POS]
    neg = v[..., 0, NEG] * v[..., 1, NEG]
    return np.stack([pos, neg, 1.0 - pos - neg], axis=-1)


def _latent(
    rng: np.random.Generator, n: int, icc: float, params: JuryParams, effect_sd: float = 0.0
) -> tuple[np.ndarray, np.ndarray]:
    """Return n independent items' z (n × judges) and position effect, marginal over clusters.

    Each item carries its own draw of the cluster-level effects (difficulty, judge biases,
    position): the item-weighted super-population of a design with many clusters.
    """
    sd = np.sqrt(base.cluster_sd(icc) ** 2 + params.item_sd**2)
    d = rng.normal(0.0, sd, size=n)
    eps = rng.normal(0.0, params.judge_sd, size=(n, params.n_judges))
    bias = rng.normal(0.0, effect_sd, size=(n, params.n_judges)) if effect_sd else 0.0
    z = np.asarray(params.intercepts)[None, :] + d[:, None] + eps + bias
    position = params.position + (rng.normal(0.0, effect_sd, size=n) if effect_sd else 0.0)
    return z, np.broadcast_to(position, (n,))


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


def expected_coincidences(probs: np.ndarray, n_values: int = 3) -> np.ndarray:
    """Return the mean expected coincidence matrix per unit (V × V) of independent coders.

    `probs` (units × coders × C) gives each coder's probability of every outcome; outcomes
    0..V−1 are values and any further outcome (C > V) is a missing value. Every combination
    of the coders' outcomes is enumerated with its probability; a unit with m ≥ 2 values adds
    n_c (n_k − [c = k]) / (m − 1) to cell (c, k) (Krippendorff's coincidences).
    """
    units, k, c = probs.shape
    out = np.zeros((n_values, n_values))
    for combo in product(range(c), repeat=k):
        combo_arr = np.array(combo)
        counts = np.array([(combo_arr == v).sum() for v in range(n_values)], dtype=float)
        m = counts.sum()
        if m < 2:
            continue
        weight = float(np.mean(np.prod(probs[:, np.arange(k), combo_arr], axis=1)))
        o = (np.outer(counts, counts) - np.diag(counts)) / (m - 1)
        out += weight * o
    return out


def alpha_from_coincidences(o: np.ndarray) -> float:
    """Return the limit of nominal alpha for a per-unit coincidence matrix (units → ∞).

    alpha = 1 − (n − 1)(n − Σ o_cc) / (n² − Σ n_c²) with o = N·ō; as N grows this tends to
    1 − n̄ (n̄ − tr ō) / (n̄² − Σ n̄_c²).
    """
    n_c = o.sum(axis=1)
    n = n_c.sum()
    return float(1.0 - n * (n - np.trace(o)) / (n**2 - (n_c**2).sum()))


def _alpha(values: np.ndarray) -> float:
    """Nominal alpha of a (units × coders) matrix of codes 0..2 (NaN missing), plug-in."""
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


def _draw_verdicts(
    rng: np.random.Generator,
    z: np.ndarray,
    params: JuryParams,
    position: np.ndarray | float | None = None,
) -> np.ndarray:
    """Return codes (…, 2 orders) of raw verdicts given z: 0 pos, 1 neg, 2 tie, NaN invalid."""
    probs = verdict_probs(z, params, position)  # (…, 2, 4)
    cum = np.cumsum(probs, axis=-1)
    u = rng.random(probs.shape[:-1])[..., None]
    code = (u >= cum[..., :-1]).sum(axis=-1).astype(float)
    return np.where(code == 3, np.nan, code)


@lru_cache(maxsize=32)
def _noise_draw(
    n_judges: int, item_sd: float, judge_sd: float, icc: float, effect_sd: float
) -> tuple[np.ndarray, np.ndarray]:
    """The population's fixed-seed latent draw without intercepts: (z − a, position − p)."""
    shape = JuryParams(intercepts=(0.0,) * n_judges, item_sd=item_sd, judge_sd=judge_sd)
    z, position = _latent(np.random.default_rng(_POP_SEED), _POP_N, icc, shape, effect_sd)
    return z, position - shape.position


def _latent_draw(
    params: JuryParams, icc: float, effect_sd: float
) -> tuple[np.ndarray, np.ndarray]:
    """The population's fixed-seed latent draw (z, position) of `params`."""
    z, position = _noise_draw(params.n_judges, params.item_sd, params.judge_sd, icc, effect_sd)
    return z + np.asarray(params.intercepts)[None, :], position + params.position


@lru_cache(maxsize=256)
def _accuracies(params: JuryParams, icc: float, effect_sd: float) -> dict[str, float]:
    """Population accuracies of the judges, their juries and self-consistency (no agreement)."""
    z, position = _latent_draw(params, icc, effect_sd)
    probs = label_probs(z, params, position[:, None])
    ca = probs[..., POS].mean(axis=0)
    out = {f"ca_{j}": float(c) for j, c in enumerate(ca)}
    best = int(np.argmax(ca))
    out |= {"best": float(best), "best_ca": float(ca[best])}
    for rule in RULES:
        out[f"jury_ca_{rule}"] = float(_vote_prob(probs, rule).mean())
        out[f"jury_minus_best_{rule}"] = out[f"jury_ca_{rule}"] - float(ca[best])
    out["jury_ca"] = out[f"jury_ca_{RULES[0]}"]
    out["jury_minus_best"] = out[f"jury_minus_best_{RULES[0]}"]
    s = params.n_samples
    sc = _vote_prob(np.repeat(probs[:, :1], s, axis=1), RULES[0]) if s <= 7 else np.nan
    out["sc_ca_0"] = float(np.mean(sc))
    out["sc_minus_greedy_0"] = out["sc_ca_0"] - out["ca_0"]
    return out


@lru_cache(maxsize=64)
def population(params: JuryParams, icc: float, effect_sd: float = 0.0) -> dict[str, float]:
    """Return the population truths of `params` (see the module docstring)."""
    out = dict(_accuracies(params, icc, effect_sd))
    if params.n_judges < 2:
        return out
    z, position = _latent_draw(params, icc, effect_sd)
    probs = label_probs(z, params, position[:, None])
    joint = np.einsum("na,nb->ab", probs[:, 0], probs[:, 1]) / len(z)
    out["kappa_01"] = _kappa(joint)
    out["alpha_item"] = alpha_from_coincidences(expected_coincidences(probs))
    raw = verdict_probs(z, params, position[:, None])  # (n, k, 2, 4): units = (item, order)
    per_order = np.concatenate([raw[:, :, 0], raw[:, :, 1]], axis=0)
    out["alpha_item_order"] = alpha_from_coincidences(expected_coincidences(per_order))
    return out


def _consolidate(codes: np.ndarray) -> np.ndarray:
    """Return consolidated labels from (…, 2) raw codes: pos/neg when both agree, else tie."""
    a, b = codes[..., 0], codes[..., 1]
    same = (a == b) & (a != TIE)
    return np.where(same, a, TIE).astype(float)


def null_params(
    params: JuryParams, icc: float, rule: str = RULES[0], effect_sd: float = 0.0
) -> JuryParams:
    """Return `params` with judge 0's intercept moved so the jury equals its best member.

    Judge 0 stays the best member; its intercept a_0 solves jury_ca(a_0) = ca_0(a_0) on the
    fixed population draw (a jury no better than its best member: the null of the test).
    """
    rest = max(params.intercepts[1:])

    def gap(a0: float) -> float:
        trial = replace(params, intercepts=(a0, *params.intercepts[1:]), n_samples=1)
        return _accuracies(trial, icc, effect_sd)[f"jury_minus_best_{rule}"]

    low, high = rest + 0.05, rest + 3.0
    if gap(low) * gap(high) > 0:
        raise ValueError(
            f"no intercept of judge 0 in [{low:.2f}, {high:.2f}] makes the jury equal its best "
            f"member ({gap(low):+.3f} at the low end): the judges' errors are too shared "
            "(raise judge_sd against item_sd) for a jury to help"
        )
    a0 = brentq(gap, low, high, xtol=1e-4)
    return replace(params, intercepts=(float(a0), *params.intercepts[1:]))


def null_sc_params(params: JuryParams, icc: float, effect_sd: float = 0.0) -> JuryParams:
    """Return `params` with judge 0's intercept moved so its vote over samples gains nothing.

    The intercept solves sc_ca_0 = ca_0 on the fixed population draw (the null of the
    self-consistency test: the vote over `n_samples` samples per order neither helps nor
    hurts the greedy label's consistent accuracy).
    """

    def gap(a0: float) -> float:
        trial = replace(params, intercepts=(a0, *params.intercepts[1:]))
        return _accuracies(trial, icc, effect_sd)["sc_minus_greedy_0"]

    a0 = brentq(gap, -1.0, 3.0, xtol=1e-4)
    return replace(params, intercepts=(float(a0), *params.intercepts[1:]))


@lru_cache(maxsize=16)
def _skeleton(
    n_items: int, n_judges: int, n_samples: int, pool: str, benchmark: str, split: str
) -> tuple:
    """Return (items, judgments skeleton, index arrays) of a shape, built once.

    The skeleton goes through the real schema (`base.items_table`, `base.judgments_table`
    with the items' `cluster`, as `clusters.attach` gives it) with every verdict `pos`; a
    replicate copies it, writes the design's item ids and clusters (`_template`) and its drawn
    verdicts (values of the schema's domains) into `chosen`, `verdict`, `valid`, `correct`,
    `output`: the same table the schema would build, without re-validating it each time.
    """
    design = base.Design(
        n_clusters=1, per_cluster=n_items, benchmark=benchmark, split=split, icc=0.0
    )
    items = base.items_table(
        design, "pairwise", {"question": "q", "response_pos": "a", "response_neg": "b"}
    )
    idx = np.indices((n_items, n_judges, n_samples, 2)).reshape(4, -1)
    frame = {
        "benchmark": benchmark,
        "split": split,
        "item_id": items["item_id"].to_numpy()[idx[0]],
        "judge": np.array([f"judge-{j}" for j in range(n_judges)], dtype=object)[idx[1]],
        "prompt": pool,
        "sample": idx[2],
        "order": idx[3],
        "verdict": "A",
        "chosen": "pos",
        "correct": True,
        "cluster": items["cluster"].to_numpy()[idx[0]],
    }
    return items, base.judgments_table(frame), idx


def _template(design: base.Design, n_judges: int, n_samples: int, pool: str) -> tuple:
    """Return (items, judgments, index arrays) of a (realised) design: `_skeleton` relabelled."""
    items, judgments, idx = _skeleton(
        design.n_items, n_judges, n_samples, pool, design.benchmark, design.split
    )
    ids, sources = base.item_ids(design)
    cluster = np.array([f"{design.benchmark}|meta|{c}" for c in sources], dtype=object)
    items = items.copy()
    items["item_id"] = pd.array(ids, dtype=items["item_id"].dtype)
    items["cluster"] = pd.array(cluster, dtype=items["cluster"].dtype)
    judgments = judgments.copy()
    judgments["item_id"] = pd.array(ids[idx[0]], dtype=judgments["item_id"].dtype)
    judgments["cluster"] = cluster[idx[0]].astype(str)
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
        design: Clusters × items per cluster, latent ICC, size spread and cluster-varying
            effect SD (default `base.Design()`); unequal sizes are realised here.
        params: Judge behaviour (default `JuryParams()`).
        pool: Value of the judgments' `prompt` column (one pool of judges).

    Returns:
        A `Simulation`: items (with `cluster`), judgments (with `cluster` attached, as the
        data layer does; judges `judge-0`, …), `truth` =
        `population(params, design.icc, design.effect_sd)`, `params`.
    """
    design = (design or base.Design()).realise(rng)
    params = params or JuryParams()
    n, k, s = design.n_items, params.n_judges, params.n_samples
    d = base.cluster_effects(rng, design) + rng.normal(0.0, params.item_sd, size=n)
    z = np.asarray(params.intercepts)[None, :] + d[:, None]
    z = z + rng.normal(0.0, params.judge_sd, size=(n, k))
    position: np.ndarray | float = params.position
    if design.effect_sd > 0:
        z = z + np.column_stack([base.cluster_slopes(rng, design, 0.0) for _ in range(k)])
        position = base.cluster_slopes(rng, design, params.position)[:, None, None]
    zs = np.repeat(z[:, :, None], s, axis=2)
    codes = _draw_verdicts(rng, zs, params, position)  # n × k × s × 2
    items, skeleton, idx = _template(design, k, s, pool)
    names = np.array(["pos", "neg", "tie"], dtype=object)
    flat = codes.ravel()
    valid = ~np.isnan(flat)
    chosen = np.where(valid, names[np.where(valid, flat, 0).astype(int)], None)
    first = (chosen == "pos") == (idx[3] == 0)
    verdict = np.where(valid, np.where(chosen == "tie", "tie", np.where(first, "A", "B")), None)
    judgments = skeleton
    judgments["valid"] = pd.array(valid, dtype=skeleton["valid"].dtype)
    judgments["chosen"] = pd.array(chosen, dtype=skeleton["chosen"].dtype)
    judgments["verdict"] = pd.array(verdict, dtype=skeleton["verdict"].dtype)
    judgments["output"] = pd.array(
        np.where(valid, verdict, "unparseable"), dtype=skeleton["output"].dtype
    )
    judgments["correct"] = pd.array(chosen == "pos", dtype=skeleton["correct"].dtype)
    truth = population(params, design.icc, design.effect_sd)
    meta = {"params": params, "design": design}
    return base.Simulation(items, judgments, dict(truth), meta)
