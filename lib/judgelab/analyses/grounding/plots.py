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
    err = [(known["kappa"] - known["kappa_low"]).clip(lower=0),
           (known["kappa_high"] - known["kappa"]).clip(lower=0)]  # fmt: skip
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


def reliability(table: pd.DataFrame, *, title: str = "", ax=None):
    """Reliability diagram: observed positive rate (with its interval) against mean score.

    `table` is `confidence.reliability` output; the diagonal is perfect calibration and
    each point's size follows its bin's items.
    """
    if ax is None:
        _, ax = plt.subplots(figsize=(4.6, 4.4))
    ax.plot([0, 1], [0, 1], ls="--", color="grey", lw=0.8)
    # a Wilson bound at 0 can come back as 5e-17 above a rate of 0: clip the rounding
    err = [(table["observed"] - table["ci_low"]).clip(lower=0),
           (table["ci_high"] - table["observed"]).clip(lower=0)]  # fmt: skip
    ax.errorbar(table["mean_score"], table["observed"], yerr=err, fmt="none", capsize=2,
                color="tab:blue", alpha=0.7)  # fmt: skip
    size = 10 + 90 * table["n"] / max(float(table["n"].max()), 1.0)
    ax.scatter(table["mean_score"], table["observed"], s=size, color="tab:blue", zorder=3)
    ax.set_xlim(-0.02, 1.02)
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel("judge's probability (bin mean)")
    ax.set_ylabel("human positive rate")
    if title:
        ax.set_title(title, fontsize=9)
    return ax


def reliability_panels(table: pd.DataFrame, *, title: str = "") -> Figure:
    """One reliability diagram per judge of a `confidence.by_judge` reliability table."""
    judges = list(dict.fromkeys(table["judge"]))
    fig, axes = plt.subplots(1, max(len(judges), 1), figsize=(3.4 * max(len(judges), 1), 3.5),
                             squeeze=False)  # fmt: skip
    for ax, name in zip(axes[0], judges, strict=False):
        reliability(table[table["judge"] == name], title=str(name), ax=ax)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return fig


__all__ = ["budget_panels", "frontier", "reliability", "reliability_panels"]
