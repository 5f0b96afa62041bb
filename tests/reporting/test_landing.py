"""The landing page (reports/index.html) and an explore page in headless chromium."""

from __future__ import annotations

from pathlib import Path

import pytest

from judgelab.reporting import pipeline
from judgelab.testing.browser import CDN, CHROMIUM, probe
from judgelab.testing.notebooks import write_notebook

PROBE = """<script>
window.addEventListener('load', function () { setTimeout(function () {
  var r = window.__jl, cards = document.querySelectorAll('.jl-card');
  var shown = function () { return Array.prototype.filter.call(cards,
    function (c) { return c.style.display !== 'none'; }).length; };
  var imgs = Array.prototype.slice.call(document.images);
  r.n_images = imgs.length;
  r.broken = imgs.filter(function (i) { return !(i.complete && i.naturalWidth > 0); }).length;
  r.n_cards = cards.length;
  var box = document.getElementById('jl-search');
  if (box) {
    box.value = '90_'; box.dispatchEvent(new Event('input')); r.after_90 = shown();
    box.value = 'nothing like this'; box.dispatchEvent(new Event('input'));
    r.after_none = shown();
  }
  var d = document.querySelector('details.jl-case');
  if (d) { r.closed = d.open; d.querySelector('summary').click(); r.opened = d.open; }
  var pre = document.createElement('pre'); pre.id = 'jl-probe';
  pre.textContent = JSON.stringify(r); document.body.appendChild(pre);
}, 500); });
</script>"""


def _probe(page_path: Path, tmp_path: Path) -> dict:
    return probe(page_path, PROBE, tmp_path / "profile")


@pytest.fixture()
def project(tmp_path: Path, monkeypatch) -> Path:
    root = tmp_path / "proj"
    write_notebook(
        root / "notebooks" / "90_rates.ipynb",
        'run: str = "default"  # run name',
        [
            "import matplotlib.pyplot as plt\nimport pandas as pd\n"
            "from judgelab.reporting import explore, notebook\n"
            'out = notebook.outputs("90_rates", run)\n'
            'out.table(pd.DataFrame({"judge": ["A", "B"], "value": [0.8, 0.6], "ci_low": [0.7, '
            '0.5], "ci_high": [0.9, 0.7], "n": [100, 120]}), "rates")\n'
            'out.figure(plt.figure().gca().plot([0, 1])[0].axes, "line")\n'
            'cases = pd.DataFrame({"judge": ["A"], "item_id": ["1"], "question": ["q?"], '
            '"category": ["flipped"], "verdict_0": ["A"], "output_0": ["raw"]})\n'
            "explore.show(cases)",
        ],
    )
    write_notebook(root / "notebooks" / "91_other.ipynb", 'run: str = "default"  # run', ["1"])
    monkeypatch.setenv("JUDGELAB_PROJECT", str(root))
    return root


@pytest.mark.skipif(CHROMIUM is None, reason="chromium not installed (.ci/run installs it)")
def test_index_search_filters_images_load_and_cases_expand(project: Path, tmp_path: Path):
    first = pipeline.run_notebook("90_rates")
    assert first.ok and pipeline.run_notebook("91_other").ok
    index = pipeline.write_index()
    r = _probe(index, tmp_path)
    assert r["errors"] == [] and [u for u in r["failed"] if not u.startswith(CDN)] == []
    assert r["n_cards"] == 2 and r["after_90"] == 1 and r["after_none"] == 0
    assert r["n_images"] >= 1 and r["broken"] == 0
    case = _probe(Path(first.html), tmp_path)
    assert case["errors"] == [] and case["closed"] is False and case["opened"] is True
