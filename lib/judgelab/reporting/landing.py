"""The landing page: `reports/index.html` read like a results section.

Failed runs first; then, per analysis with a `default` run, its title and question (the
notebook's first markdown cell), headline findings drawn from the run's saved tables (the
highest and lowest estimate of its headline table, each with its interval and n), a
thumbnail of its first figure and links; then the report cards behind their sortable
comparison table; then every run. A search box filters the page as you type. Everything is
inline (no CDN): the page works offline and from a file.
"""

from __future__ import annotations

import html
import json
import os
from pathlib import Path
from typing import Any

import pandas as pd

from judgelab.core import paths

VALUE_COLUMNS = (
    "value", "estimate", "pos_a_rate", "alignment", "kappa", "coef", "diff", "ca", "phi",
)  # fmt: skip
N_COLUMNS = ("n", "n_valid", "n_items", "n_common")
LABEL_COLUMNS = (
    "judge", "judge_1", "judge_2", "pool", "method", "metric", "category", "split", "subset",
    "term",
)  # fmt: skip
#: The table whose numbers head each analysis (else the first table with intervals).
HEADLINE_TABLES = {
    "01_judge_leaderboard": "rates.csv",
    "02_positional_bias": "position_preference.csv",
    "03_length_bias": "length_regression.csv",
    "05_self_preference": "rates.csv",
    "09_juries_and_agreement": "cohen_kappa.csv",
    "12_ragas_methods": "alignment.csv",
}
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


def _headline_table(notebook: str, folder: Path) -> tuple[str, pd.DataFrame] | None:
    names = [HEADLINE_TABLES[notebook]] if notebook in HEADLINE_TABLES else []
    names += sorted(p.name for p in folder.glob("*.csv"))
    for name in names:
        p = folder / name
        if not p.is_file():
            continue
        try:
            df = pd.read_csv(p)
        except (OSError, ValueError):
            continue
        value = next((c for c in VALUE_COLUMNS if c in df.columns), None)
        if value and {"ci_low", "ci_high"} <= set(df.columns) and len(df):
            return name, df
    return None


def _grounding(folder: Path) -> list[str]:
    """Notebook 16: what PPI++ buys at the smallest budgets, and the judge-only miss rate."""
    p = folder / "umass_summary.csv"
    if not p.is_file():
        return []
    df = pd.read_csv(p).set_index(["budget", "method"])
    out = []
    for budget in sorted({b for b, _ in df.index})[:2]:
        if (budget, "ppi") in df.index and (budget, "classical") in df.index:
            ppi, cls = df.loc[(budget, "ppi")], df.loc[(budget, "classical")]
            out.append(
                f"{budget} human labels: PPI++ interval width {ppi['mean_width']:.3f} (coverage "
                f"{ppi['coverage']:.3f}) vs humans alone {cls['mean_width']:.3f} "
                f"({cls['coverage']:.3f}), over {int(ppi['n_pairs'])} judge × model pairs"
            )
    naive = df.xs("naive", level="method") if "naive" in df.index.get_level_values(1) else None
    if naive is not None and len(naive):
        out.append(f"judge-only interval covers the human value {naive['coverage'].iloc[0]:.3f}")
    return out


def _design(folder: Path) -> list[str]:
    """Notebook 17: items for the position-bias target, one order vs both, per judge."""
    p = folder / "position_plans.csv"
    if not p.is_file():
        return []
    df = pd.read_csv(p)
    out = []
    for judge, g in list(df.groupby("judge", sort=True))[:2]:
        by = g.set_index("design")["n"]
        if {"one random order", "both orders"} <= set(by.index):
            said = dict(
                kv.split("=", 1) for kv in str(g["assumes"].iloc[0]).split(", ") if "=" in kv
            )
            target = ""
            if {"p0", "p1", "power"} <= set(said):
                delta = abs(float(said["p1"]) - float(said["p0"]))
                target = f" (power {float(said['power']):g} to detect δ = {delta:g})"
            out.append(
                f"{judge}: {int(by['both orders'])} items with both orders vs "
                f"{int(by['one random order'])} with one random order{target}"
            )
    return out


#: Analyses whose headline is not a table of intervals.
CURATED = {"16_human_grounding": _grounding, "17_study_design": _design}


def findings(notebook: str, folder: Path, k: int = 2) -> list[str]:
    """Return up to `k` headline lines (highest and lowest estimate) from the run's tables."""
    if notebook in CURATED:
        return CURATED[notebook](folder)
    found = _headline_table(notebook, folder)
    if found is None:
        return []
    name, df = found
    value = next(c for c in VALUE_COLUMNS if c in df.columns)
    for col, keep in (("aggregation", "pooled"), ("split", "pooled")):
        if col in df.columns and (df[col] == keep).any():
            df = df[df[col] == keep]
    if "metric" in df.columns:
        df = df[df["metric"] == df["metric"].iloc[0]]
    for col in (value, "ci_low", "ci_high"):
        df = df.assign(**{col: pd.to_numeric(df[col], errors="coerce")})
    df = df.dropna(subset=[value, "ci_low", "ci_high"])
    if df.empty:
        return []
    n_col = next((c for c in N_COLUMNS if c in df.columns), None)
    labels = [c for c in LABEL_COLUMNS if c in df.columns and df[c].nunique() > 1][:3]
    picks = [("highest", df[value].idxmax()), ("lowest", df[value].idxmin())][:k]
    out, seen = [], set()
    for word, i in picks:
        if i in seen:
            continue
        seen.add(i)
        r = df.loc[i]
        who = " · ".join(str(r[c]) for c in labels) or name
        n = f", n = {int(r[n_col])}" if n_col and pd.notna(r[n_col]) else ""
        out.append(
            f"{word} {value}: {who}: {r[value]:.3f} [{r['ci_low']:.3f}, {r['ci_high']:.3f}]{n}"
        )
    return out


def analysis_card(rec: dict[str, Any], base: Path) -> str:
    """Return the landing-page block of one analysis's default run."""
    title, question = notebook_intro(rec["notebook"])
    folder = paths.figures() / rec["notebook"] / rec["run"]
    try:
        lines = findings(rec["notebook"], folder) if folder.is_dir() else []
    except (KeyError, ValueError, TypeError, OSError):  # a page must not fail on one table
        lines = []
    pngs = [f for f in rec.get("figures", []) if f.endswith(".png")]
    thumb = f'<img src="{html.escape(_rel(pngs[0], base))}" alt="" loading="lazy">' if pngs else ""
    links = []
    if rec.get("html"):
        links.append(f'<a href="{html.escape(_rel(rec["html"], base))}">report</a>')
    if rec.get("ipynb"):
        links.append(f'<a href="{html.escape(_rel(rec["ipynb"], base))}">notebook</a>')
    items = "".join(f"<li>{html.escape(x)}</li>" for x in lines)
    return (
        f'<section class="jl-card {html.escape(rec["status"])}">{thumb}'
        f"<h3>{html.escape(title)}</h3><p>{html.escape(question)}</p>"
        f"<ul>{items}</ul><p>{' · '.join(links)}</p></section>"
    )


def cards_table(records: list[dict[str, Any]], base: Path) -> str:
    """Return the sortable comparison table of the default card run, with links to cards."""
    default = next((r for r in records if r["notebook"] == CARD and r["run"] == "default"), None)
    runs = [r for r in records if r["notebook"] == CARD and r["run"] != "default"]
    links = " ".join(
        f'<a href="{html.escape(_rel(r["html"], base))}">{html.escape(r["run"])}</a>'
        for r in runs
        if r.get("html")
    )
    table = ""
    csv = paths.figures() / CARD / "default" / "comparison.csv"
    if default is not None and csv.is_file():
        df = pd.read_csv(csv)
        table = df.to_html(index=False, classes="jl-sortable", na_rep="", float_format="%.3f")
    return f"{table}<details><summary>{len(runs)} individual cards</summary>{links}</details>"


SCRIPT = """<script>
document.getElementById('jl-search').addEventListener('input', function (e) {
  var q = e.target.value.toLowerCase();
  document.querySelectorAll('.jl-card, #jl-runs tbody tr').forEach(function (el) {
    el.style.display = el.textContent.toLowerCase().indexOf(q) >= 0 ? '' : 'none';
  });
});
document.querySelectorAll('table.jl-sortable th').forEach(function (th, col) {
  th.style.cursor = 'pointer';
  th.addEventListener('click', function () {
    var body = th.closest('table').tBodies[0], asc = th.dataset.dir !== 'asc';
    th.dataset.dir = asc ? 'asc' : 'desc';
    var rows = Array.prototype.slice.call(body.rows);
    var key = function (r) { var t = r.cells[col].textContent, v = parseFloat(t);
      return isNaN(v) ? t : v; };
    rows.sort(function (a, b) { var x = key(a), y = key(b);
      return (x > y ? 1 : x < y ? -1 : 0) * (asc ? 1 : -1); });
    rows.forEach(function (r) { body.appendChild(r); });
  });
});
</script>"""

STYLE = """
.jl-card { border: 1px solid #ccc; border-radius: 6px; padding: 8px 12px; margin: 10px 0;
  overflow: auto; } .jl-card img { float: right; width: 240px; margin-left: 12px; }
.jl-card.failed { border-color: #b00; background: #fee; } .jl-card h3 { margin: 4px 0; }
.jl-failed { border: 2px solid #b00; background: #fee; padding: 8px; }
#jl-search { font-size: 15px; padding: 4px 8px; width: 320px; }
table.jl-sortable th { background: #eee; }
"""


__all__ = ["SCRIPT", "STYLE", "analysis_card", "cards_table", "findings", "notebook_intro"]
