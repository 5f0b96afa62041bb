"""Planted-truth generators of context-length trends and length-controlled win rates.

The document and AlpacaEval-style halves of the length family (the pairs are in
`simulate.length`, whose docstring states how truths are computed):

- `context_lengths`: documents (clusters) with heavy-tailed context lengths, summaries
  judged pointwise, a trend in log2 context that varies by document, invalid outputs more
  often when the judgment is wrong and when the summary is long;
- `lc_winrate`: single-order comparisons of a model (neg slot) that writes longer answers
  than a baseline (pos slot), an instruction-cluster effect, a length preference that varies
  by cluster, invalid outputs more often for long answers.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

import numpy as np
import pandas as pd

from judgelab.simulate import base
from judgelab.simulate.base import Design, Simulation, sigmoid
from judgelab.simulate.length import (
    DESIGN,
    ITEM_SD,
    KINDS,
    LONG_CONTEXT,
    MAX_LOG_RATIO,
    RESPONSE_REFERENCE,
    _invalid_prob,
    _judgments,
    _population_design,
    _pseudo_true,
)


def _doc_log_lengths(rng: np.random.Generator, n_docs: int, kind: str) -> np.ndarray:
    """log2(context / median) of documents: 0.8 × t₃ (`t`) or 0.8 × z, capped at ±6."""
    if kind not in KINDS:
        raise ValueError(f"unknown context-length distribution {kind!r}; known: {list(KINDS)}")
    z = rng.standard_t(3.0, size=n_docs) if kind == "t" else rng.standard_normal(n_docs)
    return np.clip(0.8 * z, -MAX_LOG_RATIO, MAX_LOG_RATIO)


def _response_lengths(rng: np.random.Generator, n: int) -> np.ndarray:
    return base.heavy_tailed(rng, n, median=RESPONSE_REFERENCE, spread=0.5).astype(float)


@lru_cache(maxsize=64)
def _context_truth(key: tuple[Any, ...]) -> dict[str, float]:
    slope, intercept, kind, invalid, inv_wrong, inv_long, icc, effect_sd = key
    rng = np.random.default_rng(20_240_521)
    design = _population_design(icc, effect_sd)
    c = base.cluster_index(design)
    x_doc = _doc_log_lengths(rng, design.n_clusters, kind)
    u = base.cluster_effects(rng, design) + rng.normal(0.0, ITEM_SD, design.n_items)
    b = base.cluster_slopes(rng, design, slope)
    log_resp = np.log2(_response_lengths(rng, design.n_items) / RESPONSE_REFERENCE)
    keep_ok = 1 - _invalid_prob(invalid, np.zeros(b.size), inv_wrong, log_resp, inv_long)
    keep_bad = 1 - _invalid_prob(invalid, np.ones(b.size), inv_wrong, log_resp, inv_long)
    ps, ws, xs = [], [], []
    # every document beside its mirror (−x, 2·slope − b), a draw of the same distribution:
    # under a null mean slope the twins have the same P and opposite log contexts
    for x, slopes in ((x_doc[c], b), (-x_doc[c], 2 * slope - b)):
        p = sigmoid(intercept + u + slopes * x)
        w = p * keep_ok + (1 - p) * keep_bad
        ps.append(p * keep_ok / w)
        ws.append(w)
        xs.append(x)
    p, w, x = np.concatenate(ps), np.concatenate(ws), np.concatenate(xs)
    coef = float(_pseudo_true(p, np.column_stack([np.ones(x.size), x]), w)[1])
    long = x >= np.log2(LONG_CONTEXT)
    acc = float(np.sum(w[long] * p[long]) / np.sum(w[long]))
    return {"context_slope": coef, "long_context_accuracy": acc}


def context_lengths(
    rng: np.random.Generator,
    design: Design = DESIGN,
    *,
    slope: float = 0.0,
    intercept: float = 0.8,
    median: float = 400.0,
    length_kind: str = "t",
    invalid: float = 0.04,
    invalid_wrong: float = 1.2,
    invalid_long: float = 0.5,
    judge: str = "sim-detector",
) -> Simulation:
    """Return documents (clusters) with heavy-tailed context lengths and summaries judged.

    Every document (a `design` cluster) has one context length, median · 2^x with x =
    0.8 × t₃ (`length_kind="t"`) or 0.8 × z; its summaries share it. P(correct) =
    sigmoid(intercept + b_d · x + u_d + e_i), b_d the document's trend (mean `slope`, SD
    `design.effect_sd`). A judgment is invalid with probability sigmoid(logit(`invalid`)
    + `invalid_wrong` · [wrong] + `invalid_long` · log2(summary length / 60 words)) —
    missing not at random (tied to the summary's length, not the context's, so that a null
    trend stays null among valid judgments).

    Returns:
        A `Simulation` of pointwise items (`len_context`, `len_response` set, words) and
        judgments with `correct`; truths `context_slope`, `long_context_accuracy`.
    """
    design = design.realise(rng)
    n = design.n_items
    c = base.cluster_index(design)
    x = _doc_log_lengths(rng, design.n_clusters, length_kind)[c]
    ctx = np.maximum(1.0, np.round(median * 2.0**x))
    resp = _response_lengths(rng, n)
    u = base.cluster_effects(rng, design) + rng.normal(0.0, ITEM_SD, n)
    b = base.cluster_slopes(rng, design, slope)
    correct = rng.random(n) < sigmoid(intercept + b * x + u)
    q = _invalid_prob(
        invalid,
        (~correct).astype(float),
        invalid_wrong,
        np.log2(resp / RESPONSE_REFERENCE),
        invalid_long,
    )
    bad = rng.random(n) < q
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
    key = (
        slope,
        intercept,
        length_kind,
        invalid,
        invalid_wrong,
        invalid_long,
        design.icc,
        design.effect_sd,
    )
    truth = _context_truth(key)
    params = dict(slope=slope, intercept=intercept, median=median, design=design)
    return Simulation(items, judgments, dict(truth), params)


# ---------------------------------------------------------------- length-controlled win rate


def _lc_lengths(rng, n: int, ratio: float, kind: str) -> tuple[np.ndarray, np.ndarray]:
    """(model, baseline) answer lengths: the model writes `ratio` × longer (median)."""
    return (
        base.heavy_tailed(rng, n, median=150.0 * ratio, kind=kind).astype(float),
        base.heavy_tailed(rng, n, median=150.0, kind=kind).astype(float),
    )


@lru_cache(maxsize=64)
def _lc_truth(key: tuple[Any, ...]) -> dict[str, float]:
    bias, logit, ratio, kind, invalid, inv_long, icc, effect_sd = key
    rng = np.random.default_rng(20_240_522)
    design = _population_design(icc, effect_sd)
    model, baseline = _lc_lengths(rng, design.n_items, ratio, kind)
    d = model - baseline
    scale = float(np.std(d, ddof=1))
    z = np.tanh(d / scale)
    u = base.cluster_effects(rng, design) + rng.normal(0.0, ITEM_SD, design.n_items)
    b = base.cluster_slopes(rng, design, bias)
    p = sigmoid(logit + u + b * z)
    w = 1 - _invalid_prob(invalid, np.zeros(d.size), 0.0, np.log2(model / 150.0), inv_long)
    b0 = _pseudo_true(p, np.column_stack([np.ones(d.size), z]), w)[0]
    return {"lc_winrate": float(sigmoid(b0)), "diff_sd": scale}


def lc_winrate(
    rng: np.random.Generator,
    design: Design = DESIGN,
    *,
    bias: float = 0.0,
    logit: float = 0.3,
    length_ratio: float = 1.3,
    length_kind: str = "lognormal",
    invalid: float = 0.03,
    invalid_long: float = 0.5,
    judge: str = "sim-annotator",
) -> Simulation:
    """Return AlpacaEval-style verdicts: a model (neg slot) against a fixed baseline (pos).

    The model writes `length_ratio` × longer answers (median); P(model preferred) =
    sigmoid(logit + u_c + e_i + b_c · tanh(Δlength / SD)), SD the population SD of
    Δlength = len_model − len_baseline, b_c the instruction cluster's length preference
    (mean `bias`, SD `design.effect_sd`). One presentation order; no gold. An annotation is
    invalid with probability sigmoid(logit(`invalid`) + `invalid_long` · log2(model length
    / 150)): long answers fail more often (missing not at random).

    Returns:
        A `Simulation` (truth `lc_winrate`: the population length-controlled win rate).
    """
    design = design.realise(rng)
    n = design.n_items
    key = (
        bias,
        logit,
        length_ratio,
        length_kind,
        invalid,
        invalid_long,
        design.icc,
        design.effect_sd,
    )
    truth = _lc_truth(key)
    model, baseline = _lc_lengths(rng, n, length_ratio, length_kind)
    u = base.cluster_effects(rng, design) + rng.normal(0.0, ITEM_SD, n)
    b = base.cluster_slopes(rng, design, bias)
    p = sigmoid(logit + u + b * np.tanh((model - baseline) / truth["diff_sd"]))
    wins = rng.random(n) < p
    bad = rng.random(n) < _invalid_prob(
        invalid, np.zeros(n), 0.0, np.log2(model / 150.0), invalid_long
    )
    items = base.items_table(
        design,
        "pairwise",
        {
            "len_pos": baseline,
            "len_neg": model,
            "len_context": 0.0,
            "len_response": np.nan,
            "len_unit": "words",
            "meta": [json.dumps({"model_pos": "baseline", "model_neg": "model"})] * n,
        },
    )
    chosen = np.where(wins, "neg", "pos").astype(object)
    verdict = np.where(wins, "2", "1").astype(object)
    chosen[bad], verdict[bad] = None, None
    rows = pd.DataFrame(
        {
            "item_id": items["item_id"],
            "order": 0,
            "verdict": verdict,
            "chosen": chosen,
            "correct": pd.array([None] * n, dtype="boolean"),
        }
    )
    judgments = _judgments(items, rows, judge)
    params = dict(bias=bias, logit=logit, length_ratio=length_ratio, design=design)
    return Simulation(items, judgments, {"lc_winrate": truth["lc_winrate"]}, params)


__all__ = ["context_lengths", "lc_winrate"]
