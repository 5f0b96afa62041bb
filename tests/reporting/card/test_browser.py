"""The report card's HTML in a real headless browser (Debian chromium; skipped without it).

The exported page is copied to a temporary folder with two small scripts added: one at the
top of <head> that records every JavaScript error, `console.error` call and failed resource
load from the start, and one that, on `load`, checks every <img>, clicks a header of the
comparison table twice and records the row order. Chromium's `--dump-dom` then returns the
page with the findings in a <pre> element, so nothing beyond the standard library drives it.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
CHROMIUM = next(
    (p for p in (shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome")) if p),
    None,
)
pytestmark = pytest.mark.skipif(
    CHROMIUM is None,
    reason="chromium not installed (Debian: apt-get install chromium; .ci/run installs it)",
)

#: The notebook HTML export links require.js and MathJax from cdnjs; with no network they
#: cannot load. Those two failures are about the machine, not the page, and are listed apart.
CDN = ("https://cdnjs.cloudflare.com/",)

PROBE_HEAD = """<script>
window.__jl = {errors: [], failed: []};
window.addEventListener('error', function (e) {
  var t = e.target;
  if (t && t !== window && (t.src || t.href)) { window.__jl.failed.push(t.src || t.href); }
  else { window.__jl.errors.push(String(e.message || e)); }
}, true);
window.addEventListener('unhandledrejection', function (e) {
  window.__jl.errors.push('unhandled rejection: ' + String(e.reason));
});
(function () {
  var orig = console.error;
  console.error = function () {
    window.__jl.errors.push('console.error: ' + Array.prototype.join.call(arguments, ' '));
    return orig.apply(console, arguments);
  };
})();
</script>"""

PROBE_BODY = """<script>
window.addEventListener('load', function () {
  var r = window.__jl;
  var imgs = Array.prototype.slice.call(document.images);
  r.n_images = imgs.length;
  r.broken_images = imgs.filter(function (i) { return !(i.complete && i.naturalWidth > 0); })
    .map(function (i) { return (i.src || '').slice(0, 80); });
  var t = document.getElementById('jl-comparison');
  r.has_table = !!t;
  if (t) {
    var heads = t.tHead.rows[0].cells, col = -1;
    for (var i = 0; i < heads.length; i++) {
      if (heads[i].getAttribute('data-type') === 'number') { col = i; break; }
    }
    r.sort_header = col >= 0 ? heads[col].textContent : null;
    var read = function () {
      return Array.prototype.map.call(t.tBodies[0].rows, function (row) {
        return [row.cells[0].textContent, row.cells[col].getAttribute('data-value')];
      });
    };
    r.before = read();
    try {
      heads[col].click(); r.after_one = read();
      heads[col].click(); r.after_two = read();
    } catch (e) { r.errors.push('click: ' + e); }
  }
  var pre = document.createElement('pre');
  pre.id = 'jl-probe';
  pre.textContent = JSON.stringify(r);
  document.body.appendChild(pre);
});
</script>"""


def _probe(html_path: Path, tmp_path: Path) -> dict:
    page = html_path.read_text(encoding="utf-8")
    page = re.sub(r"<head>", "<head>" + PROBE_HEAD, page, count=1)
    page = page.replace("</body>", PROBE_BODY + "</body>", 1)
    # Beside the report: its links (the shared itables bundle in ../_shared/) must resolve.
    target = html_path.parent / f"probe-{tmp_path.name}.html"
    target.write_text(page, encoding="utf-8")
    profile = tmp_path / "profile"
    cmd = [
        CHROMIUM,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        f"--user-data-dir={profile}",
        "--virtual-time-budget=15000",
        "--dump-dom",
        target.as_uri(),
    ]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    found = re.search(r'<pre id="jl-probe">(.*?)</pre>', done.stdout, re.S)
    assert found, f"probe did not report (rc {done.returncode}): {done.stderr[-2000:]}"
    text = found.group(1).replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", '"')
    return json.loads(text.replace("&amp;", "&"))


def _numbers(rows: list) -> list[float]:
    return [float(v) for _, v in rows if v not in ("", None)]


@pytest.fixture(scope="module")
def card_html(sample_run) -> Path:
    """The comparison card on the samples (offline): the session's shared run of notebook 14."""
    result = sample_run("14_judge_report_card")
    assert result.ok, result.error
    return Path(result.html)


def test_page_loads_without_errors_and_images_resolve(card_html: Path, tmp_path: Path):
    report = _probe(card_html, tmp_path)
    assert report["errors"] == [], report["errors"]
    local_failures = [u for u in report["failed"] if not u.startswith(CDN)]
    assert local_failures == [], f"resources that did not load: {local_failures}"
    # headline forest + detail panels, embedded by the export
    assert report["n_images"] >= 2
    assert report["broken_images"] == []


def test_comparison_table_sorts_on_header_click(card_html: Path, tmp_path: Path):
    report = _probe(card_html, tmp_path)
    assert report["has_table"], "no comparison table on the page"
    before, one, two = report["before"], report["after_one"], report["after_two"]
    assert len(before) >= 3 and sorted(before) == sorted(one) == sorted(two)
    assert _numbers(one) == sorted(_numbers(before)), f"first click: {report['sort_header']}"
    assert _numbers(two) == sorted(_numbers(before), reverse=True)
    # rows without a value stay at the bottom in both directions
    n = len(_numbers(before))
    assert all(v in ("", None) for _, v in one[n:]) and all(v in ("", None) for _, v in two[n:])
    assert one != two
