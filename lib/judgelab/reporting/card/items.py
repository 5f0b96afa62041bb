"""The items behind a card's headline numbers: per measure, the items it was computed from.

The index's leaderboard links each number to its judge's card at `#items-<measure>`
(`anchor`); there, `items_view` shows one sortable, searchable table per measure of the
items (or judgments) that measure counted, from the same per-item tables the measures are
computed from (`pairwise.item_outcomes`, `correctness.pairwise_final`, the correctness
family's graded answers, the judge's judgments), never a second computation. A comparison
card lists no items (`items_reason`): each judge's own card does.
"""

from __future__ import annotations

import html
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from judgelab.analyses import correctness, pairwise
from judgelab.analyses.correctness import measures as correctness_measures
from judgelab.analyses.registry import CardContext, CardOptions
from judgelab.core import lengths, paths
from judgelab.reporting.card.html import Html
from judgelab.reporting.card.sources import CardSource
from judgelab.reporting.explore import clip
from judgelab.reporting.leaderboard import items_anchor as anchor

#: Measures with an items table (the leaderboard's numbers), in page order -> what each row
#: of its table is and what decides how it counted.
ITEM_MEASURES = {
    "ca": "items with a human label judged in both orders; counted correct when the judge "
    "picked the better response in both orders",
    "kappa_human": "items with a human label; the judge's final choice over both orders "
    "(a disagreement between the orders is a tie) agrees with the human label or not",
    "pos_a_rate": "items judged in both orders; each valid verdict counts, for the response "
    "shown first (A) or not",
    "invalid_rate": "every judgment the card read; counted invalid when no verdict could be "
    "parsed from the output",
}
#: Label of the key column of the long table (`items_behind`).
KEY = "key"
#: Characters of a cluster label shown on the page (a cluster is often a whole question;
#: the CSV keeps it whole).
CLUSTER_SHOWN = 60


def _base(frame: pd.DataFrame) -> pd.DataFrame:
    cols = [c for c in ("split", "item_id", "cluster") if c in frame.columns]
    return frame[cols].astype(str)


def _pairwise_items(ctx: CardContext) -> dict[str, pd.DataFrame]:
    """Return the pairwise measures' items of one judge (CA, kappa, position A)."""
    out = pairwise.item_outcomes(ctx.own, invalid_policy=ctx.options.invalid_policy)
    verdicts = _base(out).assign(
        verdict_A_first=out["chosen_0"].astype(str), verdict_A_second=out["chosen_1"].astype(str)
    )
    done = out["complete"].astype(bool).to_numpy()
    gold = out["has_gold"].astype(bool).to_numpy()
    found: dict[str, pd.DataFrame] = {}
    if ctx.has_gold:
        right = out["consistently_correct"].astype("boolean").fillna(False)
        found["ca"] = verdicts[done & gold].assign(correct_both_orders=right[done & gold])
        final = correctness.pairwise_final(ctx.own, groups=("benchmark", "split"))
        keys = ["split", "item_id"]
        final = final.assign(**{k: final[k].astype(str) for k in keys})[[*keys, "final"]]
        kappa = final.merge(verdicts, on=keys, how="left")  # every item, one order or two
        found["kappa_human"] = kappa.assign(agrees_with_human=kappa["final"] == "pos")
    valid = (out["chosen_0"] != "invalid").astype(int) + (out["chosen_1"] != "invalid").astype(int)
    found["pos_a_rate"] = verdicts[done].assign(
        valid_verdicts=valid[done].to_numpy(), verdicts_for_A=out["picks_a"][done].to_numpy()
    )
    return found


def _pointwise_items(ctx: CardContext) -> dict[str, pd.DataFrame]:
    """Return the pointwise judge's graded answers behind its kappa with humans."""
    table, _ = correctness_measures.graded(ctx)
    if table is None:
        return {}
    rows = _base(table).assign(
        verdict=table["verdict"].astype(object).fillna("invalid").astype(str),
        human=table["human"].astype(str),
    )
    return {"kappa_human": rows.assign(agrees_with_human=rows["verdict"] == rows["human"])}


def judge_items(ctx: CardContext) -> pd.DataFrame:
    """Return the items behind one judge's leaderboard measures, one long table.

    Returns:
        `measure`, `split`, `item_id`, `cluster` (when the data carry one), then the columns
        of that measure (the verdicts in each order or the label, and how the row counted);
        a column a measure does not use is empty.
    """
    found = _pairwise_items(ctx) if ctx.pairwise and ctx.both_orders else _pointwise_items(ctx)
    own = ctx.own
    valid = own["valid"].astype("boolean").fillna(False) & own["verdict"].notna()
    found["invalid_rate"] = _base(own).assign(
        order=own["order"].astype(str),
        verdict=own["verdict"].astype(object).fillna("").astype(str),
        invalid=~valid.to_numpy(dtype=bool),
    )
    parts = [found[m].assign(measure=m) for m in ITEM_MEASURES if m in found]
    out = pd.concat(parts, ignore_index=True)
    return out[["measure", *[c for c in out.columns if c != "measure"]]]


def items_reason(sources: Mapping[str, CardSource]) -> str | None:
    """Return why a card lists no items (a comparison card), None for one judge's card."""
    keys = [f"{label}:{j}" for label, cs in sources.items() for j in cs.judges]
    if len(keys) == 1:
        return None
    return (
        f"this card compares {len(keys)} judges and lists no items; each judge's own card "
        "(`judgelab card <source>:<judge>`) lists the items behind its numbers"
    )


def items_behind(sources: Mapping[str, CardSource], **options: Any) -> pd.DataFrame:
    """Return `judge_items` of every carded judge, with its `key` first (saved as a table)."""
    opts = CardOptions(**options)
    parts = []
    for label, cs in sources.items():
        items = lengths.add_lengths(cs.loaded.items, unit=opts.unit)
        for judge in cs.judges:
            ctx = CardContext.build(
                items, cs.loaded.judgments, judge=judge, source=label, options=opts
            )
            parts.append(judge_items(ctx).assign(**{KEY: f"{label}:{judge}"}))
    out = pd.concat(parts, ignore_index=True)
    return out[[KEY, *[c for c in out.columns if c != KEY]]]


#: Rows of one measure's table shown on the page (a UMass judge has 3,600 judgments: the page
#: would pass 1 MB); the CSV beside the report keeps every row.
ROWS_SHOWN = 1000
#: measure -> (column, ascending, its first values in words): what puts the rows that counted
#: against the judge first when a table is cut to `ROWS_SHOWN` rows.
FIRST = {
    "ca": ("correct_both_orders", True, "false"),
    "kappa_human": ("agrees_with_human", True, "false"),
    "pos_a_rate": ("verdicts_for_A", False, "highest"),
    "invalid_rate": ("invalid", False, "true"),
}


def _shown(rows: pd.DataFrame, measure: str, csv: str) -> tuple[pd.DataFrame, str]:
    """Return the rows shown on the page (cut to `ROWS_SHOWN`) and the line saying so."""
    shown = rows.drop(columns=[c for c in (KEY, "measure") if c in rows.columns])
    if "cluster" in shown.columns:
        shown = shown.assign(cluster=shown["cluster"].map(lambda c: clip(c, CLUSTER_SHOWN)))
    if len(shown) <= ROWS_SHOWN:
        return shown, ""
    column, ascending, words = FIRST[measure]
    shown = shown.sort_values(column, ascending=ascending, kind="stable").head(ROWS_SHOWN)
    where = f'<a href="{html.escape(csv)}">items.csv</a>' if csv else "items.csv"
    return shown, (
        f"<p><i>Shown: {ROWS_SHOWN:,} of {len(rows):,} rows, those with "
        f"<code>{column}</code> {words} first; every row is "
        f"in {where} beside the run's tables.</i></p>"
    )


def items_view(items: pd.DataFrame, *, csv: str = "") -> Html:
    """Return one anchored, interactive table per measure of `items_behind` output.

    Each table is itables' (sortable, searchable; a cluster label is cut to `CLUSTER_SHOWN`
    characters at a word boundary); a table longer than `ROWS_SHOWN` rows shows that many,
    the rows that counted against the judge first, and says so, linking `csv` (the saved
    table, every row, clusters whole). A measure the judge has no items for says so.
    """
    import itables  # deferred: only a card page pays for it

    from judgelab.reporting.card.measures import MEASURES

    parts = []
    for measure, what in ITEM_MEASURES.items():
        label = MEASURES[measure][0]
        rows = items[items["measure"] == measure].dropna(axis=1, how="all")
        head = (
            f'<h3 id="{anchor(measure)}">{html.escape(label)}: '
            f"{len(rows):,} {'judgments' if measure == 'invalid_rate' else 'items'}</h3>"
            f"<p>{html.escape(what[0].upper() + what[1:])}.</p>"
        )
        if rows.empty:
            parts.append(head.replace("</p>", " None here: the measure does not apply.</p>"))
            continue
        shown, cut = _shown(rows, measure, csv)
        table = itables.to_html_datatable(
            shown.reset_index(drop=True),
            table_id=f"jl-{anchor(measure)}",
            connected=False,
            showIndex=False,
            maxBytes=0,
            classes="display compact",
        )
        parts.append(head + cut + table)
    return Html("".join(parts))


def csv_link(saved: Path, notebook: str) -> str:
    """Return the link from a run's report page to a table it saved (`Outputs.table`)."""
    page_folder = paths.reports() / notebook
    try:
        return Path(os.path.relpath(saved, page_folder)).as_posix()
    except ValueError:  # another drive: no relative link
        return ""


__all__ = [
    "ITEM_MEASURES",
    "ROWS_SHOWN",
    "csv_link",
    "items_behind",
    "items_reason",
    "items_view",
    "judge_items",
]
