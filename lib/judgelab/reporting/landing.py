"""The landing page: `reports/index.html` read like a results section.

Failed runs first; then, per analysis with a `default` run, its title and question (the
notebook's first markdown cell), the one finding the notebook declared (`out.finding`,
`reporting.findings`: shown exactly, and labelled, never a headline, when it was computed on
illustrative samples), a badge when the run read sample data, a thumbnail of its first
figure and links; then the judge leaderboard (`reporting.leaderboard`) and the report cards;
then every run. A search box filters the page as you type. Everything is inline (no CDN): the page
works offline and from a file.
"""

from __future__ import annotations

import html
import json
import os
from pathlib import Path
from typing import Any

from judgelab.core import paths
from judgelab.reporting import findings

CARD = "14_judge_report_card"


def _rel(path: str | Path, base: Path) -> str:
    try:
        return os.path.relpath(path, base)
    except ValueError:
        return str(path)


def notebook_intro(notebook: str) -> tuple[str, str]:
    """Return (title, first paragraph) of a notebook's first markdown cell."""
    p = paths.project() / "notebooks" / f"{notebook}.ipynb"
    try:
        cells = json.loads(p.read_text(encoding="utf-8"))["cells"]
    except (OSError, ValueError, KeyError):
        return notebook, ""
    md = next((c for c in cells if c.get("cell_type") == "markdown"), None)
    if md is None:
        return notebook, ""
    text = "".join(md["source"]) if isinstance(md["source"], list) else md["source"]
    lines = text.splitlines()
    title = next((ln.lstrip("# ").strip() for ln in lines if ln.startswith("#")), notebook)
    body = " ".join(ln for ln in lines if ln.strip() and not ln.startswith("#"))
    body = body.replace("**", "").replace("`", "").replace("*", "")
    return title, body[:320] + ("…" if len(body) > 320 else "")


def analysis_card(rec: dict[str, Any], base: Path) -> str:
    """Return the landing-page block of one analysis's default run."""
    title, question = notebook_intro(rec["notebook"])
    folder = paths.figures() / rec["notebook"] / rec["run"]
    declared = findings.summary_html(findings.read(folder)) or "<p><i>no finding declared</i></p>"
    badge = findings.badge_html(findings.sample_sources(rec))
    pngs = [f for f in rec.get("figures", []) if f.endswith(".png")]
    thumb = f'<img src="{html.escape(_rel(pngs[0], base))}" alt="" loading="lazy">' if pngs else ""
    links = []
    if rec.get("html"):
        links.append(f'<a href="{html.escape(_rel(rec["html"], base))}">report</a>')
    if rec.get("ipynb"):
        links.append(f'<a href="{html.escape(_rel(rec["ipynb"], base))}">notebook</a>')
    return (
        f'<section class="jl-card {html.escape(rec["status"])}">{thumb}'
        f"<h3>{html.escape(title)} {badge}</h3><p>{html.escape(question)}</p>"
        f"{declared}<p>{' · '.join(links)}</p></section>"
    )


def cards_table(records: list[dict[str, Any]], base: Path) -> str:
    """Return the judge leaderboard (`reporting.leaderboard`) and the links to every card."""
    runs = [r for r in records if r["notebook"] == CARD and r["run"] != "default"]
    links = " ".join(
        f'<a href="{html.escape(_rel(r["html"], base))}">{html.escape(r["run"])}</a>'
        for r in runs
        if r.get("html")
    )
    from judgelab.reporting import leaderboard  # pandas: not in a run's parent (issue 38)

    board = leaderboard.section_html(records, base)
    return (
        f"{board}<h2>Report cards</h2><details><summary>{len(runs)} individual cards</summary>"
        f"{links}</details>"
    )


SCRIPT = """<script>
document.getElementById('jl-search').addEventListener('input', function (e) {
  var q = e.target.value.toLowerCase();
  document.querySelectorAll('.jl-card, #jl-runs tbody tr').forEach(function (el) {
    el.style.display = el.textContent.toLowerCase().indexOf(q) >= 0 ? '' : 'none';
  });
});
</script>"""

STYLE = """
.jl-card { border: 1px solid #ccc; border-radius: 6px; padding: 8px 12px; margin: 10px 0;
  overflow: auto; } .jl-card img { float: right; width: 240px; margin-left: 12px; }
.jl-card.failed { border-color: #b00; background: #fee; } .jl-card h3 { margin: 4px 0; }
.jl-failed { border: 2px solid #b00; background: #fee; padding: 8px; }
#jl-search { font-size: 15px; padding: 4px 8px; width: 320px; }
#jl-leaderboard .jl-lamp, .jl-legend .jl-lamp { display: inline-block; width: 12px;
  height: 12px; border-radius: 6px; border: 1px solid #555; margin-right: 2px;
  vertical-align: middle; }
#jl-leaderboard .jl-illustrative { background: #b00; color: #fff; padding: 0 4px;
  border-radius: 3px; font-size: 11px; } #jl-leaderboard .jl-nm { color: #777; }
.jl-legend { font-size: 12px; } .jl-legend dt { font-weight: bold; float: left; clear: left;
  margin-right: 6px; } .jl-legend dd { margin: 0 0 2px 0; }
"""


__all__ = ["SCRIPT", "STYLE", "analysis_card", "cards_table", "notebook_intro"]
