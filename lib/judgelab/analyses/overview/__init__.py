"""Data overview (notebook 00): what is in an items table.

The face of the overview family: per-split statistics in the ContextualJudgeBench Table 1
layout (`split_statistics`), lengths in long form for plotting (`length_long`), and `plots`.
"""

from judgelab.analyses.overview import plots
from judgelab.analyses.overview.summary import TOTAL, context_hash, length_long, split_statistics

__all__ = ["TOTAL", "context_hash", "length_long", "plots", "split_statistics"]
