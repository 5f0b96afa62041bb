"""Issue 34 item 3 (reports that read like results) and item 6's HTML size, on real output.

A small notebook run through the pipeline (`pipeline.run_notebook`, the same export as
`make figures`) holds what the items are about: code cells, the parameters cell, a 25-column
table, a section that cannot apply, and an Examples section with long texts. Its HTML is
opened in headless chromium (`judgelab.testing.browser`; skipped without chromium) and
measured: code hidden behind one toggle, no parameters cell, the wide table scrolling in its
own box, the inapplicable section reduced to its heading and one line, Examples cut at a
word boundary, itables' library shared beside the reports instead of embedded in the page.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import nbformat
import pytest

from judgelab.reporting import explore, html_export, notebook, pipeline
from judgelab.testing.browser import CDN, CHROMIUM, probe
from judgelab.testing.notebooks import write_notebook

needs_chromium = pytest.mark.skipif(
    CHROMIUM is None, reason="chromium not installed (.ci/run installs it)"
)

#: A question longer than the Examples excerpt, whose words are all distinct.
LONG = " ".join(f"word{i:03d}" for i in range(120))
REASON = "each judge was run once per item (one sample), so there is no run-to-run spread"

SETUP = (
    "import pandas as pd\nfrom judgelab.reporting import explore, notebook\n"
    'out = notebook.outputs("90_read", run)\nhidden_code_marker = 1'
)
WIDE = (
    'pd.DataFrame({f"a_rather_long_column_name_{i:02d}": [0.123456 * j for j in range(15)] '
    "for i in range(25)})"
)
NOT_APPLICABLE = f'if out.applies("{REASON}"):\n    print("SPREAD" + "_TABLE")'
NOT_APPLICABLE_TEXT = "One dot per run, mean and SD beside (text of an inapplicable section)."
EXAMPLES = (
    'cases = pd.DataFrame({"judge": ["A"], "split": ["s"], "item_id": ["1"], '
    f'"question": ["{LONG}"], "category": ["flipped"], "verdict_0": ["A"], '
    '"output_0": ["raw"]})\nexplore.show(cases)'
)
MARKDOWN = {
    2: "## Wide table\n\nTwenty-five columns.",
    4: f"## Run-to-run stability\n\n{NOT_APPLICABLE_TEXT}",
    6: "## Examples\n\nThe items behind the headline.",
}

PROBE = """<script>
window.addEventListener('load', function () { setTimeout(function () {
  var r = window.__jl, shown = function (el) { return el.getClientRects().length > 0; };
  var code = function () { return Array.prototype.filter.call(
    document.querySelectorAll('.jp-CodeCell .jp-InputArea'), shown).length; };
  r.n_inputs = document.querySelectorAll('.jp-CodeCell .jp-InputArea').length;
  r.code_shown_before = code();
  var button = document.getElementById('jl-code-toggle');
  r.has_toggle = !!button;
  if (button) { button.click(); r.code_shown_after_click = code();
    r.label_after_click = button.textContent; button.click();
    r.code_shown_after_second = code(); }
  var doc = document.documentElement;
  r.page_overflow = doc.scrollWidth - doc.clientWidth;
  var t = document.querySelector('table.dataTable');
  r.is_datatable = !!t;
  if (t) { var box = t.parentElement;
    while (box && box.scrollWidth <= box.clientWidth + 1) { box = box.parentElement; }
    r.scroll_box = box ? box.tagName + '.' + box.className : null;
    r.box_scrolls = !!box && box !== doc && box !== document.body &&
      getComputedStyle(box).overflowX !== 'visible';
    r.table_wider_than_page = t.getBoundingClientRect().width > doc.clientWidth; }
  r.excerpts = Array.prototype.map.call(
    document.querySelectorAll('details.jl-case pre'), function (p) { return p.textContent; });
  r.title = document.title;
  r.h1 = (document.querySelector('h1') || {}).textContent || '';
  var pre = document.createElement('pre'); pre.id = 'jl-probe';
  pre.textContent = JSON.stringify(r); document.body.appendChild(pre);
}, 1500); });
</script>"""


def _write(root: Path) -> Path:
    path = write_notebook(
        root / "notebooks" / "90_read.ipynb",
        'run: str = "default"  # run name\nparam_marker: int = 7  # a parameter',
        [SETUP, WIDE, NOT_APPLICABLE, EXAMPLES],
    )
    nb = nbformat.read(path, as_version=4)
    for at in sorted(MARKDOWN):
        cell = nbformat.v4.new_markdown_cell(MARKDOWN[at])
        cell["id"] = f"m{at}"
        nb.cells.insert(at, cell)
    nb.cells.insert(0, nbformat.v4.new_markdown_cell("# 90 · Reading test"))
    nb.cells[0]["id"] = "title"
    nbformat.write(nb, path)
    return path


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> pipeline.RunResult:
    """The test notebook, executed and exported once for this module."""
    root = tmp_path_factory.mktemp("read") / "proj"
    _write(root)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("JUDGELAB_PROJECT", str(root))
        result = pipeline.run_notebook("90_read")
    assert result.ok, result.error
    return result


@pytest.fixture(scope="module")
def seen(report: pipeline.RunResult, tmp_path_factory: pytest.TempPathFactory) -> dict:
    """What chromium reports about the page."""
    if CHROMIUM is None:
        pytest.skip("chromium not installed (.ci/run installs it)")
    r = probe(Path(report.html), PROBE, tmp_path_factory.mktemp("profile"))
    assert r["errors"] == [], r["errors"]
    assert [u for u in r["failed"] if not u.startswith(CDN)] == []
    return r


def _page(report: pipeline.RunResult) -> str:
    return Path(report.html).read_text(encoding="utf-8")


@needs_chromium
def test_i34_3_code_hidden_behind_one_toggle(report: pipeline.RunResult, seen: dict):
    assert seen["n_inputs"] >= 4 and seen["code_shown_before"] == 0
    assert seen["has_toggle"] and seen["code_shown_after_click"] == seen["n_inputs"]
    assert seen["label_after_click"] == "Hide code" and seen["code_shown_after_second"] == 0
    assert "hidden_code_marker" in _page(report)  # hidden, not removed: one click shows it
    assert "hidden_code_marker" in Path(report.ipynb).read_text(encoding="utf-8")


def test_i34_3_parameters_cell_left_out_values_in_footer(report: pipeline.RunResult):
    page = _page(report)
    body, footer = page.split('class="jl-provenance"', 1)
    assert "param_marker" not in body and "Parameters" not in body
    assert '"param_marker": 7' in html.unescape(
        footer
    )  # the notebook's default, not only what was passed
    assert "param_marker" in Path(report.ipynb).read_text(encoding="utf-8")


@needs_chromium
def test_i34_3_wide_table_scrolls_in_its_own_box(seen: dict):
    assert seen["is_datatable"] and seen["table_wider_than_page"]
    assert seen["box_scrolls"], seen["scroll_box"]
    assert seen["page_overflow"] <= 0


def test_i34_3_inapplicable_section_is_one_line(report: pipeline.RunResult):
    page = _page(report)
    assert "Run-to-run stability" in page
    assert page.count(f"Not applicable here: {REASON}.") == 1
    assert NOT_APPLICABLE_TEXT not in page and "SPREAD_TABLE" not in page
    assert "Twenty-five columns." in page  # an applicable section keeps its text
    kept = Path(report.ipynb).read_text(encoding="utf-8")
    assert NOT_APPLICABLE_TEXT in kept  # the executed notebook keeps everything


def test_i34_3_applies_returns_true_without_a_reason():
    out = notebook.Outputs("90_none")
    assert out.applies(None) is True and out.applies("") is True
    assert out.applies(REASON) is False


@needs_chromium
def test_i34_3_examples_cut_at_a_word_boundary(seen: dict):
    question = [t for t in seen["excerpts"] if t.startswith("word000")]
    assert len(question) == 1 and question[0].endswith("…")
    kept = question[0].removesuffix("…").rstrip().split(" ")
    assert kept == LONG.split(" ")[: len(kept)] and len(" ".join(kept)) < explore.EXCERPT


def test_i34_3_clip_keeps_whole_words_and_long_tokens():
    assert explore.clip("alpha beta gamma delta", 14) == "alpha beta …"
    assert explore.clip("short", 14) == "short"
    assert explore.clip("x" * 30, 10) == "x" * 9 + "…"  # one long token: a hard cut


def test_i34_6_html_report_shares_itables_library(report: pipeline.RunResult):
    page = _page(report)
    size = len(page.encode("utf-8"))
    assert size < 400_000, f"{size} bytes: itables' library is still embedded"
    assert "injectModule(" not in page
    shared = sorted(p.name for p in (Path(report.html).parents[1] / html_export.SHARED).iterdir())
    kinds = sorted(n.split("-")[0] + Path(n).suffix for n in shared)
    assert kinds == ["itables.css", "itables.js", "nbconvert.css"]
    inline_css = sum(map(len, re.findall(r"<style.*?</style>", page, re.S)))
    assert inline_css < 20_000, f"{inline_css} bytes of style still inline"  # theme: ~260 KB
    for name in shared:
        assert f'"../{html_export.SHARED}/{name}"' in page  # relative: works from file://
    assert not re.search(r"""<(script|link)[^>]+(src|href)=["']https?://""", page)


@needs_chromium
def test_i34_6_html_shared_library_still_makes_tables_interactive(seen: dict):
    assert seen["is_datatable"]


def test_i34_3_card_title_names_the_judge():
    from judgelab.reporting import card

    assert card.title(["llmbar:GPT-4.Vanilla"]) == "Judge report card: llmbar:GPT-4.Vanilla"
    assert card.title(["a:x", "b:y"]) == "Judge report card: 2 judges"


def test_i34_3_declared_title_replaces_page_title(report: pipeline.RunResult, tmp_path: Path):
    nb = nbformat.read(report.ipynb, as_version=4)
    nbformat.write(nb, tmp_path / "t.ipynb")
    target = tmp_path / "reports" / "90_read" / "t.html"
    html_export.export_report(tmp_path / "t.ipynb", target, title="Judge report card: src:judge-1")
    page = target.read_text(encoding="utf-8")
    assert "<title>Judge report card: src:judge-1</title>" in page
    assert re.search(r"<h1[^>]*>Judge report card: src:judge-1", page)
    assert "Reading test" not in page
    assert json.loads(json.dumps(nb.metadata)).get("title") is None  # the .ipynb is unchanged


AWAY = """<script>
window.addEventListener('load', function () { setTimeout(function () {
  var r = window.__jl, note = document.querySelector('.jl-missing');
  r.note = note ? note.textContent : '';
  var pre = document.createElement('pre'); pre.id = 'jl-probe';
  pre.textContent = JSON.stringify(r); document.body.appendChild(pre);
}, 1500); });
</script>"""


@needs_chromium
def test_i34_6_html_a_report_copied_away_from_its_shared_bundle_says_so_without_errors(
    report: pipeline.RunResult, tmp_path: Path
):
    """CI caught it on the card: copied away, itables' init awaited an undefined bundle."""
    away = tmp_path / "away" / "report.html"
    away.parent.mkdir()
    away.write_text(_page(report), encoding="utf-8")
    r = probe(away, AWAY, tmp_path / "profile")
    assert r["errors"] == [], r["errors"]
    assert "Interactive tables need ../_shared/itables-" in r["note"]
