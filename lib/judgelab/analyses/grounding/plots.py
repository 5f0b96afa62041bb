"""Charts of notebook 16: width and coverage against the label budget; the judge choice."""

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


def frontier(ranking: pd.DataFrame, *, title: str = "", ax=None):
    """Cost per 1,000 items against κ with its interval, per judge; the frontier joined.

    `ranking` is `choice.rank_judges` output. Judges without a cost are named in the
    caption (they have no place on the cost axis).
    """
    if ax is None:
        _, ax = plt.subplots(figsize=(6.4, 4.2))
    known = ranking[ranking["cost_per_1000"].notna()]
    err = [known["kappa"] - known["kappa_low"], known["kappa_high"] - known["kappa"]]
    ax.errorbar(known["cost_per_1000"], known["kappa"], yerr=err, fmt="o", ms=4, capsize=2,
                color="tab:blue", alpha=0.8)  # fmt: skip
    for _, r in known.iterrows():
        ax.annotate(str(r["judge"]), (r["cost_per_1000"], r["kappa"]), fontsize=7,
                    xytext=(4, 3), textcoords="offset points")  # fmt: skip
    front = known[known["frontier"]].sort_values("cost_per_1000")
    ax.plot(front["cost_per_1000"], front["kappa"], "-", color="tab:orange", label="frontier")
    if (known["cost_per_1000"] > 0).all() and len(known):
        ax.set_xscale("log")
    ax.set_xlabel("cost per 1,000 items ($)")
    ax.set_ylabel("Cohen's κ with the humans")
    missing = ranking.loc[ranking["cost_per_1000"].isna(), "judge"].tolist()
    if missing:
        ax.set_title(f"no cost: {', '.join(map(str, missing))}", fontsize=7, loc="left")
    if title:
        ax.figure.suptitle(title)
    ax.legend(fontsize=8)
    return ax


__all__ = ["budget_panels", "frontier"]
