"""Juries, self-consistency and agreement between judges (ContextualJudgeBench §4.4, Figs. 6-7).

Spec 000 §4.5-4.8. Every analysis takes a judgments table and returns DataFrames; rates are
fractions with seeded cluster-bootstrap intervals (the items' `cluster` column, else the item;
`cluster=None` resamples items: the legacy bootstrap). Modules, in reading order:

- `votes`: consolidated labels (inconsistent → tie) and the vote rules;
- `jury_tables`: every jury of a pool scored against its best member (re-selected in every
  bootstrap replicate), with adaptive p-values and Holm, and its summary; its cells
  (`jury_cells`) and the fields of its rows (`jury_wild`, `jury_bootstrap`);
- `jury_members`: one jury's members beside it (Fig. 6 top); `resample`: the cluster bootstrap;
- `consistency`: self-consistency, a vote over each judge's samples, beside its greedy label;
- `draws`: the distribution of hits over repeated draws (Fig. 7);
- `ratings`: the units and nominal values the agreement measures read;
- `alpha`: Krippendorff's alpha across the judges of a pool, and its coding variants;
- `pairs`: judge × judge tables (cells, paired bootstrap), their mean, the jury context;
- `kappa`: Cohen's kappa matrix; `correlation`: error correlation (phi);
- `selection`: notebook helpers (`select`, `pick`, `resolve_focus`);
- `plots`: the plotters of these tables.
"""

from judgelab.analyses.juries import plots
from judgelab.analyses.juries.alpha import (
    CODINGS,
    LEVELS,
    alpha_table,
    alpha_variants,
    krippendorff_alpha,
    nominal_alpha_from_coincidences,
    unit_coincidences,
)
from judgelab.analyses.juries.consistency import (
    INVALID_DRAWS,
    SC_MODES,
    self_consistency,
    self_consistency_rates,
    self_consistency_reason,
)
from judgelab.analyses.juries.correlation import error_correlation, error_indicators
from judgelab.analyses.juries.draws import COUNTS, draw_counts
from judgelab.analyses.juries.jury_members import jury_members_long
from judgelab.analyses.juries.jury_tables import (
    JURY_SEP,
    jury_summary,
    jury_table,
)
from judgelab.analyses.juries.kappa import cohen_kappa_matrix
from judgelab.analyses.juries.pairs import jury_context, mean_off_diagonal
from judgelab.analyses.juries.ratings import RATING_CODES, UNITS, ratings
from judgelab.analyses.juries.selection import Focus, pick, resolve_focus, select
from judgelab.analyses.juries.votes import (
    LABELS,
    NO_WINNER,
    VOTE_RULES,
    consolidated_labels,
    vote,
    vote_labels,
)

__all__ = [
    "CODINGS",
    "COUNTS",
    "Focus",
    "INVALID_DRAWS",
    "JURY_SEP",
    "LABELS",
    "LEVELS",
    "NO_WINNER",
    "RATING_CODES",
    "SC_MODES",
    "UNITS",
    "VOTE_RULES",
    "alpha_table",
    "alpha_variants",
    "cohen_kappa_matrix",
    "consolidated_labels",
    "draw_counts",
    "error_correlation",
    "error_indicators",
    "jury_context",
    "jury_members_long",
    "jury_summary",
    "jury_table",
    "krippendorff_alpha",
    "mean_off_diagonal",
    "nominal_alpha_from_coincidences",
    "pick",
    "plots",
    "ratings",
    "resolve_focus",
    "select",
    "self_consistency",
    "self_consistency_rates",
    "self_consistency_reason",
    "unit_coincidences",
    "vote",
    "vote_labels",
]
