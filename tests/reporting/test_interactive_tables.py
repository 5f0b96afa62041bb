"""Interactive tables (itables, offline) in an exported notebook, driven by headless chromium.

A one-cell notebook displays an unsorted 15-row table (itables hides the search box of
shorter ones) through `notebook.outputs`; its exported HTML
is opened with two probe scripts (as in `card/test_browser.py`): no JavaScript error or failed
resource, the table is a DataTable, clicking a header sorts it, the search box filters it.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from judgelab.reporting import notebook, pipeline
from judgelab.testing.browser import CDN, CHROMIUM, probe
from judgelab.testing.notebooks import write_notebook

BODY = """<script>
window.addEventListener('load', function () { setTimeout(function () {
  var r = window.__jl, done = function () { var pre = document.createElement('pre');
    pre.id = 'jl-probe'; pre.textContent = JSON.stringify(r); document.body.appendChild(pre); };
  var t = document.querySelector('table.dataTable'); r.is_datatable = !!t;
  if (!t) { return done(); }
  var col = function () { return Array.prototype.map.call(t.tBodies[0].rows,
    function (row) { return row.cells[0].textContent; }); };
  r.before = col();
  var th = t.tHead.rows[t.tHead.rows.length - 1].cells[0];
  (th.querySelector('.dt-column-order') || th).click();  // itables sorts on the icon
  setTimeout(function () { r.after = col();
    var box = t.closest('.dt-container').querySelector('.dt-search input');
    r.has_search = !!box;
    if (box) { box.value = 'kiwi'; box.dispatchEvent(new Event('input', {bubbles: true})); }
    setTimeout(function () { r.filtered = col(); done(); }, 500); }, 500);
}, 1500); });
</script>"""


def test_interactive_tables_are_off_outside_a_kernel():
    assert notebook.interactive_tables() is False


@pytest.mark.skipif(CHROMIUM is None, reason="chromium not installed (.ci/run installs it)")
def test_exported_table_sorts_and_filters(tmp_path: Path, monkeypatch):
    root = tmp_path / "proj"
    write_notebook(
        root / "notebooks" / "90_table.ipynb",
        'run: str = "default"  # run name',
        [
            "import pandas as pd\nfrom judgelab.reporting import notebook\n"
            'out = notebook.outputs("90_table", run)\n'
            'fruit = ["pear", "apple", "kiwi"] + [f"plum{i:02d}" for i in range(12)]\n'
            'pd.DataFrame({"fruit": fruit, "n": range(15)})',
        ],
    )
    monkeypatch.setenv("JUDGELAB_PROJECT", str(root))
    res = pipeline.run_notebook("90_table")
    assert res.ok, res.error
    page = Path(res.html).read_text(encoding="utf-8")
    assert not re.search(r"""<(script|link)[^>]+(src|href)=["']https?://(?!cdnjs)""", page)
    r = probe(Path(res.html), BODY, tmp_path / "profile")
    assert r["errors"] == [], r["errors"]
    assert [u for u in r["failed"] if not u.startswith(CDN)] == []
    assert r["is_datatable"] and r["has_search"]
    assert r["before"][:3] == ["pear", "apple", "kiwi"]
    assert r["after"][:3] == ["apple", "kiwi", "pear"]  # one click on the header sorts
    assert r["filtered"] == ["kiwi"]


def test_notebooks_for_readers_hide_their_code_in_html(tmp_path: Path, monkeypatch):
    import nbformat

    root = tmp_path / "proj"
    nb_path = write_notebook(
        root / "notebooks" / "91_card.ipynb",
        'run: str = "default"  # run name',
        ["secret_sauce = 6 * 7\nprint('the answer is', secret_sauce)"],
    )
    nb = nbformat.read(nb_path, as_version=4)
    nb.metadata["judgelab"] = {"hide_input": True}
    nbformat.write(nb, nb_path)
    monkeypatch.setenv("JUDGELAB_PROJECT", str(root))
    res = pipeline.run_notebook("91_card")
    assert res.ok, res.error
    page = Path(res.html).read_text(encoding="utf-8")
    assert "the answer is 42" in page and "secret_sauce" not in page
    assert "secret_sauce" in Path(res.ipynb).read_text(encoding="utf-8")  # the .ipynb keeps it
