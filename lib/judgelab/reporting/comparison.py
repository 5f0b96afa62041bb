"""Compare recomputed numbers with their targets: statuses, tolerances, report rows."""

from __future__ import annotations

import math
from collections.abc import Mapping

import pandas as pd

from judgelab.core.schema import require_columns as _require
from judgelab.data import targets

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
        "judgelab's GLM (length.length_controlled_winrate) has an intercept and a "
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


_VALUE_COLUMNS = ["table", "row", "column", "reproduced", "n_reproduced"]


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


def status_counts(report: pd.DataFrame) -> pd.DataFrame:
    """Count report rows per artefact and status (one column per status present)."""
    _require(report, ["artefact", "status"], "status_counts")
    out = report.groupby(["artefact", "status"]).size().unstack(fill_value=0)
    return out[[s for s in STATUSES if s in out.columns]].reset_index()


def full_report(*parts: pd.DataFrame) -> pd.DataFrame:
    """Stack report parts (`peer_report`, `paper_report`) into the one reproduction table."""
    frames = [p[REPORT_COLUMNS] for p in parts if len(p)]
    if not frames:
        return pd.DataFrame(columns=REPORT_COLUMNS)
    return pd.concat(frames, ignore_index=True)
