"""Plotters for correctness grading: `f(data, *, x, y, hue, ax)`.

Every plotter takes a long table (one row per bar) with `ci_low`/`ci_high` interval columns
and `n`, draws grouped bars with interval whiskers and the n of each bar, and returns the Axes
(or the Figure of a faceted layout). `rate_bars` is shared with the reference family and lives
in `judgelab.analyses.charts`; it is re-exported here.
"""

from __future__ import annotations

import pandas as pd
from matplotlib.figure import Figure

from judgelab.analyses import charts
from judgelab.analyses.charts import rate_bars as rate_bars
from judgelab.core.schema import require_columns as _check

__all__ = ["faceted_rate_bars", "rate_bars"]


def faceted_rate_bars(
    data: pd.DataFrame,
    *,
    x: str,
    y: str = "value",
    hue: str | None = None,
    col: str = "metric",
    col_labels: dict[str, str] | None = None,
    suptitle: str | None = None,
    **kwargs: object,
) -> Figure:
    """One `rate_bars` panel per value of `col` (e.g. FPR and FNR side by side)."""
    _check(data, [col], "faceted_rate_bars")
    cols = list(dict.fromkeys(data[col]))
    fig, axes = charts.facets(len(cols), len(cols), size=(5.5, 4.2))
    if not cols:
        charts.no_data(axes[0], "no rates to draw", title=suptitle)
        return fig
    for ax, value in zip(axes, cols, strict=True):
        label = (col_labels or {}).get(value, value)
        rate_bars(data[data[col] == value], x=x, y=y, hue=hue, ax=ax, ylabel=label,
                  title=label, **kwargs)  # fmt: skip
    if suptitle:
        fig.suptitle(suptitle)
    fig.tight_layout()
    return fig
