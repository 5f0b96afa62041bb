"""Plotters of the probes family, seaborn style: `f(data, *, x, y, ax=None) -> Axes`.

`effects_heatmap` draws one metric of `probe_effects` as judges × probes: each cell the value
in percent (points, signed, for changes), n under it, bold where the paired test rejects at
`alpha`. Rates (robustness) use a sequential scale from 0 to 100 %; signed metrics (pull,
accuracy changes) a diverging one centred on 0.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from matplotlib.axes import Axes

from judgelab.analyses import charts
from judgelab.analyses.probes.effects import ALL, METRICS
from judgelab.core.schema import require_columns

SIGNED = ("pull", "acc_change_worse", "acc_change_better")
LABELS = {
    "robustness": "verdict unchanged (%)",
    "flip_toward": "flips toward the probed response (%)",
    "flip_away": "flips away from the probed response (%)",
    "pull": "net pull toward the probed response (points)",
    "acc_change_worse": "accuracy change, probe on the worse response (points)",
    "acc_change_better": "accuracy change, probe on the better response (points)",
}


def _cell(value: float, n: float, signed: bool) -> str | None:
    if pd.isna(value):
        return None
    text = f"{100 * value:+.0f}" if signed else f"{100 * value:.0f}"
    return f"{text}\nn={int(n)}"


def effects_heatmap(
    data: pd.DataFrame,
    *,
    metric: str = "pull",
    x: str = "probe",
    y: str = "judge",
    x_order: Sequence[str] | None = None,
    y_order: Sequence[str] | None = None,
    alpha: float = 0.05,
    ax: Axes | None = None,
) -> Axes:
    """Heatmap of one probe metric, `y` (judges) × `x` (probes, `all` last).

    Args:
        data: `probe_effects` output for one condition and sample (one row per cell).
        metric: A key of `effects.METRICS`.
        x: Column of the heatmap's columns (the probes).
        y: Column of its rows (the judges).
        x_order: Order of the columns (default: first seen, `all` last).
        y_order: Order of the rows (default: first seen).
        alpha: Cells whose p-value is below it are written in bold.
        ax: Axes to draw on (a new figure when None).
    """
    if metric not in METRICS:
        raise ValueError(f"unknown metric {metric!r}; known: {list(METRICS)}")
    require_columns(data, [x, y, "metric", "value", "n", "p_value"], "effects_heatmap")
    part = data[data["metric"] == metric]
    if part.duplicated([y, x]).any():
        raise ValueError(f"effects_heatmap: several rows per ({y}, {x}); filter one condition")
    cols = charts.ordered(part[x], x_order)
    cols = [c for c in cols if c != ALL] + [c for c in cols if c == ALL]
    rows = charts.ordered(part[y], y_order)
    ax = charts.axes(ax, (1.0 * len(cols) + 3.5, 0.55 * len(rows) + 2))
    if part.empty:
        return charts.no_data(ax, "no probe judgments", title=LABELS[metric])

    def grid(col: str) -> pd.DataFrame:
        return part.pivot(index=y, columns=x, values=col).reindex(index=rows, columns=cols)

    values, counts, p = grid("value"), grid("n"), grid("p_value")
    signed = metric in SIGNED
    if signed:
        finite = np.abs(values.to_numpy(dtype=float))
        top = max(float(np.nanmax(finite)) if np.isfinite(finite).any() else 0.0, 0.05)
        image = ax.imshow(values.to_numpy(dtype=float), cmap="RdBu_r", vmin=-top, vmax=top)
    else:
        image = ax.imshow(values.to_numpy(dtype=float), cmap="viridis", vmin=0.0, vmax=1.0)
    labels = [
        [_cell(values.iat[i, j], counts.iat[i, j], signed) for j in range(len(cols))]
        for i in range(len(rows))
    ]
    weights = [
        [
            "bold" if (not pd.isna(p.iat[i, j]) and p.iat[i, j] < alpha) else "normal"
            for j in range(len(cols))
        ]
        for i in range(len(rows))
    ]
    colors = [
        [_text_colour(image.norm(values.iat[i, j]), signed) for j in range(len(cols))]
        for i in range(len(rows))
    ]
    charts.annotate_cells(ax, labels, colors=colors, weights=weights)
    if ALL in cols and len(cols) > 1:
        ax.axvline(len(cols) - 1.5, color="white", linewidth=3)
    ax.set_xticks(range(len(cols)), cols)
    ax.set_yticks(range(len(rows)), rows)
    charts.rotate_xticklabels(ax, 35)
    ax.set_xlabel(x)
    ax.set_ylabel(y)
    ax.set_title(LABELS[metric] + (f"; bold: p < {alpha:g}" if METRICS[metric][3] else ""))
    ax.figure.colorbar(
        image, ax=ax, fraction=0.03, pad=0.02, format=charts.percent_format(signed=signed)
    )
    return ax


def _text_colour(norm_value: float, signed: bool) -> str:
    if pd.isna(norm_value):
        return "black"
    dark = abs(norm_value - 0.5) > 0.3 if signed else norm_value < 0.55
    return "white" if dark else "black"


__all__ = ["LABELS", "SIGNED", "effects_heatmap"]
