"""`judgelab runs diff A B`: what differs between two runs, and how their numbers moved.

A run is named `<notebook>/<run>` (its record is `reports/<notebook>/<run>.json`). The diff
lists the parameters, code, package versions and data revisions / file hashes that differ
(from the records' provenance), then compares the runs' saved tables
(`figures/<notebook>/<run>/*.csv`): tables only one run has, tables whose shape or columns
differ, and for tables of one shape, per numeric column the cells that differ beyond `atol`
and the largest absolute difference (text columns: the cells that differ).
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pandas as pd

from judgelab.core import paths


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


def _table_diff(name: str, a: pd.DataFrame, b: pd.DataFrame, atol: float) -> list[str]:
    if list(a.columns) != list(b.columns) or a.shape != b.shape:
        cols = "other columns" if list(a.columns) != list(b.columns) else "same columns"
        return [f"{name}: shape {a.shape} vs {b.shape}, {cols}"]
    lines = []
    for col in a.columns:
        x, y = a[col], b[col]
        if pd.api.types.is_numeric_dtype(x) and pd.api.types.is_numeric_dtype(y):
            xv, yv = x.to_numpy(float), y.to_numpy(float)
            both_nan = np.isnan(xv) & np.isnan(yv)
            diff = np.where(both_nan, 0.0, np.abs(xv - yv))
            diff = np.where(np.isnan(diff), np.inf, diff)
            n = int((diff > atol).sum())
            if n:
                lines.append(
                    f"{name}.{col}: {n} of {len(x)} cells differ, max |Δ| {diff.max():.6g}"
                )
        else:
            n = int((x.astype(str) != y.astype(str)).sum())
            if n:
                lines.append(f"{name}.{col}: {n} of {len(x)} cells differ")
    return lines


def diff(run_a: str, run_b: str, *, atol: float = 1e-9) -> dict[str, list]:
    """Return what differs between two runs: parameters, code, packages, data, tables."""
    a, b = load_record(run_a), load_record(run_b)
    pa, pb = a.get("provenance") or {}, b.get("provenance") or {}
    out: dict[str, list] = {
        "parameters": _changed(a.get("parameters", {}), b.get("parameters", {})),
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


__all__ = ["diff", "load_record", "render"]
