"""Planted-truth correctness grading (notebook 05) and reference conditions (notebook 06).

`correctness_sim`: questions (the clusters) each answered by several candidate models (one
row per model: ≥ 5 rows per question), a human gold label per answer and one judge grading
every answer Correct/Incorrect. Latent logit scale:

- answer correct with P = σ(a_model + u_q), u_q the question's difficulty (N(0, σ²) with the
  design's intra-cluster correlation);
- the judge errs on a human-Incorrect answer (FPR) with P = σ(logit(fpr) + e_q + shifts) and
  on a human-Correct one (FNR) with P = σ(logit(fnr) + e_q + shifts), e_q a question effect
  shared by the judge's errors on that question (same ICC), independent of u_q;
- shifts: `self_fpr` / `self_fnr` on the judge's OWN model's answers (model-level
  self-preference), `family_fpr` / `family_fnr` on its family's other models (family level),
  `answered_shift` on both error rates on questions its own model answered incorrectly
  (answerability, spec 001 §4.2/§4.5);
- invalid verdicts at `invalid_rate`, or `invalid_self_rate` on its own answers (missingness
  that differs between the groups compared).

Truths are population values of the estimators' ratio-of-sums estimands, from the planted
parameters: expected confusion cells per row (given u_q, e_q in closed form) averaged over a
large fixed-seed draw of questions (`truths`, cached). With the default symmetric model
offsets, an own model at offset 0 and fpr = fnr, the kappa gap is exactly 0 without an
`answered_shift` (κ is prevalence-dependent; the symmetry makes the two subsets' prevalences
mirror images), so the null is a true null.

`reference_sim`: pairwise items (clusters of `per_cluster` items sharing a source) judged in
both orders under several reference conditions; P(correct in an order) = (1 − invalid) ·
σ(base + δ_condition + u_cluster + v_item ± position); the truth of each condition's
consistent accuracy and of their differences by expectation.
"""

from __future__ import annotations

import json
from functools import lru_cache

import numpy as np
import pandas as pd

from judgelab.core import clusters
from judgelab.simulate import base
from judgelab.simulate.base import Design, Simulation, sigmoid

#: Candidate models and their families; the judge is `JUDGE`, whose own model is `JUDGE_MODEL`.
MODELS = ("alpha-70b", "alpha-7b", "beta-8b", "gamma-9b", "delta-2b")
FAMILIES = {"alpha-70b": "alpha", "alpha-7b": "alpha", "beta-8b": "beta", "gamma-9b": "gamma",
            "delta-2b": "delta"}  # fmt: skip
#: Answer-correctness logit offset per model (symmetric around the judge's own model at 0).
OFFSETS = (0.0, -0.8, 0.8, -0.4, 0.4)
JUDGE, JUDGE_MODEL = "alpha.judge", "alpha-70b"
CONDITIONS = ("reference=none", "reference=human", "reference=self")
_TRUTH_N = 100_000


def _logit(p: float) -> float:
    return float(np.log(p / (1.0 - p)))


def _error_logits(params: dict, is_own: np.ndarray, in_family: np.ndarray, own_wrong):
    """Return (FPR logit, FNR logit) shifts per model column (own_wrong: per question)."""
    fam = in_family & ~is_own
    fpr = params["self_fpr"] * is_own + params["family_fpr"] * fam
    fnr = params["self_fnr"] * is_own + params["family_fnr"] * fam
    ans = params["answered_shift"] * np.asarray(own_wrong, dtype=float)[:, None]
    return _logit(params["fpr"]) + fpr + ans, _logit(params["fnr"]) + fnr + ans


def correctness_sim(
    rng: np.random.Generator,
    *,
    design: Design | None = None,
    fpr: float = 0.2,
    fnr: float = 0.2,
    self_fpr: float = 0.0,
    self_fnr: float = 0.0,
    family_fpr: float = 0.0,
    family_fnr: float = 0.0,
    answered_shift: float = 0.0,
    invalid_rate: float = 0.04,
    invalid_self_rate: float | None = None,
) -> Simulation:
    """Return one simulated correctness benchmark graded by `JUDGE` (see the module docstring).

    Args:
        rng: The only source of randomness.
        design: Questions (`n_clusters`) and ICC; `per_cluster` is the number of models (5).
        fpr: Base FPR at a question of median difficulty for the judge.
        fnr: Base FNR likewise.
        self_fpr: Logit shift of the FPR on the judge's own model's answers.
        self_fnr: Logit shift of the FNR there.
        family_fpr: Logit shift of the FPR on its family's other models' answers.
        family_fnr: Logit shift of the FNR there.
        answered_shift: Logit shift of both error rates where its own model answered wrong.
        invalid_rate: Share of invalid verdicts (at random).
        invalid_self_rate: Share on its own model's answers, when it differs.

    Returns:
        A `Simulation` (items with `question`, `gold`, `meta.candidate_model`, `cluster`;
        judgments of `JUDGE`) whose `truth` is `truths(...)` and whose `params` hold the maps
        (`judge_candidate`, `judge_family`, `candidate_family`).
    """
    design = design or Design(n_clusters=50, per_cluster=len(MODELS), icc=0.3)
    if design.per_cluster != len(MODELS):
        raise ValueError(f"per_cluster must be {len(MODELS)} (one answer per model)")
    params = dict(fpr=fpr, fnr=fnr, self_fpr=self_fpr, self_fnr=self_fnr, family_fpr=family_fpr,
                  family_fnr=family_fnr, answered_shift=answered_shift)  # fmt: skip
    sd = base.cluster_sd(design.icc)
    q = design.n_clusters
    u, e = rng.normal(0.0, sd, q), rng.normal(0.0, sd, q)
    correct = rng.random((q, len(MODELS))) < sigmoid(np.asarray(OFFSETS) + u[:, None])
    is_own, in_family = _columns()
    lf, ln = _error_logits(params, is_own, in_family, ~correct[:, 0])
    err = rng.random(correct.shape) < sigmoid(np.where(correct, ln, lf) + e[:, None])
    says_correct = correct ^ err
    inv_p = np.full(correct.shape, invalid_rate)
    if invalid_self_rate is not None:
        inv_p[:, is_own] = invalid_self_rate
    invalid = rng.random(correct.shape) < inv_p
    verdict = np.where(says_correct, "Correct", "Incorrect").astype(object)
    verdict[invalid] = None
    items = base.items_table(
        design,
        "pointwise",
        {
            "question": [f"question {i}" for i in np.repeat(np.arange(q), len(MODELS))],
            "response": "an answer",
            "gold": np.where(correct.ravel(), "Correct", "Incorrect"),
            "meta": [json.dumps({"candidate_model": m}) for m in MODELS * q],
        },
    )
    judgments = base.judgments_table(
        {
            "benchmark": design.benchmark,
            "split": design.split,
            "item_id": items["item_id"].to_numpy(),
            "judge": JUDGE,
            "condition": "",
            "order": 0,
            "sample": 0,
            "verdict": verdict.ravel(),
        }
    )
    truth = truths(**params, icc=design.icc)
    maps = {
        "judge_candidate": {JUDGE: JUDGE_MODEL},
        "judge_family": {JUDGE: FAMILIES[JUDGE_MODEL]},
        "candidate_family": dict(FAMILIES),
    }
    return Simulation(items, clusters.attach(judgments, items), truth, {**params, **maps})


def _columns() -> tuple[np.ndarray, np.ndarray]:
    is_own = np.array([m == JUDGE_MODEL for m in MODELS])
    in_family = np.array([FAMILIES[m] == FAMILIES[JUDGE_MODEL] for m in MODELS])
    return is_own, in_family


def _rates(cells: np.ndarray) -> dict[str, float]:
    """Agreement, kappa, FPR, FNR of expected cells (tp, fn, fp, tn)."""
    tp, fn, fp, tn = cells / cells.sum()
    p_o = tp + tn
    p_e = (tp + fn) * (tp + fp) + (fp + tn) * (fn + tn)
    return {"agreement": p_o, "kappa": (p_o - p_e) / (1 - p_e), "fpr": fp / (fp + tn),
            "fnr": fn / (fn + tp)}  # fmt: skip


@lru_cache(maxsize=64)
def truths(
    *,
    fpr: float,
    fnr: float,
    self_fpr: float,
    self_fnr: float,
    family_fpr: float,
    family_fnr: float,
    answered_shift: float,
    icc: float,
) -> dict[str, float]:
    """Return the population truths of `correctness_sim` (invalid verdicts excluded).

    Keys: `<metric>` (all answers), `<metric>_self`, `<metric>_others`, `<metric>_diff`
    (self − others, model level), the same with `_family_self` / `_family_others` /
    `_family_diff` (family level), `<metric>_correctly`, `<metric>_incorrectly` and
    `<metric>_gap` (answered correctly − incorrectly), for agreement, kappa, fpr, fnr.
    """
    params = dict(fpr=fpr, fnr=fnr, self_fpr=self_fpr, self_fnr=self_fnr, family_fpr=family_fpr,
                  family_fnr=family_fnr, answered_shift=answered_shift)  # fmt: skip
    rng = np.random.default_rng(20250)
    sd = base.cluster_sd(icc)
    u, e = rng.normal(0.0, sd, _TRUTH_N), rng.normal(0.0, sd, _TRUTH_N)
    pc = sigmoid(np.asarray(OFFSETS) + u[:, None])  # P(answer correct), question × model
    is_own, in_family = _columns()
    cells = {}
    for own_wrong, weight in ((False, pc[:, 0]), (True, 1.0 - pc[:, 0])):
        lf, ln = _error_logits(params, is_own, in_family, np.full(_TRUTH_N, own_wrong))
        f, n = sigmoid(lf + e[:, None]), sigmoid(ln + e[:, None])
        p = pc.copy()
        p[:, 0] = 0.0 if own_wrong else 1.0  # the own answer's label is the subset
        w = weight[:, None]
        stack = (
            np.stack([p * (1 - n), p * n, (1 - p) * f, (1 - p) * (1 - f)], axis=-1) * w[..., None]
        )
        cells[own_wrong] = stack.mean(axis=0)  # model × 4 expected cells
    allc = cells[False] + cells[True]
    groups = {
        "": allc.sum(axis=0),
        "_self": allc[is_own].sum(axis=0),
        "_others": allc[~is_own].sum(axis=0),
        "_family_self": allc[in_family].sum(axis=0),
        "_family_others": allc[~in_family].sum(axis=0),
        "_correctly": cells[False].sum(axis=0),
        "_incorrectly": cells[True].sum(axis=0),
    }
    out: dict[str, float] = {}
    for suffix, c in groups.items():
        out.update({f"{k}{suffix}": float(v) for k, v in _rates(c).items()})
    for metric in ("agreement", "kappa", "fpr", "fnr"):
        out[f"{metric}_diff"] = out[f"{metric}_self"] - out[f"{metric}_others"]
        out[f"{metric}_family_diff"] = (
            out[f"{metric}_family_self"] - out[f"{metric}_family_others"]
        )
        out[f"{metric}_gap"] = out[f"{metric}_correctly"] - out[f"{metric}_incorrectly"]
    return out


def reference_sim(
    rng: np.random.Generator,
    *,
    design: Design | None = None,
    effects: tuple[float, ...] = (0.0, 0.0, 0.0),
    base_logit: float = 1.0,
    item_sd: float = 0.5,
    position: float = 0.4,
    invalid_rate: float = 0.03,
) -> Simulation:
    """Return pairwise items judged in both orders under each of `CONDITIONS`.

    Args:
        rng: The only source of randomness.
        design: Clusters (sources) × items and the ICC of the judge's latent accuracy.
        effects: Logit effect of each condition (`CONDITIONS` order) on accuracy.
        base_logit: Accuracy logit of a median item.
        item_sd: SD of an item's own latent effect (shared by its conditions: pairing).
        position: Logit bonus when the better response is shown first (minus when second).
        invalid_rate: Share of invalid verdicts (counted incorrect).

    Returns:
        A `Simulation` with judge "ref.judge", conditions `CONDITIONS`, judgments carrying
        `cluster`; truth `ca_<condition>` and `ca_diff_<i>_<j>` (condition i − j, by index).
    """
    design = design or Design(n_clusters=50, per_cluster=5, icc=0.3)
    n = design.n_items
    eta = base_logit + base.cluster_effects(rng, design) + rng.normal(0.0, item_sd, n)
    items = base.items_table(
        design,
        "pairwise",
        {"question": "q", "response_pos": "better", "response_neg": "worse", "gold": "pos"},
    )
    parts = []
    for c, delta in zip(CONDITIONS, effects, strict=True):
        for order, sign in ((0, 1.0), (1, -1.0)):
            ok = rng.random(n) < sigmoid(eta + delta + sign * position)
            valid = rng.random(n) >= invalid_rate
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
            **{k: frame[k].to_numpy() for k in frame.columns},
        }  # fmt: skip
    )
    truth = reference_truths(effects, base_logit, item_sd, position, invalid_rate, design.icc)
    params = {"effects": effects, "base_logit": base_logit, "position": position}
    return Simulation(items, clusters.attach(judgments, items), truth, params)


@lru_cache(maxsize=64)
def reference_truths(
    effects: tuple[float, ...],
    base_logit: float,
    item_sd: float,
    position: float,
    invalid_rate: float,
    icc: float,
) -> dict[str, float]:
    """Return each condition's consistent accuracy and every pairwise difference."""
    sd = np.hypot(base.cluster_sd(icc), item_sd)
    out = {}
    for i, delta in enumerate(effects):

        def ca(r: np.random.Generator, k: int, delta: float = delta) -> np.ndarray:
            eta = base_logit + delta + r.normal(0.0, sd, k)
            valid = (1.0 - invalid_rate) ** 2
            return valid * sigmoid(eta + position) * sigmoid(eta - position)

        out[f"ca_{CONDITIONS[i]}"] = base.expectation(ca)
    for i in range(len(effects)):
        for j in range(len(effects)):
            if i != j:
                out[f"ca_diff_{i}_{j}"] = out[f"ca_{CONDITIONS[i]}"] - out[f"ca_{CONDITIONS[j]}"]
    return out


__all__ = ["CONDITIONS", "FAMILIES", "JUDGE", "JUDGE_MODEL", "MODELS", "correctness_sim",
           "reference_sim", "reference_truths", "truths"]  # fmt: skip
