"""Plots of FaithEval accuracy (spec 003 Figs 4–6, 10) and Ragas-method human alignment."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.axes import Axes

from judgelab.analyses import charts
from judgelab.core.schema import require_columns

PROPRIETARY_COLOR = "#d9730d"
YOURS_COLOR = "#1f5fbf"


def _need(data: pd.DataFrame, columns: Sequence[str | None]) -> None:
    require_columns(data, columns, "plot data")


def accuracy_bars(
    data: pd.DataFrame,
    *,
    x: str = "model",
    y: str = "accuracy",
    hue: str | None = "context",
    ax: Axes | None = None,
    hue_order: Sequence[str] | None = None,
    title: str = "",
) -> Axes:
    """Grouped bars per model, sorted ascending by the first hue level (the paper's layout).

    `data` is long (`original_vs_modified`, `strict_vs_nonstrict`): `x`, `y` (%), `hue`,
    optional `ci_low`/`ci_high` (drawn as whiskers), `source` (`yours` tick labels blue and
    suffixed with n), `proprietary` (tick labels orange, as in the paper).
    """
    _need(data, [x, y, hue])
    levels = charts.ordered(data[hue], hue_order) if hue is not None else [None]
    first = data[data[hue] == levels[0]] if hue else data
    order = first.sort_values(y)[x].tolist()
    order += [m for m in dict.fromkeys(data[x]) if m not in order]
    ax = charts.axes(ax, (max(6.0, 0.45 * len(order) + 2), 4.5))
    pos = np.arange(len(order))
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for i, level in enumerate(levels):
        part = data[data[hue] == level] if hue else data
        part = part.drop_duplicates(x).set_index(x).reindex(order)
        xs, width = charts.dodge(len(order), i, len(levels))
        ax.bar(
            xs,
            part[y].to_numpy(dtype=float),
            width,
            label=str(level),
            color=colors[i % len(colors)],
            hatch="//" if i else None,
            edgecolor="white",
        )
        if {"ci_low", "ci_high"} <= set(part.columns):
            _whiskers(ax, xs, part[y], part["ci_low"], part["ci_high"])
    info = data.drop_duplicates(x).set_index(x).reindex(order)
    labels = []
    for m in order:
        n = info.at[m, "n"] if "n" in info.columns else np.nan
        yours = "source" in info.columns and info.at[m, "source"] == "yours"
        labels.append(f"{m} (n={int(n)})" if yours and pd.notna(n) else str(m))
    ax.set_xticks(pos, labels, rotation=60, ha="right", fontsize=8)
    for tick, m in zip(ax.get_xticklabels(), order, strict=True):
        if "source" in info.columns and info.at[m, "source"] == "yours":
            tick.set_color(YOURS_COLOR)
            tick.set_fontweight("bold")
        elif "proprietary" in info.columns and bool(info.at[m, "proprietary"]):
            tick.set_color(PROPRIETARY_COLOR)
    ax.set_xlabel("model (blue bold: yours, n = items; orange: proprietary, paper)")
    ax.set_ylabel("Accuracy (%)")
    ax.set_ylim(0, 100)
    if title:
        ax.set_title(title)
    ax.legend(fontsize=8, loc="upper left")
    return ax


def _whiskers(ax: Axes, positions: np.ndarray, values: Any, low: Any, high: Any) -> None:
    """Draw interval whiskers over the bars whose two bounds are known."""
    v = np.asarray(values, dtype=float)
    lo, hi = np.asarray(low, dtype=float), np.asarray(high, dtype=float)
    ok = ~np.isnan(lo) & ~np.isnan(hi)
    if ok.any():
        yerr = charts.interval_err(v[ok], lo[ok], hi[ok], keep_nan=True)
        ax.errorbar(positions[ok], v[ok], yerr=yerr, fmt="none", ecolor="black", capsize=2, lw=0.8)


def alignment_forest(
    data: pd.DataFrame,
    *,
    x: str = "alignment",
    y: str = "judge",
    hue: str | None = "method",
    ax: Axes | None = None,
    low: str = "ci_low",
    high: str = "ci_high",
    title: str = "",
) -> Axes:
    """Dots with interval whiskers, one row per `y` (and hue level), a 50 % chance line.

    Whiskers default to `ci_low`/`ci_high` (the source-clustered interval); pass
    `low="wilson_low", high="wilson_high"` for the independent-pairs Wilson interval.

    `data` comes from `faithfulness.alignment` (fractions); `n` is shown in the labels.
    """
    _need(data, [x, y, hue, low, high])
    d = data.sort_values(x).reset_index(drop=True)
    ax = charts.axes(ax, (7, 0.38 * len(d) + 1.6))
    levels = list(dict.fromkeys(d[hue])) if hue else [None]
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    ys = np.arange(len(d))
    for i, level in enumerate(levels):
        m = (d[hue] == level).to_numpy() if hue else np.ones(len(d), bool)
        xerr = charts.interval_err(d.loc[m, x], d.loc[m, low], d.loc[m, high], scale=100,
                                   keep_nan=True)  # fmt: skip
        ax.errorbar(
            100 * d.loc[m, x].to_numpy(dtype=float),
            ys[m],
            xerr=xerr,
            fmt="o",
            color=colors[i % len(colors)],
            capsize=3,
            label=str(level) if level is not None else None,
        )
    labels = [
        f"{r[y]} · {r[hue]} (n={int(r['n'])})" if hue and "n" in d else str(r[y])
        for _, r in d.iterrows()
    ]
    ax.set_yticks(ys, labels, fontsize=8)
    charts.reference_line(ax, 50, label="chance (50 %)")
    ax.set_xlim(0, 100)
    ax.set_xlabel("human alignment (% of pairs where the human-preferred item wins)")
    ax.set_ylabel("judge · method")
    if title:
        ax.set_title(title)
    ax.legend(fontsize=8, loc="lower right")
    return ax
