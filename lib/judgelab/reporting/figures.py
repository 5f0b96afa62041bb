"""Save figures where the pipeline expects them: `figures/<notebook>/<run>/<name>.png|svg`."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from judgelab.core import paths


class Saved(list):
    """The paths `save` wrote; shown in a notebook as one short line, not a list of paths."""

    def __repr__(self) -> str:
        if not self:
            return "saved nothing"
        first = Path(self[0])
        exts = ",".join(Path(p).suffix.lstrip(".") for p in self)
        return f"saved {first.parent.name}/{first.stem}.{{{exts}}}"


def save(
    fig_or_ax: Figure | Axes,
    name: str,
    *,
    notebook: str,
    run: str = "default",
    formats: tuple[str, ...] = ("png", "svg"),
) -> Saved:
    """Write a figure as PNG and SVG under `figures/<notebook>/<run>/` and return the paths."""
    fig = fig_or_ax.figure if isinstance(fig_or_ax, Axes) else fig_or_ax
    if not isinstance(fig, Figure):
        raise TypeError(f"expected a matplotlib Figure or Axes, got {type(fig_or_ax).__name__}")
    out_dir = paths.figures() / notebook / run
    out_dir.mkdir(parents=True, exist_ok=True)
    written = Saved()
    for fmt in formats:
        target = out_dir / f"{name}.{fmt}"
        fig.savefig(
            target,
            format=fmt,
            dpi=150,
            bbox_inches="tight",
            metadata={"Date": None} if fmt == "svg" else None,
        )
        written.append(target)
    return written


def close_all() -> None:
    """Close every open figure (keeps long notebook runs from accumulating memory)."""
    plt.close("all")
