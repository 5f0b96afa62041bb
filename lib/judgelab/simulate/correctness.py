"""Planted-truth correctness grading (notebook 05).

`correctness_sim`: one judge grades candidate answers Correct/Incorrect against human labels.
The data are shaped like a real corpus (issue 33), from the scenario's `Design`:

- **clusters** (question clusters: a topic, a source passage) of unequal sizes (`Design.realise`:
  singletons beside a cluster holding a third of the answers); a cluster's answers fall into
  questions of `question_size` answers, each question answered by distinct candidate models
  from a pool of nine (`MODELS`); the judge's own model answers a question with a probability
  that varies by cluster (`own_share`, logit-normal with SD `own_share_sd`), so some clusters
  hold no own-model answer and small samples hold few own-model negatives;
- **answers** are correct with P = σ(offset_model + u_cluster + w_question) (u with the design's
  intra-cluster correlation, w a question effect); the offsets are symmetric around the judge's
  own model (0), so labels are symmetric;
- **the judge** errs on a human-Incorrect answer (FPR) with P = σ(logit(fpr) + e_cluster + ...)
  and on a human-Correct one (FNR) likewise, e_cluster a shared effect (same ICC). Its leniency
  toward its own answers varies by cluster: the own − others contrast of the FPR logit is
  `self_fpr` + s_cluster (s ~ N(0, `self_sd`²), `Design.effect_sd` by default), split
  symmetrically (own +s/2, others −s/2; the FNR the other way round), so that with
  `self_fpr` = 0 the own and other FPRs are equal in the population whatever s does;
  `family_fpr` / `family_fnr` shift the family's other model; `answered_shift` shifts both
  error rates on questions its own model answered wrong (spec 001 §4.2/§4.5);
- **invalid verdicts** are missing not at random: at `invalid_wrong_rate` where the verdict
  would be wrong, `invalid_rate` where it would be right (`invalid_self_rate`: a flat rate on
  its own answers instead, when given).

Truths are super-population values of the ratio-of-expected-sums estimands (`truths`), computed
without the estimators: the judge's error and validity probabilities are independent of which
answers exist and of their labels, so every cell's expectation is E[count of answers of a kind]
× E[judge outcome for that kind]. The counts come from a large draw of the answer structure
(with its mirror image: offsets, effects and labels reversed, which makes the label symmetry
exact), the judge outcomes from a large draw of (e, s) with s mirrored — so a null holds
exactly: own − others FPR is 0 without `self_fpr`, and the answered kappa gap is 0 without
`answered_shift` when fpr = fnr (κ is prevalence-dependent; the symmetry makes the two
subsets' prevalences mirror images).

`reference_sim` (reference conditions, notebook 06) lives in `simulate.reference`.
"""

from __future__ import annotations

import json
from dataclasses import replace
from functools import lru_cache
from typing import NamedTuple

import numpy as np

from judgelab.simulate import base
from judgelab.simulate.base import Design, Simulation, sigmoid
from judgelab.simulate.reference import CONDITIONS, reference_sim, reference_truths

#: Candidate models (the judge's own model first) and their answer-correctness logit offsets:
#: symmetric around the own model's 0 (each offset has its mirror), as in a nine-model corpus.
MODELS = ("alpha-70b", "alpha-7b", "beta-8b", "gamma-9b", "delta-2b", "eps-13b", "zeta-34b",
          "eta-1b", "theta-3b")  # fmt: skip
OFFSETS = (0.0, -0.8, 0.8, -0.4, 0.4, -1.2, 1.2, -0.2, 0.2)
#: The model whose offset is the mirror image of each model's (index).
MIRROR = (0, 2, 1, 4, 3, 6, 5, 8, 7)
FAMILIES = {"alpha-70b": "alpha", "alpha-7b": "alpha", "beta-8b": "beta", "gamma-9b": "gamma",
            "delta-2b": "delta", "eps-13b": "eps", "zeta-34b": "zeta", "eta-1b": "eta",
            "theta-3b": "theta"}  # fmt: skip
JUDGE, JUDGE_MODEL = "alpha.judge", "alpha-70b"
#: Answers in the large draw behind the truths, and judge-effect draws (each mirrored).
_TRUTH_ANSWERS = 300_000
_TRUTH_EFFECTS = 200_000
#: Answer kinds of the truth's counts: model type (own, family, other) of each model.
_OWN, _FAMILY, _OTHER = 0, 1, 2


def _logit(p: float) -> float:
    return float(np.log(p / (1.0 - p)))


def _types() -> np.ndarray:
    own = FAMILIES[JUDGE_MODEL]
    return np.array(
        [_OWN if m == JUDGE_MODEL else _FAMILY if FAMILIES[m] == own else _OTHER for m in MODELS]
    )


class _Answers(NamedTuple):
    """The answer structure of one draw (one row per answer)."""

    cluster: np.ndarray  # cluster index
    question: np.ndarray  # global question index
    model: np.ndarray  # index into MODELS
    correct: np.ndarray  # bool: the human label is Correct
    answered: np.ndarray  # 0: its question has no own answer; 1: own answer correct; 2: wrong


def _answers(
    rng: np.random.Generator,
    sizes: np.ndarray,
    *,
    icc: float,
    own_share: float,
    own_share_sd: float,
    question_size: int,
    question_sd: float,
    mirror: bool = False,
) -> _Answers:
    """Draw which model answers what and whether it is correct (sizes = answers per cluster).

    `mirror` also returns the mirror image (offsets, effects and labels reversed) appended.
    """
    sizes = np.asarray(sizes, dtype=np.int64)
    G = len(sizes)
    cluster = np.repeat(np.arange(G), sizes)
    start = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    pos = np.arange(len(cluster)) - start[cluster]
    q_in = pos // question_size
    n_q_cluster = -(-sizes // question_size)
    q_start = np.concatenate([[0], np.cumsum(n_q_cluster)[:-1]])
    question = q_start[cluster] + q_in
    slot = pos % question_size
    n_q = int(n_q_cluster.sum())
    q_cluster = np.repeat(np.arange(G), n_q_cluster)
    share = sigmoid(_logit(own_share) + rng.normal(0.0, own_share_sd, G))
    own_q = rng.random(n_q) < share[q_cluster]
    others = np.argsort(rng.random((n_q, len(MODELS) - 1)), axis=1) + 1  # distinct per question
    own_here = own_q[question] & (slot == 0)
    pick = np.clip(slot - own_q[question].astype(np.int64), 0, len(MODELS) - 2)
    model = np.where(own_here, 0, others[question, pick])
    sd = base.cluster_sd(icc)
    u, w = rng.normal(0.0, sd, G), rng.normal(0.0, question_sd, n_q)
    eta = np.asarray(OFFSETS)[model] + u[cluster] + w[question]
    draw = rng.random(len(model))
    correct = draw < sigmoid(eta)
    own_correct = np.zeros(n_q, dtype=bool)
    own_correct[question[own_here]] = correct[own_here]
    answered = np.where(own_q[question], np.where(own_correct[question], 1, 2), 0)
    out = _Answers(cluster, question, model, correct, answered)
    if not mirror:
        return out
    # the mirror image: offsets, effects and uniforms reversed -> every label flips exactly
    m_model = np.asarray(MIRROR)[model]
    m_correct = ~correct
    m_answered = np.where(answered == 0, 0, 3 - answered)
    return _Answers(
        *(np.concatenate([a, b]) for a, b in zip(out, (cluster + G, question + n_q, m_model,
                                                       m_correct, m_answered), strict=True))
    )  # fmt: skip


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
    self_sd: float | None = None,
    own_share: float = 0.5,
    own_share_sd: float = 1.0,
    question_size: int = 3,
    question_sd: float = 0.5,
    invalid_rate: float = 0.03,
    invalid_wrong_rate: float = 0.12,
    invalid_self_rate: float | None = None,
) -> Simulation:
    """Return one simulated correctness benchmark graded by `JUDGE` (see the module docstring).

    Args:
        rng: The only source of randomness.
        design: Clusters, answers (`per_cluster`: mean answers per cluster), ICC, unequal sizes
            (`size_spread`) and cluster-varying effects (`effect_sd`); realised here.
        fpr: Base FPR at a cluster of median leniency.
        fnr: Base FNR likewise.
        self_fpr: Mean logit shift of the FPR on the judge's own model's answers (vs others').
        self_fnr: Mean logit shift of the FNR there.
        family_fpr: Logit shift of the FPR on its family's other model's answers.
        family_fnr: Logit shift of the FNR there.
        answered_shift: Logit shift of both error rates where its own model answered wrong.
        self_sd: SD over clusters of the own − others leniency contrast (None: the design's
            `effect_sd`).
        own_share: Median share of questions its own model answers (varies by cluster).
        own_share_sd: SD over clusters of that share on the logit scale.
        question_size: Answers per question (distinct models; the last one of a cluster fewer).
        question_sd: SD of a question's difficulty within its cluster (logit scale).
        invalid_rate: Share of invalid verdicts where the verdict would be right.
        invalid_wrong_rate: Share where it would be wrong (missing not at random).
        invalid_self_rate: A flat invalid share on its own answers instead, when given.

    Returns:
        A `Simulation` (items with `question`, `gold`, `meta.candidate_model`, `cluster`;
        judgments of `JUDGE`) whose `truth` is `truths(...)` of the design and whose `params`
        hold the maps (`judge_candidate`, `judge_family`, `candidate_family`).
    """
    design = design or Design(n_clusters=50, per_cluster=5, icc=0.3)
    if not 1 <= question_size < len(MODELS):
        raise ValueError(f"question_size must be in 1..{len(MODELS) - 1}, got {question_size}")
    judge = _Judge(fpr, fnr, self_fpr, self_fnr, family_fpr, family_fnr, answered_shift,
                   design.effect_sd if self_sd is None else self_sd, invalid_rate,
                   invalid_wrong_rate, invalid_self_rate)  # fmt: skip
    shape = _Shape(replace(design, sizes=None), own_share, own_share_sd, question_size,
                   question_sd)  # fmt: skip
    real = design.realise(rng)
    a = _answers(rng, real.cluster_sizes, icc=real.icc, own_share=own_share,
                 own_share_sd=own_share_sd, question_size=question_size,
                 question_sd=question_sd)  # fmt: skip
    G = real.n_clusters
    e = rng.normal(0.0, base.cluster_sd(real.icc), G)[a.cluster]
    s = rng.normal(0.0, judge.self_sd, G)[a.cluster]
    kind = _types()[a.model]
    p_err = _error_probability(judge, kind, a.correct, a.answered == 2, e, s)
    err = rng.random(len(kind)) < p_err
    p_inv = np.where(err, invalid_wrong_rate, invalid_rate)
    if invalid_self_rate is not None:
        p_inv = np.where(kind == _OWN, invalid_self_rate, p_inv)
    invalid = rng.random(len(kind)) < p_inv
    says_correct = a.correct ^ err
    verdict = np.where(says_correct, "Correct", "Incorrect").astype(object)
    verdict[invalid] = None
    models = np.asarray(MODELS, dtype=object)[a.model]
    items = base.items_table(
        real,
        "pointwise",
        {
            "question": [f"question {q}" for q in a.question],
            "response": "an answer",
            "gold": np.where(a.correct, "Correct", "Incorrect"),
            "meta": [json.dumps({"candidate_model": m}) for m in models],
        },
    )
    judgments = base.judgments_table(
        {
            "benchmark": real.benchmark,
            "split": real.split,
            "item_id": items["item_id"].to_numpy(),
            "judge": JUDGE,
            "condition": "",
            "order": 0,
            "sample": 0,
            "verdict": verdict,
            "cluster": items["cluster"].to_numpy(),
        }
    )
    maps = {
        "judge_candidate": {JUDGE: JUDGE_MODEL},
        "judge_family": {JUDGE: FAMILIES[JUDGE_MODEL]},
        "candidate_family": dict(FAMILIES),
    }
    params = {**judge._asdict(), **shape._asdict(), **maps}
    return Simulation(items, judgments, truths(judge, shape), params)


class _Judge(NamedTuple):
    """The judge's planted behaviour (hashable: the truths' cache key)."""

    fpr: float
    fnr: float
    self_fpr: float
    self_fnr: float
    family_fpr: float
    family_fnr: float
    answered_shift: float
    self_sd: float
    invalid_rate: float
    invalid_wrong_rate: float
    invalid_self_rate: float | None


class _Shape(NamedTuple):
    """The answer structure's parameters (hashable: the truths' cache key)."""

    design: Design
    own_share: float
    own_share_sd: float
    question_size: int
    question_sd: float


def _error_probability(
    judge: _Judge,
    kind: np.ndarray,
    correct: np.ndarray,
    shifted: np.ndarray,
    e: np.ndarray,
    s: np.ndarray,
) -> np.ndarray:
    """Return P(the judge's verdict is wrong) per answer (kind: own / family / other)."""
    own, fam = kind == _OWN, kind == _FAMILY
    half = np.where(own, 0.5, -0.5) * s  # own − others leniency contrast, split symmetrically
    lf = _logit(judge.fpr) + judge.self_fpr * own + judge.family_fpr * fam + half
    ln = _logit(judge.fnr) + judge.self_fnr * own + judge.family_fnr * fam - half
    shift = judge.answered_shift * np.asarray(shifted, dtype=float)
    return sigmoid(np.where(correct, ln, lf) + e + shift)


def _judge_outcomes(judge: _Judge, icc: float) -> np.ndarray:
    """Return E[right & valid, wrong & valid, invalid] per (kind, label, shifted): 3×2×2×3.

    Expectations over the cluster effects e and s (s mirrored: exact own/other symmetry).
    """
    rng = np.random.default_rng(20250)
    e = rng.normal(0.0, base.cluster_sd(icc), _TRUTH_EFFECTS)
    s = rng.normal(0.0, judge.self_sd, _TRUTH_EFFECTS)
    e, s = np.concatenate([e, e]), np.concatenate([s, -s])
    out = np.zeros((3, 2, 2, 3))
    for kind in (_OWN, _FAMILY, _OTHER):
        k = np.full(len(e), kind)
        for label in (0, 1):  # 0 = human Incorrect, 1 = Correct
            for shifted in (0, 1):
                p = _error_probability(
                    judge, k, np.full(len(e), bool(label)), np.full(len(e), bool(shifted)), e, s
                )
                m_w, m_r = judge.invalid_wrong_rate, judge.invalid_rate
                if judge.invalid_self_rate is not None and kind == _OWN:
                    m_w = m_r = judge.invalid_self_rate
                out[kind, label, shifted] = [
                    np.mean((1 - p) * (1 - m_r)),
                    np.mean(p * (1 - m_w)),
                    np.mean((1 - p) * m_r + p * m_w),
                ]
    return out


def _counts(shape: _Shape) -> np.ndarray:
    """Return expected answers per (model, label, answered state): 9×2×3, per answer drawn.

    From a large draw of realised designs of `shape` and its mirror image.
    """
    rng = np.random.default_rng(20251)
    reps = max(1, -(-_TRUTH_ANSWERS // shape.design.n_items))
    sizes = np.concatenate([shape.design.realise(rng).cluster_sizes for _ in range(reps)])
    a = _answers(rng, sizes, icc=shape.design.icc, own_share=shape.own_share,
                 own_share_sd=shape.own_share_sd, question_size=shape.question_size,
                 question_sd=shape.question_sd, mirror=True)  # fmt: skip
    cnt = np.zeros((len(MODELS), 2, 3))
    np.add.at(cnt, (a.model, a.correct.astype(np.int64), a.answered), 1.0)
    return cnt / len(a.model)


def _rates(cells: np.ndarray) -> dict[str, float]:
    """Agreement, kappa, FPR, FNR of expected cells (tp, fn, fp, tn, invalid+, invalid−)."""
    tp, fn, fp, tn, ip, ineg = cells / cells.sum()
    p_o = tp + tn
    h_c, h_i = tp + fn + ip, fp + tn + ineg
    p_e = h_c * (tp + fp) + h_i * (fn + tn)  # an invalid verdict matches no human label
    return {"agreement": p_o, "kappa": (p_o - p_e) / (1 - p_e), "fpr": (fp + ineg) / h_i,
            "fnr": (fn + ip) / h_c}  # fmt: skip


@lru_cache(maxsize=128)
def truths(judge: _Judge, shape: _Shape) -> dict[str, float]:
    """Return the population truths of `correctness_sim`.

    Keys: `<metric>` (all answers), `<metric>_self`, `<metric>_others`, `<metric>_diff`
    (self − others, model level), the same with `_family_self` / `_family_others` /
    `_family_diff` (family level), `<metric>_correctly`, `<metric>_incorrectly` and
    `<metric>_gap` (answered correctly − incorrectly), for agreement, kappa, fpr, fnr, with
    invalid verdicts excluded; each key again with the suffix `_error` where invalid verdicts
    count as errors (`invalid_policy="error"`).
    """
    cnt = _counts(shape)
    judge_out = _judge_outcomes(judge, shape.design.icc)
    kind = _types()
    # cells[model, label, answered] = count × judge outcome for that kind, label and shift
    outcome = judge_out[kind[:, None, None], np.arange(2)[None, :, None],
                        (np.arange(3) == 2)[None, None, :].astype(np.int64)]  # fmt: skip
    per = cnt[..., None] * outcome  # model × label × answered × (right, wrong, invalid)
    own_m = kind == _OWN
    fam_m = kind != _OTHER
    groups = {
        "": per.sum(axis=(0, 2)),
        "_self": per[own_m].sum(axis=(0, 2)),
        "_others": per[~own_m].sum(axis=(0, 2)),
        "_family_self": per[fam_m].sum(axis=(0, 2)),
        "_family_others": per[~fam_m].sum(axis=(0, 2)),
        "_correctly": per[:, :, 1].sum(axis=0),
        "_incorrectly": per[:, :, 2].sum(axis=0),
    }
    out: dict[str, float] = {}
    for suffix, g in groups.items():  # g: label (Incorrect, Correct) × (right, wrong, invalid)
        tp, fn, ip = g[1]
        tn, fp, ineg = g[0]
        for policy, cells in (
            ("", np.array([tp, fn, fp, tn, 0.0, 0.0])),
            ("_error", np.array([tp, fn, fp, tn, ip, ineg])),
        ):
            out.update({f"{k}{suffix}{policy}": float(v) for k, v in _rates(cells).items()})
    for metric in ("agreement", "kappa", "fpr", "fnr"):
        for policy in ("", "_error"):
            m = lambda s, p=policy, k=metric: out[f"{k}{s}{p}"]  # noqa: E731
            out[f"{metric}_diff{policy}"] = m("_self") - m("_others")
            out[f"{metric}_family_diff{policy}"] = m("_family_self") - m("_family_others")
            out[f"{metric}_gap{policy}"] = m("_correctly") - m("_incorrectly")
    return out


__all__ = ["CONDITIONS", "FAMILIES", "JUDGE", "JUDGE_MODEL", "MODELS", "OFFSETS",
           "correctness_sim", "reference_sim", "reference_truths", "truths"]  # fmt: skip
