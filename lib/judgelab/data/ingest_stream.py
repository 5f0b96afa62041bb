"""`ingest.import_mapped_file` streamed: a first import of a big column-wise file, part by part.

`import_streamed` writes what the in-memory path (`ingest.write_imported`) writes — the same
items and judgments tables, manifest and report — without holding the file's tables:

1. `mapped_stream.stream_import` writes the import as two tables in a private folder;
2. they are read back part by part (`_PART` rows): each item gets its `cluster`
   (`clustering.with_clusters`, rule `item` where the mapping gives none), each row goes to
   the table of its benchmark (items) or benchmark and judge (judgments), staged beside the
   target (`tables.stage_path`); the row keys for the manifest and the counts the summary
   and the frame checks read (`frame_check.tally`) are gathered on the way;
3. holding the locks of every target and of the manifest (`manifests.under_locks`), the
   targets are checked to be still absent, and everything is renamed into place together
   (`tables.write_all`): nothing half-written, and an import that got there first is never
   overwritten.

Streamed: the import the stream handles (one file, column-wise, with verdicts), with or
without `limit` (the first items of every split are kept as the parts go by), whose
benchmarks have no items or judgments table on disk yet and whose files no earlier import
(any mapping) wrote. Everything else returns None and the caller imports in memory: a
re-import, a merge with other imports or judge runs, `replace` with something to supersede,
a name or table the in-memory path refuses (it names the row), a limit that leaves no
judgment, and any input `stream_import` declines (`mapped_fast.eligible`: several files, a
pointwise task, ids from content, a cluster column, captures; no verdict; a repeated
key). `replace` changes nothing when there is nothing to supersede, so a first import with
it is streamed.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from judgelab.core import clusters, paths, schema, tables
from judgelab.core.names import check_case, safe_name
from judgelab.data import clustering, manifests
from judgelab.data.importers import frame_check, mapped_stream, mapping_spec
from judgelab.data.importers.base import summarize_tally
from judgelab.errors import SchemaError, UnsafeNameError

_PART = 1 << 18  # rows read back at a time


class _Fallback(Exception):
    """The in-memory path must run (nothing was written)."""


def import_streamed(
    files: list[Path],
    mapping: str | Path | dict[str, Any],
    *,
    record: dict[str, Any],
    allow_invalid: bool,
    limit: int | None = None,
) -> dict[str, Any] | None:
    """Write a first import of `files` with `mapping` streamed; return the report's fields.

    `record` is what the manifest says the import was; `limit`: keep the first `limit` items
    of every split and their judgments. None: nothing was written, import in memory (see
    the module).
    """
    if limit is not None and limit < 1:
        return None  # the in-memory path's error
    fields = mapping_spec.mapping_fields(mapping)
    scratch = Path(tempfile.mkdtemp(prefix=".stream.", dir=_mkdir(paths.items())))
    staged = _Staged()
    try:
        raw = {kind: scratch / f"{kind}.parquet" for kind in ("items", "judgments")}
        counts = mapped_stream.stream_import(
            files, fields, raw["items"], raw["judgments"], allow_invalid=allow_invalid
        )
        if counts is None or not counts[1]:
            return None
        benches, judges = _names(raw)
        base = manifests.file_import_base(files, benches)
        name = manifests.file_import_name(files, benches, mapping_spec.digest(mapping))
        if not _first(name, base, benches):
            return None
        kept = _split_items(raw["items"], staged, limit)
        every, t = _split_judgments(raw["judgments"], staged, kept)
        notes = frame_check.tallied_warnings(every, lambda j: _decisive(raw["judgments"], j))
        if not t["n"].sum():
            return None  # no judgment left: the in-memory path's items-only summary
        shutil.rmtree(scratch)
        staged.close()
        manifest = manifests.stage(name, {"source": name, **record}, staged.order(), staged.owned)
        if not _commit(name, base, benches, staged, manifest):
            return None
    except _Fallback:
        return None
    finally:
        staged.discard()
        shutil.rmtree(scratch, ignore_errors=True)
    return {
        "source": name,
        "items_paths": [_items_path(b) for b in benches],
        "judgment_paths": [p for p in (_judgments_path(*bj) for bj in judges) if p in staged.tmp],
        "n_items": staged.rows["items"],
        "n_judgments": staged.rows["judgments"],
        "summary": summarize_tally(t),
        "notes": tuple(notes),
        "presentation": frame_check.tallied_presentation(every),
    }


def _mkdir(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _items_path(bench: str) -> Path:
    return paths.items() / f"{bench}.parquet"


def _judgments_path(bench: str, judge: str) -> Path:
    return paths.judgments() / bench / f"{judge}.parquet"


def _batches(path: Path, columns: list[str] | None = None) -> Iterator[pd.DataFrame]:
    """The table at `path`, `_PART` rows at a time, as pandas frames."""
    pf = pq.ParquetFile(path)
    for batch in pf.iter_batches(batch_size=_PART, columns=columns):
        yield pa.Table.from_batches([batch], schema=batch.schema).to_pandas()


def _names(raw: dict[str, Path]) -> tuple[list[str], list[tuple[str, str]]]:
    """The import's benchmarks and (benchmark, judge) pairs, sorted, checked as names.

    A name the in-memory path refuses falls back (it raises naming the row).
    """
    benches: set[str] = set()
    for batch in pq.ParquetFile(raw["items"]).iter_batches(_PART, columns=["benchmark"]):
        benches |= set(pc.unique(batch.column(0)).to_pylist())
    pairs: set[tuple[str, str]] = set()
    cols = ["benchmark", "judge"]
    for batch in pq.ParquetFile(raw["judgments"]).iter_batches(_PART, columns=cols):
        found = pa.Table.from_batches([batch]).group_by(cols).aggregate([])
        pairs |= set(zip(*(found.column(c).to_pylist() for c in cols), strict=True))
    try:
        for bench in benches:
            safe_name("benchmark", bench)
        for bench, judge in pairs:
            safe_name("judge", judge)
            check_case("judge", judge, [j for b, j in pairs if b == bench])
    except UnsafeNameError:
        raise _Fallback from None
    return sorted(benches), sorted(pairs)


def _first(name: str, base: str, benches: list[str]) -> bool:
    """True when nothing on disk is merged with: no earlier import, no table of `benches`."""
    if manifests.path_of(name).exists() or manifests.family(base, name):
        return False
    for bench in benches:
        folder = paths.judgments() / bench
        if _items_path(bench).exists() or (folder.is_dir() and any(folder.glob("*.parquet"))):
            return False
    return True


class _Staged:
    """The staged tables (one parquet writer each), their row keys and row counts."""

    def __init__(self) -> None:
        self.tmp: dict[Path, Path] = {}  # target -> staged file
        self.kind: dict[Path, str] = {}
        self.writers: dict[Path, pq.ParquetWriter] = {}
        self.keys: dict[Path, list[np.ndarray]] = {}
        self.rows = {"items": 0, "judgments": 0}

    def append(self, target: Path, df: pd.DataFrame, kind: str) -> None:
        """Append `df` (rows of the `kind` table `target`) as `tables.write_all` converts it."""
        spec = schema.SPECS[kind]
        try:
            schema.validate(df, spec, source=str(target))
        except SchemaError:
            raise _Fallback from None  # the in-memory path names the row
        table = pa.Table.from_pandas(schema.coerce(df, spec), preserve_index=False)
        writer = self.writers.get(target)
        if writer is None:
            self.tmp[target] = tables.stage_path(target)
            self.kind[target] = kind
            self.keys[target] = []
            writer = pq.ParquetWriter(self.tmp[target], table.schema, compression="zstd")
            self.writers[target] = writer
        elif not table.schema.equals(writer.schema, check_metadata=False):
            raise _Fallback  # another arrow type in a later part
        else:
            table = table.replace_schema_metadata(writer.schema.metadata)
        writer.write_table(table)
        self.rows[kind] += table.num_rows
        ids = manifests.ids(manifests.keys_of(df, kind))
        self.keys[target].append(ids.to_numpy(dtype="S16"))

    def close(self) -> None:
        """Finish and fsync every staged table."""
        for target, writer in list(self.writers.items()):
            writer.close()
            del self.writers[target]
            tables.fsync_file(self.tmp[target])

    def order(self) -> list[Path]:
        """The staged tables in the manifest's order: judgments first, then by path."""
        return sorted(self.tmp, key=lambda p: (self.kind[p] != "judgments", str(p)))

    def owned(self, target: Path) -> np.ndarray:
        """The sorted row keys of `target` (what `manifests.commit` records), as bytes."""
        keys = np.sort(np.concatenate(self.keys[target]))
        return keys[np.r_[True, keys[1:] != keys[:-1]]]

    def discard(self) -> None:
        """Close and remove what is still staged (after a fallback or a failure)."""
        for writer in self.writers.values():
            writer.close()
        for tmp in self.tmp.values():
            tmp.unlink(missing_ok=True)


def _split_items(raw: Path, staged: _Staged, limit: int | None) -> pd.MultiIndex | None:
    """Stage each benchmark's items, with their clusters (as `import_mapped_file` sets them).

    With a `limit`, only the first `limit` items of every (benchmark, split) are staged, and
    their keys returned (`ingest.limit_imported`).
    """
    taken: dict[tuple[str, str], int] = {}
    kept = []
    for df in _batches(raw):
        df = clustering.with_clusters(df, ("item",))
        if limit is not None:
            rows = []
            for group, at in df.groupby(["benchmark", "split"], sort=False).indices.items():
                rows.append(at[: max(0, limit - taken.get(group, 0))])
                taken[group] = taken.get(group, 0) + len(at)
            df = df.take(np.sort(np.concatenate(rows))).reset_index(drop=True)
            kept.append(df[list(schema.ITEMS.key)])
        for bench, part in df.groupby("benchmark", sort=True):
            staged.append(_items_path(str(bench)), part.reset_index(drop=True), "items")
    if limit is None:
        return None
    return pd.MultiIndex.from_frame(pd.concat(kept, ignore_index=True))


def _split_judgments(
    raw: Path, staged: _Staged, kept: pd.MultiIndex | None
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Stage each (benchmark, judge)'s judgments (of the `kept` items, when given).

    Returns the `frame_check.tally` of every judgment and of those staged.
    """
    every, tallies = [], []
    for df in _batches(raw):
        df = schema.coerce(df.drop(columns=[clusters.COLUMN], errors="ignore"), schema.JUDGMENTS)
        every.append(frame_check.tally(df))
        if kept is not None:
            mine = pd.MultiIndex.from_frame(df[list(schema.ITEMS.key)]).isin(kept)
            df = df[mine].reset_index(drop=True)
        tallies.append(frame_check.tally(df))
        for (bench, judge), part in df.groupby(["benchmark", "judge"], sort=True):
            target = _judgments_path(str(bench), str(judge))
            staged.append(target, part.reset_index(drop=True), "judgments")
    return frame_check.add_tallies(every), frame_check.add_tallies(tallies)


def _decisive(raw: Path, judge: str) -> pd.DataFrame:
    """The judge's graded rows without ties, in table order (`frame_check`; read rarely)."""
    cols = ["benchmark", "split", "item_id", "judge", "condition", "sample", "order"]
    j = tables.read(raw, "judgments", columns=[*cols, "chosen", "correct", "valid"])
    j = j[(j["judge"] == judge) & j["correct"].notna() & j["valid"].astype(bool)]
    j = j.assign(correct=j["correct"].astype(bool))
    return j[j["chosen"] != "tie"]


def _commit(name: str, base: str, benches: list[str], staged: _Staged, manifest: Path) -> bool:
    """Rename the staged tables and manifest into place, all or none, under their locks.

    False (nothing written): another writer got to a target, or a manifest of these files,
    first; the caller merges in memory.
    """
    order = staged.order()
    target = manifests.path_of(name)

    def targets() -> set[Path]:
        return {*order, target, *(manifests.path_of(m) for m in manifests.family(base, name))}

    def work() -> bool:
        if not _first(name, base, benches):
            return False
        entries: list[tuple[Path, pd.DataFrame | str | Path | None, str]]
        entries = [(p, staged.tmp[p], staged.kind[p]) for p in order]
        tables.write_all([*entries, (target, manifest, "text")])
        return True

    try:
        return manifests.under_locks(targets, work)
    finally:
        manifest.unlink(missing_ok=True)


__all__ = ["import_streamed"]
