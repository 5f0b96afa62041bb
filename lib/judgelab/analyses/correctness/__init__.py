"""Correctness grading against human labels (notebook 05; No Free Labels, spec 001 §4).

The face of the correctness family:

- `table`: `correctness_table` joins pointwise Correct/Incorrect verdicts with the human
  labels (one row per judge × condition × item); `confusion_counts`;
- `rates`: agreement, Cohen's kappa, FPR and FNR with a cluster bootstrap over questions
  (`correctness_rates`, `rates_from_counts`, `cohen_kappa`, `rates_display`);
- `self_preference`: the judge's own answers against others' (`mark_self`: the same model by
  default, the model family as a named option; `check_maps`; `self_vs_others`) and questions
  it answered correctly or not (`mark_answered`, `kappa_by_answered`, and the §4.5 gap with
  its interval and test, `answered_gap`); `compare` is their paired cluster bootstrap;
- `pairs`: pairwise correctness, one final choice per pair and the symmetrized kappa
  (`pairwise_final`, `pairwise_kappa`);
- `plots` draws them.
"""

from judgelab.analyses.correctness import plots
from judgelab.analyses.correctness.pairs import pairwise_final, pairwise_kappa
from judgelab.analyses.correctness.rates import (
    INFERENCE,
    INVALID_POLICIES,
    RATE_METRICS,
    cohen_kappa,
    correctness_rates,
    rates_display,
    rates_from_counts,
)
from judgelab.analyses.correctness.self_preference import (
    MIN_OWN,
    MIN_OWN_CLUSTERS,
    POLICY_NAMES,
    SELF_LEVELS,
    SUBSETS,
    answered_gap,
    check_maps,
    kappa_by_answered,
    mark_answered,
    mark_self,
    policy_sides,
    self_others_long,
    self_vs_others,
)
from judgelab.analyses.correctness.table import (
    CELLS,
    LABELS,
    confusion_counts,
    correctness_table,
)

__all__ = [
    "CELLS",
    "INFERENCE",
    "INVALID_POLICIES",
    "LABELS",
    "RATE_METRICS",
    "MIN_OWN",
    "MIN_OWN_CLUSTERS",
    "POLICY_NAMES",
    "SELF_LEVELS",
    "SUBSETS",
    "answered_gap",
    "check_maps",
    "cohen_kappa",
    "confusion_counts",
    "correctness_rates",
    "correctness_table",
    "kappa_by_answered",
    "mark_answered",
    "mark_self",
    "policy_sides",
    "pairwise_final",
    "pairwise_kappa",
    "plots",
    "rates_display",
    "rates_from_counts",
    "self_others_long",
    "self_vs_others",
]
