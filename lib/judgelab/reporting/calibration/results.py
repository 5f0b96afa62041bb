"""Where `make calibrate` leaves its results, how they are read back, and the table shown.

`save(replicates, summary, meta)` writes `summary.csv`, `replicates.parquet` and `meta.json`
under `paths.reports()/calibration/` (each atomically; a run never leaves half a table);
`load()` returns them, or None when no full run was made; `table(summary)` is the display:
one row per check with the after (default) and before (legacy) variants side by side,
rates in percent with their Monte-Carlo standard errors.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from judgelab.core import paths, tables


class Results(NamedTuple):
    """A calibration run: its per-replicate rows, the summary table and how it was made."""

    replicates: pd.DataFrame
    summary: pd.DataFrame
    meta: dict[str, Any]


def folder() -> Path:
    """The folder `make calibrate` writes to."""
    return paths.reports() / "calibration"


def save(results: Results, where: Path | None = None) -> Path:
    """Write a run's summary, replicates and meta (atomically); return the folder."""
    out = where or folder()
    out.mkdir(parents=True, exist_ok=True)
    with tables.atomic_path(out / "replicates.parquet") as tmp:
        results.replicates.to_parquet(tmp, index=False)
    tables.write_text(out / "summary.csv", results.summary.to_csv(index=False))
    tables.write_text(out / "meta.json", json.dumps(results.meta, indent=2, sort_keys=True))
    return out


def load(where: Path | None = None) -> Results | None:
    """Read a saved run back, or None when there is none (or it is incomplete)."""
    src = where or folder()
    files = [src / "replicates.parquet", src / "summary.csv", src / "meta.json"]
    if not all(f.exists() for f in files):
        return None
    meta = json.loads(files[2].read_text(encoding="utf-8"))
    return Results(pd.read_parquet(files[0]), pd.read_csv(files[1]), meta)


def _pct(rate: float, low: float, high: float) -> str:
    if rate is None or not np.isfinite(rate):
        return "—"
    return f"{100 * rate:.1f} [{100 * low:.1f}, {100 * high:.1f}]"


def table(summary: pd.DataFrame) -> pd.DataFrame:
    """Return the display table: one row per check × scenario × variant.

    Rates are percent with their Monte-Carlo 95 % interval; `verdict` is pass / fail /
    inconclusive against the targets (coverage in [93, 97] %, type-I error ≤ 6 %; a forecast's
    mean within ± 5 points of its event's frequency, `forecast`).
    """
    rows = []
    for r in summary.itertuples(index=False):
        rows.append(
            {
                "family": r.family,
                "check": r.check,
                "scenario": r.scenario,
                "variant": "default" if r.variant == "after" else "earlier default",
                "coverage (null)": _pct(
                    r.coverage_null, r.coverage_null_low, r.coverage_null_high
                ),
                "coverage (alt.)": _pct(r.coverage_alt, r.coverage_alt_low, r.coverage_alt_high),
                "type-I": _pct(r.type_i, r.type_i_low, r.type_i_high),
                "power": _pct(r.power, r.power_low, r.power_high),
                "forecast − frequency": _pct(
                    getattr(r, "forecast_gap", np.nan),
                    getattr(r, "forecast_gap_low", np.nan),
                    getattr(r, "forecast_gap_high", np.nan),
                ),
                "R": int(r.reps),
                "failed": int(r.failed),
                "declined": int(r.declined),
                "eff. clusters": round(float(r.n_eff), 1) if np.isfinite(r.n_eff) else None,
                "verdict": r.verdict,
            }
        )
    return pd.DataFrame(rows)


def markdown(frame: pd.DataFrame) -> str:
    """A table as GitHub markdown (for notes and the README)."""
    shown = frame.map(
        lambda v: "—" if v is None or (isinstance(v, float) and np.isnan(v)) else str(v)
    )
    lines = ["| " + " | ".join(shown.columns) + " |", "|" + "---|" * len(shown.columns)]
    lines += ["| " + " | ".join(row) + " |" for row in shown.itertuples(index=False)]
    return "\n".join(lines)
