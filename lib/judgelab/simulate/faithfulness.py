"""Planted-truth faithfulness benchmarks: FaithBench-style pairs, FaithEval answers, prompts.

Three generators, each through the real schema (`base.items_table`, `base.judgments_table`,
judgments carrying the items' `cluster` as the data layer's `clusters.attach` does):

- `faithbench`: source documents (clusters) of `per_cluster` (default 10) summaries each,
  with human hallucination labels (a source-level latent effect makes some documents
  hard), and one detector whose 1–5 score of a summary is
  ``(discrimination + w_s) · consistent + logistic noise`` cut at fixed thresholds (ties
  occur), `w_s ~ N(0, doc_sd²)` a document-level effect on how well it separates the two
  labels; a share of scores is invalid (missing at random). The contrastive pairs
  (`analyses.faithfulness.faithbench_pairs`, every cross-label pair of a source) reuse
  each summary in several pairs, as FaithBench's method-comparison pairs do. Truths:
  `alignment` = E[Σ pos] / E[Σ pairs] and `margin` = E[Σ pos − Σ neg] / E[Σ decided],
  by one large fixed-seed draw of sources (0 exactly when `discrimination` is 0).
- `faitheval_mc`: FaithEval-style multiple-choice items (4 options, clusters of related
  questions with a latent difficulty) answered by one model whose raw answer texts come in
  several phrasings ("B", "(B)", "The answer is B.", "Answer: B", "B) text", the option
  text alone, …); a share `unparsed` of answers names no option. Truths: `accuracy`
  (graded: an unparsed answer is wrong) = E[σ(ability + u)] · (1 − unparsed), and
  `unparsed_share`.
- `prompt_strategies`: pairwise items judged in both orders by one model under a baseline
  prompt and several strategies (logit shifts `effects`), with an item-level and a
  cluster-level latent difficulty shared by all prompts (so comparisons are paired) and
  invalid verdicts at a per-prompt rate. Truth `diff_ca:<strategy>`: the population
  difference in consistent accuracy, strategy − baseline (by a large draw).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import lru_cache

import numpy as np
import pandas as pd

from judgelab.core import clusters
from judgelab.simulate import base
from judgelab.simulate.base import Design, Simulation

#: Score thresholds of the detector's 1–5 scale (on the latent logit scale).
SCORE_CUTS = (-1.5, -0.5, 0.5, 1.5)
#: Raw answer templates of `faitheval_mc` ({L}: the letter, {T}: the option text).
PHRASINGS = (
    "{L}",
    "({L})",
    "The answer is {L}.",
    "Answer: {L}",
    "{L}) {T}",
    "I think the answer is ({L}) given the passage.",
    "It is {T}.",
)
#: Raw answers that name no option.
UNPARSEABLE = (
    "I cannot determine this from the context.",
    "None of the options fits.",
    "Bees and ants.",
)
_OPTION_WORDS = ("copper wire", "glass rod", "wooden stick", "rubber band", "steel nail")
FAITHBENCH_DESIGN = Design(n_clusters=40, per_cluster=10, icc=0.3, benchmark="faithbench_sim")
FAITHEVAL_DESIGN = Design(n_clusters=50, per_cluster=5, icc=0.3, benchmark="faitheval_sim")
STRATEGY_DESIGN = Design(n_clusters=50, per_cluster=5, icc=0.3, benchmark="prompts_sim")


def _labels_and_scores(
    rng: np.random.Generator, n_sources: int, per: int, icc: float, p: Mapping[str, float]
) -> tuple[np.ndarray, np.ndarray]:
    """Per-summary (consistent 0/1, detector score 1..5 with 0 = invalid), sources × per."""
    u = rng.normal(0.0, base.cluster_sd(icc), size=(n_sources, 1))
    consistent = (rng.random((n_sources, per)) < base.sigmoid(p["label_logit"] + u)).astype(int)
    w = rng.normal(0.0, p["doc_sd"], size=(n_sources, 1))
    latent = (p["discrimination"] + w) * consistent + rng.logistic(size=(n_sources, per))
    score = 1 + np.searchsorted(np.array(SCORE_CUTS), latent)
    score[rng.random((n_sources, per)) < p["invalid"]] = 0
    return consistent, score


def _pair_sums(consistent: np.ndarray, score: np.ndarray) -> tuple[float, float, float]:
    """Σ pos, Σ neg and Σ pairs over all (consistent, hallucinated) pairs of each source."""
    c = consistent.astype(bool)
    valid = score > 0
    a = score[:, :, None]
    b = score[:, None, :]
    pair = c[:, :, None] & ~c[:, None, :]
    ok = pair & valid[:, :, None] & valid[:, None, :]
    return float((ok & (a > b)).sum()), float((ok & (a < b)).sum()), float(pair.sum())


@lru_cache(maxsize=64)
def _faithbench_truth(per: int, icc: float, items: tuple[tuple[str, float], ...]) -> tuple:
    rng = np.random.default_rng(12345)
    pos = neg = total = 0.0
    for _ in range(4):
        c, s = _labels_and_scores(rng, 20_000, per, icc, dict(items))
        dp, dn, dt = _pair_sums(c, s)
        pos, neg, total = pos + dp, neg + dn, total + dt
    return pos / total, (pos - neg) / (pos + neg)


def faithbench(
    rng: np.random.Generator,
    *,
    design: Design = FAITHBENCH_DESIGN,
    discrimination: float = 1.0,
    doc_sd: float = 0.8,
    label_logit: float = 0.0,
    invalid: float = 0.03,
    judge: str = "sim-detector",
) -> Simulation:
    """Draw FaithBench-style summaries, human labels and one detector's scores.

    Args:
        rng: The only source of randomness.
        design: Sources (clusters) × summaries per source, latent ICC of the labels.
        discrimination: Log-odds shift of the score of a consistent summary (0: none).
        doc_sd: SD of the document-level effect on the discrimination.
        label_logit: Mean logit of a summary being consistent (0: half).
        invalid: Share of invalid (missing) scores, at random.
        judge: The detector's judge id.

    Returns:
        A `Simulation`: items (`context` = source, `gold` = Consistent/Hallucinated,
        `response` = summary), judgments (the score as verdict, method Baseline via
        `ragas.direct`), `extra["scores"]` (long scores for `pointwise_preferences`), truths
        `alignment` and `margin`.
    """
    p = {
        "discrimination": discrimination,
        "doc_sd": doc_sd,
        "label_logit": label_logit,
        "invalid": invalid,
    }
    c, s = _labels_and_scores(rng, design.n_clusters, design.per_cluster, design.icc, p)
    src = base.cluster_index(design)
    items = base.items_table(
        design,
        "pointwise",
        {
            "context": [f"source {k} " + base.words(50) for k in src],
            "response": [f"summary {i} " + base.words(20) for i in range(design.n_items)],
            "gold": np.where(c.ravel() == 1, "Consistent", "Hallucinated"),
            "question": "Summarize the source document.",
        },
    )
    score = s.ravel().astype(float)
    verdict = np.where(score > 0, score.astype(int).astype(str), None)
    judgments = base.judgments_table(
        {
            "benchmark": design.benchmark,
            "split": design.split,
            "item_id": items["item_id"].to_numpy(),
            "judge": judge,
            "prompt": "ragas.direct",
            "verdict": verdict,
        }
    )
    scores = pd.DataFrame(
        {
            "item_id": items["item_id"].to_numpy(),
            "judge": judge,
            "method": "Baseline",
            "score": np.where(score > 0, score, np.nan),
        }
    )
    alignment, margin = _faithbench_truth(design.per_cluster, design.icc, tuple(sorted(p.items())))
    return Simulation(
        items,
        clusters.attach(judgments, items),
        {"alignment": alignment, "margin": margin},
        {**p, "design": design},
        {"scores": scores},
    )


def _answer_texts(
    rng: np.random.Generator, letters: np.ndarray, texts: list[list[str]], unparsed: np.ndarray
) -> list[str]:
    out = []
    for i, letter in enumerate(letters):
        if unparsed[i]:
            out.append(UNPARSEABLE[rng.integers(len(UNPARSEABLE))])
            continue
        k = "ABCD".index(letter)
        form = PHRASINGS[rng.integers(len(PHRASINGS))]
        out.append(form.format(L=letter, T=texts[i][k]))
    return out


def _mc_meta(texts: list[str]) -> str:
    """One item's meta as the data layer stores it: a JSON object string, keys sorted."""
    meta = {
        "faitheval_task": "counterfactual",
        "context_kind": "modified",
        "subset": "ARC-Challenge",
        "options": {"label": list("ABCD"), "text": texts},
    }
    return json.dumps(meta, sort_keys=True)


def faitheval_mc(
    rng: np.random.Generator,
    *,
    design: Design = FAITHEVAL_DESIGN,
    ability: float = 0.8,
    unparsed: float = 0.08,
    model: str = "sim-model",
) -> Simulation:
    """Draw FaithEval-style multiple-choice items and one model's raw answers.

    Args:
        rng: The only source of randomness.
        design: Clusters of related questions (latent difficulty, ICC) × items per cluster.
        ability: Mean logit of picking the gold option.
        unparsed: Share of answers that name no option (missing at random).
        model: The answering model.

    Returns:
        A `Simulation`: counterfactual items with 4 options (`meta.options`, gold letter),
        judgments with the raw `output`, truths `accuracy` and `unparsed_share`.
    """
    n = design.n_items
    gold = np.array(list("ABCD"))[rng.integers(0, 4, size=n)]
    texts = [list(rng.permutation(_OPTION_WORDS)[:4]) for _ in range(n)]
    right = rng.random(n) < base.sigmoid(ability + base.cluster_effects(rng, design))
    wrong = np.array([rng.choice([x for x in "ABCD" if x != g]) for g in gold])
    said = np.where(right, gold, wrong)
    miss = rng.random(n) < unparsed
    items = base.items_table(
        design,
        "qa",
        {
            "question": "Which object conducts electricity?",
            "context": base.words(40),
            "gold": gold,
            "meta": [_mc_meta([str(x) for x in t]) for t in texts],
        },
    )
    judgments = base.judgments_table(
        {
            "benchmark": design.benchmark,
            "split": design.split,
            "item_id": items["item_id"].to_numpy(),
            "judge": model,
            "prompt": "faitheval.repo.strict",
            "output": _answer_texts(rng, said, texts, miss),
            "verdict": None,
            "valid": True,
        }
    )
    mean_acc = base.expectation(
        lambda g, k: base.sigmoid(ability + g.normal(0.0, base.cluster_sd(design.icc), k))
    )
    truth = {"accuracy": mean_acc * (1.0 - unparsed), "unparsed_share": unparsed}
    params = {"ability": ability, "unparsed": unparsed, "design": design}
    return Simulation(items, clusters.attach(judgments, items), truth, params)


def _ca_prob(logit: np.ndarray, invalid: float) -> np.ndarray:
    """P(correct and valid in both orders) given the latent logit."""
    return (base.sigmoid(logit) * (1.0 - invalid)) ** 2


@lru_cache(maxsize=256)
def _ca_truth(ability: float, shift: float, sd: float, bad_s: float, bad_b: float) -> float:
    """E[P(CA | strategy)] − E[P(CA | baseline)] over the latent difficulty N(0, sd²)."""
    return base.expectation(
        lambda g, k: _ca_prob(ability + shift + g.normal(0, sd, k), bad_s)
    ) - base.expectation(lambda g, k: _ca_prob(ability + g.normal(0, sd, k), bad_b))


def prompt_strategies(
    rng: np.random.Generator,
    *,
    design: Design = STRATEGY_DESIGN,
    baseline: str = "Vanilla",
    ability: float = 0.8,
    effects: Mapping[str, float] | None = None,
    invalid: Mapping[str, float] | None = None,
    item_sd: float = 0.7,
    model: str = "sim-model",
) -> Simulation:
    """Draw pairwise judgments of one model under a baseline prompt and strategies.

    Args:
        rng: The only source of randomness.
        design: Clusters × items per cluster and the latent ICC of item difficulty.
        baseline: The baseline prompt's name.
        ability: Baseline logit of a correct verdict.
        effects: Logit shift of each strategy (default {"CoT": 0.0, "Reference": 0.0}).
        invalid: Share of invalid verdicts per prompt (default 0.03 each).
        item_sd: SD of the item-level latent difficulty (shared by all prompts).
        model: The model's name.

    Returns:
        A `Simulation` with pairwise items and judgments (judge `<model>/<prompt>`), truths
        `diff_ca:<strategy>`.
    """
    effects = dict(effects or {"CoT": 0.0, "Reference": 0.0})
    shifts = {baseline: 0.0, **effects}
    bad = {p: 0.03 for p in shifts} | dict(invalid or {})
    n = design.n_items
    latent = ability + base.cluster_effects(rng, design) + rng.normal(0.0, item_sd, n)
    items = base.items_table(
        design,
        "pairwise",
        {"question": "q", "response_pos": base.words(30), "response_neg": base.words(30)},
    )
    parts = []
    for prompt, shift in shifts.items():
        for order in (0, 1):
            right = rng.random(n) < base.sigmoid(latent + shift)
            inval = rng.random(n) < bad[prompt]
            picked = np.where(right, "pos", "neg")
            chosen = np.where(inval, None, picked)
            parts.append(
                pd.DataFrame(
                    {
                        "benchmark": design.benchmark,
                        "split": design.split,
                        "item_id": items["item_id"].to_numpy(),
                        "judge": f"{model}/{prompt}",
                        "model": model,
                        "prompt": prompt,
                        "order": order,
                        "chosen": chosen,
                        "verdict": np.where(inval, None, np.where(right, "pos", "neg")),
                        "valid": ~inval,
                        "correct": right & ~inval,
                    }
                )
            )
    judgments = base.judgments_table(pd.concat(parts, ignore_index=True))
    sd = float(np.hypot(base.cluster_sd(design.icc), item_sd))
    truth = {
        f"diff_ca:{s}": _ca_truth(ability, shift, sd, bad[s], bad[baseline])
        for s, shift in effects.items()
    }
    params = {"effects": effects, "invalid": bad, "ability": ability, "design": design}
    return Simulation(items, clusters.attach(judgments, items), truth, params)
