"""Faithfulness to the context: FaithEval answers (notebook 11) and Ragas methods (notebook 12).

FaithEval (spec 003): `faitheval_grading` grades each answer strictly and non-strictly,
`faitheval_accuracy` gives accuracy per cell and the AVG over source datasets, and
`faitheval_paper` lays them out beside the paper's Tables 4–5 and Figures 4–6, 10.

Ragas methods (spec 004): `ragas_scores` holds the formulas and the pointwise scores of every
FaithBench summary, `ragas_pairs` the contrastive pairs (and their items for the `ragas.*`
judges), `ragas_preferences` which member each method prefers, and `ragas_alignment` the
human alignment with its intervals and the Table 1 layout.

`plans` lists the `judgelab judge` commands behind both (dry-run numbers), `plots` draws the
bars and the forest. Loaders live in the data catalog (`catalog.faithfulness`).
"""

from judgelab.analyses.faithfulness import plots
from judgelab.analyses.faithfulness.faitheval_accuracy import AVERAGES, accuracy, task_average
from judgelab.analyses.faithfulness.faitheval_grading import (
    CF_MATCH,
    CONTEXT_KINDS,
    GRADED_COLUMNS,
    MODES,
    TASKS,
    grade_answers,
    grade_one,
    item_conditions,
)
from judgelab.analyses.faithfulness.faitheval_paper import (
    DATASETS,
    FIGURE_LABELS,
    PAPER_FIGURE,
    PAPER_TABLE,
    PROPRIETARY,
    original_vs_modified,
    overall,
    paper_table,
    strict_vs_nonstrict,
)
from judgelab.analyses.faithfulness.plans import faitheval_plan, ragas_plan
from judgelab.analyses.faithfulness.ragas_alignment import (
    CIS,
    TIE_POLICIES,
    alignment,
    alignment_by_tie_policy,
    table1,
)
from judgelab.analyses.faithfulness.ragas_pairs import (
    PAIR_BY,
    PAIR_COLUMNS,
    PAIRINGS,
    SEVERITY,
    SUMMARY_QUESTION,
    faithbench_pairs,
    pair_items,
    pair_summary,
)
from judgelab.analyses.faithfulness.ragas_preferences import (
    METHODS,
    ORDERS,
    PREF_COLUMNS,
    TEMPLATE_METHOD,
    all_preferences,
    pointwise_preferences,
    template_preferences,
)
from judgelab.analyses.faithfulness.ragas_scores import (
    EMPTY_POLICIES,
    METRIC_LABELS,
    METRICS,
    answer_relevance_score,
    bow_cosine,
    context_relevance_score,
    decompose_context_relevance,
    decompose_faithfulness,
    faithbench_scores,
    faithfulness_score,
    judgment_scores,
    lexical_answer_relevance,
    offline_scores,
)

__all__ = [
    "plots",
    # FaithEval: grading
    "CF_MATCH",
    "CONTEXT_KINDS",
    "GRADED_COLUMNS",
    "MODES",
    "TASKS",
    "grade_answers",
    "grade_one",
    "item_conditions",
    # FaithEval: accuracy and AVG
    "AVERAGES",
    "accuracy",
    "task_average",
    # FaithEval: the paper's layouts
    "DATASETS",
    "FIGURE_LABELS",
    "PAPER_FIGURE",
    "PAPER_TABLE",
    "PROPRIETARY",
    "original_vs_modified",
    "overall",
    "paper_table",
    "strict_vs_nonstrict",
    # Ragas: formulas and scores
    "EMPTY_POLICIES",
    "METRICS",
    "METRIC_LABELS",
    "answer_relevance_score",
    "bow_cosine",
    "context_relevance_score",
    "decompose_context_relevance",
    "decompose_faithfulness",
    "faithbench_scores",
    "faithfulness_score",
    "judgment_scores",
    "lexical_answer_relevance",
    "offline_scores",
    # Ragas: pairs and preferences
    "PAIRINGS",
    "PAIR_BY",
    "PAIR_COLUMNS",
    "SEVERITY",
    "SUMMARY_QUESTION",
    "faithbench_pairs",
    "pair_items",
    "pair_summary",
    "METHODS",
    "ORDERS",
    "PREF_COLUMNS",
    "TEMPLATE_METHOD",
    "all_preferences",
    "pointwise_preferences",
    "template_preferences",
    # Ragas: human alignment
    "CIS",
    "TIE_POLICIES",
    "alignment",
    "alignment_by_tie_policy",
    "table1",
    # run plans
    "faitheval_plan",
    "ragas_plan",
]
