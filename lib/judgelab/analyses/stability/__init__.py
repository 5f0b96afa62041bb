"""Judge stability: would another judge, version, prompt or sample give a different answer?

DESIGN §9, issue 35 (notebook 19). Every analysis takes a judgments table and returns
DataFrames whose rows carry an interval, `n`, the clusters and the effective clusters.
Modules, in reading order:

- `units`: the units compared (an item in one order) and their labels;
- `shift`: verdict shift between two judges / versions / templates (shift matrix, agreement,
  share changed, Cohen's kappa);
- `drift`: score drift of scored judges (mean and quantile shifts);
- `leaderboard`: each system's score and rank per rater, Kendall's τ between rankings, 95 %
  rank sets, P(leader changes);
- `repeats`: repeat-trial reliability (flip rate, intra-judge kappa, trials needed for the
  majority vote to settle);
- `templates`: template sensitivity (share of items whose verdict changes with the prompt);
- `humans`: judges beside human annotators in the source's slots (judge–human against
  human–human agreement);
- `anchors`: anchor sensitivity (each system's win rate and rank against every possible
  baseline, Kendall's τ between the rankings under two baselines);
- `compare`: the judge-swap headline `judgelab compare A B --benchmark X` prints;
- `plots`: the plotters of these tables.
"""

from judgelab.analyses.stability import plots
from judgelab.analyses.stability.anchors import (
    Anchors,
    anchor_reason,
    anchor_sensitivity,
    anchors_of,
    pairwise_wins,
    systems_by_rater,
    wins_from_scores,
)
from judgelab.analyses.stability.compare import HEADLINE_COLUMNS, headline
from judgelab.analyses.stability.drift import (
    QUANTILES,
    drift_reason,
    score_drift,
    weighted_quantiles,
)
from judgelab.analyses.stability.humans import (
    MAJORITY,
    human_gap,
    humans_reason,
    pair_kinds,
    slot_labels,
    with_humans,
)
from judgelab.analyses.stability.leaderboard import (
    HUMANS,
    Leaderboard,
    kendall_tau_b,
    leaderboard_reason,
    leaderboard_stability,
    ranks,
    scores_from_judgments,
    tau_table,
)
from judgelab.analyses.stability.repeats import (
    TARGETS,
    majority_curve,
    repeat_reliability,
    repeats_reason,
    trials,
    trials_needed,
)
from judgelab.analyses.stability.shift import (
    MEASURES,
    focus_pair,
    kappa_fields,
    shift_matrix,
    shift_reason,
    verdict_shift,
)
from judgelab.analyses.stability.templates import template_reason, template_sensitivity
from judgelab.analyses.stability.units import UNIT_KEYS, label_column, only, wide

__all__ = [
    "Anchors",
    "HEADLINE_COLUMNS",
    "HUMANS",
    "Leaderboard",
    "MAJORITY",
    "MEASURES",
    "QUANTILES",
    "TARGETS",
    "UNIT_KEYS",
    "anchor_reason",
    "anchor_sensitivity",
    "anchors_of",
    "drift_reason",
    "focus_pair",
    "headline",
    "human_gap",
    "humans_reason",
    "kappa_fields",
    "kendall_tau_b",
    "label_column",
    "leaderboard_reason",
    "leaderboard_stability",
    "majority_curve",
    "only",
    "pair_kinds",
    "pairwise_wins",
    "plots",
    "ranks",
    "repeat_reliability",
    "repeats_reason",
    "score_drift",
    "scores_from_judgments",
    "shift_matrix",
    "shift_reason",
    "slot_labels",
    "systems_by_rater",
    "tau_table",
    "template_reason",
    "template_sensitivity",
    "trials",
    "trials_needed",
    "verdict_shift",
    "weighted_quantiles",
    "wins_from_scores",
    "with_humans",
    "wide",
]
