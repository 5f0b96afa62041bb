"""Headless chromium for the HTML tests: inject probe scripts, dump the DOM, read the report.

A page is copied beside itself (so relative images load) with `HEAD` at the top of <head>
(records every JavaScript error, `console.error` and failed resource load) and a test's own
script before </body>, which must append `<pre id="jl-probe">` holding `JSON.stringify` of
`window.__jl` plus what it measured. Only the standard library drives the browser.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

CHROMIUM = next(
    (p for p in (shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome")) if p),
    None,
)
#: The nbconvert template links require.js and MathJax from cdnjs: with no network they cannot
#: load. Those failures are about the machine, not the page.
CDN = ("https://cdnjs.cloudflare.com/",)

HEAD = """<script>window.__jl = {errors: [], failed: []};
window.addEventListener('error', function (e) { var t = e.target;
  if (t && t !== window && (t.src || t.href)) { window.__jl.failed.push(t.src || t.href); }
  else { window.__jl.errors.push(String(e.message || e)); } }, true);
(function () { var o = console.error; console.error = function () {
  window.__jl.errors.push('console.error: ' + Array.prototype.join.call(arguments, ' '));
  return o.apply(console, arguments); }; })();</script>"""


def probe(page_path: Path, body_script: str, profile: Path) -> dict:
    """Open `page_path` with the probes in headless chromium; return the probe's report."""
    page = page_path.read_text(encoding="utf-8")
    page = re.sub(r"<head>", "<head>" + HEAD, page, count=1)
    page = page.replace("</body>", body_script + "</body>", 1)
    target = page_path.with_name("probe_" + page_path.name)
    target.write_text(page, encoding="utf-8")
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
           f"--user-data-dir={profile}", "--virtual-time-budget=15000",
           "--allow-file-access-from-files", "--dump-dom", target.as_uri()]  # fmt: skip
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    found = re.search(r'<pre id="jl-probe">(.*?)</pre>', done.stdout, re.S)
    if not found:
        raise AssertionError(f"probe did not report (rc {done.returncode}): {done.stderr[-1500:]}")
    text = found.group(1).replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", '"')
    return json.loads(text.replace("&amp;", "&"))


__all__ = ["CDN", "CHROMIUM", "HEAD", "probe"]
