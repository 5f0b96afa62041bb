"""Report cards share one warm kernel per `reproduce` worker, reset to a fresh kernel's state."""

from __future__ import annotations

import json
import os

import nbformat
import pytest

from judgelab.reporting import execution, warm_kernel

PROBE = """\
import os
import warnings
import matplotlib.pyplot as plt
from judgelab.reporting import notebook
warnings.warn("planted warning")
notebook.interactive_tables()  # emits the tables' script once per kernel run
if mode == "fail":
    raise RuntimeError("planted failure")
state = {
    "pid": os.getpid(),
    "leaked": "planted" in globals(),
    "open_figures": plt.get_fignums(),
    "history": len(Out),
}
planted = 1
plt.figure()
print(json.dumps(state))
"""


def _notebook(folder):
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "language": "python", "display_name": "Py"}
    params = nbformat.v4.new_code_cell('mode = "set"')
    params.metadata["tags"] = ["parameters"]
    nb.cells = [params, nbformat.v4.new_code_cell("import json"), nbformat.v4.new_code_cell(PROBE)]
    path = folder / "warm_probe.ipynb"
    nbformat.write(nb, path)
    return path


def _run(path, folder, mode):
    out = folder / f"out_{mode}.ipynb"
    error = execution.execute(path, out, {"mode": mode}, timeout_s=60, warm=True)
    nb = json.loads(out.read_text())
    counts = [c.get("execution_count") for c in nb["cells"] if c["cell_type"] == "code"]
    if error:
        return error, None, counts
    outs = nb["cells"][-1]["outputs"]
    stdout = [o for o in outs if o.get("name") == "stdout"]
    state = json.loads("".join(stdout[0]["text"]))
    state["warned"] = any("planted warning" in "".join(o.get("text", "")) for o in outs)
    state["scripts"] = sum("text/html" in o.get("data", {}) for o in outs)
    return None, state, counts


@pytest.fixture
def shared(monkeypatch):
    monkeypatch.setattr(warm_kernel, "SHARED", frozenset({"warm_probe"}))
    yield
    warm_kernel.close_all()


def test_consecutive_runs_share_a_kernel_reset_to_a_fresh_state(tmp_path, shared):
    path = _notebook(tmp_path)
    err1, first, counts1 = _run(path, tmp_path, "set")
    err2, second, counts2 = _run(path, tmp_path, "again")
    assert err1 is None and err2 is None
    assert second["pid"] == first["pid"]  # the same kernel process, warm
    assert second["leaked"] is False  # the first run's globals are gone
    assert second["open_figures"] == []  # and its figures closed
    assert second["history"] == 0  # and its output history
    assert first["warned"] and second["warned"]  # a warning shown once shows again
    assert second["scripts"] == first["scripts"] > 0  # the tables' script is emitted again
    assert counts2 == counts1 == [1, 2, 3, 4]  # counted from 1 as in a fresh kernel


def test_a_failed_run_retires_its_kernel(tmp_path, shared):
    path = _notebook(tmp_path)
    _, first, _ = _run(path, tmp_path, "set")
    error, _, _ = _run(path, tmp_path, "fail")
    assert "planted failure" in error
    _, after, _ = _run(path, tmp_path, "again")
    assert after["pid"] != first["pid"] and after["leaked"] is False


def test_other_notebooks_get_a_kernel_of_their_own(tmp_path):
    assert "warm_probe" not in warm_kernel.SHARED
    assert warm_kernel.acquire("warm_probe", [], str(tmp_path)) is None


def test_kernel_env_sets_the_allocators_unless_the_user_did(monkeypatch):
    """The kernel gets polars' and pyarrow's allocator settings; a user's own value wins."""
    monkeypatch.delenv("_RJEM_MALLOC_CONF", raising=False)
    monkeypatch.setenv("ARROW_DEFAULT_MEMORY_POOL", "system")
    with execution._kernel_env():
        assert os.environ["_RJEM_MALLOC_CONF"] == execution._ALLOCATOR_VARS["_RJEM_MALLOC_CONF"]
        assert os.environ["ARROW_DEFAULT_MEMORY_POOL"] == "system"
    assert "_RJEM_MALLOC_CONF" not in os.environ  # put back as it was
    assert os.environ["ARROW_DEFAULT_MEMORY_POOL"] == "system"
