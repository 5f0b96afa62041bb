"""The judge leaderboard on the index: one compact, sortable row per carded judge.

Read from what the report card saved (notebook 14's default run: the headline rows of
`measures.csv` and the lights of `traffic_lights.csv`); nothing is recomputed or guessed. A
row shows the judge (marked when its data are an illustrative sample: never a result), its
traffic lights (coloured, each with its words), four headline numbers with their 95%
intervals and n, and how many judgments the card read. A measure that does not apply reads
"not measured" with the card's reason. Each number links to the items behind it: the
judge's own card (a `judgelab card` run) lists them per measure at `items_anchor(measure)`;
a judge without its own card links to the comparison card's section listing its measures per
scope with n (a comparison card lists no items), and the legend says so. The table is
itables' (its offline DataTables bundle shared with the reports in `reports/_shared/`):
headers sort, on the numbers behind the text.
"""

from __future__ import annotations

import html
import os
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from judgelab.core import paths
from judgelab.errors import TableError
from judgelab.reporting.findings import is_sample_source
from judgelab.reporting.palette import LIGHT_COLOURS

CARD = "14_judge_report_card"
#: The card section listing every measure per scope with its n (nbconvert's heading id).
ANCHOR = "Every-measure"


def items_anchor(measure: str) -> str:
    """Return the id of a measure's items table on a judge's own card (`items-pos-a-rate`)."""
    return "items-" + measure.replace("_", "-")


@dataclass(frozen=True)
class Column:
    """One headline number: the card measure it shows, its header and what it means."""

    measure: str
    name: str
    meaning: str


COLUMNS = (
    Column("ca", "Consistent accuracy",
           "share of response pairs the judge gets right in both presentation orders "
           "(pairwise judges; higher is better)"),
    Column("pos_a_rate", "Picks the first position",
           "share of verdicts for the response shown first; 0.5 is no position bias"),
    Column("kappa_human", "Agreement with humans (κ)",
           "Cohen's kappa between the judge's verdicts and the human (gold) labels; "
           "0 is chance, 1 perfect"),
    Column("invalid_rate", "Invalid outputs",
           "share of outputs with no verdict that could be parsed (lower is better)"),
)  # fmt: skip
#: The column of judgment counts: the n of the invalid-output rate (every judgment read).
COUNT = ("Judgments", "judgments the card read for this judge (greedy runs, every order)")
LIGHTS_NAME = "Traffic lights"
LIGHTS_MEANING = (
    "the card's grade of each bias (hover or read a dot for its bias and light); the column "
    "sorts by fewest red, then fewest amber, then most green"
)
#: Light -> the words shown beside its colour, in the order counted.
LIGHT_WORDS = {"red": "red", "amber": "amber", "green": "green", "uncertain": "uncertain",
               "grey": "too few to grade", "n/a": "not measured"}  # fmt: skip
MEASURE_COLUMNS = ("key", "source", "judge", "measure", "headline", "value", "ci_low", "ci_high",
                   "n", "status", "note")  # fmt: skip
LIGHT_COLUMNS = ("source", "judge", "bias", "light", "note")
_NUMBERS = ("value", "ci_low", "ci_high", "n")


def _rel(path: str | Path, base: Path) -> str:
    try:
        return os.path.relpath(path, base)
    except ValueError:
        return str(path)


def read_table(path: Path, columns: tuple[str, ...]) -> pd.DataFrame:
    """Read one of the card's saved tables, refusing one the leaderboard cannot show.

    "n/a" is a value here (a light, a status), never a missing cell.

    Raises:
        TableError: a column is missing, or a number column holds text (names the file,
            the row as a spreadsheet shows it and the column).
    """
    try:
        df = pd.read_csv(path, keep_default_na=False, na_values=[""])
    except (OSError, ValueError, pd.errors.ParserError) as exc:
        raise TableError(f"{path}: not a readable CSV table ({exc})") from None
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise TableError(f"{path}: missing column(s) {missing}; it has {list(df.columns)}")
    for col in (c for c in _NUMBERS if c in columns):
        bad = pd.to_numeric(df[col], errors="coerce").isna() & df[col].notna()
        if bad.any():
            i = int(bad.to_numpy().argmax())
            raise TableError(
                f"{path}, row {i + 2}, column {col!r}: {str(df[col].iloc[i])[:80]!r} "
                "is not a number"
            )
        df[col] = pd.to_numeric(df[col])
    return df


def _card_runs(records: list[dict[str, Any]]) -> tuple[dict | None, list[dict]]:
    """Return (the default card run, the other card runs), ok runs with an HTML only."""
    ok = [r for r in records if r["notebook"] == CARD and r["status"] == "ok" and r.get("html")]
    default = next((r for r in ok if r["run"] == "default"), None)
    return default, [r for r in ok if r["run"] != "default"]


def own_cards(runs: list[dict[str, Any]]) -> dict[str, str]:
    """Return judge key -> the HTML of its own card: a card run whose tables hold that key only.

    Keys come from each run's saved `measures.csv` (a card that fell back to a sample shows
    the sample's judge, not the key it was asked for); an unreadable run is skipped.
    """
    own: dict[str, str] = {}
    for rec in sorted(runs, key=lambda r: r.get("started_at") or ""):  # the latest run wins
        p = paths.figures() / CARD / rec["run"] / "measures.csv"
        try:
            keys = pd.read_csv(p, usecols=["key"], keep_default_na=False)["key"].unique()
        except (OSError, ValueError) as exc:
            warnings.warn(f"{p}: card run {rec['run']!r} not linked: {exc}", stacklevel=2)
            continue
        if len(keys) == 1:
            own[str(keys[0])] = str(rec["html"])
    return own


def sort_key(name: str) -> str:
    """Return the name of the hidden column a visible column sorts on."""
    return f"{name} (sort key)"


def _number(h: dict | None, href: str, title: str) -> tuple[str, float | None]:
    """Return (cell HTML, sort value) of one headline (None: not measured)."""
    if h is None or h["status"] != "ok" or pd.isna(h["value"]):
        why = "" if h is None or pd.isna(h["note"]) else str(h["note"])
        title = f' title="{html.escape(why)}"' if why else ""
        return f'<span class="jl-nm"{title}>not measured</span>', None
    text = f"{h['value']:.3f}"
    if not (pd.isna(h["ci_low"]) or pd.isna(h["ci_high"])):
        text += f" [{h['ci_low']:.3f}, {h['ci_high']:.3f}]"
    n = int(h["n"])
    return (
        f'<a href="{html.escape(href)}" title="{html.escape(title)}">{text}</a>'
        f"<br><small>n = {n:,}</small>",
        float(h["value"]),
    )


def _lights(block: pd.DataFrame) -> tuple[str, float]:
    """Return (cell HTML, sort score) of one judge's lights, in the card's bias order."""
    dots = []
    for r in block.itertuples(index=False):
        words = f"{r.bias}: {LIGHT_WORDS.get(r.light, r.light)}"
        note = "" if pd.isna(r.note) or not str(r.note) else f" ({r.note})"
        dots.append(
            f'<span class="jl-lamp" role="img" aria-label="{html.escape(words)}" '
            f'title="{html.escape(words + note)}" '
            f'style="background:{LIGHT_COLOURS.get(r.light, "#fff")}"></span>'
        )
    counts = block["light"].value_counts()
    said = ", ".join(f"{int(counts[k])} {w}" for k, w in LIGHT_WORDS.items() if k in counts)
    red, amber, green = (int(counts.get(k, 0)) for k in ("red", "amber", "green"))
    return f"{''.join(dots)}<br><small>{html.escape(said)}</small>", -100 * red - 10 * amber + (
        green / 10
    )


def rows(
    measures: pd.DataFrame, lights: pd.DataFrame, links: dict[str, str], fallback: str
) -> pd.DataFrame:
    """Return one display row per judge (HTML cells, hidden sort values), leaderboard order.

    Args:
        measures: The card's `measures.csv` (`MEASURE_COLUMNS`).
        lights: Its `traffic_lights.csv` (`LIGHT_COLUMNS`).
        links: Judge key -> its own card, where each number links to its items table.
        fallback: Where a judge without its own card links (the comparison card's
            measures per scope).

    Returns:
        Visible columns (judge, lights, each `COLUMNS` name, the count), then each one's
        `sort_key` column; real judges first, by consistent accuracy, then agreement with
        humans (not measured last); illustrative-sample judges after them.
    """
    head = measures[measures["headline"].astype(str).str.lower() == "true"]
    head = head.drop_duplicates(["key", "measure"]).set_index(["key", "measure"])
    got = {k: r.to_dict() for k, r in head.iterrows()}
    out = []
    for key, block in measures.groupby("key", sort=False):
        source, judge = str(block["source"].iloc[0]), str(block["judge"].iloc[0])
        own_card = links.get(str(key))
        href = f"{own_card or fallback}#{ANCHOR}"
        sample = is_sample_source(source)
        mark = '<br><span class="jl-illustrative">illustrative sample, not a result</span>'
        row: dict[str, Any] = {
            "Judge": f'<a href="{html.escape(href)}"><b>{html.escape(judge)}</b></a>'
            f"<br><small>{html.escape(source)}</small>{mark if sample else ''}",
            "_sample": sample,
        }
        own = lights[(lights["source"] == source) & (lights["judge"] == judge)]
        row[LIGHTS_NAME], row[sort_key(LIGHTS_NAME)] = _lights(own)
        for col in COLUMNS:
            to, title = href, "the measures behind it, per scope (comparison card)"
            if own_card:
                to, title = f"{own_card}#{items_anchor(col.measure)}", "the items behind it"
            cell = _number(got.get((key, col.measure)), to, title)
            row[col.name], row[sort_key(col.name)] = cell
        inv = got.get((key, "invalid_rate"))
        ok = inv is not None and inv["status"] == "ok"
        row[COUNT[0]] = f"{int(inv['n']):,}" if ok else '<span class="jl-nm">not measured</span>'
        row[sort_key(COUNT[0])] = float(inv["n"]) if ok else None
        out.append(row)
    df = pd.DataFrame(out)
    by = [sort_key(COLUMNS[0].name), sort_key(COLUMNS[2].name)]
    df = df.sort_values(["_sample", *by], ascending=[True, False, False], na_position="last")
    return df.drop(columns="_sample").reset_index(drop=True)


def table_html(board: pd.DataFrame, page: Path) -> str:
    """Return the rows as an itables table for `page`, loading the shared offline bundle."""
    import itables  # deferred: only an index with a card pays for it

    from judgelab.reporting import html_export

    visible = [c for c in board.columns if not c.endswith(" (sort key)")]
    frame = board[visible + [c for c in board.columns if c not in visible]]
    col_defs: list[dict[str, Any]] = [
        {"targets": list(range(len(visible), frame.shape[1])), "visible": False,
         "searchable": False},
    ]  # fmt: skip
    for i, name in enumerate(visible):
        if sort_key(name) in frame.columns:
            col_defs.append({"targets": i, "orderData": [frame.columns.get_loc(sort_key(name))]})
    return html_export.itables_loader(page) + itables.to_html_datatable(
        frame,
        table_id="jl-leaderboard-table",
        connected=False,
        allow_html=True,
        showIndex=False,
        paging=False,
        order=[],
        columnDefs=col_defs,
        classes="display compact",
        text_in_header_can_be_selected=False,  # a click anywhere on a header sorts
        # every judge: itables' 64 KB default dropped 12 of the 38 real judges ("downsampled")
        maxBytes=0,
        maxRows=0,
        maxColumns=0,
    )


#: What the legend says a number links to.
LINKS_MEANING = (
    "A number links to the items behind it on the judge's own card (item, cluster, the "
    "verdicts in each order or the label, and how each counted). A judge without its own "
    "card (run `judgelab card <source>:<judge>`) links to the comparison card's measures per "
    "scope with n instead: the comparison card lists no items."
)


def legend_html() -> str:
    """Return the legend: what each column means, what a number links to, the light colours."""
    items = [(LIGHTS_NAME, LIGHTS_MEANING)] + [(c.name, c.meaning) for c in COLUMNS] + [COUNT]
    lamps = " ".join(
        f'<span class="jl-lamp" style="background:{LIGHT_COLOURS[k]}"></span> {html.escape(w)}'
        for k, w in LIGHT_WORDS.items()
    )
    return (
        "<dl class='jl-legend'>"
        + "".join(f"<dt>{html.escape(n)}</dt><dd>{html.escape(m)}</dd>" for n, m in items)
        + f"</dl><p class='jl-legend'>{html.escape(LINKS_MEANING)}</p>"
        + f"<p class='jl-legend'>Lights: {lamps}.</p>"
    )


def section_html(records: list[dict[str, Any]], base: Path) -> str:
    """Return the leaderboard section of the index ("" when no card run has succeeded).

    A card table the leaderboard cannot read is shown as its error (the index is still
    written: it is rewritten after every run), and warned about.
    """
    default, others = _card_runs(records)
    if default is None:
        return ""
    folder = paths.figures() / CARD / default["run"]
    try:
        measures = read_table(folder / "measures.csv", MEASURE_COLUMNS)
        lights = read_table(folder / "traffic_lights.csv", LIGHT_COLUMNS)
    except TableError as exc:
        warnings.warn(f"judge leaderboard not shown: {exc}", stacklevel=2)
        body = f"<p class='err'>Not shown: {html.escape(paths.shown(str(exc)))}</p>"
        return f'<section id="jl-leaderboard"><h2>Judge leaderboard</h2>{body}</section>'
    links = {k: _rel(v, base) for k, v in own_cards(others).items()}
    board = rows(measures, lights, links, _rel(default["html"], base))
    n_sample = sum(is_sample_source(s) for s in measures.drop_duplicates("key")["source"])
    sample = (
        f" {n_sample} of them are on illustrative sample data: marked, listed last, and "
        "never a result."
        if n_sample
        else ""
    )
    table = table_html(board, base / "index.html")
    return (
        '<section id="jl-leaderboard"><h2>Judge leaderboard</h2>'
        f"<p>{len(board)} judges from the report card, one row each: values are the card's "
        "headline estimates with 95% intervals and n; click a header to sort, a number for "
        f"the items behind it.{sample}</p>{legend_html()}{table}</section>"
    )


__all__ = [
    "ANCHOR",
    "CARD",
    "COLUMNS",
    "COUNT",
    "Column",
    "LINKS_MEANING",
    "LIGHT_COLUMNS",
    "MEASURE_COLUMNS",
    "items_anchor",
    "legend_html",
    "own_cards",
    "read_table",
    "rows",
    "section_html",
    "sort_key",
    "table_html",
]
