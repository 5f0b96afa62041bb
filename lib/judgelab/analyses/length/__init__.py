"""Length bias of judges: accuracy against length, P(picks longer), length regressions.

Also the AlpacaEval-style length-controlled win rate. Lengths come from
`judgelab.core.lengths.add_lengths` (one named unit); every analysis takes DataFrames and
returns DataFrames. Intervals and tests treat the `cluster` column's units as independent
(items sharing a question or source document; `cluster=None`: items, the legacy choice):
rates and P(picks longer) through `core.estimates` (the interval inverting the restricted
wild cluster bootstrap test; `inference="bootstrap"`: the earlier percentile bootstrap),
GLM coefficients CR2 with Bell–McCaffrey degrees of freedom with the wild cluster score
bootstrap beside them (`inference="cluster"`: the earlier CR1 t(G − 1)). Every row
reports `n_eff_clusters` and `few_clusters`.
Modules, in reading order:

- `verdicts`: the two input tables (`pairwise_verdicts`, `item_table`) and their keys;
- `lazy`: the same tables of a large source's polars scan, read judge by judge by the
  functions below (the same numbers as the pandas path);
- `rates`: a mean per group with its interval over clusters and Wilson bounds;
- `bins`: length bins, length-difference buckets and accuracy per bin (Fig. 10);
- `picks`: P(picks longer), by gold condition, balanced (the headline), with its interval
  and the test that inverts it; `score_pairs` for pointwise graders;
- `glm`: the binomial GLM and the inference on its terms (CR2 / wild / CR1; HC0 legacy);
- `regression`: logistic regression of the choice on a bounded length term (log2 ratio;
  linear and tanh as sensitivity rows);
- `score`: OLS of a pointwise score on length, within model;
- `winrate`: the length-controlled win rate beside AlpacaEval's published one;
- `context`: accuracy against context length, the context × response grid, the trend test;
- `plots`: the plotters of these tables.
"""

from judgelab.analyses.length import plots
from judgelab.analyses.length.bins import (
    BIN_KINDS,
    DIFF_MODES,
    EQUAL,
    METRIC_NAMES,
    accuracy_by_diff_bucket,
    accuracy_by_length,
    bin_lengths,
    diff_buckets,
    percentile_edges,
)
from judgelab.analyses.length.context import (
    DEFAULT_EDGES,
    accuracy_by_context,
    context_trend,
    length_grid,
)
from judgelab.analyses.length.picks import CONDITIONS, TEST_COLUMNS, picks_longer, score_pairs
from judgelab.analyses.length.rates import RATE_COLUMNS, cluster_rate, rate_by_group
from judgelab.analyses.length.regression import (
    TRANSFORMS,
    design_length,
    length_regression,
    length_sensitivity,
    length_term,
)
from judgelab.analyses.length.score import score_length_regression, score_reason
from judgelab.analyses.length.verdicts import (
    KEYS,
    group_label,
    item_counts,
    item_key,
    item_table,
    length_unit,
    pairwise_verdicts,
    require_lengths,
)
from judgelab.analyses.length.winrate import (
    SLOTS,
    compare_published,
    length_controlled_winrate,
    preference_for_slot,
    winrate_reason,
    winrates_long,
)

__all__ = [
    "plots",
    "BIN_KINDS",
    "CONDITIONS",
    "DEFAULT_EDGES",
    "DIFF_MODES",
    "EQUAL",
    "KEYS",
    "METRIC_NAMES",
    "RATE_COLUMNS",
    "SLOTS",
    "TEST_COLUMNS",
    "TRANSFORMS",
    "accuracy_by_context",
    "accuracy_by_diff_bucket",
    "accuracy_by_length",
    "bin_lengths",
    "cluster_rate",
    "compare_published",
    "context_trend",
    "design_length",
    "diff_buckets",
    "group_label",
    "item_counts",
    "item_key",
    "item_table",
    "length_controlled_winrate",
    "length_grid",
    "length_regression",
    "length_sensitivity",
    "length_term",
    "length_unit",
    "pairwise_verdicts",
    "percentile_edges",
    "picks_longer",
    "preference_for_slot",
    "rate_by_group",
    "require_lengths",
    "score_length_regression",
    "score_pairs",
    "score_reason",
    "winrate_reason",
    "winrates_long",
]
