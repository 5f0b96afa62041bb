"""Verdict parsers: raw judge text → verdict, exactly as each paper or repo reads it.

A parser never guesses. When the text holds no verdict in the expected format it returns
`Parsed(verdict=None, valid=False)`; the raw output is kept by the caller. Every parser also
says how many verdict tokens it saw (`n_tokens`) so that outputs with several, possibly
conflicting, verdicts are recorded rather than silently resolved.

One module per source paper, as the templates are grouped:
- `cjb`: ContextualJudgeBench families (`split_marker`, `bracket_first`, `offsetbias`,
  `prometheus`, `glider`, `yes_no_field`, `verification_decision`);
- `nfl`: No Free Labels (`nfl_single`, `nfl_pairwise`);
- `contexteval`: Contextualized Evaluations (`ce_judgement`, `ce_attribute_filter`,
  `ce_relevance_by_value`, `relevance_rating`, `generation`, `first_dict`, `balanced_braces`);
- `faitheval`: FaithEval answer matching (`faitheval_normalize`, `faitheval_phrase`,
  `faitheval_letter`, `faitheval_option`);
- `ragas`: Ragas / AdminRo (`score_0_10`, `rank_choice`, `ragas_faithfulness`,
  `split_sentences`, `context_relevance`).

`Parsed`, `INVALID_EMPTY` and `ce_judgement` live in `judgelab.core.verdicts` (the importers
use them too) and are re-exported here.
"""

from __future__ import annotations

from judgelab.core.verdicts import INVALID_EMPTY, Parsed
from judgelab.judges.parsers.cjb import (
    bracket_first,
    glider,
    offsetbias,
    prometheus,
    split_marker,
    verification_decision,
    yes_no_field,
)
from judgelab.judges.parsers.contexteval import (
    balanced_braces,
    ce_attribute_filter,
    ce_judgement,
    ce_relevance_by_value,
    first_dict,
    generation,
    relevance_rating,
)
from judgelab.judges.parsers.faitheval import (
    FAITHEVAL_PHRASES,
    faitheval_letter,
    faitheval_normalize,
    faitheval_option,
    faitheval_phrase,
)
from judgelab.judges.parsers.nfl import nfl_pairwise, nfl_single
from judgelab.judges.parsers.ragas import (
    context_relevance,
    ragas_faithfulness,
    rank_choice,
    score_0_10,
    split_sentences,
)

__all__ = [
    "FAITHEVAL_PHRASES",
    "INVALID_EMPTY",
    "Parsed",
    "balanced_braces",
    "bracket_first",
    "ce_attribute_filter",
    "ce_judgement",
    "ce_relevance_by_value",
    "context_relevance",
    "faitheval_letter",
    "faitheval_normalize",
    "faitheval_option",
    "faitheval_phrase",
    "first_dict",
    "generation",
    "glider",
    "nfl_pairwise",
    "nfl_single",
    "offsetbias",
    "prometheus",
    "ragas_faithfulness",
    "rank_choice",
    "relevance_rating",
    "score_0_10",
    "split_marker",
    "split_sentences",
    "verification_decision",
    "yes_no_field",
]
