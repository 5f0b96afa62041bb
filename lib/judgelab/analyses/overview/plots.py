"""Plotters in seaborn style: `f(data, *, x, y, hue=None, ax=None) -> Axes`."""

from __future__ import annotations

import pandas as pd
import seaborn as sns
from matplotlib.axes import Axes

from judgelab.analyses import charts


def length_histogram(
    data: pd.DataFrame,
    *,
    x: str = "length",
    hue: str | None = "text",
    log: bool = True,
    unit: str = "words",
    ax: Axes | None = None,
) -> Axes:
    """Histogram of text lengths (long form from `overview.length_long`)."""
    ax = charts.axes(ax, (7, 3.5))
    data = data[data[x] > 0] if log else data
    if data.empty:
        return charts.no_data(ax, "no texts to measure")
    sns.histplot(
        data=data,
        x=x,
        hue=hue,
        log_scale=log,
        element="step",
        fill=False,
        common_norm=False,
        stat="density",
        ax=ax,
    )
    ax.set_xlabel(f"length ({unit})")
    return ax
