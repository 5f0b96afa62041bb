"""Charts of notebook 16: interval width and coverage against the human-label budget."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.figure import Figure

_STYLE = {"naive": ":", "classical": "--", "ppi": "-", "ppi_plain": "-."}


def budget_panels(summary: pd.DataFrame, *, title: str = "", level: float = 0.95) -> Figure:
    """Two panels from `summarise_curves`: mean width and coverage vs budget, per method."""
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.8))
    for method, g in summary.groupby("method", sort=False):
        style = _STYLE.get(method, "-")
        left.plot(g["budget"], g["mean_width"], style, marker="o", ms=3, label=method)
        right.errorbar(
            g["budget"],
            g["coverage"],
            yerr=1.96 * g["coverage_se"],
            fmt=style,
            marker="o",
            ms=3,
            capsize=2,
            label=method,
        )
    for ax in (left, right):
        ax.set_xscale("log")
        ax.set_xlabel("human labels n")
    left.set_ylabel("mean interval width")
    right.set_ylabel("coverage of the all-human value")
    right.axhline(level, color="grey", lw=0.8, ls="--")
    right.set_ylim(-0.02, 1.02)
    left.legend(fontsize=8)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return fig


__all__ = ["budget_panels"]
