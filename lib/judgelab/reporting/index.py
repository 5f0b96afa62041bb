"""The index of every run: `reports/index.html` from the JSON run records under `reports/`."""

from __future__ import annotations

import html
import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

from judgelab.core import paths, tables


def _rel(path: str, base: Path) -> str:
    try:
        return os.path.relpath(path, base)
    except ValueError:
        return path


def load_records() -> list[dict[str, Any]]:
    """Return every run record under `reports/`."""
    records = []
    for p in sorted(paths.reports().glob("*/*.json")):
        try:
            rec = json.loads(p.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            continue
        if isinstance(rec, dict) and {"notebook", "run", "status"} <= set(rec):
            records.append(rec)
    return records


def write_index() -> Path:
    """Write `reports/index.html` linking every executed notebook, figure and parameter set."""
    base = paths.reports()
    base.mkdir(parents=True, exist_ok=True)
    rows = []
    for rec in load_records():
        status = html.escape(rec["status"])
        links = []
        if rec.get("html"):
            links.append(f'<a href="{html.escape(_rel(rec["html"], base))}">HTML</a>')
        if rec.get("ipynb"):
            links.append(f'<a href="{html.escape(_rel(rec["ipynb"], base))}">ipynb</a>')
        figs = " ".join(
            f'<a href="{html.escape(_rel(f, base))}">{html.escape(Path(f).name)}</a>'
            for f in rec.get("figures", [])
            if f.endswith(".png")
        )
        params = html.escape(yaml.safe_dump(rec.get("parameters", {}), sort_keys=True).strip())
        n_params = len(rec.get("parameters", {}))
        err = f'<div class="err">{html.escape(rec["error"])}</div>' if rec.get("error") else ""
        rows.append(
            f'<tr class="{status}"><td>{html.escape(rec["notebook"])}</td>'
            f'<td>{html.escape(rec["run"])}</td><td class="status">{status}{err}</td>'
            f"<td>{rec.get('seconds', 0):.1f}</td>"
            f"<td>{html.escape(rec.get('started_at', ''))}</td>"
            f"<td>{' · '.join(links)}</td><td>{figs}</td><td><details><summary>{n_params} "
            f"parameters</summary><pre>{params}</pre></details></td></tr>"
        )
    n_failed = sum(1 for r in load_records() if r["status"] != "ok")
    generated = datetime.now(UTC).isoformat(timespec="seconds")
    page = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>judgelab reports</title>
<style>
body {{ font-family: system-ui, sans-serif; margin: 2em; }}
table {{ border-collapse: collapse; width: 100%; }}
td, th {{ border: 1px solid #ccc; padding: 4px 8px; vertical-align: top; font-size: 13px; }}
tr.failed td.status {{ background: #fdd; font-weight: bold; }}
tr.ok td.status {{ background: #dfd; }}
pre {{ margin: 0; font-size: 11px; }}
.err {{ font-weight: normal; font-size: 11px; }}
</style></head><body>
<h1>judgelab reports</h1>
<p>{len(rows)} runs, {n_failed} failed. Generated {generated}.</p>
<table><thead><tr><th>notebook</th><th>run</th><th>status</th><th>seconds</th><th>started</th>
<th>report</th><th>figures</th><th>parameters</th></tr></thead>
<tbody>
{chr(10).join(rows)}
</tbody></table></body></html>
"""
    return tables.write_text(base / "index.html", page)
