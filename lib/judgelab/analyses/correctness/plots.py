"""Plotters for correctness grading and reference ablations: `f(data, *, x, y, hue, ax)`.

Every plotter takes a long table (one row per bar) with `ci_low`/`ci_high` interval columns
and `n`, draws grouped bars with interval whiskers and the n of each bar, and returns the Axes.
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from judgelab.core.schema import require_columns as _check


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
    """Grouped bars of `y` per `x` (and `hue`) with `ci_low`–`ci_high` whiskers and n labels."""
    _check(data, [x, y, hue, n, "ci_low", "ci_high"], "rate_bars")
    if ax is None:
        ax = plt.figure(figsize=(max(6.0, 0.9 * data[x].nunique() + 3), 4)).gca()
    xs = list(order) if order is not None else list(dict.fromkeys(data[x]))
    hs = (
        (list(hue_order) if hue_order is not None else list(dict.fromkeys(data[hue])))
        if hue
        else [None]
    )
    width = 0.8 / len(hs)
    for k, h in enumerate(hs):
        part = data if h is None else data[data[hue] == h]
        part = part.set_index(x).reindex(xs)
        pos = np.arange(len(xs)) - 0.4 + width * (k + 0.5)
        vals = part[y].to_numpy(dtype=float)
        err = np.vstack(
            [
                vals - part["ci_low"].to_numpy(dtype=float),
                part["ci_high"].to_numpy(dtype=float) - vals,
            ]
        )
        ax.bar(pos, vals, width=width * 0.95, label=None if h is None else str(h))
        ax.errorbar(pos, vals, yerr=np.clip(np.nan_to_num(err), 0, None), fmt="none",
                    ecolor="black", capsize=2, lw=0.8)  # fmt: skip
        if n is not None:
            for p, v, c in zip(pos, vals, part[n].to_numpy(), strict=True):
                if not np.isnan(v) and not pd.isna(c):
                    ax.annotate(f"n={int(c)}", (p, 0), xytext=(0, 2), textcoords="offset points",
                                ha="center", va="bottom", fontsize=6, rotation=90)  # fmt: skip
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


def faceted_rate_bars(
    data: pd.DataFrame,
    *,
    x: str,
    y: str = "value",
    hue: str | None = None,
    col: str = "metric",
    col_labels: dict[str, str] | None = None,
    suptitle: str | None = None,
    **kwargs: object,
) -> Figure:
    """One `rate_bars` panel per value of `col` (e.g. FPR and FNR side by side)."""
    _check(data, [col], "faceted_rate_bars")
    cols = list(dict.fromkeys(data[col]))
    fig, axes = plt.subplots(1, len(cols), figsize=(5.5 * len(cols), 4.2), squeeze=False)
    for ax, value in zip(axes[0], cols, strict=True):
        label = (col_labels or {}).get(value, value)
        rate_bars(data[data[col] == value], x=x, y=y, hue=hue, ax=ax, ylabel=label,
                  title=label, **kwargs)  # fmt: skip
    if suptitle:
        fig.suptitle(suptitle)
    fig.tight_layout()
    return fig
