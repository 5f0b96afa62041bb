"""Reference quality (notebook 06; No Free Labels, spec 001 §3.3, §4.6).

The face of the reference family: prompting strategies recast as reference conditions of one
judge (`strategy_conditions`) and compared pairwise (`compare_conditions`: paired cluster
bootstrap, adaptive p-values, Holm across one judge's comparisons), and
reference-similarity classifiers (`similarity_judgments`, `similarity_vs_judges`) that flow
through the same pairwise metrics as LLM judges. `reference_for_condition` (from
`judgelab.judges.references`) builds a condition's reference texts; `plots` draws the
ablations.
"""

from judgelab.analyses.reference import plots
from judgelab.analyses.reference.compare import compare_conditions
from judgelab.analyses.reference.conditions import (
    CONDITIONS,
    reference_for_condition,
    references_from_outputs,
    similarity_judgments,
    similarity_vs_judges,
    strategy_conditions,
)

__all__ = [
    "CONDITIONS",
    "compare_conditions",
    "plots",
    "reference_for_condition",
    "references_from_outputs",
    "similarity_judgments",
    "similarity_vs_judges",
    "strategy_conditions",
]
