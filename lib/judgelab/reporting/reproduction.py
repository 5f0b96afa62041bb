"""The reproduction report: every published number we can check, checked.

Two kinds of targets are compared (both are data, see `targets`):

- *peer targets* (`data/targets/peers/`): summary numbers a public corpus's authors ship
  beside their per-item judgments — the AlpacaEval leaderboards, LLMBar's per-run
  `statistics.json`, PandaLM's agreement with the human majority. They are recomputed here
  from the per-item data with judgelab's own functions (`analyses.length`, `analyses.pairwise`).
- *paper cells* (`data/targets/<paper>/`): reproducible only from judgments of the paper's
  judges on the paper's benchmark. ContextualJudgeBench Table 3 cells are computed from any
  judgment table of that benchmark whose judge is mapped to a Table 3 row; every other cell
  needs a judge run, listed with its estimated request count by `judge_run_plan`.

Every report row carries a `status` from `STATUSES`; values that cannot be computed stay
empty and say why, never a stand-in number.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from judgelab.analyses import pairwise
from judgelab.core.schema import require_columns as _require
from judgelab.data import catalog, targets
from judgelab.judges import runner, spec
from judgelab.reporting.comparison import _VALUE_COLUMNS, compare_values
from judgelab.reporting.comparison import EXPLANATIONS as EXPLANATIONS
from judgelab.reporting.comparison import NOT_COMPUTABLE as NOT_COMPUTABLE
from judgelab.reporting.comparison import REPORT_COLUMNS as REPORT_COLUMNS
from judgelab.reporting.comparison import STATUSES as STATUSES
from judgelab.reporting.comparison import full_report as full_report
from judgelab.reporting.comparison import status_counts as status_counts
from judgelab.reporting.peers import PEER_SOURCES as PEER_SOURCES
from judgelab.reporting.peers import alpaca_leaderboard_values as alpaca_leaderboard_values
from judgelab.reporting.peers import llmbar_statistics_values as llmbar_statistics_values
from judgelab.reporting.peers import load_peer_sources as load_peer_sources
from judgelab.reporting.peers import pandalm_agreement_values as pandalm_agreement_values
from judgelab.reporting.peers import peer_report as peer_report
from judgelab.reporting.peers import peer_values as peer_values
from judgelab.reporting.peers import sources_label as sources_label

#: judgelab's ContextualJudgeBench split -> the Table 3 column label.
CJB_COLUMNS = {
    "refusal_answerable": "Refusal (Ans.)",
    "refusal_unanswerable": "Refusal (Unans.)",
    "faithfulness_qa": "Faithfulness (QA)",
    "faithfulness_summ": "Faithfulness (Summ.)",
    "completeness_qa": "Completeness (QA)",
    "completeness_summ": "Completeness (Summ.)",
    "conciseness_qa": "Conciseness (QA)",
    "conciseness_summ": "Conciseness (Summ.)",
}


def cjb_table3_values(judgments: pd.DataFrame, *, judge_rows: Mapping[str, str]) -> pd.DataFrame:
    """Recompute ContextualJudgeBench Table 3 consistent accuracy from a judgment table.

    Per judge mapped in `judge_rows`: CA per split (correct in both orders, an invalid
    verdict incorrect; spec 000 §4.2) and the pooled `Average` over all splits, in percent.

    Args:
        judgments: ContextualJudgeBench judgments (both orders).
        judge_rows: Judge id -> its Table 3 row label (e.g. "GPT-4o-mini").

    Returns:
        `table` ("table3"), `row`, `column`, `reproduced`, `n_reproduced`.
    """
    _require(judgments, ["judge", "split", "item_id", "order", "chosen", "correct"], "table3")
    chosen = judgments[judgments["judge"].isin(list(judge_rows))]
    if chosen.empty:
        return pd.DataFrame(columns=_VALUE_COLUMNS)
    out = pairwise.item_outcomes(chosen, groups=("judge", "split"), invalid_policy="repo")
    out = out[out["complete"].astype(bool) & (out["sample"] == 0)]
    rows = []
    for judge, g in out.groupby("judge", sort=True):
        ca = g["consistently_correct"].astype(float)
        for split, s in g.groupby("split", sort=True):
            if split in CJB_COLUMNS:
                rows.append(
                    {
                        "table": "table3",
                        "row": judge_rows[judge],
                        "column": CJB_COLUMNS[split],
                        "reproduced": 100 * ca[s.index].mean(),
                        "n_reproduced": len(s),
                    }
                )
        rows.append(
            {
                "table": "table3",
                "row": judge_rows[judge],
                "column": "Average",
                "reproduced": 100 * ca.mean(),
                "n_reproduced": len(g),
            }
        )
    return pd.DataFrame(rows, columns=_VALUE_COLUMNS)


def load_judgments(benchmark: str) -> pd.DataFrame | None:
    """Return the judgment tables of a benchmark under `data/judgments/`, None when absent."""
    return catalog.load_or_none(catalog.load_judgments, benchmark)


def paper_report(
    judgments: pd.DataFrame | None,
    *,
    judge_rows: Mapping[str, str],
    tolerance: Mapping[str, float],
    paper_targets: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Return the report rows of ContextualJudgeBench Table 3 for the mapped judges.

    Cells of mapped judges get values when `judgments` hold them; every other Table 3 row
    is summarised by `judge_run_plan`, not repeated here.

    Args:
        judgments: ContextualJudgeBench judgments (`load_judgments`), or None.
        judge_rows: Judge id -> its Table 3 row label.
        tolerance: Unit -> the largest accepted |reproduced - target|.
        paper_targets: The Table 3 targets; defaults to `load_targets(...)`.
    """
    cells = (
        targets.load_targets("contextualjudgebench", "table3")
        if paper_targets is None
        else paper_targets
    )
    cells = cells[cells["row"].isin(list(judge_rows.values()))]
    values = (
        cjb_table3_values(judgments, judge_rows=judge_rows)
        if judgments is not None
        else pd.DataFrame(columns=_VALUE_COLUMNS)
    )
    return compare_values(
        values,
        cells,
        tolerance=tolerance,
        missing_status="needs a judge run",
        missing_reason="no ContextualJudgeBench judgments of this judge under data/judgments/",
    )


def paper_request_count(paper_targets: pd.DataFrame, *, orders: int = 2) -> int:
    """Return the requests one pairwise judge needs on ContextualJudgeBench from Table 1.

    Σ over the eight split rows of the Table 1 `# Pairs` cells (the `Total` row excluded)
    × `orders` (2000 × 2 = 4000 by default).
    """
    t1 = paper_targets[
        (paper_targets["paper"] == "contextualjudgebench")
        & (paper_targets["table"] == "table1")
        & (paper_targets["column"] == "# Pairs")
        & (paper_targets["row"] != "Total")
    ]
    if t1.empty:
        raise ValueError("paper_request_count: no contextualjudgebench table1 '# Pairs' cells")
    return int(t1["value"].sum()) * orders


def judge_run_plan(
    paper_targets: pd.DataFrame,
    *,
    judges: Sequence[str],
    items: pd.DataFrame | None,
    reproduced: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """List what needs a judge run: per paper table, the judge, benchmark and request count.

    ContextualJudgeBench (Tables 3 and 5) requests come from `judges.runner.dry_run` when
    its items are imported (`items`), else from the paper's Table 1 pair counts × 2 orders
    (`paper_request_count`); `estimate` says which. The other papers' tables are listed with
    their cell counts; their request counts are not estimated (their items are not imported
    by this report).

    Args:
        paper_targets: The papers' targets (`targets.load_targets()`).
        judges: Judge spec names or files (`judges.spec.resolve`) to plan for
            ContextualJudgeBench.
        items: ContextualJudgeBench items, or None when not available offline.
        reproduced: `paper_report` output; its passed/failed cells count as done.

    Returns:
        `paper`, `table`, `benchmark`, `cells`, `cells_reproduced`, `judge`, `requests`,
        `est_prompt_tokens`, `est_cost_usd`, `estimate`.
    """
    done = 0
    if reproduced is not None and len(reproduced):
        done = int(reproduced["status"].isin(["pass", "fail"]).sum())
    rows = []
    tables = paper_targets.groupby(["paper", "table"], sort=True).size()
    for (paper, table), n_cells in tables.items():
        base = {"paper": paper, "table": table, "benchmark": paper, "cells": int(n_cells)}
        base["cells_reproduced"] = (
            done if (paper, table) == ("contextualjudgebench", "table3") else 0
        )
        if paper == "contextualjudgebench" and table in ("table3", "table5"):
            for name in judges:
                js = spec.resolve(name)
                if items is not None:
                    est = runner.dry_run(items, js)
                    extra = {
                        "requests": est.to_request,
                        "est_prompt_tokens": est.prompt_tokens,
                        "est_cost_usd": est.cost_usd,
                        "estimate": "judges.runner.dry_run on the imported items",
                    }
                else:
                    extra = {
                        "requests": paper_request_count(paper_targets),
                        "est_prompt_tokens": np.nan,
                        "est_cost_usd": np.nan,
                        "estimate": "paper sizes: Table 1 '# Pairs' summed x 2 orders "
                        "(items not available offline)",
                    }
                rows.append({**base, "judge": name, **extra})
        elif table.startswith(("table", "figure")) and not (
            paper == "contextualjudgebench" and table == "table1"
        ):
            rows.append(
                {
                    **base,
                    "judge": "the paper's judges",
                    "requests": np.nan,
                    "est_prompt_tokens": np.nan,
                    "est_cost_usd": np.nan,
                    "estimate": "not estimated: the benchmark's items are not loaded here",
                }
            )
    cols = [
        "paper",
        "table",
        "benchmark",
        "cells",
        "cells_reproduced",
        "judge",
        "requests",
        "est_prompt_tokens",
        "est_cost_usd",
        "estimate",
    ]
    return pd.DataFrame(rows, columns=cols)


def load_items(benchmark: str) -> pd.DataFrame | None:
    """Return an imported items table (`data/items/<benchmark>.parquet`), None when absent."""
    return catalog.load_or_none(catalog.load_items, benchmark)


def integrity_summary(all_targets: pd.DataFrame, discrepancies: pd.DataFrame) -> pd.DataFrame:
    """Summarise the targets' integrity per paper: tables, cells and known discrepancies.

    Args:
        all_targets: Targets of the papers and peers (`targets.load_targets` outputs).
        discrepancies: `targets.known_discrepancies()` output.

    Returns:
        Per paper: `tables`, `cells`, `known_discrepancies`, `flagged_by_checks` (those an
        integrity test flags), `checks` (the flagging test names, `; `-joined).
    """
    _require(all_targets, ["paper", "table"], "integrity_summary")
    _require(discrepancies, ["paper", "check"], "integrity_summary")
    rows = []
    for paper, g in all_targets.groupby("paper", sort=True):
        d = discrepancies[discrepancies["paper"] == paper]
        flagged = d[d["check"].astype(str).str.strip() != ""]
        rows.append(
            {
                "paper": paper,
                "tables": int(g["table"].nunique()),
                "cells": len(g),
                "known_discrepancies": len(d),
                "flagged_by_checks": len(flagged),
                "checks": "; ".join(sorted(set(flagged["check"]))),
            }
        )
    return pd.DataFrame(
        rows,
        columns=["paper", "tables", "cells", "known_discrepancies", "flagged_by_checks", "checks"],
    )


def load_all_targets() -> pd.DataFrame:
    """Return the papers' targets and the peer targets in one frame."""
    return pd.concat(
        [targets.load_targets(), targets.load_targets(targets.PEERS)], ignore_index=True
    )
