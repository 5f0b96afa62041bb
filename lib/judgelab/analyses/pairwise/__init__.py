"""Pairwise judge metrics from judgments in both presentation orders, with uncertainty.

The face of the pairwise family (notebooks 01 and 02) and the shared base of pairwise rates
the other families build on. Definitions follow ContextualJudgeBench (spec 000 §4.1-4.3,
§4.7) and the MT-Bench consistency categories:

1. `item_outcomes` pairs the two orders of every item (`outcomes`);
2. `pairwise_rates` turns them into rates per (judge, group, sample), plus the `pooled` and
   `mean_of_splits` averages across splits, each row a `core.estimates` row over the
   clusters of the `cluster` column (`units`: per-cluster sums; items without one are their
   own unit): the interval that inverts the restricted wild cluster bootstrap test, the
   effective number of clusters and the `few_clusters` flag, and on P(A | decisive) the
   test of "A as often as B" (`rates`); `inference="bootstrap"` keeps the earlier
   percentile cluster bootstrap (`rates_bootstrap`, `resample`); `scan.scan_rates` gives
   the same rows from a lazy polars scan;
3. `position_preference`, `consistency_categories`, `run_stability` (`position`) and
   `leaderboard`, `compare_judges` (`compare`: paired judge differences, same engine)
   reshape or extend those rates;
4. `single_order_rates` (`single_order`) gives what items judged in one order only
   support — accuracy, invalid and tie shares per order — and `NOT_IDENTIFIED` says why the
   paired measures have none;
5. `plots` draws them.

Rates are fractions in [0, 1]; notebooks show them in percent.
"""

from judgelab.analyses.pairwise import plots
from judgelab.analyses.pairwise.compare import (
    COMPARE_METRICS,
    COMPARE_TESTS,
    MISSING,
    compare_judges,
    compare_reason,
    format_leaderboard,
    leaderboard,
)
from judgelab.analyses.pairwise.outcomes import (
    CATEGORIES,
    GROUPS,
    INVALID_POLICIES,
    coverage,
    item_outcomes,
    select_judges,
)
from judgelab.analyses.pairwise.position import (
    POSITION_TESTS,
    consistency_categories,
    position_preference,
    run_stability,
    stability_reason,
)
from judgelab.analyses.pairwise.rates import (
    AGGREGATIONS,
    INFERENCE,
    MEAN_OF_SPLITS,
    METRICS,
    POOLED,
    rates_for,
    rates_wide,
)
from judgelab.analyses.pairwise.scan import pairwise_rates  # takes lazy outcomes too
from judgelab.analyses.pairwise.single_order import (
    NOT_IDENTIFIED,
    single_order_rates,
    single_order_reason,
)

__all__ = [
    "AGGREGATIONS",
    "CATEGORIES",
    "COMPARE_METRICS",
    "COMPARE_TESTS",
    "GROUPS",
    "INFERENCE",
    "INVALID_POLICIES",
    "MEAN_OF_SPLITS",
    "METRICS",
    "MISSING",
    "NOT_IDENTIFIED",
    "POOLED",
    "POSITION_TESTS",
    "compare_judges",
    "compare_reason",
    "consistency_categories",
    "coverage",
    "format_leaderboard",
    "item_outcomes",
    "leaderboard",
    "pairwise_rates",
    "plots",
    "position_preference",
    "rates_for",
    "rates_wide",
    "run_stability",
    "stability_reason",
    "select_judges",
    "single_order_rates",
    "single_order_reason",
]
