"""Where a judge's tables live, and writing them: one judgments file per benchmark and judge.

`judgments_path(benchmark, judge)` is `paths.judgments()/<benchmark>/<judge>.parquet`, its
diagnostics `.../details/<judge>.parquet`. `write` replaces both atomically; `table_lock`
holds an exclusive lock on a judge's tables while the runner rebuilds and writes them, so
two processes judging different splits of one judge never lose each other's rows.

A table is never shrunk by a partial run: `merge_existing` keeps every row of the judge's
existing table that the rebuild lacks (another order, a condition not run now, an answer the
cache no longer holds), and `check_identity` refuses a judge whose model or template differs
from the one that wrote the table (two specs sharing one `id:`).
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import TYPE_CHECKING

from judgelab.core import locks, paths, tables
from judgelab.core.names import child, safe_name
from judgelab.errors import JudgeSpecError
from judgelab.judges.rows import DETAIL_COLUMNS, KEY_COLUMNS, Built
from judgelab.judges.spec import JudgeSpec

if TYPE_CHECKING:  # pandas loads where a frame is merged: `judges.light` writes without it
    import pandas as pd


def judgments_path(benchmark: str, judge_id: str) -> Path:
    """Return `paths.judgments()/<benchmark>/<judge>.parquet`; both names must be safe.

    Raises:
        UnsafeNameError: `benchmark` or `judge_id` is not one safe path component (`..`,
            `/abs`, `a/b`, ...), so the table could land outside `paths.judgments()`.
    """
    bench = child(paths.judgments(), "benchmark", benchmark, where="items")
    return bench / f"{safe_name('judge', judge_id, where='judge spec')}.parquet"


def details_path(benchmark: str, judge_id: str) -> Path:
    """Return `paths.judgments()/<benchmark>/details/<judge>.parquet` (diagnostics)."""
    path = judgments_path(benchmark, judge_id)
    return path.parent / "details" / path.name


def benchmarks(items: pd.DataFrame) -> list[str]:
    """Return the benchmarks of `items`, sorted."""
    return sorted(items["benchmark"].astype(str).unique())


def existing_conditions(items: pd.DataFrame, judge_id: str) -> list[str]:
    """Return the conditions already present in this judge's tables for these benchmarks.

    A table that cannot be read counts as having none (the rebuild replaces it).
    """
    found: list[str] = []
    for bench in benchmarks(items):
        p = judgments_path(bench, judge_id)
        if p.exists():
            with contextlib.suppress(Exception):
                conds = tables.read(p, "judgments", columns=["condition"])["condition"]
                found += [c for c in conds.astype(str).unique() if "candidate=" not in c]
    return list(dict.fromkeys(found))


def table_lock(items: pd.DataFrame, judge_id: str) -> contextlib.AbstractContextManager[None]:
    """Hold an exclusive lock on this judge's table of every benchmark in `items`."""
    return locks.locked_targets(judgments_path(b, judge_id) for b in benchmarks(items))


def write(built: Built, judge_id: str) -> list[Path]:
    """Write one judgments table (and its details) per benchmark, atomically."""
    written = []
    for bench in benchmarks(built.judgments):
        part = built.judgments[built.judgments["benchmark"] == bench].reset_index(drop=True)
        written.append(tables.write_judgments(part, judgments_path(bench, judge_id)))
        det = built.details[built.details["benchmark"] == bench].reset_index(drop=True)
        with tables.atomic_path(details_path(bench, judge_id)) as tmp:
            det.to_parquet(tmp, index=False)
    return written


# --- issue 19 (5, 6): a partial run merges into the table; one id, one judge ---------------


def check_identity(items: pd.DataFrame, spec: JudgeSpec) -> None:
    """Refuse `spec` when the judge's existing table was written by another model or template.

    Two specs with the same `id:` would otherwise replace each other's table (and a merge
    would mix their rows). A table that cannot be read is not checked.

    Raises:
        JudgeSpecError: naming the table, the model and template that wrote it, and this spec's.
    """
    import pandas as pd

    model_id = f"offline:{spec.model}" if spec.is_offline else spec.model
    for bench in benchmarks(items):
        p = judgments_path(bench, spec.judge_id)
        if not p.exists():
            continue
        try:
            have = tables.read(p, "judgments", columns=["model", "prompt"]).drop_duplicates()
        except Exception:  # noqa: BLE001 - an unreadable table is replaced, as before
            continue
        for model, prompt in have.itertuples(index=False, name=None):
            if (pd.notna(model) and model != model_id) or (
                pd.notna(prompt) and prompt != spec.prompt_id
            ):
                raise JudgeSpecError(
                    f"judge id {spec.judge_id!r} already names the table {p}, written by model "
                    f"{model!r} with template {prompt!r}; this spec is model {model_id!r} "
                    f"with template {spec.prompt_id!r}. Two judges cannot share one table: "
                    "give this spec its own `id:` (or none, to derive one from its model, "
                    "template and params)",
                    source=spec.name,
                    key="id",
                )


def _keys(df: pd.DataFrame, columns: list[str]) -> pd.Series:
    """Return one hashable key per row of `df` over `columns` (compared as text)."""
    import pandas as pd

    if df.empty:
        return pd.Series([], dtype=object, index=df.index)
    return pd.Series(list(zip(*(df[c].astype(str) for c in columns), strict=True)), index=df.index)


def _read_or_none(path: Path, *, judgments: bool) -> pd.DataFrame | None:
    import pandas as pd

    if not path.exists():
        return None
    try:
        return tables.read(path, "judgments") if judgments else pd.read_parquet(path)
    except Exception:  # noqa: BLE001 - an unreadable table is replaced, as before
        return None


def _merge_one(new_j, new_d, old_j, old_d, items) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Add to one benchmark's rebuilt tables the existing rows they lack (items still there)."""
    import pandas as pd

    item_cols = ["benchmark", "split", "item_id"]
    known = set(_keys(items, item_cols))
    old_j = old_j[
        _keys(old_j, item_cols).isin(known)
        & ~_keys(old_j, KEY_COLUMNS).isin(set(_keys(new_j, KEY_COLUMNS)))
    ]
    if old_j.empty:
        return new_j, new_d
    kept = set(_keys(old_j, KEY_COLUMNS))
    new_d = new_d[~_keys(new_d, KEY_COLUMNS).isin(kept)]
    if old_d is not None and set(DETAIL_COLUMNS) <= set(old_d.columns):
        old_d = old_d[_keys(old_d, KEY_COLUMNS).isin(kept)][DETAIL_COLUMNS]
        new_d = pd.concat([new_d, old_d], ignore_index=True)
    position = {k: i for i, k in enumerate(_keys(items, item_cols))}
    merged = pd.concat([new_j, old_j.astype(new_j.dtypes.to_dict())], ignore_index=True)
    merged["_pos"] = _keys(merged, item_cols).map(position)
    order = ["_pos", "condition", "order", "sample"]
    merged = merged.sort_values(order, kind="stable").drop(columns="_pos")
    return merged.reset_index(drop=True), new_d.reset_index(drop=True)


def merge_existing(built: Built, items: pd.DataFrame, judge_id: str) -> Built:
    """Return `built` plus every row of the judge's existing tables that it lacks.

    A partial run (`--order 0`, fewer conditions, a `--limit` after the cache lost answers)
    rebuilds fewer rows than the table holds; those rows are kept, so a run never shrinks a
    table. Rebuilt rows replace existing rows of the same key; rows of items that are no
    longer in `items` are dropped (they would point at nothing).
    """
    import pandas as pd

    parts_j, parts_d, grown = [], [], False
    for bench in benchmarks(items):
        new_j = built.judgments[built.judgments["benchmark"] == bench]
        new_d = built.details[built.details["benchmark"] == bench]
        old_j = _read_or_none(judgments_path(bench, judge_id), judgments=True)
        if old_j is not None and not old_j.empty:
            old_d = _read_or_none(details_path(bench, judge_id), judgments=False)
            merged_j, new_d = _merge_one(new_j, new_d, old_j, old_d, items)
            grown = grown or len(merged_j) > len(new_j)
            new_j = merged_j
        parts_j.append(new_j)
        parts_d.append(new_d)
    if not grown:  # nothing kept from before: the rebuilt tables as they are
        return built
    return Built(pd.concat(parts_j, ignore_index=True), pd.concat(parts_d, ignore_index=True))


__all__ = [
    "check_identity",
    "details_path",
    "existing_conditions",
    "judgments_path",
    "merge_existing",
    "table_lock",
    "write",
]
