"""The index of every run: `reports/index.html` from the JSON run records under `reports/`."""

from __future__ import annotations

import html
import json
import os
import warnings
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

from judgelab.core import paths, tables
from judgelab.reporting import findings, landing
from judgelab.reporting.params import NOTEBOOK_RE


def _rel(path: str, base: Path) -> str:
    try:
        return os.path.relpath(path, base)
    except ValueError:
        return path


# Each field of a run record the index reads, and the types it may have (absent is fine,
# except for the first three).
_REQUIRED = ("notebook", "run", "status")
_FIELD_TYPES: dict[str, tuple[type, ...]] = {
    "notebook": (str,),
    "run": (str,),
    "status": (str,),
    "seconds": (int, float, type(None)),
    "started_at": (str, type(None)),
    "html": (str, type(None)),
    "ipynb": (str, type(None)),
    "figures": (list,),
    "parameters": (dict,),
    "error": (str, type(None)),
}


def _record_problem(rec: Any) -> str | None:
    """Return why `rec` is not a usable run record, None when it is."""
    if not isinstance(rec, dict):
        return f"expected a JSON object, got {type(rec).__name__}"
    missing = [k for k in _REQUIRED if k not in rec]
    if missing:
        return f"missing field(s) {', '.join(missing)}"
    for key, types in _FIELD_TYPES.items():
        if key in rec and (not isinstance(rec[key], types) or isinstance(rec[key], bool)):
            return f"field {key!r} has type {type(rec[key]).__name__}"
    if not all(isinstance(f, str) for f in rec.get("figures", [])):
        return "field 'figures' is not a list of paths"
    return None


def load_records() -> list[dict[str, Any]]:
    """Return every run record `reports/<notebook>/<run>.json`; a malformed one is skipped.

    Folders that are not a notebook's (`make calibrate`'s results, the shared files) hold
    no run records.

    One unreadable, non-JSON or wrongly typed record must not stop the index (nor the end of
    every later run and card, which rewrite it).
    """
    records = []
    for p in sorted(paths.reports().glob("*/*.json")):
        if not NOTEBOOK_RE.match(p.parent.name):  # reports/calibration/, reports/_shared/
            continue
        try:
            rec = json.loads(p.read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError) as exc:  # ValueError: JSON, UTF-8
            problem: str | None = f"not a readable JSON file ({type(exc).__name__})"
        else:
            problem = _record_problem(rec)
        if problem:
            warnings.warn(f"{p}: skipped in the index: {problem}", stacklevel=2)
            continue
        records.append(rec)
    return records


def _row(rec: dict[str, Any], base: Path) -> str:
    """Return the table row of one run record."""
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
    code = (rec.get("provenance") or {}).get("code") or {}
    commit = (code.get("commit") or "")[:10] + ("+dirty" if code.get("dirty") else "")
    badge = findings.badge_html(findings.sample_sources(rec))
    return (
        f'<tr class="{status}"><td>{html.escape(rec["notebook"])} {badge}</td>'
        f'<td>{html.escape(rec["run"])}</td><td class="status">{status}{err}</td>'
        f"<td>{rec.get('seconds') or 0:.1f}</td>"
        f"<td>{html.escape(rec.get('started_at') or '')}</td>"
        f"<td><code>{html.escape(commit)}</code></td>"
        f"<td>{' · '.join(links)}</td><td>{figs}</td><td><details><summary>{n_params} "
        f"parameters</summary><pre>{params}</pre></details></td></tr>"
    )


def write_index() -> Path:
    """Write `reports/index.html` linking every executed notebook, figure and parameter set."""
    base = paths.reports()
    base.mkdir(parents=True, exist_ok=True)
    rows = []
    records = []
    for rec in load_records():
        try:
            rows.append(_row(rec, base))
        except (ValueError, TypeError, RecursionError, yaml.YAMLError) as exc:
            warnings.warn(
                f"run record {rec['notebook']}/{rec['run']} skipped: {exc}", stacklevel=2
            )
            continue
        records.append(rec)
    n_failed = sum(1 for r in records if r["status"] != "ok")
    n_sample = sum(1 for r in records if findings.sample_sources(r))
    generated = datetime.now(UTC).isoformat(timespec="seconds")
    failed = "".join(
        f"<li><b>{html.escape(r['notebook'])} / {html.escape(r['run'])}</b>: "
        f"{html.escape((r.get('error') or '')[:300])}</li>"
        for r in records
        if r["status"] != "ok"
    )
    failed_html = (
        f'<div class="jl-failed"><h2>Failed runs</h2><ul>{failed}</ul></div>' if failed else ""
    )
    analyses = "".join(
        landing.analysis_card(r, base)
        for r in sorted(records, key=lambda r: r["notebook"])
        if r["run"] == "default" and r["notebook"] != landing.CARD
    )
    cards = landing.cards_table(records, base)
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
{landing.STYLE}
</style></head><body>
<h1>judgelab reports</h1>
<p>{len(rows)} runs, {n_failed} failed, {n_sample} with sample sections. Generated {generated}.
<input id="jl-search" type="search" placeholder="filter analyses and runs"></p>
{failed_html}
<h2>Analyses</h2>
{analyses}
{cards}
<h2>All runs</h2>
<table id="jl-runs"><thead><tr><th>notebook</th><th>run</th><th>status</th><th>seconds</th>
<th>started</th><th>commit</th>
<th>report</th><th>figures</th><th>parameters</th></tr></thead>
<tbody>
{chr(10).join(rows)}
</tbody></table>{landing.SCRIPT}</body></html>
"""
    return tables.write_text(base / "index.html", page)
