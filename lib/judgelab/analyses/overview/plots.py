"""Plotters in seaborn style: `f(data, *, x, y, hue=None, ax=None) -> Axes`."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd
import seaborn as sns
from matplotlib.axes import Axes


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
    if ax is None:
        ax = plt.figure(figsize=(7, 3.5)).gca()
    data = data[data[x] > 0] if log else data
    if data.empty:
        ax.text(0.5, 0.5, "no texts to measure", ha="center", va="center", transform=ax.transAxes)
        return ax
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
