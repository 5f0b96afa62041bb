"""Import a registered source (or a mapped file) into the items + judgments tables on disk.

`import_source(name)` fetches the source (mirror or verified download), runs its importer,
validates every table, and only then writes `paths.items()/<benchmark>.parquet` and
`paths.judgments()/<benchmark>/<judge>.parquet` (one file per judge).
A manifest `paths.items()/.imports/<name>.json` lists the files and the row keys one import
wrote, so `ensure_imported(name)` can skip work and a re-import replaces exactly its own rows.

Imports never lose data: an import into a benchmark that other imports (or judge runs)
wrote to merges with their rows by key, and refuses a key they hold with other content; a
file import's manifest is named by its benchmarks and the file, never by its stem alone;
items, judgments and the manifest are written all-or-nothing (`tables.write_all`).

Every import writes the items' `cluster` column (the resampling unit, DESIGN §8) from the
source's declared rule (`sources.Source.cluster`, `clustering.derive_all`) and records the
rule in the manifest. A table imported under another rule, or before clusters existed (a
manifest without the entry), is *stale*: `ensure_imported` re-derives its clusters in place
from the items on disk (`rederive`: no download, other writers' rows untouched). Judgments
never store `cluster`: it is derived from the items on load (`data.catalog`).
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, NamedTuple

import pandas as pd
import pyarrow.parquet as pq

from judgelab.core import clusters, paths, schema, tables
from judgelab.core.names import safe_name
from judgelab.data import clustering, fetch, sources
from judgelab.data.importers import Imported, SourceFormatError, frame_check, reshape, summarize
from judgelab.data.importers import mapping as mapping_importer


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
        if mapping_importer.safe_id(judge) != judge:
            raise SourceFormatError(
                origin, f"judge id {judge!r} is not file-name safe", column="judge"
            )
        judge = safe_name("judge", judge, where=f"{origin} (judgments)")  # issue 19 (3)
        path = paths.judgments() / bench / f"{judge}.parquet"
        plan.append((path, df.reset_index(drop=True), "judgments"))
    return plan


def _manifest(name: str) -> Path:
    return paths.items() / ".imports" / f"{safe_name('source', name)}.json"  # issue 19 (3)


def _rows(df: pd.DataFrame, kind: str, cols: list[str]) -> pd.Series:
    """Return one string per row of `df` (canonical dtypes) naming the values of `cols`."""
    if df.empty:
        return pd.Series([], dtype=object, index=df.index)
    canon = schema.coerce(df, schema.SPECS[kind])[cols].astype(object)
    canon = canon.where(canon.notna(), None)
    text = [
        json.dumps(list(r), default=str, ensure_ascii=False)
        for r in canon.itertuples(index=False, name=None)
    ]
    return pd.Series(text, dtype=object, index=df.index)


def _keys(df: pd.DataFrame, kind: str) -> pd.Series:
    """Return one string per row naming its key (the columns of the `kind` spec's key)."""
    return _rows(df, kind, list(schema.SPECS[kind].key))


def _ids(keys: pd.Series) -> pd.Series:
    """Return a short digest of each key: what a manifest records of the rows it owns."""
    return keys.map(lambda k: hashlib.blake2b(k.encode(), digest_size=8).hexdigest())


def _content(df: pd.DataFrame, kind: str) -> pd.Series:
    """Return one string per row naming its content (creation time aside), for clashes."""
    cols = [c.name for c in schema.SPECS[kind].columns if c.name in df.columns]
    return _rows(df, kind, [c for c in cols if c != "created_at"])


def _merge(
    path: Path, new: pd.DataFrame | None, kind: str, owned: set[str], *, origin: str
) -> tuple[pd.DataFrame, set[str]]:
    """Merge this import's rows for `path` with the rows other writers put there.

    Rows this import wrote before (`owned`) are replaced; rows of other imports or of a
    judge run are kept. A key in both with different content is refused, naming it; an
    identical row is kept as the other writer's. Returns the table and the keys now owned.
    """
    old = tables.read(path, kind) if path.exists() else None
    others = None if old is None else old[~_ids(_keys(old, kind)).isin(owned)]
    if new is None:
        new = (old if old is not None else pd.DataFrame()).iloc[0:0]
    if others is None or others.empty:
        return new.reset_index(drop=True), set(_ids(_keys(new, kind)))
    other_keys, new_keys = _keys(others, kind), _keys(new, kind)
    both = new_keys.isin(set(other_keys))
    if both.any():
        theirs = dict(zip(other_keys, _content(others, kind), strict=True))
        ours = _content(new[both], kind)
        for key, content in zip(new_keys[both], ours, strict=True):
            if theirs[key] != content:
                raise SourceFormatError(
                    origin,
                    f"{kind} key {key} is already in {path} with different "
                    "content (from another import or a judge run); refusing to overwrite it "
                    "(import into another benchmark, or give the judge another id)",
                )
    merged = pd.concat([others, new[~both]], ignore_index=True)
    return merged, set(_ids(new_keys[~both]))


def _referenced(bench: str, rewritten: dict[Path, pd.DataFrame]) -> set[str]:
    """Item keys that the judgments of `bench` refer to once this import is written."""
    refs: set[str] = set()
    folder = paths.judgments() / bench
    files = set(folder.glob("*.parquet")) if folder.is_dir() else set()
    for f in files | {p for p in rewritten if p.parent == folder}:
        df = rewritten[f] if f in rewritten else tables.read(f, "judgments")
        refs |= set(_ids(_rows(df, "judgments", list(schema.ITEMS.key))))
    return refs


def _transaction(
    plan: list[tuple[Path, pd.DataFrame, str]], name: str, origin: str
) -> tuple[list[tuple[Path, pd.DataFrame | None, str]], dict[str, list[str]]]:
    """Return the (path, table or None, kind) writes of one import, merged with what is there."""
    old = _read_manifest_keys(name)
    new = {p: (df, k) for p, df, k in plan}
    kinds = {**{Path(p): k for p, (_, k) in old.items()}, **{p: k for p, (_, k) in new.items()}}
    done: dict[Path, pd.DataFrame] = {}
    owned: dict[str, list[str]] = {}
    # judgments first: an item this import no longer has stays while judgments refer to it
    for path in sorted(kinds, key=lambda p: kinds[p] != "judgments"):
        kind = kinds[path]
        mine = set(old.get(str(path), ((), kind))[0])
        df, keys = _merge(path, new.get(path, (None, kind))[0], kind, mine, origin=origin)
        if kind == "items":
            refs = _referenced(str(path.stem), done)
            dropped = mine - set(_ids(_keys(df, kind))) if path.exists() else set()
            kept = dropped & refs
            if kept:
                prev = tables.read(path, kind)
                df = pd.concat([df, prev[_ids(_keys(prev, kind)).isin(kept)]], ignore_index=True)
        done[path] = df
        if keys:
            owned[str(path)] = sorted(keys)
    writes = [(p, df if len(df) else None, kinds[p]) for p, df in done.items()]
    writes = [w for w in writes if w[1] is not None or w[0].exists()]
    return writes, owned


def write_imported(
    imported: Imported, *, name: str, origin: str, cluster: tuple[str, ...] | None = None
) -> ImportReport:
    """Validate all tables of one import, merge them with what is on disk, write all or none.

    Re-importing `name` replaces the rows it wrote before; rows of other imports and of
    judge runs are kept, and a clash with them is refused (see `_merge`). Items, judgments
    and the manifest `name` are written together (`tables.write_all`): on any failure
    (a full disk) nothing new is visible and the old tables are intact. `cluster` (the
    rules the items' clusters were derived with) is recorded in the manifest.
    """
    plan = _plan(imported, origin=origin)
    writes, owned = _transaction(plan, name, origin)
    manifest: dict[str, Any] = {
        "source": name,
        "files": sorted(owned),
        "keys": owned,
    }
    if cluster is not None:
        manifest[clustering.RULES_KEY] = list(cluster)
    tables.write_all([*writes, (_manifest(name), json.dumps(manifest, indent=1), "text")])
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


def _read_manifest_keys(name: str) -> dict[str, tuple[list[str], str]]:
    """Return {file: (keys this import wrote there, kind)} from the manifest `name`.

    A manifest of an older judgelab (files, no keys) owns every row of its files, as it did.
    """
    p = _manifest(name)
    if not p.exists():
        return {}
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
        files = list(data["files"])
    except (ValueError, KeyError, TypeError):
        return {}
    out = {}
    for f in files:
        kind = "items" if Path(f).parent == paths.items() else "judgments"
        keys = data.get("keys", {}).get(f)
        if keys is None and Path(f).exists():
            with contextlib.suppress(Exception):
                keys = list(_ids(_keys(tables.read(f, kind), kind)))
        out[f] = (list(keys or []), kind)
    return out


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


def mapped_file_name(data_file: str | Path | list[Path], benchmarks: Iterable[str]) -> str:
    """Name the manifest of a file import by what it describes: its benchmarks and file(s).

    Two files that share a stem (in different folders, or into different benchmarks) get
    different manifests, so neither import ever replaces the other's rows; re-importing the
    same file (or the same set of files) replaces what it wrote before.
    """
    files = [Path(data_file)] if isinstance(data_file, (str, Path)) else list(data_file)
    resolved = "\n".join(sorted(str(Path(f).resolve()) for f in files))
    where = hashlib.sha256(resolved.encode()).hexdigest()[:12]
    benches = "+".join(sorted(mapping_importer.safe_id(b) for b in benchmarks))[:60]
    stem = mapping_importer.safe_id(Path(files[0]).stem)[:30]
    if len(files) > 1:
        stem += f"+{len(files) - 1}"
    return f"file_{benches}.{stem}.{where}"


def import_mapped_file(
    data_file: str | Path | list[str | Path],
    mapping: str | Path | dict[str, Any],
    *,
    limit: int | None = None,
    allow_invalid: bool = False,
) -> ImportReport:
    """Import CSV/JSONL/JSON/parquet file(s) with a column mapping (see `importers.mapping`).

    Args:
        data_file: A file, a glob pattern, or a list of them: one import, one manifest.
        mapping: The mapping YAML (or its parsed content).
        limit: Keep the first `limit` items of every split.
        allow_invalid: Accept a file whose every verdict is unmapped.
    """
    files = reshape.expand(data_file)
    imported, notes = mapping_importer.import_with_notes(
        files, mapping, allow_invalid=allow_invalid
    )
    # the mapping's `cluster` when it gives one, else every item its own unit
    imported = Imported(clustering.with_clusters(imported.items, ("item",)), imported.judgments)
    name = mapped_file_name(files, imported.items["benchmark"].astype(str).unique())
    origin = str(files[0]) if len(files) == 1 else f"{files[0]} (+{len(files) - 1} files)"
    report = write_imported(limit_imported(imported, limit), name=name, origin=origin)
    judg = imported.judgments
    return report._replace(
        notes=(*notes, *frame_check.frame_warnings(judg)),
        presentation=frame_check.presentation_accuracy(judg) if judg is not None else None,
    )


def is_imported(name: str) -> bool:
    """Return True when an earlier import of `name` wrote tables that all still exist."""
    files = _read_manifest(name)
    return bool(files) and all(Path(f).exists() for f in files)


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
    if not _manifest(name).exists():
        return False
    if recorded_rules(name) == source.cluster and not _lacks_clusters(name):
        return False
    rederive(name, source.cluster)
    return True


def _lacks_clusters(name: str) -> bool:
    """True when an items table of import `name` has no `cluster` column (written before)."""
    files = [Path(f) for f in _read_manifest(name) if Path(f).parent == paths.items()]
    return any(f.exists() and clusters.COLUMN not in pq.read_schema(f).names for f in files)


def recorded_rules(name: str) -> tuple[str, ...] | None:
    """Return the cluster rules the last import of `name` used (None: before clusters)."""
    p = _manifest(name)
    try:
        rules = json.loads(p.read_text(encoding="utf-8")).get(clustering.RULES_KEY)
    except (OSError, ValueError, AttributeError):
        return None
    return tuple(rules) if isinstance(rules, list) else None


def rederive(name: str, rules: tuple[str, ...]) -> list[Path]:
    """Re-derive the `cluster` of the items import `name` wrote, under `rules`, in place.

    Only the rows the manifest says this import owns are changed; rows of other imports or
    judge runs keep theirs. Items and the updated manifest are written together.

    Returns:
        The items tables rewritten.
    """
    p = _manifest(name)
    data = json.loads(p.read_text(encoding="utf-8"))
    writes: list[tuple[Path, pd.DataFrame | str | None, str]] = []
    for f, (keys, kind) in _read_manifest_keys(name).items():
        path = Path(f)
        if kind != "items" or not path.exists():
            continue
        df = tables.read(path, "items")
        mine = _ids(_keys(df, "items")).isin(set(keys)).to_numpy()
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
    folder = paths.items() / ".imports"
    target = str(Path(items_file))
    for m in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        if m.stem.startswith("file_"):
            continue
        if target in _read_manifest(m.stem):
            return m.stem
    return None


def cluster_summary(name: str) -> tuple[str, int | None]:
    """Return a source's declared cluster rule(s) and its number of clusters (None: not imported).

    The count is over the items tables the import wrote, as they are on disk.
    """
    source = sources.get_source(name)
    files = [Path(f) for f in _read_manifest(name) if Path(f).parent == paths.items()]
    files = [f for f in files if f.exists()]
    if not files:
        return clustering.rule_text(source.cluster), None
    frames = []
    for f in files:
        have = set(pq.read_schema(f).names)
        cols = [c for c in (*schema.ITEMS.key, clusters.COLUMN) if c in have]
        frames.append(tables.read(f, "items", columns=cols))
    items = pd.concat(frames, ignore_index=True)
    return clustering.rule_text(source.cluster), clustering.n_clusters(items)
