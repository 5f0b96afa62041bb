"""`judgelab runs diff A B` (what differs between two runs) and `judgelab runs list`.

A run is named `<notebook>/<run>` (its record is `reports/<notebook>/<run>.json`). The diff
lists the parameters that differ, each at its effective value (a value neither the params file
nor `-p` set is the notebook's default and says so), the code, package versions and data
revisions / file hashes that differ (from the records' provenance), then compares the runs'
saved tables (`figures/<notebook>/<run>/*.csv`): tables only one run has, tables whose shape or
columns differ, and for tables of one shape, per numeric column the cells that differ beyond
`atol` and the largest absolute difference (text columns: the cells that differ), then the
rows that differ, named by the table's text columns that both runs share (e.g. the judge).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from judgelab.core import paths

if TYPE_CHECKING:  # numpy and pandas load in `diff` only: `runs list` must not pay for them
    import numpy as np
    import pandas as pd


def load_record(run_id: str) -> dict[str, Any]:
    """Return the run record of `<notebook>/<run>` (FileNotFoundError naming it when absent)."""
    notebook, _, run = run_id.partition("/")
    if not notebook or not run:
        raise ValueError(f"a run is named <notebook>/<run>, got {run_id!r}")
    p = paths.reports() / notebook / f"{run}.json"
    if not p.is_file():
        raise FileNotFoundError(f"no run record {p} (run `judgelab run {notebook}` first)")
    return json.loads(p.read_text(encoding="utf-8"))


def _flat(d: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(d, dict):
        out: dict[str, Any] = {}
        for k, v in d.items():
            out.update(_flat(v, f"{prefix}{k}."))
        return out
    return {prefix[:-1]: d}


def _params(rec: dict[str, Any]) -> dict[str, Any]:
    """Return a record's effective parameters, values from the notebook's defaults marked."""
    given = rec.get("parameters") or {}
    effective = rec.get("effective_parameters")
    if effective is None:  # a record written before runs kept their effective values
        from judgelab.reporting.pipeline import effective_parameters

        effective = effective_parameters(rec["notebook"], given)
    return {k: v if k in given else _Default(v) for k, v in effective.items()}


class _Default:
    """A parameter value that came from the notebook's defaults (shown as such)."""

    def __init__(self, value: Any) -> None:
        self.value = value

    def __eq__(self, other: object) -> bool:
        return self.value == (other.value if isinstance(other, _Default) else other)

    def __hash__(self) -> int:  # pragma: no cover - values are compared, never hashed
        return hash(repr(self.value))

    def __repr__(self) -> str:
        return f"{self.value!r} (notebook default)"


def _changed(a: dict[str, Any], b: dict[str, Any]) -> list[tuple[str, Any, Any]]:
    fa, fb = _flat(a), _flat(b)
    return [(k, fa.get(k), fb.get(k)) for k in sorted(set(fa) | set(fb)) if fa.get(k) != fb.get(k)]


def _data(prov: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for src in prov.get("data") or []:
        out[src["source"]] = {
            "revision": src.get("revision"),
            "pinned_commit": src.get("pinned_commit"),
            **{f"file {f['path']}": f.get("sha256") for f in src.get("files", [])},
        }
    return out


MAX_ROWS_SHOWN = 8


def _table_diff(name: str, a: pd.DataFrame, b: pd.DataFrame, atol: float) -> list[str]:
    import numpy as np
    import pandas as pd

    if list(a.columns) != list(b.columns) or a.shape != b.shape:
        cols = "other columns" if list(a.columns) != list(b.columns) else "same columns"
        return [f"{name}: shape {a.shape} vs {b.shape}, {cols}"]
    lines = []
    differs = np.zeros(len(a), dtype=bool)
    keys = []
    for col in a.columns:
        x, y = a[col], b[col]
        if pd.api.types.is_numeric_dtype(x) and pd.api.types.is_numeric_dtype(y):
            xv, yv = x.to_numpy(float), y.to_numpy(float)
            both_nan = np.isnan(xv) & np.isnan(yv)
            diff = np.where(both_nan, 0.0, np.abs(xv - yv))
            diff = np.where(np.isnan(diff), np.inf, diff)
            cells = diff > atol
            if cells.any():
                lines.append(
                    f"{name}.{col}: {int(cells.sum())} of {len(x)} cells differ, "
                    f"max |Δ| {diff.max():.6g}"
                )
        else:
            cells = (x.astype(str) != y.astype(str)).to_numpy()
            if cells.any():
                lines.append(f"{name}.{col}: {int(cells.sum())} of {len(x)} cells differ")
            else:
                keys.append(col)  # a text column both runs share names the rows
        differs |= cells
    if differs.any():
        lines.append(_rows_line(name, a, differs, keys))
    return lines


def _rows_line(name: str, a: pd.DataFrame, differs: np.ndarray, keys: list[str]) -> str:
    """Return which rows differ, named by the shared text columns (else by row number)."""
    import numpy as np

    rows = a.loc[differs, keys] if keys else None
    if rows is None:
        labels = [f"row {i + 1}" for i in np.flatnonzero(differs)]
    else:
        labels = [" / ".join(str(v) for v in r) for r in rows.itertuples(index=False)]
    shown = ", ".join(labels[:MAX_ROWS_SHOWN])
    more = f" and {len(labels) - MAX_ROWS_SHOWN} more" if len(labels) > MAX_ROWS_SHOWN else ""
    by = f" (by {' / '.join(keys)})" if keys else ""
    return f"{name}: rows that differ{by}: {shown}{more}"


def diff(run_a: str, run_b: str, *, atol: float = 1e-9) -> dict[str, list]:
    """Return what differs between two runs: parameters, code, packages, data, tables."""
    import pandas as pd

    a, b = load_record(run_a), load_record(run_b)
    pa, pb = a.get("provenance") or {}, b.get("provenance") or {}
    out: dict[str, list] = {
        "parameters": _changed(_params(a), _params(b)),
        "code": _changed(
            {**(pa.get("code") or {}), "python": pa.get("python"), "lock": pa.get("lock")},
            {**(pb.get("code") or {}), "python": pb.get("python"), "lock": pb.get("lock")},
        ),
        "packages": _changed(pa.get("packages") or {}, pb.get("packages") or {}),
        "data": _changed(_data(pa), _data(pb)),
        "tables": [],
    }
    da = paths.figures() / a["notebook"] / a["run"]
    db = paths.figures() / b["notebook"] / b["run"]
    ta = {p.name: p for p in da.glob("*.csv")} if da.is_dir() else {}
    tb = {p.name: p for p in db.glob("*.csv")} if db.is_dir() else {}
    for name in sorted(set(ta) ^ set(tb)):
        out["tables"].append(f"{name}: only in {run_a if name in ta else run_b}")
    for name in sorted(set(ta) & set(tb)):
        out["tables"] += _table_diff(name, pd.read_csv(ta[name]), pd.read_csv(tb[name]), atol)
    return out


def render(result: dict[str, list], run_a: str, run_b: str) -> str:
    """Return the diff as text, one section per kind, `same` where nothing differs."""
    lines = [f"runs diff {run_a} → {run_b}"]
    for section, items in result.items():
        lines.append(f"{section}: {'same' if not items else ''}".rstrip())
        for item in items:
            if isinstance(item, tuple):
                key, x, y = item
                lines.append(f"  {key}: {x!r} → {y!r}")
            else:
                lines.append(f"  {item}")
    return "\n".join(lines)


def list_runs() -> list[str]:
    """Return one line per recorded run: `<nb>/<run>`, status, start, seconds, what it set."""
    lines = []
    for p in sorted(paths.reports().glob("*/*.json")):
        try:
            rec = json.loads(p.read_text(encoding="utf-8"))
            run_id = f"{rec['notebook']}/{rec['run']}"
        except (OSError, ValueError, TypeError, KeyError) as exc:
            lines.append(f"{p.parent.name}/{p.stem}  unreadable record ({type(exc).__name__})")
            continue
        given = rec.get("parameters") or {}
        setting = " ".join(f"{k}={v!r}" for k, v in given.items() if k != "run")
        source = Path(rec["params_file"]).name if rec.get("params_file") else "no params file"
        seconds = rec.get("seconds")
        lines.append(
            f"{run_id}  {rec.get('status', '?')}  {rec.get('started_at') or '-'}  "
            f"{f'{seconds:.0f} s' if isinstance(seconds, int | float) else '-'}  "
            f"{source}  {setting}".rstrip()
        )
    return lines


__all__ = ["diff", "list_runs", "load_record", "render"]
