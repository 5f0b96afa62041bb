"""A minimal parameterized notebook for pipeline tests: a `parameters` cell, then the body."""

from __future__ import annotations

from pathlib import Path

from judgelab.reporting import notebook_stack

notebook_stack.prepare()  # before nbformat
import nbformat  # noqa: E402


def write_notebook(path: Path, params: str, body: list[str]) -> Path:
    """Write a notebook whose first cell (tagged `parameters`) is `params`, then one cell each.

    Cells get stable ids (`c0`, `c1`, …) and the `python3` kernel, as committed notebooks do.
    """
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(params, metadata={"tags": ["parameters"]})]
    nb.cells += [nbformat.v4.new_code_cell(src) for src in body]
    for i, cell in enumerate(nb.cells):
        cell["id"] = f"c{i}"
    nb.metadata = {
        "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)
    return path
