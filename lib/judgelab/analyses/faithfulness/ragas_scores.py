"""The Ragas formulas and the faithfulness scores of every FaithBench summary (spec 004 §2.4).

Three methods (spec 004 §2): **Baseline** (direct scoring: each candidate scored alone, the
higher score preferred), **Ranking** (both candidates in one prompt), **Ragas** (granular
decomposition: F = |V|/|S| over statements, AR = mean cosine of generated questions, CR =
essential / all context sentences). This module holds the formulas and the pointwise scores:

- the detector / LLM-judge verdicts FaithBench ships (`judgment_scores`): each summary is
  judged alone, so they are direct scoring (Baseline); binary verdicts tie often, which is
  why the tie policy matters (`ragas_alignment`);
- offline baselines (no model): `lexical` Baseline (share of the summary's content tokens
  found in the source, `text.grounding`) and the `decomposition` Ragas analogue (split the
  summary into sentences = statements; a statement is supported when its grounding is at
  least `support`; F = |V|/|S|).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from judgelab.core import text
from judgelab.core.schema import require_columns as _need
from judgelab.errors import check_choice
from judgelab.judges import parsers

METRICS = ("faithfulness", "answer_relevance", "context_relevance")
#: Table 1 column labels of each metric.
METRIC_LABELS = {
    "faithfulness": "Faithfulness",
    "answer_relevance": "Answer Relevancy",
    "context_relevance": "Context Relevancy",
}
EMPTY_POLICIES = ("nan", "zero", "one")


# ---------------------------------------------------------------- the Ragas formulas


def faithfulness_score(n_supported: int, n_statements: int, *, empty_policy: str = "nan") -> float:
    """Return F = |V| / |S| (spec 004 §2.4); `empty_policy` decides |S| = 0 (nan, zero, one).

    >>> faithfulness_score(3, 4)
    0.75
    """
    check_choice("empty_policy", empty_policy, EMPTY_POLICIES)
    if n_supported < 0 or n_statements < 0 or n_supported > n_statements:
        raise ValueError(f"need 0 <= supported <= statements, got {n_supported}/{n_statements}")
    if n_statements == 0:
        return {"nan": math.nan, "zero": 0.0, "one": 1.0}[empty_policy]
    return n_supported / n_statements


def answer_relevance_score(
    cosines: Sequence[float], *, noncommittal: Sequence[int] = (), zeroing: bool = False
) -> float:
    """Return AR = (1/n) Σ cos(q, q'_i), zeroed when any answer is noncommittal and `zeroing`.

    Cosines are kept raw (they may be negative); no generated question gives NaN.

    >>> answer_relevance_score([0.9, 0.6, 0.3])
    0.6
    """
    if len(cosines) == 0:
        return math.nan
    score = float(np.mean(np.asarray(cosines, dtype=float)))
    return 0.0 if zeroing and any(int(x) for x in noncommittal) else score


def context_relevance_score(n_extracted: int, n_sentences: int) -> float:
    """Return CR = min(extracted / context sentences, 1); an empty context scores 0 (Ragas lib).

    >>> context_relevance_score(2, 8)
    0.25
    """
    if n_extracted < 0 or n_sentences < 0:
        raise ValueError("sentence counts must be non-negative")
    return 0.0 if n_sentences == 0 else min(n_extracted / n_sentences, 1.0)


def bow_cosine(a: str, b: str) -> float:
    """Return the cosine of the content-token count vectors of two texts (0 when one is empty).

    >>> round(bow_cosine("red apple pie", "apple pie recipe"), 4)  # 2 / (√3 · √3)
    0.6667
    """
    ca, cb = pd.Series(text.content_tokens(a)), pd.Series(text.content_tokens(b))
    va, vb = ca.value_counts(), cb.value_counts()
    if va.empty or vb.empty:
        return 0.0
    dot = float((va * vb.reindex(va.index, fill_value=0)).sum())
    return dot / math.sqrt(float((va**2).sum()) * float((vb**2).sum()))


# ---------------------------------------------------------------- offline decomposition


def decompose_faithfulness(
    response: str, context: str, *, support: float = 0.5, empty_policy: str = "nan"
) -> tuple[int, int, float]:
    """Offline Ragas-F analogue: sentences as statements, lexical grounding as verification.

    A statement (one sentence of `response`, `parsers.split_sentences`) is supported when at
    least `support` of its content tokens occur in `context` (`text.grounding`).

    Returns:
        (|V|, |S|, F).

    >>> decompose_faithfulness("The mill closed. Aliens bought it.", "The mill closed in 1990.")
    (1, 2, 0.5)
    """
    statements = parsers.split_sentences(response or "")
    supported = sum(text.grounding(s, context) >= support for s in statements)
    return (
        supported,
        len(statements),
        faithfulness_score(supported, len(statements), empty_policy=empty_policy),
    )


def decompose_context_relevance(
    question: str, context: str, *, support: float = 0.5
) -> tuple[int, int, float]:
    """Offline Ragas-CR analogue: essential sentences by lexical overlap with the question.

    A context sentence is essential when it holds at least `support` of the question's
    content tokens.

    Returns:
        (essential sentences, context sentences, CR).

    >>> decompose_context_relevance("When did the mill close?",
    ...     "The mill closed in 1990. Bread is tasty. Rain fell.")
    (1, 3, 0.3333333333333333)
    """
    sentences = parsers.split_sentences(context or "")
    essential = sum(text.grounding(question, s) >= support for s in sentences)
    return essential, len(sentences), context_relevance_score(essential, len(sentences))


def lexical_answer_relevance(question: str, answer: str, *, zeroing: bool = True) -> float:
    """Offline AR stand-in: bag-of-words cosine of question and answer; refusals score 0.

    The question-generation step needs a model and an embedder; this keeps the AR shape
    (similarity to the question, noncommittal answers zeroed via `text.is_refusal`).

    >>> lexical_answer_relevance("When did the mill close?", "I cannot answer that.")
    0.0
    """
    return answer_relevance_score(
        [bow_cosine(question, answer)], noncommittal=[text.is_refusal(answer)], zeroing=zeroing
    )


def offline_scores(
    items: pd.DataFrame,
    *,
    support: float = 0.5,
    refusal_score: float = 0.5,
    empty_policy: str = "nan",
) -> pd.DataFrame:
    """Score every pointwise item's response against its context with the offline baselines.

    Args:
        items: Pointwise items with `context` and `response` (FaithBench: source, summary).
        support: Grounding a statement needs to count as supported (decomposition).
        refusal_score: Score of a refusal under the whole-response lexical baseline.
        empty_policy: F of a response with no statement (`nan` → invalid, `zero`, `one`).

    Returns:
        Long: `item_id`, `judge` (`offline-lexical` / `offline-decomposition`), `method`
        (`Baseline` / `Ragas`), `metric` (`faithfulness`), `score`, `n_supported`,
        `n_statements` (decomposition only).
    """
    _need(items, ["item_id", "context", "response"], "items")
    rows = []
    for iid, ctx, resp in zip(items["item_id"], items["context"], items["response"], strict=True):
        ctx, resp = str(ctx or ""), str(resp or "")
        lex = refusal_score if text.is_refusal(resp) else text.grounding(resp, ctx)
        rows.append(
            {
                "item_id": iid,
                "judge": "offline-lexical",
                "method": "Baseline",
                "metric": "faithfulness",
                "score": lex,
                "n_supported": np.nan,
                "n_statements": np.nan,
            }
        )
        v, s, f = decompose_faithfulness(resp, ctx, support=support, empty_policy=empty_policy)
        rows.append(
            {
                "item_id": iid,
                "judge": "offline-decomposition",
                "method": "Ragas",
                "metric": "faithfulness",
                "score": f,
                "n_supported": v,
                "n_statements": s,
            }
        )
    return pd.DataFrame(rows)


def judgment_scores(judgments: pd.DataFrame, *, method: str = "Baseline") -> pd.DataFrame:
    """Turn pointwise faithfulness verdicts into scores (higher = more faithful).

    The raw `output` is used when it is a number in [0, 1] (FaithBench's detectors: 0/1 or a
    probability such as HHEM's), else the verdict (Consistent = 1, Hallucinated = 0); an
    invalid row scores NaN.

    Returns:
        Long: `item_id`, `judge`, `method`, `metric` (`faithfulness`), `score`.
    """
    _need(judgments, ["item_id", "judge", "output", "verdict", "valid"], "judgments")

    def score(out: object, verdict: object, valid: object) -> float:
        if not bool(valid):
            return math.nan
        try:
            x = float(str(out))
        except (TypeError, ValueError):
            x = math.nan
        if 0 <= x <= 1:
            return x
        return {"Consistent": 1.0, "Hallucinated": 0.0}.get(str(verdict), math.nan)

    return pd.DataFrame(
        {
            "item_id": judgments["item_id"].to_numpy(),
            "judge": judgments["judge"].to_numpy(),
            "method": method,
            "metric": "faithfulness",
            "score": [
                score(o, v, ok)
                for o, v, ok in zip(
                    judgments["output"], judgments["verdict"], judgments["valid"], strict=True
                )
            ],
        }
    )


def faithbench_scores(
    items: pd.DataFrame,
    judgments: pd.DataFrame | None,
    *,
    support: float = 0.5,
    refusal_score: float = 0.5,
    empty_policy: str = "nan",
) -> pd.DataFrame:
    """Scores of every summary: the shipped verdicts (Baseline) plus the offline baselines.

    Returns:
        Long: `item_id`, `judge`, `method`, `metric`, `score` (see `judgment_scores`,
        `offline_scores`).
    """
    parts = [
        offline_scores(
            items, support=support, refusal_score=refusal_score, empty_policy=empty_policy
        )[["item_id", "judge", "method", "metric", "score"]]
    ]
    if judgments is not None and len(judgments):
        parts.insert(0, judgment_scores(judgments))
    return pd.concat(parts, ignore_index=True)
