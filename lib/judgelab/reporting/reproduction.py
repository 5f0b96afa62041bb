"""The reproduction report: every published number we can check, checked.

Two kinds of targets are compared (both are data, see `targets`):

- *peer targets* (`data/targets/peers/`): summary numbers a public corpus's authors ship
  beside their per-item judgments — the AlpacaEval leaderboards, LLMBar's per-run
  `statistics.json`, PandaLM's agreement with the human majority. They are recomputed here
  from the per-item data with judgelab's own functions (`length_bias`, `metrics`).
- *paper cells* (`data/targets/<paper>/`): reproducible only from judgments of the paper's
  judges on the paper's benchmark. ContextualJudgeBench Table 3 cells are computed from any
  judgment table of that benchmark whose judge is mapped to a Table 3 row; every other cell
  needs a judge run, listed with its estimated request count by `judge_run_plan`.

Every report row carries a `status` from `STATUSES`; values that cannot be computed stay
empty and say why, never a stand-in number.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from judgelab.analyses.length import bias as length_bias
from judgelab.analyses.pairwise import metrics
from judgelab.core import lengths
from judgelab.core.schema import require_columns as _require
from judgelab.data import catalog, targets

STATUSES = (
    "pass",
    "fail",
    "partial run",
    "source unavailable",
    "not computable",
    "needs a judge run",
)

REPORT_COLUMNS = [
    "artefact",
    "row",
    "column",
    "unit",
    "n",
    "target",
    "reproduced",
    "difference",
    "tolerance",
    "status",
    "provenance",
    "explanation",
]

#: Peer artefact (a `data/targets/peers/` table) -> the registry source holding its items.
PEER_SOURCES = {
    "alpaca_eval_leaderboard": "alpaca_eval",
    "alpaca_eval_evaluators": "alpaca_eval",
    "llmbar_statistics": "llmbar",
    "pandalm_agreement": "pandalm",
}

#: Why a whole peer artefact cannot be recomputed from the corpus.
NOT_COMPUTABLE = {
    "alpaca_eval_evaluators": (
        "the evaluators leaderboard is computed on AlpacaFarm's human cross-annotations "
        "(648 instructions x 4 annotations = '# parsed'), which live on Hugging Face only; "
        "the corpus's annotations judge the 805 AlpacaEval instructions against a model "
        "baseline, so agreement, P(prefer 1), P(prefer longer), price and time on that set "
        "are not these numbers"
    ),
}

#: Why a reproduced value may differ from its target, per (artefact, column).
EXPLANATIONS = {
    ("alpaca_eval_leaderboard", "length_controlled_winrate"): (
        "judgelab's GLM (length_bias.length_controlled_winrate) has an intercept and a "
        "tanh length term only; AlpacaEval's length_controlled_v1 adds an "
        "instruction-difficulty term fitted across all leaderboard models and regularises "
        "towards its baselines, which one model's 805 annotations cannot supply"
    ),
    ("alpaca_eval_leaderboard", "avg_length"): (
        "the leaderboard stores the mean output length in characters as an integer "
        "(truncated); the tolerance of 1 char covers it"
    ),
    ("pandalm_agreement", "agreement with human majority"): (
        "the target is printed to 2 decimals; the tolerance covers the rounding"
    ),
}

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

_VALUE_COLUMNS = ["table", "row", "column", "reproduced", "n_reproduced"]


def load_peer_sources(names: Sequence[str]) -> dict[str, catalog.Loaded | str]:
    """Load each registry source, or say why it cannot be had (offline, no mirror).

    Returns:
        Source name -> its `catalog.Loaded`, or a one-line reason when it is unavailable.
    """
    from judgelab.data.fetch import FetchError

    out: dict[str, catalog.Loaded | str] = {}
    for name in names:
        try:
            out[name] = catalog.load_source(name)
        except (FetchError, OSError, catalog.SourceNotFound) as exc:
            out[name] = f"{type(exc).__name__}: {exc}"
    return out


def sources_label(sources: Mapping[str, catalog.Loaded | str]) -> str:
    """Return a one-line data-source label: each source and whether it loaded.

    >>> sources_label({"llmbar": "FetchError: offline"})
    'peer corpora: llmbar (unavailable)'
    """
    parts = [
        f"{name} ({'loaded' if isinstance(v, catalog.Loaded) else 'unavailable'})"
        for name, v in sources.items()
    ]
    return "peer corpora: " + (", ".join(parts) if parts else "none requested")


def alpaca_leaderboard_values(
    items: pd.DataFrame,
    judgments: pd.DataFrame,
    *,
    annotator: str = "weighted_alpaca_eval_gpt4_turbo",
    baseline: str = "gpt4_1106_preview",
    aliases: Mapping[str, str] | None = None,
) -> pd.DataFrame:
    """Recompute AlpacaEval leaderboard columns from the per-item annotations.

    Uses `length_bias.pairwise_verdicts` and `length_bias.length_controlled_winrate` (soft
    preferences; lengths in characters, as AlpacaEval counts them). Only the leaderboard's
    annotator against its baseline is comparable.

    Args:
        items: An alpaca_eval items table (pos = output_1 = baseline, neg = the model).
        judgments: Its judgments; judge ids start with the annotator name.
        annotator: Judge-id prefix of the leaderboard's annotator.
        baseline: The leaderboard's baseline model.
        aliases: Our model name -> the leaderboard's (NullModel's generator is "example").

    Returns:
        `table` ("alpaca_eval_leaderboard"), `row` (model), `column` (win_rate,
        discrete_win_rate, n_wins, n_draws, avg_length, length_controlled_winrate),
        `reproduced`, `n_reproduced` (annotated items).
    """
    aliases = {"example": "NullModel"} if aliases is None else aliases
    _require(judgments, ["judge", "chosen", "verdict"], "alpaca_leaderboard_values")
    chosen = judgments[judgments["judge"].astype(str).str.startswith(annotator + ".")]
    if chosen.empty:
        return pd.DataFrame(columns=_VALUE_COLUMNS)
    counted = lengths.add_lengths(items, unit="chars")
    verdicts = length_bias.pairwise_verdicts(counted, chosen)
    verdicts = verdicts[verdicts["model_pos"] == baseline]
    wr = length_bias.length_controlled_winrate(
        verdicts, model_slot="neg", by=("judge", "split"), n_boot=1, seed=0
    )
    rows = []
    for rec in wr.itertuples(index=False):
        group = verdicts[verdicts["split"] == rec.split]
        model = aliases.get(rec.model, rec.model)
        n = int(rec.n)
        values = {
            "win_rate": rec.raw_winrate,
            "discrete_win_rate": rec.discrete_winrate,
            "n_wins": float((group["chosen"] == "neg").sum()),
            "n_draws": float((group["chosen"] == "tie").sum()),
            "avg_length": rec.mean_len_model,
            "length_controlled_winrate": rec.lc_winrate,
        }
        rows += [
            {
                "table": "alpaca_eval_leaderboard",
                "row": model,
                "column": c,
                "reproduced": v,
                "n_reproduced": n,
            }
            for c, v in values.items()
        ]
    return pd.DataFrame(rows, columns=_VALUE_COLUMNS)


def llmbar_statistics_values(judgments: pd.DataFrame) -> pd.DataFrame:
    """Recompute LLMBar's `statistics.json` measures per judge and set.

    `correct_average` is the accuracy averaged over the two orders (the paper's Acc.),
    `correct_both` the share correct in both orders, `equal` the share with the same winner
    in both orders (the paper's positional agreement; two unparseable outputs count as
    equal, `metrics.item_outcomes` policy `repo`). An invalid verdict is incorrect.

    Args:
        judgments: LLMBar judgments (both orders), needs `judge`, `split`, `item_id`,
            `sample`, `order`, `valid`, `chosen`, `correct`.

    Returns:
        `table` ("llmbar_statistics"), `row` ("<judge> | <split>"), `column`,
        `reproduced` (percent), `n_reproduced` (complete items).
    """
    _require(judgments, ["judge", "split", "item_id", "order", "chosen", "correct"], "llmbar")
    out = metrics.item_outcomes(judgments, groups=("judge", "split"), invalid_policy="repo")
    out = out[out["complete"].astype(bool)]
    rows = []
    for (judge, split), g in out.groupby(["judge", "split"], sort=True):
        c0, c1 = g["correct_0"].astype(float), g["correct_1"].astype(float)
        values = {
            "correct_average": 100 * (c0.mean() + c1.mean()) / 2,
            "correct_both": 100 * g["consistently_correct"].astype(float).mean(),
            "equal": 100 * g["consistent"].astype(float).mean(),
        }
        rows += [
            {
                "table": "llmbar_statistics",
                "row": f"{judge} | {split}",
                "column": c,
                "reproduced": v,
                "n_reproduced": len(g),
            }
            for c, v in values.items()
        ]
    return pd.DataFrame(rows, columns=_VALUE_COLUMNS)


def pandalm_agreement_values(judgments: pd.DataFrame) -> pd.DataFrame:
    """Recompute each PandaLM judge's agreement with the human majority label.

    The importer's `correct` is the judge's verdict (tie included) equal to the majority of
    the three annotators; an unparseable output ("garbage") counts as disagreement.

    Returns:
        `table` ("pandalm_agreement"), `row` (the judge's model), `column`, `reproduced`
        (fraction), `n_reproduced`.
    """
    _require(judgments, ["model", "correct"], "pandalm_agreement_values")
    rows = []
    for model, g in judgments.groupby("model", sort=True):
        correct = g["correct"].astype("boolean").fillna(False).astype(float)
        rows.append(
            {
                "table": "pandalm_agreement",
                "row": model,
                "column": "agreement with human majority",
                "reproduced": float(correct.mean()),
                "n_reproduced": len(g),
            }
        )
    return pd.DataFrame(rows, columns=_VALUE_COLUMNS)


def peer_values(sources: Mapping[str, catalog.Loaded | str]) -> pd.DataFrame:
    """Recompute every peer number whose source loaded (see `PEER_SOURCES`)."""
    frames = []
    for name, loaded in sources.items():
        if not isinstance(loaded, catalog.Loaded) or loaded.judgments is None:
            continue
        if name == "alpaca_eval":
            frames.append(alpaca_leaderboard_values(loaded.items, loaded.judgments))
        elif name == "llmbar":
            frames.append(llmbar_statistics_values(loaded.judgments))
        elif name == "pandalm":
            frames.append(pandalm_agreement_values(loaded.judgments))
    frames = [f for f in frames if not f.empty]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=_VALUE_COLUMNS)


def _tolerance(unit: str, tolerance: Mapping[str, float]) -> float:
    if unit not in tolerance:
        raise KeyError(f"no tolerance given for unit {unit!r}; have {sorted(tolerance)}")
    return float(tolerance[unit])


def compare_values(
    values: pd.DataFrame,
    cells: pd.DataFrame,
    *,
    tolerance: Mapping[str, float],
    unavailable: Mapping[str, str] | None = None,
    missing_status: str = "not computable",
    missing_reason: str = "no per-item data from which to compute this cell",
) -> pd.DataFrame:
    """Put reproduced values beside their targets and judge each under a tolerance.

    Args:
        values: `table`, `row`, `column`, `reproduced`, `n_reproduced` (e.g. `peer_values`).
        cells: The targets to report (`targets.load_targets` output), one report row each.
        tolerance: Unit -> the largest accepted |reproduced - target| (every unit present).
        unavailable: Table -> why its source could not be loaded ("source unavailable").
        missing_status: Status of a target that has no reproduced value otherwise.
        missing_reason: Its explanation.

    Returns:
        One row per target with `REPORT_COLUMNS`. `status` is `pass`/`fail` when a value
        exists (`partial run` when it covers fewer items than the target's `n`), else
        `source unavailable` or `missing_status`; NOT_COMPUTABLE tables say so.
    """
    _require(values, _VALUE_COLUMNS, "compare_values")
    _require(cells, list(targets.TARGET_COLUMNS), "compare_values")
    unavailable = dict(unavailable or {})
    key = ["table", "row", "column"]
    if values.duplicated(key).any():
        first = values.loc[values.duplicated(key), key].iloc[0].tolist()
        raise ValueError(f"compare_values: reproduced values repeat the cell {first}")
    merged = cells.merge(values, on=key, how="left")
    rows = []
    for rec in merged.itertuples(index=False):
        tol = _tolerance(rec.unit, tolerance)
        rep = float(rec.reproduced) if pd.notna(rec.reproduced) else math.nan
        diff = rep - rec.value if not math.isnan(rep) else math.nan
        why = EXPLANATIONS.get((rec.table, rec.column), "")
        if not math.isnan(rep):
            n_rep, n_tgt = rec.n_reproduced, rec.n
            if pd.notna(n_tgt) and pd.notna(n_rep) and int(n_rep) < int(n_tgt):
                status = "partial run"
                why = f"computed on {int(n_rep)} of {int(n_tgt)} items; " + why
            else:
                status = "pass" if abs(diff) <= tol + 1e-9 else "fail"
        elif rec.table in NOT_COMPUTABLE:
            status, why = "not computable", NOT_COMPUTABLE[rec.table]
        elif rec.table in unavailable:
            status, why = "source unavailable", unavailable[rec.table]
        else:
            status, why = missing_status, missing_reason
        rows.append(
            {
                "artefact": f"{rec.paper}/{rec.table}",
                "row": rec.row,
                "column": rec.column,
                "unit": rec.unit,
                "n": rec.n,
                "target": rec.value,
                "reproduced": rep,
                "difference": diff,
                "tolerance": tol,
                "status": status,
                "provenance": rec.provenance,
                "explanation": why.strip().rstrip(";").strip(),
            }
        )
    return pd.DataFrame(rows, columns=REPORT_COLUMNS)


def peer_report(
    sources: Mapping[str, catalog.Loaded | str],
    *,
    tolerance: Mapping[str, float],
    peers: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Return the report rows of every peer target (see `compare_values`).

    Args:
        sources: `load_peer_sources` output.
        tolerance: Unit -> the largest accepted |reproduced - target|.
        peers: The peer targets; defaults to `targets.load_targets("peers")`.
    """
    cells = targets.load_targets(targets.PEERS) if peers is None else peers
    unavailable = {}
    for table, source in PEER_SOURCES.items():
        loaded = sources.get(source, "source not requested (add it to the peer sources)")
        if not isinstance(loaded, catalog.Loaded):
            unavailable[table] = f"{source}: {loaded}"
    return compare_values(
        peer_values(sources),
        cells,
        tolerance=tolerance,
        unavailable=unavailable,
        missing_reason="the corpus has no judgments for this row",
    )


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
    out = metrics.item_outcomes(chosen, groups=("judge", "split"), invalid_policy="repo")
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
    try:
        return catalog.load_judgments(benchmark)
    except catalog.SourceNotFound:
        return None


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
    from judgelab.judges import runner, spec

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
    try:
        return catalog.load_items(benchmark)
    except catalog.SourceNotFound:
        return None


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


def status_counts(report: pd.DataFrame) -> pd.DataFrame:
    """Count report rows per artefact and status (one column per status present)."""
    _require(report, ["artefact", "status"], "status_counts")
    out = report.groupby(["artefact", "status"]).size().unstack(fill_value=0)
    return out[[s for s in STATUSES if s in out.columns]].reset_index()


def load_all_targets() -> pd.DataFrame:
    """Return the papers' targets and the peer targets in one frame."""
    return pd.concat(
        [targets.load_targets(), targets.load_targets(targets.PEERS)], ignore_index=True
    )


def full_report(*parts: pd.DataFrame) -> pd.DataFrame:
    """Stack report parts (`peer_report`, `paper_report`) into the one reproduction table."""
    frames = [p[REPORT_COLUMNS] for p in parts if len(p)]
    if not frames:
        return pd.DataFrame(columns=REPORT_COLUMNS)
    return pd.concat(frames, ignore_index=True)
