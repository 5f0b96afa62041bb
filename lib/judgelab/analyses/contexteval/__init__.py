"""Contextualized Evaluations (spec 002): default contexts (07) and contextual evaluation (08).

DataFrames in, DataFrames out; the loaders are in `judgelab.data.catalog.contexteval` and the
generation -> rating chain in `judgelab.judges.chain`. Modules, in reading order:

- `verdicts`: settings and pairs, the authors' verdict rules (`verdict_table`), examples with
  their plurality and majority labels (`example_table`), Invalid outputs, the query pool;
- `interrater`: agreement variants and deltas (Table 4), kappa, human vs autorater labels,
  the constraint-difference subset (Table 5);
- `winrates`: majority win rates, leaders and rank flips (Table 6);
- `justifications`: surface vs content justification shares (Figure 4);
- `weird`: Table 8, the WEIRD default-context ratings (Figure 5) and their sensitivity
  (Figure 6); `weirdgap`: WEIRD gaps with wild cluster bootstrap tests, Holm/BH across the
  per-attribute and per-rater tests, and missing-as-error sensitivity rows;
- `resampling`: units, the restricted wild cluster bootstrap (the default) and the pairs
  cluster bootstrap (the earlier default) the tests share (`core.side_by_side` puts the two
  side by side where the choice changes a conclusion);
- `plots`: the plotters of these tables.
"""

from judgelab.analyses.contexteval import plots
from judgelab.analyses.contexteval.interrater import (
    PAIRINGS,
    PAPER_LABELS,
    VARIANTS,
    agreement,
    constraint_subset_agreement,
    cross_source_agreement,
    kappa_table,
)
from judgelab.analyses.contexteval.justifications import (
    NORMALIZATIONS,
    justification_shares,
    parse_codes,
)
from judgelab.analyses.contexteval.resampling import METHODS
from judgelab.analyses.contexteval.verdicts import (
    BASELINE,
    EXAMPLE_KEYS,
    INVALID_AS,
    LABELS,
    PANELS,
    REPO_SETTINGS,
    SETTINGS,
    TIE_BREAKS,
    autorater_verdict,
    candidates,
    example_table,
    human_verdict,
    invalid_as_error,
    invalid_counts,
    plurality,
    query_counts,
    query_text,
    setting_name,
    verdict_table,
)
from judgelab.analyses.contexteval.weird import (
    RATING_TEMPLATES,
    REPO_VALUE_STRINGS,
    TABLE8,
    VALUE_STRINGS,
    WEIRD_MAP,
    attribute_catalogue,
    group_values,
    max_difference_distribution,
    max_differences,
    mean_ratings,
    paper_attributes,
    rating_counts,
    ratings_table,
    sensitivity_summary,
)
from judgelab.analyses.contexteval.weirdgap import GAP_TESTS, weird_gap
from judgelab.analyses.contexteval.winrates import leaders_by_source, rank_flips, win_rates

__all__ = [
    "plots",
    "BASELINE",
    "EXAMPLE_KEYS",
    "GAP_TESTS",
    "INVALID_AS",
    "LABELS",
    "METHODS",
    "NORMALIZATIONS",
    "PAIRINGS",
    "PANELS",
    "PAPER_LABELS",
    "RATING_TEMPLATES",
    "REPO_SETTINGS",
    "REPO_VALUE_STRINGS",
    "SETTINGS",
    "TABLE8",
    "TIE_BREAKS",
    "VALUE_STRINGS",
    "VARIANTS",
    "WEIRD_MAP",
    "agreement",
    "attribute_catalogue",
    "autorater_verdict",
    "candidates",
    "constraint_subset_agreement",
    "cross_source_agreement",
    "example_table",
    "group_values",
    "human_verdict",
    "invalid_as_error",
    "invalid_counts",
    "justification_shares",
    "kappa_table",
    "leaders_by_source",
    "max_difference_distribution",
    "max_differences",
    "mean_ratings",
    "paper_attributes",
    "parse_codes",
    "plurality",
    "query_counts",
    "query_text",
    "rank_flips",
    "rating_counts",
    "ratings_table",
    "sensitivity_summary",
    "setting_name",
    "verdict_table",
    "weird_gap",
    "win_rates",
]
