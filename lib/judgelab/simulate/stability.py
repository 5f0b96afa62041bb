"""Planted-truth judge stability (notebook 19): a judge switch, a leaderboard, repeated trials.

- `switch_sim`: pairwise items in both orders judged by judge A and by B, B = A with each
  verdict flipped at a known rate (pos→neg `flip_pos`, neg→pos `flip_neg`, varying by cluster
  on the logit scale: SD `design.effect_sd`) — a known verdict-shift matrix; and a scored judge
  SA with SB = SA + `drift` + a cluster-varying drift (mean 0) + noise — a known score drift.
- `board_sim`: `systems` exam-takers answer every item (P(right) = σ(α_s + u_cluster + v_item));
  the humans' label is the truth, a judge passes a right answer w.p. 1 − FNR and a wrong one
  w.p. FPR_s (a leniency that differs by system under the alternative, so its ranking moves).
- `repeat_sim`: one judge run `trials` times per unit with P(pos) = σ(μ + u_cluster + v_unit) —
  logit-normal, not the beta the estimator assumes.

Truths are population values by large independent draws (`base.expectation` or direct
simulation), never by the estimators' formulas.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import pandas as pd
from scipy import stats as sps

from judgelab.simulate import base
from judgelab.simulate.base import Design, Simulation, sigmoid

#: Odd trial counts the repeat truths are computed for.
KS = tuple(range(1, 52, 2))
_DEFAULT = Design(n_clusters=50, per_cluster=5, icc=0.3)


def _logit(p: float) -> float:
    return float(np.log(p / (1.0 - p)))


def switch_sim(
    rng: np.random.Generator,
    *,
    design: Design | None = None,
    flip_pos: float = 0.15,
    flip_neg: float = 0.10,
    drift: float = 0.0,
    base_logit: float = 0.8,
    item_sd: float = 0.5,
    position: float = 0.3,
    effect_sd: float | None = None,
) -> Simulation:
    """Return judges A, B (a verdict switch) and SA, SB (a score drift) on the same items.

    Returns:
        A `Simulation`; truth `changed`, `kappa` (population shift matrix of A → B),
        `drift_mean`, `drift_q0.5`.
    """
    design = (design or _DEFAULT).realise(rng)
    sd_w = design.effect_sd if effect_sd is None else effect_sd
    n = design.n_items
    ci = base.cluster_index(design)
    eta = base_logit + base.cluster_effects(rng, design) + rng.normal(0.0, item_sd, n)
    w_pos = rng.normal(0.0, sd_w, design.n_clusters)[ci]
    w_neg = rng.normal(0.0, sd_w, design.n_clusters)[ci]
    f_pos = sigmoid(_logit(flip_pos) + w_pos)
    f_neg = sigmoid(_logit(flip_neg) + w_neg)
    items = base.items_table(
        design, "pairwise", {"question": "q", "response_pos": "a", "response_neg": "b"}
    )
    ids, cl = items["item_id"].to_numpy(), items["cluster"].to_numpy()
    parts = []
    for order, sign in ((0, 1.0), (1, -1.0)):
        a_pos = rng.random(n) < sigmoid(eta + sign * position)
        flip = rng.random(n) < np.where(a_pos, f_pos, f_neg)
        b_pos = a_pos ^ flip
        for judge, pos in (("A", a_pos), ("B", b_pos)):
            chosen = np.where(pos, "pos", "neg")
            verdict = np.where(pos == (order == 0), "A", "B")
            parts.append(_frame(ids, cl, judge, order, chosen, verdict))
    score_a = 5.0 + 1.5 * base.cluster_effects(rng, design) + rng.normal(0.0, 1.0, n)
    w_drift = rng.normal(0.0, sd_w, design.n_clusters)[ci]
    score_b = score_a + drift + w_drift + rng.normal(0.0, 0.5, n)
    for judge, s in (("SA", score_a), ("SB", score_b)):
        parts.append(_frame(ids, cl, judge, 0, np.full(n, None), np.round(s, 6).astype(str)))
    judgments = base.judgments_table(pd.concat(parts, ignore_index=True).to_dict("list"))
    truth = switch_truths(
        flip_pos, flip_neg, drift, base_logit, item_sd, position, design.icc, sd_w
    )
    params = {"flip_pos": flip_pos, "flip_neg": flip_neg, "drift": drift, "effect_sd": sd_w}
    return Simulation(items, judgments, truth, params)


def _frame(ids, cl, judge, order, chosen, verdict) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "benchmark": "sim",
            "split": "test",
            "item_id": ids,
            "judge": judge,
            "order": order,
            "chosen": chosen,
            "verdict": verdict,
            "cluster": cl,
        }
    )


@lru_cache(maxsize=64)
def switch_truths(
    flip_pos: float,
    flip_neg: float,
    drift: float,
    base_logit: float,
    item_sd: float,
    position: float,
    icc: float,
    effect_sd: float,
) -> dict[str, float]:
    """Return the population share changed, kappa of A vs B, and the score drift."""
    sd = np.hypot(base.cluster_sd(icc), item_sd)

    def cells(r: np.random.Generator, k: int) -> np.ndarray:
        sign = np.where(r.random(k) < 0.5, 1.0, -1.0)  # both orders, equally
        p_a = sigmoid(base_logit + r.normal(0.0, sd, k) + sign * position)
        f_p = sigmoid(_logit(flip_pos) + r.normal(0.0, effect_sd, k))
        f_n = sigmoid(_logit(flip_neg) + r.normal(0.0, effect_sd, k))
        return np.stack([p_a * (1 - f_p), p_a * f_p, (1 - p_a) * f_n, (1 - p_a) * (1 - f_n)])

    draws = cells(np.random.default_rng(12345), 400_000).mean(axis=1)
    pp, pn, np_, nn = draws
    p_o = pp + nn
    a_pos, b_pos = pp + pn, pp + np_
    p_e = a_pos * b_pos + (1 - a_pos) * (1 - b_pos)
    r = np.random.default_rng(54321)
    sa = 5.0 + 1.5 * r.normal(0.0, base.cluster_sd(icc), 400_000)
    sa = sa + r.normal(0.0, 1.0, 400_000)
    sb = sa + drift + r.normal(0.0, effect_sd, 400_000) + r.normal(0.0, 0.5, 400_000)
    return {
        "changed": float(pn + np_),
        "kappa": float((p_o - p_e) / (1 - p_e)),
        "drift_mean": float(drift),
        "drift_q0.5": float(np.quantile(sb, 0.5) - np.quantile(sa, 0.5)),
    }


#: System abilities (logit) of `board_sim`, and the judge's FPR per system under each hypothesis.
ABILITIES = (1.2, 0.9, 0.6, 0.3, 0.0, -0.3)
FPR_NULL = (0.1,) * 6
FPR_ALT = (0.1, 0.1, 0.1, 0.3, 0.1, 0.1)


def board_sim(
    rng: np.random.Generator,
    *,
    design: Design | None = None,
    abilities: tuple[float, ...] = ABILITIES,
    fpr: tuple[float, ...] = FPR_NULL,
    fnr: float = 0.1,
    item_sd: float = 0.8,
) -> Simulation:
    """Return exam-takers graded by the humans (the truth) and by a judge on the same items.

    Returns:
        A `Simulation` whose judgments have judge `J` (verdict Correct/Incorrect), items one
        per (item, system) with `gold` (the human label) and `meta.system`; truth `tau`
        (Kendall's τ-b of the judge's and the humans' population pass rates), `leader`
        (index of the humans' population leader) and the pass rates `human_<s>`, `judge_<s>`.
    """
    design = (design or _DEFAULT).realise(rng)
    n = design.n_items
    eta = base.cluster_effects(rng, design) + rng.normal(0.0, item_sd, n)
    q_items = base.items_table(design, "qa", {"question": "q"})
    rows, judged = [], []
    for s, alpha in enumerate(abilities):
        right = rng.random(n) < sigmoid(alpha + eta)
        says = np.where(right, rng.random(n) >= fnr, rng.random(n) < fpr[s])
        part = q_items.assign(
            item_id=q_items["item_id"] + f"|s{s}",
            gold=np.where(right, "Correct", "Incorrect"),
            meta=f'{{"system": "s{s}"}}',
        )
        rows.append(part)
        judged.append(
            pd.DataFrame(
                {
                    "benchmark": part["benchmark"],
                    "split": part["split"],
                    "item_id": part["item_id"],
                    "judge": "J",
                    "verdict": np.where(says, "Correct", "Incorrect"),
                    "cluster": part["cluster"],
                }
            )
        )
    items = pd.concat(rows, ignore_index=True)
    judgments = base.judgments_table(pd.concat(judged, ignore_index=True).to_dict("list"))
    truth = board_truths(tuple(abilities), tuple(fpr), fnr, item_sd, design.icc)
    return Simulation(items, judgments, truth, {"abilities": abilities, "fpr": fpr})


@lru_cache(maxsize=64)
def board_truths(
    abilities: tuple[float, ...], fpr: tuple[float, ...], fnr: float, item_sd: float, icc: float
) -> dict[str, float]:
    """Return the population pass rates under the humans and the judge, their τ-b, the leader."""
    sd = np.hypot(base.cluster_sd(icc), item_sd)
    human = np.array(
        [base.expectation(lambda r, k, a=a: sigmoid(a + r.normal(0.0, sd, k))) for a in abilities]
    )
    judge = (1 - fnr) * human + np.asarray(fpr) * (1 - human)
    out = {"tau": float(sps.kendalltau(judge, human).statistic)}
    out["leader"] = float(np.argmax(human))
    out |= {f"human_s{s}": float(v) for s, v in enumerate(human)}
    return out | {f"judge_s{s}": float(v) for s, v in enumerate(judge)}


def repeat_sim(
    rng: np.random.Generator,
    *,
    design: Design | None = None,
    trials: int = 3,
    mu: float = 1.0,
    unit_sd: float = 2.0,
) -> Simulation:
    """Return one judge run `trials` times per unit, P(pos) logit-normal across units.

    Returns:
        A `Simulation` with judge `R`, samples 0..trials−1; truth `flip` (P(not all trials
        agree)), `trials_needed_0.9` (smallest odd k whose majority agrees with the
        many-trial majority w.p. ≥ 0.9) and `p_agree_<k>`.
    """
    design = (design or _DEFAULT).realise(rng)
    n = design.n_items
    q = sigmoid(mu + base.cluster_effects(rng, design) + rng.normal(0.0, unit_sd, n))
    items = base.items_table(design, "pairwise", {"question": "q"})
    ids, cl = items["item_id"].to_numpy(), items["cluster"].to_numpy()
    parts = []
    for t in range(trials):
        pos = rng.random(n) < q
        frame = _frame(ids, cl, "R", 0, np.where(pos, "pos", "neg"), np.where(pos, "A", "B"))
        parts.append(frame.assign(sample=t))
    judgments = base.judgments_table(pd.concat(parts, ignore_index=True).to_dict("list"))
    truth = repeat_truths(trials, mu, unit_sd, design.icc)
    return Simulation(items, judgments, truth, {"trials": trials, "mu": mu, "unit_sd": unit_sd})


@lru_cache(maxsize=64)
def repeat_truths(trials: int, mu: float, unit_sd: float, icc: float) -> dict[str, float]:
    """Return the population flip rate and the trials needed (direct binomial averages)."""
    sd = np.hypot(base.cluster_sd(icc), unit_sd)
    q = sigmoid(mu + np.random.default_rng(12345).normal(0.0, sd, 200_000))
    out = {"flip": float(np.mean(1 - q**trials - (1 - q) ** trials))}
    needed = float("nan")
    for k in KS:
        up = sps.binom.sf(k // 2, k, q)
        p = float(np.mean(np.where(q > 0.5, up, 1 - up)))
        out[f"p_agree_{k}"] = p
        if np.isnan(needed) and p >= 0.9:
            needed = float(k)
    return out | {"trials_needed_0.9": needed}


__all__ = [
    "ABILITIES",
    "FPR_ALT",
    "FPR_NULL",
    "KS",
    "board_sim",
    "board_truths",
    "repeat_sim",
    "repeat_truths",
    "switch_sim",
    "switch_truths",
]
