"""Issue 34 item 6: a fresh `make figures` within 5 minutes — the per-run costs it cut.

A figure is drawn once (the PNG file is the image the notebook shows), the executed notebook
is written once per run (papermill wrote it after every cell's start and end), and a worker
compiles the page exporter's templates once. The first tests run real kernels.
"""

from __future__ import annotations

import base64
import io
import json
from pathlib import Path

import nbformat
import pytest
from PIL import Image

from judgelab.reporting import html_export, pipeline
from judgelab.testing.notebooks import write_notebook

#: Counts every figure matplotlib draws in the kernel (savefig and the inline backend alike).
_COUNT_DRAWS = """
from matplotlib.backend_bases import FigureCanvasBase
draws = []
_print_figure = FigureCanvasBase.print_figure
def _counted(self, *args, **kwargs):
    draws.append(kwargs.get("format"))
    return _print_figure(self, *args, **kwargs)
FigureCanvasBase.print_figure = _counted
"""


@pytest.fixture()
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, judgelab_home: Path) -> Path:
    """Notebook 93 saves one figure through `Outputs.figure`; 94 sleeps in its third cell."""
    root = tmp_path / "proj"
    write_notebook(
        root / "notebooks" / "93_figure.ipynb",
        'run: str = "default"',
        [
            _COUNT_DRAWS,
            "import matplotlib.pyplot as plt\nfrom judgelab.reporting import notebook\n"
            'out = notebook.outputs("93_figure", run)\n'
            "fig, ax = plt.subplots(figsize=(4, 3))\nax.plot([0, 1, 3])\n"
            'out.figure(fig, "line")',
            "print('draws', draws)",
        ],
    )
    write_notebook(
        root / "notebooks" / "94_slow.ipynb",
        'run: str = "default"',
        ["print('first cell ran')", "import time\ntime.sleep(30)", "print('never')"],
    )
    monkeypatch.setenv("JUDGELAB_PROJECT", str(root))
    return root


def _png_size(data: str) -> tuple[int, int]:
    with Image.open(io.BytesIO(base64.b64decode(data))) as image:
        return image.size


def test_i34_6_a_figure_is_drawn_once_and_the_notebook_shows_that_png(
    project: Path, judgelab_home: Path
):
    res = pipeline.run_notebook("93_figure")
    assert res.ok, res.error
    nb = nbformat.read(res.ipynb, as_version=4)
    printed = "".join(o.get("text", "") for o in nb.cells[-1].outputs)
    assert printed.strip() == "draws ['png']"  # was ['png', 'svg', 'png']: file, file, inline
    assert [Path(f).name for f in res.figures] == ["line.png"]
    images = [
        o.data["image/png"]
        for c in nb.cells
        for o in c.outputs
        if "image/png" in o.get("data", {})
    ]
    assert len(images) == 1
    # the inline image is the file's PNG at the size the inline backend draws (100 of 150 dpi)
    with Image.open(judgelab_home / "figures" / "93_figure" / "default" / "line.png") as png:
        file_size = png.size
    shown = _png_size(images[0])
    assert shown == (round(file_size[0] * 100 / 150), round(file_size[1] * 100 / 150))
    html = Path(res.html).read_text(encoding="utf-8")
    assert html.count('src="data:image/png;base64,') == 1


def test_i34_6_the_executed_notebook_is_written_once_per_run(
    project: Path, monkeypatch: pytest.MonkeyPatch
):
    import papermill.engines
    import papermill.execute

    writes: list[str] = []
    for module in (papermill.engines, papermill.execute):
        real = module.write_ipynb

        def counted(nb, path, *args, _real=real, **kwargs):
            writes.append(str(path))
            return _real(nb, path, *args, **kwargs)

        monkeypatch.setattr(module, "write_ipynb", counted)
    res = pipeline.run_notebook("93_figure")
    assert res.ok, res.error
    assert len(writes) == 1  # papermill's engine wrote it 2 × 4 cells + 3 times: 11


def test_i34_6_a_run_stopped_mid_notebook_keeps_the_cells_run_so_far(project: Path):
    """Without the per-cell saves, a timed-out run still leaves what it ran to read."""
    res = pipeline.run_notebook("94_slow", timeout_s=3, html_export=False)
    assert not res.ok and "timed out" in (res.error or "").lower()
    nb = nbformat.read(res.ipynb, as_version=4)
    outputs = {c.source: json.dumps(c.get("outputs", [])) for c in nb.cells}
    assert "first cell ran" in outputs["print('first cell ran')"]
    assert "never" not in outputs["print('never')"]


def test_i34_6_one_exporter_per_process_gives_the_pages_a_fresh_one_gives(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, judgelab_home: Path
):
    import nbconvert

    def notebook(path: Path, hide: bool, text: str) -> Path:
        nb = nbformat.v4.new_notebook()
        nb.metadata["judgelab"] = {"hide_input": hide}
        cell = nbformat.v4.new_code_cell(f"{path.stem}_code = 1")
        cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=text)]
        nb.cells = [nbformat.v4.new_markdown_cell("# Page"), cell]
        nbformat.write(nb, path)
        return path

    made: list[bool] = []
    real_init = nbconvert.HTMLExporter.__init__

    def counted(self, *args, **kwargs):
        made.append(True)
        real_init(self, *args, **kwargs)

    monkeypatch.setattr(nbconvert.HTMLExporter, "__init__", counted)
    pages = [
        notebook(tmp_path / "a.ipynb", False, "first page"),
        notebook(tmp_path / "b.ipynb", True, "second page"),
        notebook(tmp_path / "c.ipynb", False, "third page"),
    ]
    html_export.html_exporter.cache_clear()
    shared = []
    for page in pages:
        html_export.export_report(page, page.with_suffix(".html"), title=page.stem)
        shared.append(page.with_suffix(".html").read_text(encoding="utf-8"))
    assert len(made) == 2  # one per hide_input, not one per page
    for page, text in zip(pages, shared, strict=True):
        html_export.html_exporter.cache_clear()
        html_export.export_report(page, page.with_suffix(".fresh.html"), title=page.stem)
        assert page.with_suffix(".fresh.html").read_text(encoding="utf-8") == text
    assert "b_code" not in shared[1] and "a_code" in shared[0]  # hide_input kept per page
    assert "second page" in shared[1]
