"""Import a registered source (or a mapped file) into the items + judgments tables on disk.

`import_source(name)` fetches the source (mirror or verified download), runs its importer,
validates every table, and only then writes `paths.items()/<benchmark>.parquet` and
`paths.judgments()/<benchmark>/<judge>.parquet` (one file per judge).
A manifest `paths.items()/.imports/<name>.json` lists the files and the row keys one import
wrote, so `ensure_imported(name)` can skip work and a re-import replaces exactly its own rows.

Imports never lose data: an import into a benchmark that other imports (or judge runs)
wrote to merges with their rows by key, and refuses a key they hold with other content; a
file import's manifest is named by its benchmarks, its file(s) and its mapping, never by its
stem alone; items, judgments and the manifest are written all-or-nothing
(`tables.write_all`), holding the lock of each table from the first read to the write
(`judgelab.data.manifests`, issue 32). A judge name is used as given, never rewritten, and
one that differs from another judge's of its benchmark only by case is refused.

Every import writes the items' `cluster` column (the resampling unit, DESIGN §8) from the
source's declared rule (`sources.Source.cluster`, `clustering.derive_all`) and records the
rule in the manifest. A table imported under another rule, or before clusters existed (a
manifest without the entry), is *stale*: `ensure_imported` re-derives its clusters in place
from the items on disk (`rederive`: no download, other writers' rows untouched). Judgments
never store `cluster`: it is derived from the items on load (`data.catalog`).
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, NamedTuple

import pandas as pd
import pyarrow.parquet as pq

from judgelab.core import clusters, paths, schema, tables
from judgelab.core.names import check_case, safe_name
from judgelab.data import bridges, clustering, fetch, imported, ingest_stream, manifests, sources
from judgelab.data.imported import is_imported as is_imported
from judgelab.data.importers import (
    Imported,
    SourceFormatError,
    frame_check,
    mapping_spec,
    reshape,
    summarize,
)
from judgelab.data.importers import mapping as mapping_importer
from judgelab.errors import check_choice


class ImportReport(NamedTuple):
    """What one import wrote: the table files and the per-judge summary."""

    source: str
    items_paths: list[Path]
    judgment_paths: list[Path]
    n_items: int
    n_judgments: int
    summary: pd.DataFrame
    #: Notes and warnings for the user (unmatched records, a verdict frame that looks wrong).
    notes: tuple[str, ...] = ()
    #: Accuracy per judge and source slot shown first (file imports with gold), else None.
    presentation: pd.DataFrame | None = None


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
        bench = safe_name("benchmark", bench, where=f"{origin} (items)")  # issue 19 (3)
        plan.append((paths.items() / f"{bench}.parquet", df.reset_index(drop=True), "items"))
    if judg is None or len(judg) == 0:
        return plan
    # `cluster` on judgments is derived on load (from the items), never stored
    judg = judg.drop(columns=[clusters.COLUMN], errors="ignore")
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
        judge = safe_name("judge", judge, where=f"{origin} (judgments)")  # issue 19 (3)
        path = paths.judgments() / bench / f"{judge}.parquet"
        _check_case(path, judg.loc[judg["benchmark"] == bench, "judge"], origin)
        plan.append((path, df.reset_index(drop=True), "judgments"))
    return plan


def _check_case(path: Path, judges: pd.Series, origin: str) -> None:
    """Refuse a judge whose name differs only by case from another one of its benchmark.

    The others: this import's judges of the benchmark, and the judgments tables there.
    """
    there = [f.stem for f in path.parent.glob("*.parquet")] if path.parent.is_dir() else []
    check_case("judge", path.stem, [*there, *judges.unique()], where=f"{origin} (judgments)")


def write_imported(
    imported: Imported,
    *,
    name: str,
    origin: str,
    cluster: tuple[str, ...] | None = None,
    record: dict[str, Any] | None = None,
    base: str | None = None,
    replace: bool = False,
) -> ImportReport:
    """Validate all tables of one import, merge them with what is on disk, write all or none.

    Re-importing `name` replaces the rows it wrote before; rows of other imports and of
    judge runs are kept, and a clash with them is refused (`manifests.transaction`). Items,
    judgments and the manifest `name` are written together (`tables.write_all`), holding the
    lock of every table and manifest touched from the first read on: on any failure (a full
    disk) nothing new is visible and the old tables are intact, and two imports at once
    never lose each other's rows. `cluster` (the rules the items' clusters were derived
    with) and `record` (what the import was) go into the manifest; `base` and `replace`:
    see `manifests.commit`.
    """
    plan = _plan(imported, origin=origin)
    entry: dict[str, Any] = {"source": name, **(record or {})}
    if cluster is not None:
        entry[clustering.RULES_KEY] = list(cluster)
    manifests.commit(plan, name, origin, entry, base=base, replace=replace)
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
    return [Path(f) for f in manifests.files(name)]


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
    items = clustering.with_clusters(imported.items, source.cluster)
    imported = Imported(items, imported.judgments)
    return write_imported(
        limit_imported(imported, limit),
        name=name,
        origin=f"source {name!r}",
        cluster=source.cluster,
    )


def bridge_mapping(name: str, extra: str | Path | None = None) -> dict[str, Any]:
    """Return the mapping shipped for bridge `name`, with the keys of mapping `extra` on top.

    `extra` (a mapping YAML) adds keys (a `join` of human labels, a `gold`) or replaces the
    shipped ones (a `benchmark` or `judge` of the user's choosing); the result is validated
    as one mapping by the import.

    Raises:
        ChoiceError: `name` is no bridge (the message lists them).
    """
    check_choice("--from", name, tuple(bridges.READERS))
    shipped = mapping_spec.read_raw(bridges.mapping_path(name))
    if extra is None:
        return shipped
    added = mapping_spec.read_raw(extra)
    if not isinstance(added, dict):
        raise SourceFormatError(str(extra), "the mapping must be a YAML mapping of field: column")
    if added.get("reader", name) != name:
        raise SourceFormatError(
            str(extra), f"mapping key 'reader': {added['reader']!r} conflicts with --from {name}"
        )
    return {**shipped, **added}


def import_mapped_file(
    data_file: str | Path | list[str | Path],
    mapping: str | Path | dict[str, Any],
    *,
    limit: int | None = None,
    allow_invalid: bool = False,
    replace: bool = False,
) -> ImportReport:
    """Import CSV/JSONL/JSON/parquet file(s) with a column mapping (see `importers.mapping`).

    The import is named by its files, benchmarks and the mapping's content: the same file
    under another mapping is another import, merged with the first by key (issue 32, 4).
    A first import of a file the column-wise stream reads (with or without `limit`) is
    written part by part (`ingest_stream`: the same tables, manifest and report, never the
    whole file's tables in memory); any other (a re-import, a merge with tables on disk) is
    imported in memory, then merged and written (`write_imported`).

    Args:
        data_file: A file, a glob pattern, or a list of them: one import, one manifest.
        mapping: The mapping YAML (or its parsed content).
        limit: Keep the first `limit` items of every split.
        allow_invalid: Accept a file whose every verdict is unmapped.
        replace: Supersede the earlier imports of the same file(s) (another mapping) whose
            rows this one's would replace with other content, instead of refusing.
    """
    files = reshape.expand(data_file)
    origin = str(files[0]) if len(files) == 1 else f"{files[0]} (+{len(files) - 1} files)"
    record = {
        "data_files": [str(Path(f).resolve()) for f in files],
        "mapping": None if isinstance(mapping, dict) else str(Path(mapping).resolve()),
    }
    streamed = ingest_stream.import_streamed(
        files, mapping, record=record, allow_invalid=allow_invalid, limit=limit
    )
    if streamed is not None:
        return ImportReport(**streamed)
    imported, notes = mapping_importer.import_with_notes(
        files, mapping, allow_invalid=allow_invalid
    )
    # the mapping's `cluster` when it gives one, else every item its own unit
    imported = Imported(clustering.with_clusters(imported.items, ("item",)), imported.judgments)
    benches = imported.items["benchmark"].astype(str).unique()
    base = manifests.file_import_base(files, benches)
    name = manifests.file_import_name(files, benches, mapping_spec.digest(mapping))
    report = write_imported(
        limit_imported(imported, limit),
        name=name,
        origin=origin,
        record=record,
        base=base,
        replace=replace,
    )
    judg = imported.judgments
    return report._replace(
        notes=(*notes, *frame_check.frame_warnings(judg)),
        presentation=frame_check.presentation_accuracy(judg) if judg is not None else None,
    )


def ensure_imported(name: str, *, extra_dirs: Iterable[Path] = ()) -> None:
    """Import `name` unless its tables are already on disk (for notebooks).

    Tables on disk whose clusters were derived under another rule than the source declares
    now (or before clusters existed) are re-derived in place (`rederive`).
    """
    if not is_imported(name):
        import_source(name, extra_dirs=extra_dirs)
        return
    refresh(name, extra_dirs=extra_dirs)


def refresh(name: str, *, extra_dirs: Iterable[Path] = ()) -> bool:
    """Re-derive the clusters of import `name` when they are stale.

    Stale: the manifest records other rules than the source declares (or none: imported
    before clusters existed), or an items table it wrote has no `cluster` column.

    Returns:
        True when tables were rewritten.
    """
    source = sources.get_source(name, extra_dirs=extra_dirs)
    if not manifests.path_of(name).exists():
        return False
    if recorded_rules(name) == source.cluster and not _lacks_clusters(name):
        return False
    rederive(name, source.cluster)
    return True


def _lacks_clusters(name: str) -> bool:
    """True when an items table of import `name` has no `cluster` column (written before)."""
    files = [Path(f) for f in manifests.files(name) if Path(f).parent == paths.items()]
    return any(f.exists() and clusters.COLUMN not in pq.read_schema(f).names for f in files)


def recorded_rules(name: str) -> tuple[str, ...] | None:
    """Return the cluster rules the last import of `name` used (None: before clusters)."""
    rules = manifests.read(name).get(clustering.RULES_KEY)
    return tuple(rules) if isinstance(rules, list) else None


def rederive(name: str, rules: tuple[str, ...]) -> list[Path]:
    """Re-derive the `cluster` of the items import `name` wrote, under `rules`, in place.

    Only the rows the manifest says this import owns are changed; rows of other imports or
    judge runs keep theirs. Items and the updated manifest are written together, holding
    their locks from the first read (issue 32, 1).

    Returns:
        The items tables rewritten.
    """
    p = manifests.path_of(name)

    def targets() -> set[Path]:
        return {p, *(Path(f) for f in manifests.files(name))}

    return manifests.under_locks(targets, lambda: _rederive(name, rules))


def _rederive(name: str, rules: tuple[str, ...]) -> list[Path]:
    """`rederive`, its locks held."""
    p = manifests.path_of(name)
    data = json.loads(p.read_text(encoding="utf-8"))
    writes: list[tuple[Path, pd.DataFrame | str | None, str]] = []
    for f, (keys, kind) in manifests.owned(name).items():
        path = Path(f)
        if kind != "items" or not path.exists():
            continue
        df = tables.read(path, "items")
        mine = manifests.ids(manifests.keys_of(df, "items")).isin(set(keys)).to_numpy()
        fresh = clustering.with_clusters(df[mine], rules, keep=False)[clusters.COLUMN]
        col = (
            df[clusters.COLUMN].astype("string")
            if clusters.COLUMN in df.columns
            else pd.Series(pd.NA, index=df.index, dtype="string")
        )
        col[mine] = fresh.to_numpy()
        writes.append((path, df.assign(**{clusters.COLUMN: col}), "items"))
    data[clustering.RULES_KEY] = list(rules)
    tables.write_all([*writes, (p, json.dumps(data, indent=1), "text")])
    return [w[0] for w in writes]


def owner_of(items_file: Path) -> str | None:
    """Return the registry import whose manifest lists `items_file` (None when none does)."""
    folder = manifests.folder()
    target = str(Path(items_file))
    for m in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        if m.stem.startswith("file_"):
            continue
        if target in manifests.files(m.stem):
            return m.stem
    return None


def cluster_summary(name: str, source: sources.Source | None = None) -> tuple[str, int | None]:
    """Return a source's declared cluster rule(s) and its number of clusters (None: not imported).

    The count is over the items tables the import wrote, as they are on disk; it is remembered
    for those tables' sizes and mtimes (`imported.recorded_clusters`). `source` is the
    registry entry when the caller has it (a listing reads the registry once, not per source).
    """
    source = source or sources.get_source(name)
    files = imported.items_files(name)
    if not files:
        return clustering.rule_text(source.cluster), None
    n = imported.recorded_clusters(name, files)
    if n is not None:
        return clustering.rule_text(source.cluster), n
    frames = []
    for f in files:
        have = set(pq.read_schema(f).names)
        cols = [c for c in (*schema.ITEMS.key, clusters.COLUMN) if c in have]
        frames.append(tables.read(f, "items", columns=cols))
    n = clustering.n_clusters(pd.concat(frames, ignore_index=True))
    imported.record_clusters(name, files, n)
    return clustering.rule_text(source.cluster), n
