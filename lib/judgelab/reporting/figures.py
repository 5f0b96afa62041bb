"""Save figures where the pipeline expects them: `figures/<notebook>/<run>/<name>.png`.

A figure is drawn once: ~2.4 s of CPU a report card saved (its two figures' cells took 4.6–4.8
s of kernel CPU drawn three times, PNG, SVG and the inline PNG; 2.2–2.4 s drawn once; load 4–6,
alternating runs). `save` draws the PNG file;
in a notebook kernel with matplotlib's inline backend it also shows that PNG, scaled to the
size the backend would have drawn (`INLINE_DPI`), and closes the figure so that the backend
does not draw it again. An SVG is drawn only when asked for (`formats=("png", "svg")`).
"""

from __future__ import annotations

import io
from pathlib import Path

import matplotlib.pyplot as plt
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from judgelab.core import paths

#: Resolution of the saved PNG.
DPI = 150


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
    formats: tuple[str, ...] = ("png",),
) -> Saved:
    """Write a figure under `figures/<notebook>/<run>/` (PNG; SVG on request); return the paths.

    Each format is drawn once; in a kernel with the inline backend the PNG drawn for the file
    is the one the notebook shows (`show_inline`), and the figure is closed.
    """
    fig = fig_or_ax.figure if isinstance(fig_or_ax, Axes) else fig_or_ax
    if not isinstance(fig, Figure):
        raise TypeError(f"expected a matplotlib Figure or Axes, got {type(fig_or_ax).__name__}")
    out_dir = paths.figures() / notebook / run
    out_dir.mkdir(parents=True, exist_ok=True)
    written = Saved()
    png = None
    for fmt in formats:
        target = out_dir / f"{name}.{fmt}"
        buffer = io.BytesIO()
        fig.savefig(
            buffer,
            format=fmt,
            dpi=DPI,
            bbox_inches="tight",
            metadata={"Date": None} if fmt == "svg" else None,
        )
        target.write_bytes(buffer.getvalue())
        if fmt == "png":
            png = buffer.getvalue()
        written.append(target)
    if png is not None and _inline_backend():
        show_inline(png, scale=fig.dpi / DPI)
        plt.close(fig)
    return written


def _inline_backend() -> bool:
    """Return True in an IPython kernel whose matplotlib backend is the inline one."""
    import matplotlib

    return "inline" in matplotlib.get_backend()


def show_inline(png: bytes, *, scale: float = 1.0) -> None:
    """Display PNG bytes in the notebook, resized by `scale` (the inline backend's size)."""
    from IPython.display import Image, display

    if scale != 1.0:
        from PIL import Image as PILImage

        with PILImage.open(io.BytesIO(png)) as image:
            size = (max(1, round(image.width * scale)), max(1, round(image.height * scale)))
            # area averaging: as sharp as a native draw at this size, and as small once the
            # page palettes it (LANCZOS's ringing added ~60% to the card's images)
            small = image.resize(size, PILImage.Resampling.BOX)
            buffer = io.BytesIO()
            small.save(buffer, format="PNG")
        png = buffer.getvalue()
    display(Image(data=png, format="png"))


def close_all() -> None:
    """Close every open figure (keeps long notebook runs from accumulating memory)."""
    plt.close("all")
