"""Planted-truth faithfulness benchmarks: FaithBench-style pairs, FaithEval answers, prompts.

Three generators, each through the real schema (`base.items_table`, `base.judgments_table`,
judgments carrying the items' `cluster` as the data layer's `clusters.attach` does). Each
takes a `Design` — balanced or with unequal cluster sizes (realised once per draw,
`Design.realise`), any latent ICC, and effects that vary by cluster (`Design.effect_sd`) —
so the calibration runs them on every scenario of `base.GRID`:

- `faithbench`: source documents (clusters) of summaries (`per_cluster` on average; very
  unequal numbers per source with `size_spread`), with human hallucination labels (a
  source-level latent effect makes some documents hard), and one detector whose 1–5 score
  of a summary is ``(discrimination + w_s) · consistent + logistic noise`` cut at fixed
  thresholds (ties occur), `w_s ~ N(0, doc_sd²)` a document-level effect on how well it
  separates the two labels; scores are invalid at `invalid` for consistent summaries and at
  `invalid_hallucinated` (default the same) for hallucinated ones — missing not at random.
  The contrastive pairs (`analyses.faithfulness.faithbench_pairs`, every cross-label pair
  of a source) reuse each summary in several pairs, as FaithBench's method-comparison
  pairs do. Truths: `alignment` = E[Σ pos] / E[Σ pairs] and `margin` = E[Σ pos − Σ neg] /
  E[Σ decided], by one large fixed-seed draw of sources (the per-pair outcome does not
  depend on a source's size, so the pair-weighted truth is the same for every size
  distribution; `margin` is 0 exactly when `discrimination` is 0, by the symmetry of w_s).
- `faitheval_mc`: FaithEval-style multiple-choice items (4 options, clusters of related
  questions with a latent difficulty, plus a cluster-varying ability shift of SD
  `effect_sd`) answered by one model whose raw answer texts come in several phrasings
  ("B", "(B)", "The answer is B.", "Answer: B", "B) text", the option text alone, …); an
  answer names no option at `unparsed` when the model was right and at `unparsed_if_wrong`
  (default the same) when it was wrong — missing not at random. Truths: `accuracy`
  (graded: an unparsed answer is wrong) = E[σ(ability + u)] · (1 − unparsed), and
  `unparsed_share`, by a large draw.
- `prompt_strategies`: pairwise items judged in both orders by one model under a baseline
  prompt and several strategies (logit shifts `effects`), with an item-level and a
  cluster-level latent difficulty shared by all prompts (so comparisons are paired); with
  `effect_sd` every prompt, the baseline included, gets its own cluster effect
  η_pc ~ N(0, effect_sd² / 2), so a strategy's effect on a cluster varies with SD
  `effect_sd` around its mean shift and a null effect stays exactly null (the prompts are
  exchangeable). Verdicts are invalid at a per-prompt rate, or — `invalid_if_wrong` — at
  another rate when wrong (missing not at random). Truth `diff_ca:<strategy>`: the
  population difference in consistent accuracy, strategy − baseline (by a large draw).
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
    rng: np.random.Generator, sizes: np.ndarray, icc: float, p: Mapping[str, float]
) -> tuple[np.ndarray, np.ndarray]:
    """Per summary (sources of `sizes` summaries, flat): consistent 0/1, score 1..5 (0 invalid)."""
    src = np.repeat(np.arange(len(sizes)), sizes)
    n = len(src)
    u = rng.normal(0.0, base.cluster_sd(icc), size=len(sizes))[src]
    consistent = (rng.random(n) < base.sigmoid(p["label_logit"] + u)).astype(int)
    w = rng.normal(0.0, p["doc_sd"], size=len(sizes))[src]
    latent = (p["discrimination"] + w) * consistent + rng.logistic(size=n)
    score = 1 + np.searchsorted(np.array(SCORE_CUTS), latent)
    bad = np.where(consistent == 1, p["invalid"], p["invalid_hallucinated"])
    score[rng.random(n) < bad] = 0
    return consistent, score


def _pair_sums(consistent: np.ndarray, score: np.ndarray) -> tuple[float, float, float]:
    """Σ pos, Σ neg and Σ pairs over all (consistent, hallucinated) pairs of each source.

    `consistent` and `score` are (sources × summaries) here: the truth's equal-size draw.
    """
    c = consistent.astype(bool)
    valid = score > 0
    a = score[:, :, None]
    b = score[:, None, :]
    pair = c[:, :, None] & ~c[:, None, :]
    ok = pair & valid[:, :, None] & valid[:, None, :]
    return float((ok & (a > b)).sum()), float((ok & (a < b)).sum()), float(pair.sum())


@lru_cache(maxsize=64)
def _faithbench_truth(icc: float, items: tuple[tuple[str, float], ...]) -> tuple:
    rng = np.random.default_rng(12345)
    pos = neg = total = 0.0
    per = 10
    for _ in range(4):
        c, s = _labels_and_scores(rng, np.full(20_000, per), icc, dict(items))
        dp, dn, dt = _pair_sums(c.reshape(-1, per), s.reshape(-1, per))
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
    invalid_hallucinated: float | None = None,
    judge: str = "sim-detector",
) -> Simulation:
    """Draw FaithBench-style summaries, human labels and one detector's scores.

    Args:
        rng: The only source of randomness.
        design: Sources (clusters) × summaries per source (unequal when the design says
            so), latent ICC of the labels.
        discrimination: Log-odds shift of the score of a consistent summary (0: none).
        doc_sd: SD of the document-level effect on the discrimination.
        label_logit: Mean logit of a summary being consistent (0: half).
        invalid: Share of invalid (missing) scores of consistent summaries.
        invalid_hallucinated: Share of invalid scores of hallucinated summaries (None: the
            same as `invalid`, missing at random).
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
        "invalid_hallucinated": invalid if invalid_hallucinated is None else invalid_hallucinated,
    }
    design = design.realise(rng)
    c, s = _labels_and_scores(rng, design.cluster_sizes, design.icc, p)
    src = base.cluster_index(design)
    items = base.items_table(
        design,
        "pointwise",
        {
            "context": [f"source {k} " + base.words(50) for k in src],
            "response": [f"summary {i} " + base.words(20) for i in range(design.n_items)],
            "gold": np.where(c == 1, "Consistent", "Hallucinated"),
            "question": "Summarize the source document.",
        },
    )
    score = s.astype(float)
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
    alignment, margin = _faithbench_truth(design.icc, tuple(sorted(p.items())))
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
    unparsed_if_wrong: float | None = None,
    model: str = "sim-model",
) -> Simulation:
    """Draw FaithEval-style multiple-choice items and one model's raw answers.

    Args:
        rng: The only source of randomness.
        design: Clusters of related questions (latent difficulty, ICC; sizes and a
            cluster-varying ability shift as the design says) × items per cluster.
        ability: Mean logit of picking the gold option.
        unparsed: Share of right answers that name no option.
        unparsed_if_wrong: Share of wrong answers that name no option (None: `unparsed`,
            missing at random).
        model: The answering model.

    Returns:
        A `Simulation`: counterfactual items with 4 options (`meta.options`, gold letter),
        judgments with the raw `output`, truths `accuracy` and `unparsed_share`.
    """
    design = design.realise(rng)
    n = design.n_items
    gold = np.array(list("ABCD"))[rng.integers(0, 4, size=n)]
    texts = [list(rng.permutation(_OPTION_WORDS)[:4]) for _ in range(n)]
    shift = base.cluster_effects(rng, design) + base.cluster_slopes(rng, design, 0.0)
    right = rng.random(n) < base.sigmoid(ability + shift)
    wrong = np.array([rng.choice([x for x in "ABCD" if x != g]) for g in gold])
    said = np.where(right, gold, wrong)
    if_wrong = unparsed if unparsed_if_wrong is None else unparsed_if_wrong
    miss = rng.random(n) < np.where(right, unparsed, if_wrong)
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
    sd = float(np.hypot(base.cluster_sd(design.icc), design.effect_sd))
    mean_acc = base.expectation(lambda g, k: base.sigmoid(ability + g.normal(0.0, sd, k)))
    truth = {
        "accuracy": mean_acc * (1.0 - unparsed),
        "unparsed_share": mean_acc * unparsed + (1.0 - mean_acc) * if_wrong,
    }
    params = {"ability": ability, "unparsed": unparsed, "if_wrong": if_wrong, "design": design}
    return Simulation(items, clusters.attach(judgments, items), truth, params)


def _ca_prob(logit: np.ndarray, invalid: float) -> np.ndarray:
    """P(correct and valid in both orders) given the latent logit (invalid: of a right one)."""
    return (base.sigmoid(logit) * (1.0 - invalid)) ** 2


@lru_cache(maxsize=256)
def _ca_truth(
    ability: float, shift: float, sd: float, bad_s: float, bad_b: float, effect_sd: float
) -> float:
    """E[P(CA | strategy)] − E[P(CA | baseline)] over the latent difficulty N(0, sd²).

    Each prompt adds its own cluster effect N(0, effect_sd² / 2), independent of the other's.
    """

    def diff(g: np.random.Generator, k: int) -> np.ndarray:
        z = g.normal(0.0, sd, k)
        eta_s, eta_b = g.normal(0.0, effect_sd / np.sqrt(2.0), (2, k))
        strategy = _ca_prob(ability + shift + z + eta_s, bad_s)
        return strategy - _ca_prob(ability + z + eta_b, bad_b)

    return base.expectation(diff)


def prompt_strategies(
    rng: np.random.Generator,
    *,
    design: Design = STRATEGY_DESIGN,
    baseline: str = "Vanilla",
    ability: float = 0.8,
    effects: Mapping[str, float] | None = None,
    invalid: Mapping[str, float] | None = None,
    invalid_if_wrong: Mapping[str, float] | None = None,
    item_sd: float = 0.7,
    model: str = "sim-model",
) -> Simulation:
    """Draw pairwise judgments of one model under a baseline prompt and strategies.

    Args:
        rng: The only source of randomness.
        design: Clusters × items per cluster, the latent ICC of item difficulty, unequal
            sizes and the SD of each strategy's cluster-varying effect (`effect_sd`).
        baseline: The baseline prompt's name.
        ability: Baseline logit of a correct verdict.
        effects: Mean logit shift of each strategy (default {"CoT": 0.0, "Reference": 0.0}).
        invalid: Share of invalid verdicts per prompt (default 0.03 each); of right verdicts
            when `invalid_if_wrong` is given.
        invalid_if_wrong: Share of invalid verdicts among wrong ones per prompt (missing not
            at random; default: as `invalid`).
        item_sd: SD of the item-level latent difficulty (shared by all prompts).
        model: The model's name.

    Returns:
        A `Simulation` with pairwise items and judgments (judge `<model>/<prompt>`), truths
        `diff_ca:<strategy>`.
    """
    effects = dict(effects or {"CoT": 0.0, "Reference": 0.0})
    shifts = {baseline: 0.0, **effects}
    bad = {p: 0.03 for p in shifts} | dict(invalid or {})
    bad_wrong = bad | dict(invalid_if_wrong or {})
    design = design.realise(rng)
    n = design.n_items
    latent = ability + base.cluster_effects(rng, design) + rng.normal(0.0, item_sd, n)
    own = {  # each prompt's cluster effect, SD effect_sd / √2: differences vary by effect_sd
        p: base.cluster_slopes(rng, design, 0.0) / np.sqrt(2.0) if design.effect_sd else 0.0
        for p in shifts
    }
    items = base.items_table(
        design,
        "pairwise",
        {"question": "q", "response_pos": base.words(30), "response_neg": base.words(30)},
    )
    parts = []
    for prompt, shift in shifts.items():
        for order in (0, 1):
            right = rng.random(n) < base.sigmoid(latent + shift + own[prompt])
            inval = rng.random(n) < np.where(right, bad[prompt], bad_wrong[prompt])
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
    es = design.effect_sd
    truth = {
        f"diff_ca:{s}": _ca_truth(ability, shift, sd, bad[s], bad[baseline], es)
        for s, shift in effects.items()
    }
    params = {"effects": effects, "invalid": bad, "ability": ability, "design": design}
    return Simulation(items, clusters.attach(judgments, items), truth, params)
