"""Prompting strategies and criteria verification (ContextualJudgeBench §4.3, Figs. 4, 5, 12).

Spec 000 §4.4, §4.12-4.13. Every analysis takes judgments (and verifier decisions) as
DataFrames and returns DataFrames; decisions files are read by the data wing
(`judgelab.data.catalog.prompting.load_verification`). Modules, in reading order:

- `strategies`: each prompt against a baseline prompt, per model and split (paired);
- `verification`: the verifier's items and decisions, verified accuracies VCA/VOA;
- `fit`: every reading of the paper's "line of best fit coefficient";
- `plots`: the plotters of these tables.
"""

from judgelab.analyses.prompting import plots
from judgelab.analyses.prompting.fit import fit_coefficients
from judgelab.analyses.prompting.strategies import (
    EFFECT_METRICS,
    Strategies,
    resolve_strategies,
    strategy_comparison,
    strategy_effect_by_split,
    strategy_summary,
)
from judgelab.analyses.prompting.verification import (
    CRITERIA,
    DECISION_COLUMNS,
    MISSING_POLICIES,
    UNDECIDED_POLICIES,
    criterion_of,
    decisions_from_verifier,
    verification_items,
    verification_summary,
    verified_accuracy,
)

__all__ = [
    "CRITERIA",
    "DECISION_COLUMNS",
    "EFFECT_METRICS",
    "MISSING_POLICIES",
    "Strategies",
    "UNDECIDED_POLICIES",
    "criterion_of",
    "decisions_from_verifier",
    "fit_coefficients",
    "plots",
    "resolve_strategies",
    "strategy_comparison",
    "strategy_effect_by_split",
    "strategy_summary",
    "verification_items",
    "verification_summary",
    "verified_accuracy",
]
