"""Plotters for juries, agreement and self-consistency (seaborn style).

Every plotter takes a long table from the `juries` or `agreement` modules, draws on `ax`
(a new figure when None) and returns the Axes (or the Figure for multi-panel layouts). Rates
are fractions and are drawn in percent; when a table has nothing to draw, the axes say why
instead of staying blank.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from judgelab.analyses import charts
from judgelab.core.schema import require_columns as _check


def jury_scatter(
    data: pd.DataFrame,
    *,
    x: str = "best_member_ca",
    y: str = "ca",
    hue: str | None = "split",
    low: str = "ca_low",
    high: str = "ca_high",
    ax: Axes | None = None,
) -> Axes:
    """Scatter of each jury's CA (y, with CI) against its best member's CA (x); y = x dashed.

    Points below the diagonal are juries worse than their strongest member.
    """
    _check(data, [x, y, hue, low, high], "jury_scatter")
    ax = charts.axes(ax, (5.5, 5))
    data = data.dropna(subset=[x, y])
    if data.empty:
        return charts.no_data(ax, "no jury with gold labels to score\n(accuracy undefined)")
    groups = list(dict.fromkeys(data[hue])) if hue else [None]
    for g in groups:
        part = data if g is None else data[data[hue] == g]
        v = part[y].to_numpy(dtype=float)
        yerr = charts.interval_err(v, part[low], part[high], scale=100)
        label = None if g is None else f"{g} (n={int(part['n'].max())})" if "n" in part else g
        ax.errorbar(
            100 * part[x].to_numpy(dtype=float),
            100 * v,
            yerr=yerr,
            fmt="o",
            alpha=0.7,
            capsize=2,
            markersize=4,
            label=label,
        )
    charts.identity_line(ax)
    ax.set_xlabel("best member's consistent accuracy (%)")
    ax.set_ylabel("jury consistent accuracy (%)")
    if hue:
        ax.legend(fontsize=7, title=hue, title_fontsize=8, loc="upper left")
    return ax


def alpha_points(
    data: pd.DataFrame,
    *,
    x: str = "split",
    y: str = "alpha",
    hue: str | None = "pool",
    low: str = "ci_low",
    high: str = "ci_high",
    ax: Axes | None = None,
) -> Axes:
    """Krippendorff's alpha per `x` (split) with bootstrap CI, one marker series per `hue`.

    Tick labels carry the number of units; the dashed line marks alpha = 0 (chance).
    """
    _check(data, [x, y, hue, low, high], "alpha_points")
    xs = list(dict.fromkeys(data[x]))
    xs = [v for v in xs if v != "pooled"] + [v for v in xs if v == "pooled"]
    ax = charts.axes(ax, (max(6.0, 0.9 * len(xs) + 2), 4))
    if data.empty:
        return charts.no_data(ax, "no split with two or more judges")
    hues = list(dict.fromkeys(data[hue])) if hue else [None]
    for k, h in enumerate(hues):
        part = data if h is None else data[data[hue] == h]
        pos, _ = charts.dodge([xs.index(v) for v in part[x]], k, len(hues), span=0.6)
        v = part[y].to_numpy(dtype=float)
        yerr = charts.interval_err(v, part[low], part[high])
        ax.errorbar(pos, v, yerr=yerr, fmt="o", capsize=2, label=h)
    n_units = data.groupby(x, sort=False)["n_units"].max() if "n_units" in data else {}
    ax.set_xticks(range(len(xs)), charts.n_ticklabels(xs, n_units), fontsize=7)
    charts.rotate_xticklabels(ax, 35)
    charts.reference_line(ax, 0, axis="y")
    ax.set_ylim(-1, 1)
    ax.set_ylabel("Krippendorff's alpha (nominal)")
    ax.set_xlabel(x)
    if hue:
        ax.legend(fontsize=7, title=hue, title_fontsize=8, ncols=min(len(hues), 4))
    return ax


def pair_heatmap(
    data: pd.DataFrame,
    *,
    x: str = "judge_2",
    y: str = "judge_1",
    value: str = "kappa",
    vmin: float = -1.0,
    vmax: float = 1.0,
    cmap: str = "RdBu_r",
    ax: Axes | None = None,
) -> Axes:
    """Judge × judge heatmap of a pairwise statistic (kappa, phi), annotated with values.

    The n of each cell (items both judges rated) is printed under the value when an `n`
    column is present.
    """
    _check(data, [x, y, value], "pair_heatmap")
    judges = sorted(set(data[x]) | set(data[y]))
    ax = charts.axes(ax, (0.9 * len(judges) + 3, 0.8 * len(judges) + 1.5))
    if data.empty or data[value].isna().all():
        return charts.no_data(ax, f"{value} undefined here (no gold labels or no pairs)")
    grid = data.pivot(index=y, columns=x, values=value).reindex(index=judges, columns=judges)
    counts = (
        data.pivot(index=y, columns=x, values="n").reindex(index=judges, columns=judges)
        if "n" in data
        else None
    )
    image = ax.imshow(grid.to_numpy(dtype=float), cmap=cmap, vmin=vmin, vmax=vmax)
    labels = [
        [_pair_label(grid.iat[i, j], None if counts is None or i == j else counts.iat[i, j])
         for j in range(len(judges))]
        for i in range(len(judges))
    ]  # fmt: skip
    charts.annotate_cells(ax, labels, fontsize=7)
    ax.set_xticks(range(len(judges)), judges, fontsize=8)
    ax.set_yticks(range(len(judges)), judges, fontsize=8)
    charts.rotate_xticklabels(ax, 35)
    ax.figure.colorbar(image, ax=ax, fraction=0.04, pad=0.02, label=value)
    return ax


def _pair_label(value: float, n: float | None) -> str:
    """A pair cell: the statistic (a dash when undefined), its n under it when known."""
    text = "–" if pd.isna(value) else f"{value:.2f}"
    return text if n is None or pd.isna(n) else f"{text}\nn={int(n)}"


def interval_bars(
    data: pd.DataFrame,
    *,
    x: str = "judge",
    y: str = "value",
    hue: str = "metric",
    low: str = "ci_low",
    high: str = "ci_high",
    order: Sequence[str] | None = None,
    hue_order: Sequence[str] | None = None,
    empty_message: str = "nothing to show (no gold labels or no repeated samples)",
    ax: Axes | None = None,
) -> Axes:
    """Grouped bars of rates (percent) with CI error bars: one group per `x`, one bar per `hue`.

    Rows with a NaN value are not drawn; with none left, the axes show `empty_message`.
    """
    _check(data, [x, y, hue, low, high], "interval_bars")
    xs = charts.ordered(data[x], order)
    ax = charts.axes(ax, (max(5.0, 1.2 * len(xs) + 2), 4))
    data = data.dropna(subset=[y])
    if data.empty:
        return charts.no_data(ax, empty_message)
    hues = [h for h in charts.ordered(data[hue], hue_order) if h in set(data[hue])]
    n_max = data.groupby(x, sort=False)["n"].max() if "n" in data.columns else {}
    charts.percent_bars(
        ax, data, x=x, y=y, hue=hue, xs=xs, hues=hues, low=low, high=high,
        ticklabels=charts.n_ticklabels(xs, n_max), tick_fontsize=8,
    )  # fmt: skip
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), title=hue)
    return ax


def draw_histograms(
    data: pd.DataFrame,
    *,
    x: str = "hits",
    y: str = "share",
    hue: str = "run",
    col: str = "judge",
    max_cols: int = 3,
) -> Figure:
    """Fig. 7: per judge (panel), the share of items with k hits of n draws, Run 1 vs Run 2."""
    _check(data, [x, y, hue, col, "n_draws", "count", "n_items"], "draw_histograms")
    panels = list(dict.fromkeys(data[col]))
    n_cols = max(1, min(max_cols, len(panels)))
    fig, axes = charts.facets(max(1, len(panels)), n_cols, size=(4.2, 3.2), sharey=True)
    if not panels:
        charts.no_data(axes[0], "no judge has repeated samples (self-consistency undefined)")
        return fig
    hues = sorted(set(data[hue]))
    for ax, panel in zip(axes, panels, strict=False):
        part = data[data[col] == panel]
        n_draws = int(part["n_draws"].max())
        part = part[part["n_draws"] == n_draws]
        for k, h in enumerate(hues):
            sub = part[part[hue] == h].set_index(x).reindex(range(n_draws + 1))
            pos, width = charts.dodge(n_draws + 1, k, len(hues))
            ax.bar(
                pos,
                100 * sub[y].fillna(0).to_numpy(dtype=float),
                width,
                label=f"{h} (n={int(sub['n_items'].fillna(0).sum())})",
            )
        ax.set_title(str(panel), fontsize=9)
        ax.set_xticks(range(n_draws + 1))
        what = "correct" if part["count"].iloc[0] == "correct" else "'pos'-slot"
        ax.set_xlabel(f"# {what} verdicts of {n_draws} draws")
        ax.legend(fontsize=7)
    for ax in axes[::n_cols]:
        ax.set_ylabel("% of items")
    fig.tight_layout()
    return fig
