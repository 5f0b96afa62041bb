"""Import a registered source (or a mapped file) into the items + judgments tables on disk.

`import_source(name)` fetches the source (mirror or verified download), runs its importer,
validates every table, and only then writes `paths.items()/<benchmark>.parquet` and
`paths.judgments()/<benchmark>/<judge>.parquet` (one file per judge), each atomically.
A manifest `paths.items()/.imports/<name>.json` lists what one import wrote, so
`ensure_imported(name)` can skip work and a re-import removes tables it no longer produces.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, NamedTuple

import pandas as pd

from judgelab.core import paths, schema, tables
from judgelab.data import fetch, sources
from judgelab.data.importers import Imported, SourceFormatError, summarize
from judgelab.data.importers import mapping as mapping_importer


class ImportReport(NamedTuple):
    """What one import wrote: the table files and the per-judge summary."""

    source: str
    items_paths: list[Path]
    judgment_paths: list[Path]
    n_items: int
    n_judgments: int
    summary: pd.DataFrame


def resolve_importer(spec: str) -> Callable[[Path, sources.Source], Imported]:
    """Return the function named by `"package.module:function"`."""
    module_name, _, func_name = spec.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise LookupError(
            f"importer {spec!r}: cannot import module {module_name!r} ({exc})"
        ) from None
    func = getattr(module, func_name, None)
    if not callable(func):
        raise LookupError(
            f"importer {spec!r}: module {module_name!r} has no function {func_name!r}"
        )
    return func


def limit_imported(imported: Imported, limit: int | None) -> Imported:
    """Keep the first `limit` items of every (benchmark, split) and their judgments."""
    if limit is None:
        return imported
    if limit < 1:
        raise ValueError(f"limit must be >= 1, got {limit}")
    items = imported.items.groupby(["benchmark", "split"], sort=False).head(limit)
    items = items.reset_index(drop=True)
    judg = imported.judgments
    if judg is not None:
        keep = judg.merge(items[list(schema.ITEMS.key)], on=list(schema.ITEMS.key), how="inner")
        judg = keep.reset_index(drop=True)
    return Imported(items, judg)


def _plan(imported: Imported, *, origin: str) -> list[tuple[Path, pd.DataFrame, str]]:
    """Validate everything and return (path, table, kind) for each file to write."""
    items, judg = imported.items, imported.judgments
    schema.validate_items(items, source=f"{origin} (items)")
    plan = []
    for bench, df in items.groupby("benchmark", sort=True):
        plan.append((paths.items() / f"{bench}.parquet", df.reset_index(drop=True), "items"))
    if judg is None or len(judg) == 0:
        return plan
    schema.validate_judgments(judg, source=f"{origin} (judgments)")
    key = list(schema.ITEMS.key)
    orphans = judg[key].merge(items[key], on=key, how="left", indicator=True)
    orphans = orphans[orphans["_merge"] == "left_only"]
    if len(orphans):
        first = orphans.iloc[0]
        raise SourceFormatError(
            origin,
            f"{len(orphans)} judgments refer to no item, first benchmark={first.benchmark!r}, "
            f"split={first.split!r}, item_id={first.item_id!r}",
            column="item_id",
        )
    for (bench, judge), df in judg.groupby(["benchmark", "judge"], sort=True):
        if mapping_importer.safe_id(judge) != judge:
            raise SourceFormatError(
                origin, f"judge id {judge!r} is not file-name safe", column="judge"
            )
        path = paths.judgments() / bench / f"{judge}.parquet"
        plan.append((path, df.reset_index(drop=True), "judgments"))
    return plan


def _manifest(name: str) -> Path:
    return paths.items() / ".imports" / f"{name}.json"


def write_imported(imported: Imported, *, name: str, origin: str) -> ImportReport:
    """Validate all tables of one import, then write them and the manifest `name`."""
    plan = _plan(imported, origin=origin)
    for path, df, kind in plan:
        tables.write(df, path, kind)
    written = [p for p, _, _ in plan]
    old = _read_manifest(name)
    for stale in set(old) - {str(p) for p in written}:
        Path(stale).unlink(missing_ok=True)
    tables.write_text(
        _manifest(name), json.dumps({"source": name, "files": [str(p) for p in written]}, indent=2)
    )
    judg = imported.judgments
    summary = summarize(judg) if judg is not None and len(judg) else _items_summary(imported.items)
    return ImportReport(
        source=name,
        items_paths=[p for p, _, k in plan if k == "items"],
        judgment_paths=[p for p, _, k in plan if k == "judgments"],
        n_items=len(imported.items),
        n_judgments=0 if judg is None else len(judg),
        summary=summary,
    )


def _items_summary(items: pd.DataFrame) -> pd.DataFrame:
    return items.groupby(["benchmark", "split"], sort=True).size().rename("items").reset_index()


def imported_files(name: str) -> list[Path]:
    """Return the table files the last import of `name` wrote (empty if never imported)."""
    return [Path(f) for f in _read_manifest(name)]


def _read_manifest(name: str) -> list[str]:
    p = _manifest(name)
    if not p.exists():
        return []
    try:
        return list(json.loads(p.read_text(encoding="utf-8"))["files"])
    except (ValueError, KeyError, TypeError):
        return []


def import_source(
    name: str,
    *,
    limit: int | None = None,
    extra_dirs: Iterable[Path] = (),
    progress: Callable[[str], None] | None = None,
) -> ImportReport:
    """Fetch, import, validate and write one registered source.

    Args:
        name: The registry name (`judgelab data list`).
        limit: Keep only the first `limit` items of every split (and their judgments).
        extra_dirs: Further registry folders (see `sources.load_registry`).
        progress: Called with one line per file fetched or checked.
    """
    source = sources.get_source(name, extra_dirs=extra_dirs)
    importer = resolve_importer(source.importer)
    root = fetch.ensure_local(source, progress=progress)
    imported = importer(root, source)
    if not isinstance(imported, Imported):
        raise TypeError(
            f"importer {source.importer} returned {type(imported).__name__}, not Imported"
        )
    return write_imported(limit_imported(imported, limit), name=name, origin=f"source {name!r}")


def import_mapped_file(
    data_file: str | Path, mapping: str | Path | dict[str, Any], *, limit: int | None = None
) -> ImportReport:
    """Import one CSV/JSONL/JSON/parquet file with a column mapping (see `importers.mapping`)."""
    imported = mapping_importer.import_file(data_file, mapping)
    name = "file_" + mapping_importer.safe_id(Path(data_file).stem)
    return write_imported(limit_imported(imported, limit), name=name, origin=str(data_file))


def is_imported(name: str) -> bool:
    """Return True when an earlier import of `name` wrote tables that all still exist."""
    files = _read_manifest(name)
    return bool(files) and all(Path(f).exists() for f in files)


def ensure_imported(name: str, *, extra_dirs: Iterable[Path] = ()) -> None:
    """Import `name` unless its tables are already on disk (for notebooks)."""
    if not is_imported(name):
        import_source(name, extra_dirs=extra_dirs)
