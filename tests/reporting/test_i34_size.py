"""Issue 34 item 6 (size of a report): a page's inline figures are palette PNGs.

On real data 09 (1.12 MB), the comparison card (1.62 MB) and 01 (1.00 MB) were over the 1 MB
target; the inline PNGs were most of it (14: two full-colour RGBA PNGs of 0.45 and 0.53 MB in
base64). The export re-encodes each with an adaptive palette: same size, same picture.
"""

from __future__ import annotations

import base64
import io

import matplotlib.pyplot as plt
import nbformat
import numpy as np
from PIL import Image

from judgelab.reporting import html_export


def _png_cell(fig) -> nbformat.NotebookNode:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=100)
    output = nbformat.v4.new_output(
        "display_data", data={"image/png": base64.b64encode(buffer.getvalue()).decode()}
    )
    return nbformat.v4.new_code_cell("fig", outputs=[output])


def _pixels(text: str) -> np.ndarray:
    with Image.open(io.BytesIO(base64.b64decode(text))) as image:
        return np.asarray(image.convert("RGB"), dtype=int)


def test_i34_6_html_inline_figures_are_palette_pngs_of_the_same_picture():
    rng = np.random.default_rng(0)
    fig, ax = plt.subplots(figsize=(8, 5))
    ax.imshow(rng.uniform(size=(12, 20)), cmap="viridis")
    for i in range(12):
        ax.text(0, i, f"judge {i}: 0.{i:02d}", fontsize=7)
    ax.plot(np.cumsum(rng.normal(size=200)) / 10, color="k")
    cell = _png_cell(fig)
    before = cell.outputs[0]["data"]["image/png"]
    saved = html_export.compact_images([cell])
    after = cell.outputs[0]["data"]["image/png"]
    assert saved == len(before) - len(after) and len(after) < 0.5 * len(before)
    old, new = _pixels(before), _pixels(after)
    assert old.shape == new.shape == (500, 800, 3)
    assert np.abs(old - new).mean() < 1.0  # up to the palette, the same picture
    with Image.open(io.BytesIO(base64.b64decode(after))) as image:
        assert image.mode == "P"
    assert html_export.compact_images([cell]) == 0  # a palette PNG is left as it is


def test_i34_6_html_keeps_an_image_the_palette_would_not_shrink():
    fig, ax = plt.subplots(figsize=(1, 1))
    ax.axis("off")
    cell = _png_cell(fig)  # a blank figure: already tiny
    blank = Image.new("P", (4, 4))
    buffer = io.BytesIO()
    blank.save(buffer, format="PNG")
    tiny = base64.b64encode(buffer.getvalue()).decode()
    cell.outputs.append(nbformat.v4.new_output("display_data", data={"image/png": tiny}))
    html_export.compact_images([cell])
    assert cell.outputs[1]["data"]["image/png"] == tiny
