"""Planted-truth generators of the length family: length bias, context-length trends, LC win rate.

- `pairwise_lengths`: pairwise items with heavy-tailed response lengths (log-normal, or a
  Student-t tail), a share of pairs where the longer response is the gold positive, judged
  in both orders by a judge with a position bias, a skill (gold accuracy), a planted length
  bias in a bounded form (`log_ratio`: log2 of the length ratio) or an unbounded one
  (`linear`: per `LINEAR_SCALE` words of difference), latent question (cluster) and item
  effects on its skill, ties and invalid outputs (missing at random);
- `context_lengths`: documents (clusters) with heavy-tailed context lengths, several
  summaries per document judged pointwise, accuracy with a planted trend in log2 context
  length and a document effect;
- `lc_winrate`: AlpacaEval-style single-order comparisons of a model (neg slot) that writes
  longer answers than a fixed baseline (pos slot), with an instruction-cluster effect and a
  planted length preference.

Truths (`Simulation.truth`) come from the planted parameters through one large fixed-seed
draw of the latent variables (`_population`), never from the sample:

- ``p_longer_balanced`` — P(picks longer) averaged over "longer is better / worse" (0.5
  under no length bias, whatever the position bias, skill or gold/length confound);
- ``length_coef`` — the population (pseudo-true) coefficient of the log2-ratio term in the
  working model of `analyses.length.length_regression` (chose A ~ 1 + log2 ratio + gold):
  with latent effects integrated out the marginal model is not exactly logistic, so under
  the alternative this is not the planted bias but what the estimator estimates; 0 under the
  null for every length term;
- ``context_slope`` — the pseudo-true log-odds per doubling of context of the working model
  correct ~ 1 + log2(context) (0 under the null); ``long_context_accuracy`` — accuracy on
  items whose context is at least `LONG_CONTEXT` × the median;
- ``lc_winrate`` — the pseudo-true expit(intercept) of the win-rate GLM (preference ~ 1 +
  tanh(Δlength / SD)).
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

import numpy as np
import pandas as pd

from judgelab.simulate import base
from judgelab.simulate.base import Design, Simulation, sigmoid

#: Words of length difference per unit of the `linear` (unbounded) bias form.
LINEAR_SCALE = 100.0
#: Bias forms of `pairwise_lengths`.
FORMS = ("log_ratio", "linear")
#: `long_context_accuracy` covers contexts of at least this multiple of the median.
LONG_CONTEXT = 1.5
#: SD of the latent item effect (shared by the two orders of an item / by an item's rows).
ITEM_SD = 0.8
_POP = 100_000
#: The default design: 60 clusters of 5 items, latent ICC 0.3.
DESIGN = Design()
_GH = np.polynomial.hermite_e.hermegauss(24)


def _marginal(eta: np.ndarray, sd: float) -> np.ndarray:
    """E[sigmoid(eta + sd·Z)], Z ~ N(0, 1), by Gauss–Hermite quadrature."""
    x, w = _GH
    return (sigmoid(eta[:, None] + sd * x[None, :]) @ w) / w.sum()


def _pseudo_true(p: np.ndarray, X: np.ndarray) -> np.ndarray:
    """Coefficients of the logistic working model fitted to population probabilities `p`."""
    import statsmodels.api as sm

    return np.asarray(sm.GLM(p, X, family=sm.families.Binomial()).fit().params)


def _latent_sd(design: Design) -> float:
    """SD of the summed latent effect (cluster + item) integrated out in the truths."""
    return float(np.sqrt(base.cluster_sd(design.icc) ** 2 + ITEM_SD**2))


def _lengths(rng: np.random.Generator, n: int, scale: np.ndarray, kind: str) -> np.ndarray:
    return np.maximum(1, np.round(base.heavy_tailed(rng, n, kind=kind) * scale)).astype(int)


def _pair_lengths(
    rng: np.random.Generator, n_clusters: int, per: int, kind: str, p_better: float
) -> tuple[np.ndarray, np.ndarray]:
    """Lengths (pos, neg) of pairs: a question-level scale, heavy tails, longer = pos w.p."""
    scale = np.repeat(np.exp(rng.normal(0.0, 0.4, n_clusters)), per)
    a, b = _lengths(rng, scale.size, scale, kind), _lengths(rng, scale.size, scale, kind)
    longer_pos = rng.random(scale.size) < p_better
    hi, lo = np.maximum(a, b), np.minimum(a, b)
    return np.where(longer_pos, hi, lo), np.where(longer_pos, lo, hi)


def _bias_term(len_a: np.ndarray, len_b: np.ndarray, form: str) -> np.ndarray:
    if form == "log_ratio":
        return np.log2((len_a + 1.0) / (len_b + 1.0))
    if form == "linear":
        return (len_a - len_b) / LINEAR_SCALE
    raise ValueError(f"unknown bias form {form!r}; known: {list(FORMS)}")


def _choice_eta(lp, ln, order, *, bias, form, position, skill):
    """Linear predictor of 'chose the response shown first' without latent effects."""
    first_pos = order == 0
    la, lb = np.where(first_pos, lp, ln), np.where(first_pos, ln, lp)
    gold = np.where(first_pos, 0.5, -0.5)
    return position + skill * gold + bias * _bias_term(la, lb, form), la, lb, gold


@lru_cache(maxsize=64)
def _pairwise_truth(
    bias: float, form: str, position: float, skill: float, p_better: float, kind: str, sd: float
) -> dict[str, float]:
    """Population truths of `pairwise_lengths` (a fixed-seed draw; latent effects integrated).

    The latent effect acts on the skill (the log-odds of choosing the gold positive): with
    X = A it enters as ±u, integrated over u ~ N(0, sd²).
    """
    rng = np.random.default_rng(20_240_520)
    lp, ln = _pair_lengths(rng, _POP // 5, 5, kind, p_better)
    rows = []
    for order in (0, 1):
        o = np.full(lp.size, order)
        eta, la, lb, gold = _choice_eta(
            lp, ln, o, bias=bias, form=form, position=position, skill=skill
        )
        # u enters as ±u (symmetric): E sigmoid(eta ± u) = E sigmoid(eta + u).
        p_a = _marginal(eta, sd)
        rows.append((p_a, la, lb, gold))
    p_a = np.concatenate([r[0] for r in rows])
    la, lb = np.concatenate([r[1] for r in rows]), np.concatenate([r[2] for r in rows])
    gold = np.concatenate([r[3] for r in rows])
    p_longer = np.where(la > lb, p_a, 1.0 - p_a)
    unequal = la != lb
    a_is_pos = gold > 0
    longer_pos = np.where(a_is_pos, la > lb, lb > la)
    better = p_longer[unequal & longer_pos].mean()
    worse = p_longer[unequal & ~longer_pos].mean()
    X = np.column_stack([np.ones(la.size), np.log2((la + 1.0) / (lb + 1.0)), gold])
    coef = _pseudo_true(p_a, X)[1] if bias != 0 else 0.0
    return {"p_longer_balanced": float((better + worse) / 2), "length_coef": float(coef)}


def _verdicts(rng, p_first, order, *, ties: float, invalid: float) -> dict[str, np.ndarray]:
    """Draw verdicts A/B (tie, invalid) from P(chose the first shown)."""
    n = p_first.size
    first = rng.random(n) < p_first
    shown_pos = order == 0
    chosen = np.where(first == shown_pos, "pos", "neg").astype(object)
    verdict = np.where(first, "A", "B").astype(object)
    tie = rng.random(n) < ties
    chosen[tie], verdict[tie] = "tie", "tie"
    bad = base.missing_mask(rng, n, rate=invalid)
    chosen[bad], verdict[bad] = None, None
    correct = pd.array(np.where(bad, None, chosen == "pos"), dtype="boolean")
    return {"chosen": chosen, "verdict": verdict, "correct": correct}


def pairwise_lengths(
    rng: np.random.Generator,
    design: Design = DESIGN,
    *,
    bias: float = 0.0,
    form: str = "log_ratio",
    position: float = 0.3,
    skill: float = 1.5,
    p_longer_better: float = 0.6,
    length_kind: str = "lognormal",
    ties: float = 0.03,
    invalid: float = 0.03,
    judge: str = "sim-judge",
) -> Simulation:
    """Return pairwise items judged in both orders by a judge with a planted length bias.

    P(chose A) = sigmoid(position + (skill + u_c + e_i) · g + bias · f(len_A, len_B)), g =
    ±½ (A is / is not the gold positive), u_c the question effect (latent ICC
    `design.icc`), e_i an item effect (SD `ITEM_SD`), f = log2((len_A+1)/(len_B+1))
    (`log_ratio`, bounded in practice) or (len_A − len_B) / `LINEAR_SCALE` (`linear`).
    Lengths: a question-level scale × `base.heavy_tailed` (`length_kind` lognormal or t);
    the longer response is the gold positive with probability `p_longer_better`.

    Items carry their lengths as `core.lengths.add_lengths` would (`len_*`, words) and no
    texts (texts of thousands of words would dominate a calibration replicate's time).

    Returns:
        A `Simulation` (items with `len_*` columns in words, judgments of `judge`; truths
        `p_longer_balanced`, `length_coef`; see the module docstring).
    """
    if form not in FORMS:
        raise ValueError(f"unknown bias form {form!r}; known: {list(FORMS)}")
    n, per = design.n_items, design.per_cluster
    lp, ln = _pair_lengths(rng, design.n_clusters, per, length_kind, p_longer_better)
    u = base.cluster_effects(rng, design) + rng.normal(0.0, ITEM_SD, n)
    items = base.items_table(
        design,
        "pairwise",
        {
            "gold": "pos",
            "len_pos": lp.astype(float),
            "len_neg": ln.astype(float),
            "len_context": 0.0,
            "len_response": np.nan,
            "len_unit": "words",
        },
    )
    parts = []
    for order in (0, 1):
        o = np.full(n, order)
        eta, _, _, gold = _choice_eta(
            lp, ln, o, bias=bias, form=form, position=position, skill=skill
        )
        p_first = sigmoid(eta + u * 2 * gold)
        draws = _verdicts(rng, p_first, o, ties=ties, invalid=invalid)
        parts.append(pd.DataFrame({"item_id": items["item_id"], "order": order, **draws}))
    judgments = _judgments(items, pd.concat(parts, ignore_index=True), judge)
    truth = _pairwise_truth(
        bias, form, position, skill, p_longer_better, length_kind, _latent_sd(design)
    )
    params = dict(
        bias=bias,
        form=form,
        position=position,
        skill=skill,
        p_longer_better=p_longer_better,
        length_kind=length_kind,
        design=design,
    )
    return Simulation(items, judgments, dict(truth), params)


def _judgments(items: pd.DataFrame, rows: pd.DataFrame, judge: str) -> pd.DataFrame:
    keys = items[["benchmark", "split", "item_id", "cluster"]]
    rows = rows.merge(keys, on="item_id", how="left")
    out = base.judgments_table(
        {
            "benchmark": rows["benchmark"],
            "split": rows["split"],
            "item_id": rows["item_id"],
            "judge": judge,
            "condition": "",
            "order": rows["order"].astype(int),
            "sample": 0,
            "verdict": rows["verdict"],
            "chosen": rows["chosen"],
            "correct": rows["correct"],
        }
    )
    out["cluster"] = rows["cluster"].to_numpy()
    return out


def _doc_lengths(rng, n_docs: int, median: float, kind: str) -> np.ndarray:
    return base.heavy_tailed(rng, n_docs, median=median, spread=0.8, kind=kind).astype(float)


@lru_cache(maxsize=64)
def _context_truth(
    slope: float, intercept: float, median: float, kind: str, sd: float
) -> dict[str, float]:
    rng = np.random.default_rng(20_240_521)
    x = np.log2(_doc_lengths(rng, _POP, median, kind) / median)
    p = _marginal(intercept + slope * x, sd)
    long = x >= np.log2(LONG_CONTEXT)
    coef = _pseudo_true(p, np.column_stack([np.ones(x.size), x]))[1] if slope != 0 else 0.0
    return {"context_slope": float(coef), "long_context_accuracy": float(p[long].mean())}


def context_lengths(
    rng: np.random.Generator,
    design: Design = DESIGN,
    *,
    slope: float = 0.0,
    intercept: float = 0.8,
    median: float = 400.0,
    length_kind: str = "lognormal",
    invalid: float = 0.0,
    judge: str = "sim-detector",
) -> Simulation:
    """Return documents (clusters) with heavy-tailed context lengths and summaries judged.

    Every document (a `design` cluster) has one context length (median `median` words,
    `base.heavy_tailed`); its `design.per_cluster` summaries share it. P(correct) =
    sigmoid(intercept + slope · log2(len_context / median) + u_doc + e_i).

    Returns:
        A `Simulation` of pointwise items (`len_context`, `len_response` set, words) and
        judgments with `correct`; truths `context_slope`, `long_context_accuracy`.
    """
    per = design.per_cluster
    ctx = np.repeat(_doc_lengths(rng, design.n_clusters, median, length_kind), per)
    resp = base.heavy_tailed(rng, design.n_items, median=60.0, spread=0.5).astype(float)
    u = base.cluster_effects(rng, design) + rng.normal(0.0, ITEM_SD, design.n_items)
    p = sigmoid(intercept + slope * np.log2(ctx / median) + u)
    correct = rng.random(design.n_items) < p
    items = base.items_table(
        design,
        "pointwise",
        {
            "gold": "consistent",
            "len_context": ctx,
            "len_response": resp,
            "len_pos": np.nan,
            "len_neg": np.nan,
            "len_unit": "words",
        },
    )
    bad = base.missing_mask(rng, design.n_items, rate=invalid)
    verdict = np.where(correct, "consistent", "hallucinated").astype(object)
    verdict[bad] = None
    rows = pd.DataFrame(
        {
            "item_id": items["item_id"],
            "order": 0,
            "verdict": verdict,
            "chosen": None,
            "correct": pd.array(np.where(bad, None, correct), dtype="boolean"),
        }
    )
    judgments = _judgments(items, rows, judge)
    truth = _context_truth(slope, intercept, median, length_kind, _latent_sd(design))
    params = dict(slope=slope, intercept=intercept, median=median, design=design)
    return Simulation(items, judgments, dict(truth), params)


@lru_cache(maxsize=64)
def _lc_truth(bias: float, logit: float, ratio: float, kind: str, sd: float) -> dict[str, Any]:
    rng = np.random.default_rng(20_240_522)
    d, _, _ = _lc_diff(rng, _POP, ratio, kind)
    scale = float(np.std(d, ddof=1))
    z = np.tanh(d / scale)
    p = _marginal(logit + bias * z, sd)
    b0 = _pseudo_true(p, np.column_stack([np.ones(d.size), z]))[0]
    return {"lc_winrate": float(sigmoid(b0)), "diff_sd": scale}


def _lc_diff(rng, n: int, ratio: float, kind: str) -> tuple[np.ndarray, ...]:
    model = base.heavy_tailed(rng, n, median=150.0 * ratio, kind=kind)
    baseline = base.heavy_tailed(rng, n, median=150.0, kind=kind)
    return (model - baseline).astype(float), model, baseline


def lc_winrate(
    rng: np.random.Generator,
    design: Design = DESIGN,
    *,
    bias: float = 0.0,
    logit: float = 0.3,
    length_ratio: float = 1.3,
    length_kind: str = "lognormal",
    judge: str = "sim-annotator",
) -> Simulation:
    """Return AlpacaEval-style verdicts: a model (neg slot) against a fixed baseline (pos).

    The model writes `length_ratio` × longer answers (median); P(model preferred) =
    sigmoid(logit + u_c + e_i + bias · tanh(Δlength / SD)), SD the population SD of
    Δlength = len_model − len_baseline. One presentation order; no gold.

    Returns:
        A `Simulation` (truth `lc_winrate`: the population length-controlled win rate).
    """
    truth = _lc_truth(bias, logit, length_ratio, length_kind, _latent_sd(design))
    d, model, baseline = _lc_diff(rng, design.n_items, length_ratio, length_kind)
    u = base.cluster_effects(rng, design) + rng.normal(0.0, ITEM_SD, design.n_items)
    p = sigmoid(logit + u + bias * np.tanh(d / truth["diff_sd"]))
    wins = rng.random(design.n_items) < p
    items = base.items_table(
        design,
        "pairwise",
        {
            "len_pos": baseline.astype(float),
            "len_neg": model.astype(float),
            "len_context": 0.0,
            "len_response": np.nan,
            "len_unit": "words",
            "meta": [json.dumps({"model_pos": "baseline", "model_neg": "model"})] * design.n_items,
        },
    )
    chosen = np.where(wins, "neg", "pos").astype(object)
    rows = pd.DataFrame(
        {
            "item_id": items["item_id"],
            "order": 0,
            "verdict": np.where(wins, "2", "1"),
            "chosen": chosen,
            "correct": pd.array([None] * design.n_items, dtype="boolean"),
        }
    )
    judgments = _judgments(items, rows, judge)
    params = dict(bias=bias, logit=logit, length_ratio=length_ratio, design=design)
    return Simulation(items, judgments, {"lc_winrate": truth["lc_winrate"]}, params)


__all__ = ["FORMS", "LINEAR_SCALE", "context_lengths", "lc_winrate", "pairwise_lengths"]
