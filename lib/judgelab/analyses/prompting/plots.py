"""Plotters for prompting strategies and criteria verification (notebook 10, seaborn style).

Each takes a table of `prompting.strategies` (strategy against the baseline prompt) or of
the verified accuracies, draws on `ax` (a new figure when None) and returns the Axes. Rates
are fractions drawn in percent; an empty table draws a note saying why.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.axes import Axes

from judgelab.analyses import charts
from judgelab.core.schema import require_columns as _check

#: Markers of the judges in `verified_scatter`, in order of appearance.
MARKERS = "osD^v<>Px*"


def delta_heatmap(
    data: pd.DataFrame,
    *,
    x: str = "strategy",
    y: str = "model",
    value: str = "diff",
    low: str = "ci_low",
    high: str = "ci_high",
    limit: float = 0.3,
    ax: Axes | None = None,
) -> Axes:
    """Heatmap of Δ (points) per `y` × `x`: "+3.1 [−0.2, 6.4]"; bold when the CI excludes 0."""
    _check(data, [x, y, value, low, high], "delta_heatmap")
    cols = list(dict.fromkeys(data[x]))
    rows = list(dict.fromkeys(data[y]))
    ax = charts.axes(ax, (1.7 * len(cols) + 2.5, 0.6 * len(rows) + 1.8))
    if data.empty:
        return charts.no_data(ax, "no strategy shares a model with the baseline prompt")
    grid = {
        k: data.pivot(index=y, columns=x, values=k).reindex(index=rows, columns=cols)
        for k in (value, low, high)
    }
    image = ax.imshow(
        grid[value].to_numpy(dtype=float), cmap="RdBu", vmin=-limit, vmax=limit, aspect="auto"
    )
    cells = [
        [
            (grid[value].iat[i, j], grid[low].iat[i, j], grid[high].iat[i, j])
            for j in range(len(cols))
        ]
        for i in range(len(rows))
    ]
    labels = [[_delta_label(*c) for c in row] for row in cells]
    # bold when the interval excludes 0
    weights = [["bold" if (c[1] > 0) or (c[2] < 0) else "normal" for c in row] for row in cells]
    charts.annotate_cells(ax, labels, fontsize=7, weights=weights)
    n_col = next((c for c in ("n_common", "n") if c in data.columns), None)
    row_labels = [str(r) for r in rows]
    if n_col is not None:
        n_max = data.groupby(y, sort=False)[n_col].max()
        row_labels = [f"{r} (n≤{int(n_max[r])})" for r in rows]
    ax.set_xticks(range(len(cols)), cols, fontsize=8)
    ax.set_yticks(range(len(rows)), row_labels, fontsize=8)
    charts.rotate_xticklabels(ax, 25)
    ax.set_xlabel(x)
    ax.set_ylabel(y)
    ax.figure.colorbar(
        image, ax=ax, fraction=0.04, pad=0.02, format=charts.percent_format(signed=True)
    ).set_label("Δ (points)")
    return ax


def _delta_label(value: float, low: float, high: float) -> str | None:
    """A Δ cell in points over its interval (+3.1 over [-0.2, +6.4]); None when missing."""
    if pd.isna(value):
        return None
    return f"{100 * value:+.1f}\n[{100 * low:+.1f}, {100 * high:+.1f}]"


def verified_scatter(
    data: pd.DataFrame,
    *,
    x: str = "ca",
    y: str = "vca",
    hue: str = "group",
    style: str = "judge",
    source: str | None = None,
    illustrative: bool = False,
    ax: Axes | None = None,
) -> Axes:
    """Fig. 4: verified (y) against outcome accuracy (x); colour = criterion, marker = judge.

    Rows whose `hue` is `pooled` (the per-judge aggregate of `verified_accuracy`) are not
    points of the figure and are skipped. With `source`, the title names it and the largest
    n per point; `illustrative` prefixes ILLUSTRATIVE (sample decisions).
    """
    _check(data, [x, y, hue, style], "verified_scatter")
    data = data[data[hue] != "pooled"]
    ax = charts.axes(ax, (5.5, 5))
    if data.empty:
        return charts.no_data(ax, "no verifier decisions")
    hues = list(dict.fromkeys(data[hue]))
    styles = list(dict.fromkeys(data[style]))
    palette = plt.get_cmap("tab10")
    for r in data.itertuples(index=False):
        ax.scatter(
            100 * getattr(r, x),
            100 * getattr(r, y),
            color=palette(hues.index(getattr(r, hue)) % 10),
            marker=MARKERS[styles.index(getattr(r, style)) % len(MARKERS)],
            s=40,
        )
    for k, h in enumerate(hues):
        ax.scatter([], [], color=palette(k % 10), marker="o", label=str(h))
    for k, s in enumerate(styles):
        ax.scatter([], [], color="grey", marker=MARKERS[k % len(MARKERS)], label=str(s))
    charts.identity_line(ax)
    ax.set_xlabel(f"{x.upper()} (%)")
    ax.set_ylabel(f"{y.upper()} (%)")
    if source is not None:
        n = f", n={int(data['n'].max())} items/point" if "n" in data.columns else ""
        prefix = "ILLUSTRATIVE " if illustrative else ""
        ax.set_title(f"{prefix}{x.upper()} vs verified {x.upper()} (source {source}{n})")
    ax.legend(fontsize=7, loc="upper left")
    return ax
