"""Human grounding: prediction-powered (PPI++) estimates from a judge and a few human labels.

Given judge labels on every item and human labels on a subset, the face of the family:

- `methods`: `compare` (a table) and `estimates` (arrays) report, side by side, the naive
  (judge-only) mean, the classical (human-only) mean, PPI++ (power-tuned λ̂) and plain PPI
  (λ = 1), each with its interval (z, Wilson, or a cluster bootstrap); `ppi_mean` and
  `ppi_winrate` return the PPI++ row; `pairwise_scores` scores A/B/tie labels by a tie rule;
- `ppi`: the estimator's formulas on moment sums (`solve`), shared by every entry point;
- `intervals`: the intervals of those estimates (jackknife, cluster bootstrap, z, Wilson);
- `strata`: stratified PPI (per-stratum estimates combined by population share);
- `budget`: `budget_curve`, interval width and coverage of each method per label budget;
  `allocate`, where a label budget goes across strata (proportional vs Neyman) from a pilot;
- `slices`: per-slice PPI++ rows and the population row from the strata (`by_slice`), and a
  replayed stratified study — pilot, plan, labels, estimates (`study`);
- `transport`: the transport audit — a correction fitted on some slices' labels, its error
  on another slice's held-out labels graded PASS / FAIL / INCONCLUSIVE against a margin;
- `support`: refusal of a level estimate where the unlabelled items' scores or categories
  fall outside what the labelled items cover (`support_reason`, `level_estimates`);
- `choice`: which judge to use — several judges ranked on one human-labelled sample by κ and
  by the PPI++ error they buy, rank intervals and P(best), cost per 1,000 items, frontier;
- `confidence`: judge-confidence calibration — Brier and ECE with cluster intervals, the
  reliability table, a cross-fitted recalibration scored on held-out folds only;
- `tables`: judge-vs-human label tables from items and judgments, per-(judge, group) runs
  and the averaged budget curves; `plots`: width and coverage against the budget.
"""

from judgelab.analyses.grounding import (
    choice,
    confidence,
    plots,
    slices,
    support,
    tables,
    transport,
)
from judgelab.analyses.grounding.budget import budget_curve
from judgelab.analyses.grounding.methods import (
    KINDS,
    OUTCOMES,
    TIE_RULES,
    compare,
    estimates,
    pairwise_scores,
    ppi_mean,
    ppi_winrate,
)
from judgelab.analyses.grounding.ppi import COLUMNS, INTERVALS, METHODS
from judgelab.analyses.grounding.support import support_reason

__all__ = [
    "COLUMNS",
    "INTERVALS",
    "KINDS",
    "METHODS",
    "OUTCOMES",
    "TIE_RULES",
    "budget_curve",
    "choice",
    "compare",
    "confidence",
    "estimates",
    "pairwise_scores",
    "plots",
    "slices",
    "support",
    "support_reason",
    "ppi_mean",
    "ppi_winrate",
    "tables",
    "transport",
]
