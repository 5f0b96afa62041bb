"""Charts of notebook 17: power against items, per judge and design."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.figure import Figure


def power_curves(curves: pd.DataFrame, *, target: float = 0.8) -> Figure:
    """Power vs number of items (log x), one line per judge × design, target power dashed."""
    fig, ax = plt.subplots(figsize=(7, 4))
    for (judge, design), g in curves.groupby(["judge", "design"], sort=True):
        style = "-" if design == "both orders" else ":"
        ax.plot(g["n_items"], g["power"], style, label=f"{judge} · {design}")
    ax.axhline(target, color="grey", lw=0.8, ls="--")
    ax.set_xscale("log")
    ax.set_xlabel("items (pairs)")
    ax.set_ylabel("power")
    delta = curves["delta"].iloc[0] if len(curves) else float("nan")
    ax.set_title(f"Power to detect |P(A) − 0.5| ≥ {delta:g}")
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    return fig


__all__ = ["power_curves"]
