"""Plotters for pairwise judge metrics, seaborn style: `f(data, *, x, y, hue=None, ax=None)`.

Every plotter takes a long table (rows of `pairwise.metrics` output, already filtered with
`metrics.rates_for`), draws on `ax` (a new figure when None) and returns the Axes; rates are
fractions and are drawn in percent.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from judgelab.analyses.pairwise import metrics
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
AGGREGATE_LABELS = {metrics.POOLED: "Average (pooled)", metrics.MEAN_OF_SPLITS: "Mean of splits"}


def _order(values: pd.Series, order: Sequence[str] | None) -> list:
    return list(order) if order is not None else list(dict.fromkeys(values))


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
    cols = _order(data[x], x_order)
    cols = [c for c in cols if c not in metrics.AGGREGATIONS] + [
        c for c in cols if c in metrics.AGGREGATIONS
    ]
    rows = _order(data[y], y_order)
    grid = data.pivot(index=y, columns=x, values=value).reindex(index=rows, columns=cols)
    counts = (
        data.pivot(index=y, columns=x, values=n).reindex(index=rows, columns=cols)
        if n is not None
        else None
    )
    if ax is None:
        ax = plt.figure(figsize=(1.1 * len(cols) + 3, 0.5 * len(rows) + 1.5)).gca()
    image = ax.imshow(grid.to_numpy(dtype=float), cmap=cmap, vmin=vmin, vmax=vmax, aspect="auto")
    norm = image.norm
    for i in range(len(rows)):
        for j in range(len(cols)):
            v = grid.iat[i, j]
            if pd.isna(v):
                ax.text(j, i, "–", ha="center", va="center", fontsize=8)
                continue
            label = f"{100 * v:.1f}"
            if counts is not None and not pd.isna(counts.iat[i, j]):
                label += f"\nn={int(counts.iat[i, j])}"
            dark = norm(v) < 0.55 if cmap == "viridis" else abs(norm(v) - 0.5) > 0.3
            ax.text(
                j,
                i,
                label,
                ha="center",
                va="center",
                fontsize=8,
                color="white" if dark else "black",
            )
    n_split = sum(c not in metrics.AGGREGATIONS for c in cols)
    if 0 < n_split < len(cols):
        ax.axvline(n_split - 0.5, color="white", linewidth=3)
    ax.set_xticks(range(len(cols)), [AGGREGATE_LABELS.get(c, c) for c in cols])
    ax.set_yticks(range(len(rows)), rows)
    ax.tick_params(axis="x", labelrotation=35)
    for label in ax.get_xticklabels():
        label.set_horizontalalignment("right")
    ax.set_xlabel(x)
    ax.set_ylabel(y)
    ax.figure.colorbar(image, ax=ax, fraction=0.03, pad=0.02, format=lambda t, _: f"{100 * t:.0f}")
    return ax


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
    xs = _order(data[x], order)
    hues = [h for h in _order(data[hue], hue_order) if h in set(data[hue])]
    if ax is None:
        ax = plt.figure(figsize=(max(5.0, 1.3 * len(xs) + 2), 4)).gca()
    width = 0.8 / max(len(hues), 1)
    palette = plt.get_cmap("tab10")
    for k, h in enumerate(hues):
        part = data[data[hue] == h].set_index(x).reindex(xs)
        pos = np.arange(len(xs)) - 0.4 + width * (k + 0.5)
        values = part[y].to_numpy(dtype=float)
        yerr = None
        if low is not None and high is not None:
            lo = np.clip(values - part[low].to_numpy(dtype=float), 0, None)
            hi = np.clip(part[high].to_numpy(dtype=float) - values, 0, None)
            yerr = 100 * np.nan_to_num(np.vstack([lo, hi]))
        ax.bar(
            pos,
            100 * np.nan_to_num(values),
            width,
            yerr=yerr,
            capsize=2,
            label=ACCURACY_LABELS.get(h, h),
            color=palette(k),
        )
    ax.set_xticks(range(len(xs)), xs)
    ax.tick_params(axis="x", labelrotation=30)
    for label in ax.get_xticklabels():
        label.set_horizontalalignment("right")
    ax.set_ylim(0, 105)
    ax.set_ylabel("%")
    ax.set_xlabel(x)
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
    rows = _order(data[y], order)
    part = data.set_index(y).reindex(rows)
    if ax is None:
        ax = plt.figure(figsize=(7, 0.45 * len(rows) + 1.5)).gca()
    pos = np.arange(len(rows))[::-1]
    values = 100 * part[x].to_numpy(dtype=float)
    lo = np.clip(values - 100 * part[low].to_numpy(dtype=float), 0, None)
    hi = np.clip(100 * part[high].to_numpy(dtype=float) - values, 0, None)
    ax.errorbar(values, pos, xerr=np.nan_to_num(np.vstack([lo, hi])), fmt="o", capsize=3)
    ax.axvline(100 * reference, color="grey", linestyle="--", linewidth=1)
    if p is not None:
        for yy, pv in zip(pos, part[p], strict=True):
            text = "p = n/a" if pd.isna(pv) else (f"p = {pv:.2g}" if pv >= 1e-4 else "p < 1e-4")
            ax.text(1.02, yy, text, transform=ax.get_yaxis_transform(), va="center", fontsize=8)
    ax.set_yticks(pos, rows)
    ax.set_xlim(-3, 103)
    ax.set_xlabel("position-A preference (% of valid non-tie verdicts)")
    ax.set_ylabel(y)
    return ax


def category_bars(
    data: pd.DataFrame,
    *,
    x: str = "value",
    y: str = "judge",
    hue: str = "category",
    order: Sequence[str] | None = None,
    hue_order: Sequence[str] | None = metrics.CATEGORIES,
    ax: Axes | None = None,
) -> Axes:
    """Horizontal stacked bars of the consistency categories per `y` (judge), in percent."""
    _check(data, [x, y, hue], "category_bars")
    rows = _order(data[y], order)
    cats = [c for c in _order(data[hue].astype(str), hue_order) if c in set(data[hue].astype(str))]
    if ax is None:
        ax = plt.figure(figsize=(8, 0.45 * len(rows) + 1.6)).gca()
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
    spokes = _order(data[x], order)
    averages = [a for a in metrics.AGGREGATIONS if a in spokes]
    spokes = averages[:1] + [s for s in spokes if s not in metrics.AGGREGATIONS]
    angles = np.linspace(0, 2 * np.pi, len(spokes), endpoint=False)
    ax.set_theta_offset(np.pi / 2)
    ax.set_theta_direction(-1)
    for name in _order(data[hue], hue_order):
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
    xs = _order(data[x], order)
    if ax is None:
        ax = plt.figure(figsize=(max(5.0, 1.1 * len(xs) + 2), 4)).gca()
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
    ax.tick_params(axis="x", labelrotation=30)
    for label in ax.get_xticklabels():
        label.set_horizontalalignment("right")
    ax.set_xlim(-0.6, len(xs) - 0.4)
    ax.set_ylim(0, 100)
    ax.set_ylabel(ylabel)
    ax.set_xlabel(x)
    return ax
