"""Plotters for pairwise judge metrics, seaborn style: `f(data, *, x, y, hue=None, ax=None)`.

Every plotter takes a long table (rows of `pairwise_rates` output, already filtered with
`rates_for`), draws on `ax` (a new figure when None) and returns the Axes; rates are
fractions and are drawn in percent.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.colors import Normalize
from matplotlib.figure import Figure

from judgelab.analyses import charts
from judgelab.analyses.pairwise.outcomes import CATEGORIES
from judgelab.analyses.pairwise.rates import AGGREGATIONS, MEAN_OF_SPLITS, POOLED
from judgelab.core.schema import require_columns as _check

ACCURACY_LABELS = {
    "a1": "Run 1 (A1)",
    "a2": "Run 2 (A2)",
    "ca": "Consistent (CA)",
    "oa": "Optimistic (OA)",
    "cons": "Consistency",
}
CATEGORY_COLORS = {
    "consistent": "#4c9a5e",
    "biased_first": "#3b6fb6",
    "biased_second": "#e08a2c",
    "inconsistent_tie": "#9a9a9a",
    "invalid": "#c23b3b",
}
AGGREGATE_LABELS = {POOLED: "Average (pooled)", MEAN_OF_SPLITS: "Mean of splits"}


def leaderboard_heatmap(
    data: pd.DataFrame,
    *,
    x: str = "split",
    y: str = "judge",
    value: str = "value",
    n: str | None = "n",
    x_order: Sequence[str] | None = None,
    y_order: Sequence[str] | None = None,
    cmap: str = "viridis",
    vmin: float = 0.0,
    vmax: float = 1.0,
    ax: Axes | None = None,
) -> Axes:
    """Heatmap of one rate, `y` (judges) × `x` (splits, then averages), annotated with n.

    Each cell shows the rate in percent and, under it, `n` (its denominator). Average
    columns (`pooled`, `mean_of_splits`) are set apart by a white line.
    """
    _check(data, [x, y, value, n], "leaderboard_heatmap")
    if data.duplicated([y, x]).any():
        raise ValueError(
            f"leaderboard_heatmap: several rows per ({y}, {x}); filter to one metric and sample"
        )
    cols = charts.ordered(data[x], x_order)
    cols = [c for c in cols if c not in AGGREGATIONS] + [c for c in cols if c in AGGREGATIONS]
    rows = charts.ordered(data[y], y_order)
    grid = data.pivot(index=y, columns=x, values=value).reindex(index=rows, columns=cols)
    counts = (
        data.pivot(index=y, columns=x, values=n).reindex(index=rows, columns=cols)
        if n is not None
        else None
    )
    ax = charts.axes(ax, (1.1 * len(cols) + 3, 0.5 * len(rows) + 1.5))
    image = ax.imshow(grid.to_numpy(dtype=float), cmap=cmap, vmin=vmin, vmax=vmax, aspect="auto")
    labels, colors = _heatmap_labels(grid, counts, image.norm, cmap)
    charts.annotate_cells(ax, labels, colors=colors)
    n_split = sum(c not in AGGREGATIONS for c in cols)
    if 0 < n_split < len(cols):
        ax.axvline(n_split - 0.5, color="white", linewidth=3)
    ax.set_xticks(range(len(cols)), [AGGREGATE_LABELS.get(c, c) for c in cols])
    ax.set_yticks(range(len(rows)), rows)
    charts.rotate_xticklabels(ax, 35)
    ax.set_xlabel(x)
    ax.set_ylabel(y)
    ax.figure.colorbar(image, ax=ax, fraction=0.03, pad=0.02, format=charts.percent_format())
    return ax


def _heatmap_labels(
    grid: pd.DataFrame, counts: pd.DataFrame | None, norm: Normalize, cmap: str
) -> tuple[list[list[str | None]], list[list[str | None]]]:
    """Cell labels (rate in percent, n under it; None when missing) and readable colours."""
    labels: list[list[str | None]] = []
    colors: list[list[str | None]] = []
    for i in range(grid.shape[0]):
        labels.append([])
        colors.append([])
        for j in range(grid.shape[1]):
            v = grid.iat[i, j]
            if pd.isna(v):
                labels[i].append(None)
                colors[i].append(None)
                continue
            label = f"{100 * v:.1f}"
            if counts is not None and not pd.isna(counts.iat[i, j]):
                label += f"\nn={int(counts.iat[i, j])}"
            dark = norm(v) < 0.55 if cmap == "viridis" else abs(norm(v) - 0.5) > 0.3
            labels[i].append(label)
            colors[i].append("white" if dark else "black")
    return labels, colors


def accuracy_bars(
    data: pd.DataFrame,
    *,
    x: str = "judge",
    y: str = "value",
    hue: str = "metric",
    low: str | None = "ci_low",
    high: str | None = "ci_high",
    order: Sequence[str] | None = None,
    hue_order: Sequence[str] | None = ("a1", "a2", "ca", "oa"),
    legend: bool = True,
    ax: Axes | None = None,
) -> Axes:
    """Grouped bars: one group per `x` (judge), one bar per `hue` (metric), CI error bars."""
    _check(data, [x, y, hue, low, high], "accuracy_bars")
    xs = charts.ordered(data[x], order)
    hues = [h for h in charts.ordered(data[hue], hue_order) if h in set(data[hue])]
    ax = charts.axes(ax, (max(5.0, 1.3 * len(xs) + 2), 4))
    charts.percent_bars(
        ax, data, x=x, y=y, hue=hue, xs=xs, hues=hues, low=low, high=high, labels=ACCURACY_LABELS
    )
    if legend:
        ax.legend(
            fontsize=8, ncols=min(len(hues), 4), loc="upper center", bbox_to_anchor=(0.5, 1.15)
        )
    return ax


def accuracy_panels(
    data: pd.DataFrame,
    *,
    panels: Mapping[str, Sequence[str]] | None = None,
    x: str = "judge",
    y: str = "value",
    hue: str = "metric",
    hue_order: Sequence[str] | None = ("a1", "a2", "ca", "oa"),
) -> Figure:
    """Fig. 9 layout: `accuracy_bars` in one panel per judge group (title → judge ids).

    With no `panels`, one panel holds every judge. A judge named in `panels` but absent
    from the data raises ValueError.
    """
    _check(data, [x, y, hue], "accuracy_panels")
    groups = dict(panels) if panels else {"all judges": list(dict.fromkeys(data[x]))}
    known = set(data[x])
    for title, members in groups.items():
        missing = [m for m in members if m not in known]
        if missing:
            raise ValueError(f"panel {title!r}: judge(s) {missing} not in the data")
    widths = [max(len(m), 1) for m in groups.values()]
    fig, axes = plt.subplots(
        1,
        len(groups),
        figsize=(max(6.0, 1.3 * sum(widths) + 2.5), 4.2),
        sharey=True,
        squeeze=False,
        gridspec_kw={"width_ratios": widths},
    )
    for ax, (title, members) in zip(axes[0], groups.items(), strict=True):
        accuracy_bars(
            data[data[x].isin(members)],
            x=x,
            y=y,
            hue=hue,
            order=members,
            hue_order=hue_order,
            legend=False,
            ax=ax,
        )
        ax.set_title(title)
    for ax in axes[0][1:]:
        ax.set_ylabel("")
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="upper center", ncols=len(labels), fontsize=8)
    fig.subplots_adjust(top=0.84)
    return fig


def preference_forest(
    data: pd.DataFrame,
    *,
    x: str = "pos_a_rate",
    y: str = "judge",
    low: str = "ci_low",
    high: str = "ci_high",
    p: str | None = "p_value",
    reference: float = 0.5,
    order: Sequence[str] | None = None,
    ax: Axes | None = None,
) -> Axes:
    """Forest plot: one row per `y` (judge), the rate at `x` with its interval, p on the right.

    The dashed line marks `reference` (0.5 = no position preference).
    """
    _check(data, [x, y, low, high, p], "preference_forest")
    rows = charts.ordered(data[y], order)
    part = data.set_index(y).reindex(rows)
    ax = charts.axes(ax, (7, 0.45 * len(rows) + 1.5))
    pos = np.arange(len(rows))[::-1]
    values = 100 * part[x].to_numpy(dtype=float)
    xerr = charts.interval_err(part[x], part[low], part[high], scale=100)
    ax.errorbar(values, pos, xerr=xerr, fmt="o", capsize=3)
    charts.reference_line(ax, 100 * reference)
    if p is not None:
        texts = [_p_text(pv) for pv in part[p]]
        charts.side_labels(ax, pos, texts, x=1.02, fontsize=8)
    ax.set_yticks(pos, rows)
    ax.set_xlim(-3, 103)
    ax.set_xlabel("position-A preference (% of valid non-tie verdicts)")
    ax.set_ylabel(y)
    return ax


def _p_text(p: float) -> str:
    return "p = n/a" if pd.isna(p) else (f"p = {p:.2g}" if p >= 1e-4 else "p < 1e-4")


def category_bars(
    data: pd.DataFrame,
    *,
    x: str = "value",
    y: str = "judge",
    hue: str = "category",
    order: Sequence[str] | None = None,
    hue_order: Sequence[str] | None = CATEGORIES,
    ax: Axes | None = None,
) -> Axes:
    """Horizontal stacked bars of the consistency categories per `y` (judge), in percent."""
    _check(data, [x, y, hue], "category_bars")
    rows = charts.ordered(data[y], order)
    present = set(data[hue].astype(str))
    cats = [c for c in charts.ordered(data[hue].astype(str), hue_order) if c in present]
    ax = charts.axes(ax, (8, 0.45 * len(rows) + 1.6))
    pos = np.arange(len(rows))[::-1]
    left = np.zeros(len(rows))
    for cat in cats:
        part = data[data[hue].astype(str) == cat].set_index(y).reindex(rows)
        width = 100 * np.nan_to_num(part[x].to_numpy(dtype=float))
        ax.barh(pos, width, left=left, color=CATEGORY_COLORS.get(cat), label=cat.replace("_", " "))
        left += width
    ax.set_yticks(pos, rows)
    ax.set_xlim(0, 100)
    ax.set_xlabel("% of items")
    ax.set_ylabel(y)
    ax.legend(fontsize=8, ncols=len(cats), loc="upper center", bbox_to_anchor=(0.5, 1.18))
    return ax


def radar(
    data: pd.DataFrame,
    *,
    x: str = "split",
    y: str = "value",
    hue: str = "judge",
    order: Sequence[str] | None = None,
    hue_order: Sequence[str] | None = None,
    ax: Axes | None = None,
) -> Axes:
    """Radar chart (Fig. 1 top): one closed line per `hue` (judge) over the `x` axes (splits).

    Axes run clockwise from the top; an average (`pooled`, else `mean_of_splits`) comes
    first, as in the paper. The radial axis is 0-100 with rings at 50, 75, 100.
    """
    _check(data, [x, y, hue], "radar")
    if ax is None:
        ax = plt.figure(figsize=(6.5, 6.5)).add_subplot(projection="polar")
    elif ax.name != "polar":
        raise ValueError("radar needs a polar Axes (projection='polar')")
    spokes = charts.ordered(data[x], order)
    averages = [a for a in AGGREGATIONS if a in spokes]
    spokes = averages[:1] + [s for s in spokes if s not in AGGREGATIONS]
    angles = np.linspace(0, 2 * np.pi, len(spokes), endpoint=False)
    ax.set_theta_offset(np.pi / 2)
    ax.set_theta_direction(-1)
    for name in charts.ordered(data[hue], hue_order):
        part = data[data[hue] == name].set_index(x).reindex(spokes)
        values = 100 * part[y].to_numpy(dtype=float)
        ax.plot(np.append(angles, angles[0]), np.append(values, values[0]), label=name)
    ax.set_xticks(angles, [AGGREGATE_LABELS.get(s, s) for s in spokes], fontsize=8)
    ax.set_ylim(0, 100)
    ax.set_yticks([50, 75, 100], ["50", "75", "100"], fontsize=7)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.05, 1.05))
    return ax


def stability_plot(
    data: pd.DataFrame,
    *,
    x: str = "judge",
    y: str = "value",
    hue: str | None = "sample",
    order: Sequence[str] | None = None,
    ylabel: str = "%",
    ax: Axes | None = None,
) -> Axes:
    """Run-to-run stability: each repeated run (`hue`) as a dot, mean ± SD per `x` as a bar.

    Judges with one run show a single dot and no bar.
    """
    _check(data, [x, y, hue], "stability_plot")
    xs = charts.ordered(data[x], order)
    ax = charts.axes(ax, (max(5.0, 1.1 * len(xs) + 2), 4))
    for i, name in enumerate(xs):
        values = 100 * data.loc[data[x] == name, y].dropna().to_numpy(dtype=float)
        if len(values) == 0:
            continue
        jitter = np.linspace(-0.12, 0.12, len(values)) if len(values) > 1 else np.zeros(1)
        ax.scatter(i + jitter, values, s=22, color="#3b6fb6", alpha=0.8, zorder=3)
        if len(values) > 1:
            ax.errorbar(
                i + 0.28,
                values.mean(),
                yerr=values.std(ddof=1),
                fmt="s",
                color="black",
                capsize=4,
                markersize=5,
            )
    ax.set_xticks(range(len(xs)), xs)
    charts.rotate_xticklabels(ax, 30)
    ax.set_xlim(-0.6, len(xs) - 0.4)
    ax.set_ylim(0, 100)
    ax.set_ylabel(ylabel)
    ax.set_xlabel(x)
    return ax
