"""Plotters for length analyses, seaborn style: `f(data, *, x, y, hue=None, ax=None) -> Axes`.

Each takes a long table from the `length` family (verdicts, bins, picks, context), draws on `ax`
(a new figure when None) and returns the Axes (or the Figure for multi-panel plots). An
empty table draws a "no data" note instead of failing, so a notebook section that does not
apply to a source (e.g. pointwise scores on a pairwise benchmark) still renders.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from judgelab.analyses import charts
from judgelab.core.schema import require_columns as _check

NO_DATA = "no data for this source"


def _levels(values: pd.Series) -> list:
    if isinstance(values.dtype, pd.CategoricalDtype):
        present = set(values.dropna())
        return [c for c in values.cat.categories if c in present]
    return list(dict.fromkeys(values.dropna()))


def _all_levels(values: pd.Series) -> list:
    """Every category of a categorical (empty bins included), else the values in order."""
    if isinstance(values.dtype, pd.CategoricalDtype):
        return list(values.cat.categories)
    return list(dict.fromkeys(values.dropna()))


def _cell_label(value: float, count: int) -> str:
    """A grid cell: its percent over its n, or only its n when masked."""
    return f"n={count}" if np.isnan(value) else f"{100 * value:.0f}\nn={count}"


def rate_lines(
    data: pd.DataFrame,
    *,
    x: str = "bin",
    y: str = "value",
    hue: str | None = "judge",
    style: str | None = "metric",
    low: str | None = "ci_low",
    high: str | None = "ci_high",
    n: str | None = "n",
    percent: bool = True,
    xlabel: str | None = None,
    ylabel: str = "accuracy (%)",
    title: str | None = None,
    ax: Axes | None = None,
) -> Axes:
    """Line per `hue` over ordinal `x` bins with interval bars; n per bin in the tick labels.

    When the groups have different n in a bin, the tick shows the range (`n=80–95`). A
    `style` column (e.g. `metric`: accuracy / consistency) draws one line per hue × style,
    solid for its first level and dashed for the others; it is ignored when absent.
    """
    style = style if style is not None and style in data.columns else None
    _check(data, [x, y, hue, low, high, n], "rate_lines")
    ax = charts.axes(ax, (8, 4.2))
    data = data[data[y].notna()] if len(data) else data
    if data.empty:
        return charts.no_data(ax, NO_DATA, title=title)
    xs = _levels(data[x])
    scale = 100.0 if percent else 1.0
    styles = _levels(data[style]) if style else [None]
    combos = [(h, s) for h in (_levels(data[hue]) if hue else [None]) for s in styles]
    hues = combos
    offsets = np.linspace(-0.12, 0.12, len(combos)) if len(combos) > 1 else [0.0]
    colors = {h: f"C{i}" for i, h in enumerate(dict.fromkeys(h for h, _ in combos))}
    for (h, s), off in zip(combos, offsets, strict=True):
        part = data if h is None else data[data[hue] == h]
        part = part if s is None else part[part[style] == s]
        if part.empty:
            continue
        part = part.set_index(x).reindex(xs)
        vals = scale * part[y].to_numpy(dtype=float)
        pos = np.arange(len(xs)) + off
        yerr = None
        if low and high:
            yerr = charts.interval_err(part[y], part[low], part[high], scale=scale)
        label = " · ".join(str(v) for v in (h, s if len(styles) > 1 else None) if v is not None)
        ax.errorbar(
            pos,
            vals,
            yerr=yerr,
            marker="o",
            capsize=3,
            label=label or None,
            color=colors[h],
            linestyle="-" if s == styles[0] else "--",
        )
    labels = [str(v) for v in xs]
    if n:
        counts = data.groupby(x, observed=True)[n].agg(["min", "max"]).reindex(xs)
        labels = [
            f"{lab}\nn={int(a)}" if a == b else f"{lab}\nn={int(a)}–{int(b)}"
            for lab, a, b in zip(labels, counts["min"], counts["max"], strict=True)
        ]
    ax.set_xticks(range(len(xs)), labels, fontsize=8)
    ax.set_xlabel(xlabel if xlabel is not None else x)
    ax.set_ylabel(ylabel)
    if percent:
        ax.set_ylim(-2, 102)
    if title:
        ax.set_title(title)
    if len(hues) > 1:
        ax.legend(fontsize=7, loc="best")
    ax.grid(axis="y", alpha=0.3)
    return ax


def interval_forest(
    data: pd.DataFrame,
    *,
    x: str = "value",
    y: str = "judge",
    hue: str | None = "condition",
    low: str = "ci_low",
    high: str = "ci_high",
    n: str | None = "n",
    reference: float | None = 0.5,
    percent: bool = True,
    xlabel: str = "P(picks the longer response) (%)",
    title: str | None = None,
    ax: Axes | None = None,
) -> Axes:
    """Forest plot: one row per `y`, one marker per `hue`, intervals, n on the right."""
    _check(data, [x, y, hue, low, high, n], "interval_forest")
    n_rows = data[y].nunique() if len(data) else 1
    n_hues = data[hue].nunique() if hue and len(data) else 1
    ax = charts.axes(ax, (8, 0.4 * n_rows * max(1, n_hues) ** 0.5 + 2.0))
    data = data[data[x].notna()] if len(data) else data
    if data.empty:
        return charts.no_data(ax, NO_DATA, title=title)
    scale = 100.0 if percent else 1.0
    rows = _levels(data[y])
    hues = _levels(data[hue]) if hue else [None]
    base = np.arange(len(rows))[::-1]
    for k, h in enumerate(hues):
        part = data if h is None else data[data[hue] == h]
        part = part.drop_duplicates(y).set_index(y).reindex(rows)
        xerr = charts.interval_err(part[x], part[low], part[high], scale=scale)
        # the first hue on top of each row: the dodge runs downwards
        pos, _ = charts.dodge(base, len(hues) - 1 - k, len(hues), span=0.7)
        ax.errorbar(scale * part[x].to_numpy(dtype=float), pos, xerr=xerr, fmt="o", capsize=3,
                    label=h)  # fmt: skip
        if n:
            texts = [f"n={int(c)}" if pd.notna(c) else None for c in part[n]]
            charts.side_labels(ax, pos, texts)
    if reference is not None:
        charts.reference_line(ax, scale * reference)
    ax.set_yticks(base, rows, fontsize=8)
    ax.set_xlabel(xlabel)
    if title:
        ax.set_title(title)
    if hue and len(hues) > 1:
        ax.legend(
            fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.12), ncols=min(4, len(hues))
        )
    ax.grid(axis="x", alpha=0.3)
    return ax


def grid_heatmaps(
    data: pd.DataFrame,
    *,
    x: str = "response_bin",
    y: str = "context_bin",
    value: str = "value",
    n: str = "n",
    masked: str = "masked",
    panel: str = "metric",
    unit: str = "words",
    title: str | None = None,
) -> Figure:
    """One heatmap per `panel` (accuracy, consistency): `y` × `x` bins, % and n per cell.

    Masked cells (n below the minimum) are drawn blank with their n.
    """
    _check(data, [x, y, value, n, masked, panel], "grid_heatmaps")
    panels = _levels(data[panel]) if len(data) else []
    n_panels = max(1, len(panels))
    fig, axes = charts.facets(n_panels, n_panels, size=(6.2, 5))
    if not panels:
        charts.no_data(axes[0], NO_DATA, title=title)
        return fig
    for ax, p in zip(axes, panels, strict=True):
        part = data[data[panel] == p]
        cols, rows = _all_levels(part[x]), _all_levels(part[y])
        grid = part.pivot_table(index=y, columns=x, values=value, observed=False, dropna=False)
        grid = grid.reindex(index=rows, columns=cols)
        cnt = part.pivot_table(index=y, columns=x, values=n, observed=False, dropna=False)
        cnt = cnt.reindex(index=rows, columns=cols).fillna(0)
        mask = part.pivot_table(
            index=y, columns=x, values=masked, observed=False, aggfunc="max", dropna=False
        )
        mask = mask.reindex(index=rows, columns=cols).fillna(True).astype(bool)
        shown = np.where(mask.to_numpy(), np.nan, grid.to_numpy(dtype=float))
        image = ax.imshow(
            100 * shown, cmap="viridis", vmin=0, vmax=100, aspect="auto", origin="lower"
        )
        counts = cnt.to_numpy().astype(int)
        labels = [
            [_cell_label(v, c) for v, c in zip(vs, cs, strict=True)]
            for vs, cs in zip(shown, counts, strict=True)
        ]
        colors = [["white" if v < 0.55 else "black" for v in r] for r in shown]
        charts.annotate_cells(ax, labels, fontsize=7, colors=colors)
        ax.set_xticks(
            range(len(cols)), [str(c) for c in cols], rotation=30, ha="right", fontsize=7
        )
        ax.set_yticks(range(len(rows)), [str(r) for r in rows], fontsize=7)
        ax.set_xlabel(f"response length bin ({unit}; percentile of items)")
        ax.set_ylabel(f"context length bin ({unit}; percentile of items)")
        ax.set_title(f"{p} (%), mean over judges")
        fig.colorbar(image, ax=ax, fraction=0.04, pad=0.02)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return fig
