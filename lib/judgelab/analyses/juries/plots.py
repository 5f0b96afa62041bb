"""Plotters for juries, agreement, self-consistency and prompting strategies (seaborn style).

Every plotter takes a long table from the `juries`, `agreement` or `prompting.strategies`
modules, draws on `ax` (a new figure when None) and returns the Axes (or the
Figure for multi-panel layouts). Rates are fractions and are drawn in percent; when a table
has nothing to draw, the axes say why instead of staying blank.
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from judgelab.core.schema import require_columns as _check


def _empty(ax: Axes, message: str) -> Axes:
    ax.text(0.5, 0.5, message, ha="center", va="center", transform=ax.transAxes, wrap=True)
    ax.set_xticks([])
    ax.set_yticks([])
    return ax


def _yerr(values: np.ndarray, low: np.ndarray, high: np.ndarray, scale: float) -> np.ndarray:
    lo = np.clip(values - low, 0, None)
    hi = np.clip(high - values, 0, None)
    return scale * np.nan_to_num(np.vstack([lo, hi]))


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
    if ax is None:
        ax = plt.figure(figsize=(5.5, 5)).gca()
    data = data.dropna(subset=[x, y])
    if data.empty:
        return _empty(ax, "no jury with gold labels to score\n(accuracy undefined)")
    groups = list(dict.fromkeys(data[hue])) if hue else [None]
    for g in groups:
        part = data if g is None else data[data[hue] == g]
        v = part[y].to_numpy(dtype=float)
        yerr = _yerr(v, part[low].to_numpy(dtype=float), part[high].to_numpy(dtype=float), 100)
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
    ax.plot([0, 100], [0, 100], color="grey", linestyle="--", linewidth=1)
    ax.set_xlim(0, 100)
    ax.set_ylim(0, 100)
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
    if ax is None:
        ax = plt.figure(figsize=(max(6.0, 0.9 * len(xs) + 2), 4)).gca()
    if data.empty:
        return _empty(ax, "no split with two or more judges")
    hues = list(dict.fromkeys(data[hue])) if hue else [None]
    width = 0.6 / max(len(hues), 1)
    for k, h in enumerate(hues):
        part = data if h is None else data[data[hue] == h]
        pos = np.array([xs.index(v) for v in part[x]]) - 0.3 + width * (k + 0.5)
        v = part[y].to_numpy(dtype=float)
        ax.errorbar(
            pos,
            v,
            yerr=_yerr(v, part[low].to_numpy(dtype=float), part[high].to_numpy(dtype=float), 1),
            fmt="o",
            capsize=2,
            label=h,
        )
    n_units = data.groupby(x, sort=False)["n_units"].max() if "n_units" in data else None
    labels = [f"{v}\n(n={int(n_units[v])})" if n_units is not None else str(v) for v in xs]
    ax.set_xticks(range(len(xs)), labels, fontsize=7)
    ax.tick_params(axis="x", labelrotation=35)
    for label in ax.get_xticklabels():
        label.set_horizontalalignment("right")
    ax.axhline(0, color="grey", linestyle="--", linewidth=1)
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
    if ax is None:
        ax = plt.figure(figsize=(0.9 * len(judges) + 3, 0.8 * len(judges) + 1.5)).gca()
    if data.empty or data[value].isna().all():
        return _empty(ax, f"{value} undefined here (no gold labels or no pairs)")
    grid = data.pivot(index=y, columns=x, values=value).reindex(index=judges, columns=judges)
    counts = (
        data.pivot(index=y, columns=x, values="n").reindex(index=judges, columns=judges)
        if "n" in data
        else None
    )
    image = ax.imshow(grid.to_numpy(dtype=float), cmap=cmap, vmin=vmin, vmax=vmax)
    for i in range(len(judges)):
        for j in range(len(judges)):
            v = grid.iat[i, j]
            text = "–" if pd.isna(v) else f"{v:.2f}"
            if counts is not None and i != j and not pd.isna(counts.iat[i, j]):
                text += f"\nn={int(counts.iat[i, j])}"
            ax.text(j, i, text, ha="center", va="center", fontsize=7)
    ax.set_xticks(range(len(judges)), judges, fontsize=8)
    ax.set_yticks(range(len(judges)), judges, fontsize=8)
    ax.tick_params(axis="x", labelrotation=35)
    for label in ax.get_xticklabels():
        label.set_horizontalalignment("right")
    ax.figure.colorbar(image, ax=ax, fraction=0.04, pad=0.02, label=value)
    return ax


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
    xs = list(order) if order is not None else list(dict.fromkeys(data[x]))
    if ax is None:
        ax = plt.figure(figsize=(max(5.0, 1.2 * len(xs) + 2), 4)).gca()
    data = data.dropna(subset=[y])
    if data.empty:
        return _empty(ax, empty_message)
    hues = list(hue_order) if hue_order is not None else list(dict.fromkeys(data[hue]))
    hues = [h for h in hues if h in set(data[hue])]
    width = 0.8 / max(len(hues), 1)
    palette = plt.get_cmap("tab10")
    for k, h in enumerate(hues):
        part = data[data[hue] == h].set_index(x).reindex(xs)
        v = part[y].to_numpy(dtype=float)
        ax.bar(
            np.arange(len(xs)) - 0.4 + width * (k + 0.5),
            100 * np.nan_to_num(v),
            width,
            yerr=_yerr(v, part[low].to_numpy(dtype=float), part[high].to_numpy(dtype=float), 100),
            capsize=2,
            label=str(h),
            color=palette(k % 10),
        )
    labels = [str(v) for v in xs]
    if "n" in data.columns:
        n_max = data.groupby(x, sort=False)["n"].max()
        labels = [f"{v}\n(n={int(n_max[v])})" if v in n_max.index else str(v) for v in xs]
    ax.set_xticks(range(len(xs)), labels, fontsize=8)
    ax.tick_params(axis="x", labelrotation=30)
    for label in ax.get_xticklabels():
        label.set_horizontalalignment("right")
    ax.set_ylim(0, 105)
    ax.set_ylabel("%")
    ax.set_xlabel(x)
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
    n_rows = max(1, int(np.ceil(len(panels) / n_cols)))
    fig, axes = plt.subplots(
        n_rows, n_cols, figsize=(4.2 * n_cols, 3.2 * n_rows), squeeze=False, sharey=True
    )
    if not panels:
        _empty(axes[0][0], "no judge has repeated samples (self-consistency undefined)")
        return fig
    hues = sorted(set(data[hue]))
    for ax, panel in zip(axes.flat, panels, strict=False):
        part = data[data[col] == panel]
        n_draws = int(part["n_draws"].max())
        part = part[part["n_draws"] == n_draws]
        width = 0.8 / len(hues)
        for k, h in enumerate(hues):
            sub = part[part[hue] == h].set_index(x).reindex(range(n_draws + 1))
            ax.bar(
                np.arange(n_draws + 1) - 0.4 + width * (k + 0.5),
                100 * sub[y].fillna(0).to_numpy(dtype=float),
                width,
                label=f"{h} (n={int(sub['n_items'].fillna(0).sum())})",
            )
        ax.set_title(str(panel), fontsize=9)
        ax.set_xticks(range(n_draws + 1))
        what = "correct" if part["count"].iloc[0] == "correct" else "'pos'-slot"
        ax.set_xlabel(f"# {what} verdicts of {n_draws} draws")
        ax.legend(fontsize=7)
    for ax in axes[:, 0]:
        ax.set_ylabel("% of items")
    for ax in list(axes.flat)[len(panels) :]:
        ax.set_visible(False)
    fig.tight_layout()
    return fig


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
    if ax is None:
        ax = plt.figure(figsize=(1.7 * len(cols) + 2.5, 0.6 * len(rows) + 1.8)).gca()
    if data.empty:
        return _empty(ax, "no strategy shares a model with the baseline prompt")
    grid = {
        k: data.pivot(index=y, columns=x, values=k).reindex(index=rows, columns=cols)
        for k in (value, low, high)
    }
    image = ax.imshow(
        grid[value].to_numpy(dtype=float), cmap="RdBu", vmin=-limit, vmax=limit, aspect="auto"
    )
    for i in range(len(rows)):
        for j in range(len(cols)):
            v = grid[value].iat[i, j]
            if pd.isna(v):
                ax.text(j, i, "–", ha="center", va="center", fontsize=8)
                continue
            lo, hi = grid[low].iat[i, j], grid[high].iat[i, j]
            sig = (lo > 0) or (hi < 0)
            ax.text(
                j,
                i,
                f"{100 * v:+.1f}\n[{100 * lo:+.1f}, {100 * hi:+.1f}]",
                ha="center",
                va="center",
                fontsize=7,
                fontweight="bold" if sig else "normal",
            )
    n_col = next((c for c in ("n_common", "n") if c in data.columns), None)
    row_labels = [str(r) for r in rows]
    if n_col is not None:
        n_max = data.groupby(y, sort=False)[n_col].max()
        row_labels = [f"{r} (n≤{int(n_max[r])})" for r in rows]
    ax.set_xticks(range(len(cols)), cols, fontsize=8)
    ax.set_yticks(range(len(rows)), row_labels, fontsize=8)
    ax.tick_params(axis="x", labelrotation=25)
    for label in ax.get_xticklabels():
        label.set_horizontalalignment("right")
    ax.set_xlabel(x)
    ax.set_ylabel(y)
    ax.figure.colorbar(
        image, ax=ax, fraction=0.04, pad=0.02, format=lambda t, _: f"{100 * t:+.0f}"
    ).set_label("Δ (points)")
    return ax


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
    if ax is None:
        ax = plt.figure(figsize=(5.5, 5)).gca()
    if data.empty:
        return _empty(ax, "no verifier decisions")
    markers = "osD^v<>Px*"
    hues = list(dict.fromkeys(data[hue]))
    styles = list(dict.fromkeys(data[style]))
    palette = plt.get_cmap("tab10")
    for r in data.itertuples(index=False):
        ax.scatter(
            100 * getattr(r, x),
            100 * getattr(r, y),
            color=palette(hues.index(getattr(r, hue)) % 10),
            marker=markers[styles.index(getattr(r, style)) % len(markers)],
            s=40,
        )
    for k, h in enumerate(hues):
        ax.scatter([], [], color=palette(k % 10), marker="o", label=str(h))
    for k, s in enumerate(styles):
        ax.scatter([], [], color="grey", marker=markers[k % len(markers)], label=str(s))
    ax.plot([0, 100], [0, 100], color="grey", linestyle="--", linewidth=1)
    ax.set_xlim(0, 100)
    ax.set_ylim(0, 100)
    ax.set_xlabel(f"{x.upper()} (%)")
    ax.set_ylabel(f"{y.upper()} (%)")
    if source is not None:
        n = f", n={int(data['n'].max())} items/point" if "n" in data.columns else ""
        prefix = "ILLUSTRATIVE " if illustrative else ""
        ax.set_title(f"{prefix}{x.upper()} vs verified {x.upper()} (source {source}{n})")
    ax.legend(fontsize=7, loc="upper left")
    return ax
