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
- `tables`: judge-vs-human label tables from items and judgments, per-(judge, group) runs
  and the averaged budget curves; `plots`: width and coverage against the budget.
"""

from judgelab.analyses.grounding import plots, tables
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

__all__ = [
    "COLUMNS",
    "INTERVALS",
    "KINDS",
    "METHODS",
    "OUTCOMES",
    "TIE_RULES",
    "budget_curve",
    "compare",
    "estimates",
    "pairwise_scores",
    "plots",
    "ppi_mean",
    "ppi_winrate",
    "tables",
]
