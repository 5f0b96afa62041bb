"""Plotters for the stability family (seaborn style).

Every plotter takes a table of this family, draws on `ax` (a new figure when None) and
returns the Axes; when a table has nothing to draw, the axes say why instead of staying blank.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.axes import Axes

from judgelab.analyses import charts
from judgelab.core.schema import require_columns


def shift_heatmap(matrix: pd.DataFrame, *, ax: Axes | None = None) -> Axes:
    """Heatmap of a `shift.shift_matrix`: row = A's label, column = B's, cell = row share."""
    require_columns(matrix, ["a", "b", "from", "to", "n", "share"], "shift_heatmap")
    ax = charts.axes(ax, (4.5, 4))
    if matrix.empty:
        return charts.no_data(ax, "no units rated by both")
    table = matrix.pivot(index="from", columns="to", values="share")
    counts = matrix.pivot(index="from", columns="to", values="n")
    ax.imshow(table.to_numpy(dtype=float), cmap="Blues", vmin=0, vmax=1)
    labels = [
        [f"{100 * v:.0f}%\n(n={int(c)})" for v, c in zip(r, rc, strict=True)]
        for r, rc in zip(table.to_numpy(), counts.to_numpy(), strict=True)
    ]
    charts.annotate_cells(ax, labels, fontsize=7)
    ax.set_xticks(range(len(table.columns)), list(table.columns))
    ax.set_yticks(range(len(table.index)), list(table.index))
    ax.set_xlabel(f"B: {matrix['b'].iloc[0]}")
    ax.set_ylabel(f"A: {matrix['a'].iloc[0]}")
    return ax


def forest(
    data: pd.DataFrame,
    *,
    label: str,
    value: str = "value",
    xlabel: str = "",
    reference: float | None = None,
    ax: Axes | None = None,
) -> Axes:
    """Points with `ci_low`–`ci_high` whiskers, one row per `label` (top = first row).

    Args:
        data: One row per estimate: `label`, `value`, `ci_low`, `ci_high`.
        label: Column naming each row.
        value: Column of the point estimate.
        xlabel: Label of the x axis.
        reference: Draw a dashed vertical line here (e.g. τ = 1, a shift of 0).
        ax: Axes to draw on.
    """
    require_columns(data, [label, value, "ci_low", "ci_high"], "forest")
    ax = charts.axes(ax, (6, 0.35 * len(data) + 1.2))
    if data.empty:
        return charts.no_data(ax, "nothing to compare")
    y = np.arange(len(data))[::-1]
    v = data[value].to_numpy(dtype=float)
    err = charts.interval_err(v, data["ci_low"], data["ci_high"])
    ax.errorbar(v, y, xerr=err, fmt="o", capsize=3, markersize=4)
    ax.set_yticks(y, [str(s) for s in data[label]])
    if reference is not None:
        ax.axvline(reference, color="grey", ls="--", lw=0.8)
    ax.set_xlabel(xlabel)
    return ax


def rank_sets(board: pd.DataFrame, *, rater: str, ax: Axes | None = None) -> Axes:
    """Each system's rank under one rater with its 95 % rank set (best at the top)."""
    require_columns(board, ["rater", "system", "rank", "rank_low", "rank_high"], "rank_sets")
    part = board[board["rater"] == rater].sort_values("rank")
    ax = charts.axes(ax, (5, 0.35 * len(part) + 1.2))
    if part.empty:
        return charts.no_data(ax, f"no systems ranked by {rater}")
    y = np.arange(len(part))[::-1]
    r = part["rank"].to_numpy(dtype=float)
    err = charts.interval_err(r, part["rank_low"], part["rank_high"])
    ax.errorbar(r, y, xerr=err, fmt="s", capsize=3, markersize=4)
    ax.set_yticks(y, [str(s) for s in part["system"]])
    ax.set_xlabel(f"rank under {rater} (95 % rank set)")
    ax.invert_xaxis()
    return ax


def trials_curve(
    curve: pd.DataFrame, *, target: float | None = 0.95, ax: Axes | None = None
) -> Axes:
    """P(majority of k trials agrees with the many-trial majority) against k, per judge."""
    require_columns(curve, ["judge", "k", "p_agree", "ci_low", "ci_high"], "trials_curve")
    ax = charts.axes(ax, (6, 4))
    if curve.empty:
        return charts.no_data(ax, "no judge was run more than once")
    for judge, part in curve.groupby("judge", sort=True):
        ax.plot(part["k"], part["p_agree"], marker="o", markersize=3, label=str(judge))
        ax.fill_between(part["k"], part["ci_low"], part["ci_high"], alpha=0.2)
    if target is not None:
        ax.axhline(target, color="grey", ls="--", lw=0.8)
    ax.set_xlabel("trials k (majority vote)")
    ax.set_ylabel("P(agrees with many-trial majority)")
    ax.legend(fontsize=7)
    return ax
