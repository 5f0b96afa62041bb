"""Shared chart scaffolding for the families' plotters, and the plotters several families draw.

Every `analyses/<family>/plots.py` is seaborn style, `f(data, *, x, y, hue=None, ax=None)`:
it takes a long table, draws on `ax` (a new figure when None) and returns the Axes (or the
Figure of a multi-panel layout). The steps they share live here, once:

- `axes`, `facets`: where to draw (an Axes, or a grid of panels).
- `no_data`: the note an empty table draws instead of a blank (or failing) chart.
- `ordered`, `dodge`, `interval_err`: category order, bar positions within a group, and the
  whisker lengths of an interval (`ci_low`, `ci_high`), scaled to percent when asked.
- `reference_line`, `identity_line`, `side_labels`, `n_ticklabels`, `rotate_xticklabels`,
  `annotate_cells`, `percent_format`: the recurring decorations.
- `percent_bars` and `rate_bars`: grouped bars with interval whiskers, drawn by more than one
  family (`rate_bars` by correctness and reference; each family's `plots` re-exports it).

This module imports no analysis family: families import it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from judgelab.core.schema import require_columns

#: The colour, style and width of every reference line (chance, y = x, no preference).
REFERENCE_STYLE: dict[str, Any] = {"color": "grey", "linestyle": "--", "linewidth": 1}


def axes(ax: Axes | None, figsize: tuple[float, float]) -> Axes:
    """Return `ax`, or the Axes of a new figure of `figsize` inches when it is None."""
    return ax if ax is not None else plt.figure(figsize=figsize).gca()


def facets(
    n: int, ncols: int, *, size: tuple[float, float], **subplots: Any
) -> tuple[Figure, np.ndarray]:
    """Make a grid for `n` panels, `ncols` a row, each `size` inches; spare cells are off.

    Args:
        n: Number of panels (at least 1).
        ncols: Panels per row.
        size: Width and height of one panel, in inches.
        **subplots: Passed to `plt.subplots` (e.g. `sharey=True`).

    Returns:
        The figure and its Axes, flattened row by row.
    """
    ncols = max(1, ncols)  # no panels still makes one cell, so a caller can say "no data" in it
    nrows = max(1, int(np.ceil(n / ncols)))
    fig, grid = plt.subplots(
        nrows, ncols, figsize=(size[0] * ncols, size[1] * nrows), squeeze=False, **subplots
    )
    for ax in grid.ravel()[n:]:
        ax.set_axis_off()
    return fig, grid.ravel()


def no_data(
    ax: Axes, message: str = "no data", *, title: str | None = None, axis_off: bool = False
) -> Axes:
    """Write why there is nothing to draw in the middle of `ax`, with its ticks removed.

    Args:
        ax: Axes to write on.
        message: The note (say why: "no split with two or more judges").
        title: Optional title kept above the note.
        axis_off: Switch the whole axis off (frame included) instead of only the ticks.
    """
    ax.text(0.5, 0.5, message, ha="center", va="center", transform=ax.transAxes, wrap=True)
    if axis_off:
        ax.set_axis_off()
    else:
        ax.set_xticks([])
        ax.set_yticks([])
    if title:
        ax.set_title(title)
    return ax


def ordered(values: Iterable, order: Sequence | None = None) -> list:
    """Return `order` as a list when given, else the distinct `values` in first-seen order."""
    return list(order) if order is not None else list(dict.fromkeys(values))


def dodge(
    slots: int | Sequence[float], k: int, groups: int, *, span: float = 0.8
) -> tuple[np.ndarray, float]:
    """Position group member `k` of `groups` side by side within each slot.

    Args:
        slots: Number of slots (centred on 0, 1, ...) or the slot centres themselves.
        k: Index of the member (0-based, drawn left to right).
        groups: Number of members per slot.
        span: Width the members share in a slot.

    Returns:
        The centres of member `k` in every slot, and the width of one member.
    """
    base = np.arange(slots) if isinstance(slots, int) else np.asarray(slots, dtype=float)
    width = span / max(groups, 1)
    return base - span / 2 + width * (k + 0.5), width


def interval_err(
    values: Any, low: Any, high: Any, *, scale: float = 1.0, keep_nan: bool = False
) -> np.ndarray:
    """Whisker lengths (value − low, high − value) for `yerr`/`xerr`, clipped at 0.

    Args:
        values: Point estimates.
        low: Lower interval bounds.
        high: Upper interval bounds.
        scale: Factor applied to the lengths (100 draws fractions in percent).
        keep_nan: Keep a missing bound as NaN (no whisker at all) instead of 0 (a whisker
            of length 0, whose caps still mark the value).

    Returns:
        A 2 × n array: the lower then the upper lengths.
    """
    values = np.asarray(values, dtype=float)
    err = np.vstack(
        [values - np.asarray(low, dtype=float), np.asarray(high, dtype=float) - values]
    )
    err = np.clip(err, 0, None)
    return scale * (err if keep_nan else np.nan_to_num(err))


def reference_line(ax: Axes, at: float, *, axis: str = "x", label: str | None = None) -> None:
    """Draw a grey dashed line marking `at` on the `axis` ("x": vertical, "y": horizontal)."""
    draw = ax.axvline if axis == "x" else ax.axhline
    draw(at, label=label, **REFERENCE_STYLE)


def identity_line(ax: Axes, limits: tuple[float, float] = (0, 100)) -> None:
    """Draw y = x (grey, dashed) over `limits` and set both axes to `limits`."""
    ax.plot(limits, limits, **REFERENCE_STYLE)
    ax.set_xlim(*limits)
    ax.set_ylim(*limits)


def side_labels(
    ax: Axes,
    positions: Iterable[float],
    texts: Iterable[str | None],
    *,
    x: float = 1.01,
    fontsize: float = 7,
) -> None:
    """Write one text per row just right of the axes (n or p of a forest row); None skips."""
    for y, text in zip(positions, texts, strict=True):
        if text is not None:
            ax.text(x, y, text, transform=ax.get_yaxis_transform(), va="center", fontsize=fontsize)


def n_ticklabels(values: Iterable, counts: Mapping | pd.Series) -> list[str]:
    """Tick labels of the value over its `(n=count)`; a value without a count keeps its own."""
    return [f"{v}\n(n={int(counts[v])})" if v in counts else str(v) for v in values]


def rotate_xticklabels(ax: Axes, angle: float) -> None:
    """Slant the x tick labels by `angle` degrees, right-aligned under their ticks."""
    ax.tick_params(axis="x", labelrotation=angle)
    for label in ax.get_xticklabels():
        label.set_horizontalalignment("right")


def annotate_cells(
    ax: Axes,
    labels: Sequence[Sequence[str | None]],
    *,
    fontsize: float = 8,
    colors: Sequence[Sequence[str | None]] | None = None,
    weights: Sequence[Sequence[str]] | None = None,
    missing: str = "–",
) -> None:
    """Write a label in the centre of every heatmap cell (row `i`, column `j` at x=j, y=i).

    Args:
        ax: The heatmap's Axes.
        labels: Rows of cell labels; None marks a missing cell, drawn as `missing` (size 8).
        fontsize: Size of the labels.
        colors: Optional rows of text colours (None keeps the default colour).
        weights: Optional rows of font weights ("bold", "normal").
        missing: Text of a missing cell.
    """
    for i, row in enumerate(labels):
        for j, text in enumerate(row):
            if text is None:
                ax.text(j, i, missing, ha="center", va="center", fontsize=8)
                continue
            style: dict[str, Any] = {}
            if colors is not None:
                style["color"] = colors[i][j]
            if weights is not None:
                style["fontweight"] = weights[i][j]
            ax.text(j, i, text, ha="center", va="center", fontsize=fontsize, **style)


def percent_format(*, signed: bool = False) -> Callable[[float, Any], str]:
    """Tick formatter writing a fraction as whole percent points (`+3` when `signed`)."""
    spec = "+.0f" if signed else ".0f"
    return lambda t, _: f"{100 * t:{spec}}"


def percent_bars(
    ax: Axes,
    data: pd.DataFrame,
    *,
    x: str,
    y: str,
    hue: str,
    xs: Sequence,
    hues: Sequence,
    low: str | None = None,
    high: str | None = None,
    labels: Mapping | None = None,
    ticklabels: Sequence[str] | None = None,
    tick_fontsize: float | None = None,
) -> Axes:
    """Draw fractions as grouped percent bars on 0-105 %: a group per `xs`, a bar per `hues`.

    Missing values draw as 0-height bars; `low`/`high` (both or neither) add interval
    whiskers. The x tick labels (default: `xs`) are slanted 30°.

    Args:
        ax: Axes to draw on.
        data: Long table with one row per (`x`, `hue`).
        x: The group column.
        y: The rate column (fractions).
        hue: The bar column.
        xs: Groups, in drawing order.
        hues: Bars within a group, in drawing order (colours of `tab10`).
        low: Lower interval column, or None for no whiskers.
        high: Upper interval column, or None for no whiskers.
        labels: Legend label per hue value (default: the value).
        ticklabels: Tick label per group (default: the group).
        tick_fontsize: Font size of the tick labels (default: matplotlib's).
    """
    palette = plt.get_cmap("tab10")
    for k, h in enumerate(hues):
        part = data[data[hue] == h].set_index(x).reindex(xs)
        pos, width = dodge(len(xs), k, len(hues))
        values = part[y].to_numpy(dtype=float)
        yerr = None
        if low is not None and high is not None:
            yerr = interval_err(values, part[low], part[high], scale=100)
        label = (labels or {}).get(h, h)
        ax.bar(
            pos, 100 * np.nan_to_num(values), width, yerr=yerr, capsize=2, label=str(label),
            color=palette(k % 10),
        )  # fmt: skip
    font = {} if tick_fontsize is None else {"fontsize": tick_fontsize}
    ticks = ticklabels if ticklabels is not None else [str(v) for v in xs]
    ax.set_xticks(range(len(xs)), ticks, **font)
    rotate_xticklabels(ax, 30)
    ax.set_ylim(0, 105)
    ax.set_ylabel("%")
    ax.set_xlabel(x)
    return ax


def rate_bars(
    data: pd.DataFrame,
    *,
    x: str,
    y: str = "value",
    hue: str | None = None,
    n: str | None = "n",
    order: Sequence[str] | None = None,
    hue_order: Sequence[str] | None = None,
    ylabel: str | None = None,
    title: str | None = None,
    ylim: tuple[float, float] | None = None,
    ax: Axes | None = None,
) -> Axes:
    """Grouped bars of `y` per `x` (and `hue`) with `ci_low`–`ci_high` whiskers and n labels.

    Values are drawn as they are (no percent scaling); each bar carries its `n` at the foot.

    Args:
        data: Long table, one row per bar: `x`, `y`, `hue`, `n`, `ci_low`, `ci_high`.
        x: The group column.
        y: The value column.
        hue: Optional bar column within a group (a legend titled `hue`).
        n: The count column written on each bar, or None.
        order: Groups in drawing order (default: first seen).
        hue_order: Bars in drawing order (default: first seen).
        ylabel: Y label (default: `y`).
        title: Optional title.
        ylim: Optional y limits.
        ax: Axes to draw on.
    """
    require_columns(data, [x, y, hue, n, "ci_low", "ci_high"], "rate_bars")
    ax = axes(ax, (max(6.0, 0.9 * data[x].nunique() + 3), 4))
    xs = ordered(data[x], order)
    hs = ordered(data[hue], hue_order) if hue else [None]
    for k, h in enumerate(hs):
        part = data if h is None else data[data[hue] == h]
        part = part.set_index(x).reindex(xs)
        pos, width = dodge(len(xs), k, len(hs))
        vals = part[y].to_numpy(dtype=float)
        err = interval_err(vals, part["ci_low"], part["ci_high"])
        ax.bar(pos, vals, width=width * 0.95, label=None if h is None else str(h))
        ax.errorbar(pos, vals, yerr=err, fmt="none", ecolor="black", capsize=2, lw=0.8)
        if n is not None:
            _foot_counts(ax, pos, vals, part[n].to_numpy())
    ax.set_xticks(np.arange(len(xs)), [str(v) for v in xs], rotation=30, ha="right")
    ax.set_xlabel(x)
    ax.set_ylabel(ylabel or y)
    ax.axhline(0, color="grey", lw=0.6)
    if ylim is not None:
        ax.set_ylim(*ylim)
    if title:
        ax.set_title(title)
    if hue:
        ax.legend(title=hue, fontsize=8)
    return ax


def _foot_counts(ax: Axes, positions: np.ndarray, values: np.ndarray, counts: np.ndarray) -> None:
    """Write `n=<count>` upright at the foot of every drawn bar."""
    for p, v, c in zip(positions, values, counts, strict=True):
        if not np.isnan(v) and not pd.isna(c):
            ax.annotate(f"n={int(c)}", (p, 0), xytext=(0, 2), textcoords="offset points",
                        ha="center", va="bottom", fontsize=6, rotation=90)  # fmt: skip
