"""The column-wise import written part by part: 10^7 rows within a bounded memory.

`stream_import(files, fields, items_path, judgments_path)` computes what
`mapped_fast.fast_import` does, on the parts `mapped_shapes.iter_frames` reads (2^18 rows
and more; a CSV/TSV file 2^18 records at a time, `_csv_parts`), and appends each part's
rows to both parquet tables as row groups of temporary files, renamed over the targets only
at the end (`core.atomic.atomic_path`: nothing half-written; a fallback leaves the targets
as they were).

Kept across parts is per-item state only: each item's first record (its mapped values) and
64-bit hashes of the item keys and of the judgment keys written. A later part's records of
an item seen before get that first record put in front of them, so they are checked against
it and matched by its texts as in one frame; its rows are then dropped from the part's
output. A repeated judgment key, or a hash shared by two keys, returns None (the record path
raises or reads exactly); so do the cases where `fast_import` returns None, a mapping
without `verdict` (items only) and any schema error (the in-memory path names its row).
The tables read back equal those `fast_import` then `tables.write_*` give.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from judgelab.core import schema
from judgelab.core.atomic import atomic_path
from judgelab.data.importers.mapped_fast import _Columns, eligible
from judgelab.data.importers.mapped_shapes import Fallback, iter_frames
from judgelab.data.importers.records import csv_options

_SPECS = {"items": schema.ITEMS, "judgments": schema.JUDGMENTS}
_PART_ROWS = 1 << 18  # rows of a part (at least; a record batch is not split)
_CSV = (".csv", ".tsv")  # read by pandas' parser a part at a time (`_csv_parts`)


def stream_import(
    files: list[Path],
    fields: dict[str, Any],
    items_path: str | Path,
    judgments_path: str | Path,
    *,
    allow_invalid: bool,
) -> tuple[int, int] | None:
    """Write the import's items and judgments tables; return their row counts, or None.

    None: nothing was written, the caller runs the in-memory import (see the module).
    """
    if not eligible(files, fields) or "verdict" not in fields:
        return None
    stream = _Stream(fields)
    try:
        with atomic_path(items_path) as items_tmp, atomic_path(judgments_path) as judg_tmp:
            stream.write(_parts(files[0], fields), {"items": items_tmp, "judgments": judg_tmp})
            if not allow_invalid and not stream.valid:
                raise Fallback  # no valid verdict: the record path's error
    except (Fallback, schema.SchemaError):
        return None
    return stream.n_items, stream.n_rows


def _parts(path: Path, fields: dict[str, Any]) -> Iterator[pd.DataFrame]:
    """The file's mapped columns, part by part (as `fast_import` reads them whole)."""
    flat = not (fields.get("join") or fields.get("explode"))
    if flat and path.suffix.lower() in _CSV:
        yield from _csv_parts(path)
    else:
        yield from iter_frames(path, fields, rows=_PART_ROWS)


def _csv_parts(path: Path) -> Iterator[pd.DataFrame]:
    """A CSV/TSV file `_PART_ROWS` records at a time, as `records.read_records` reads it.

    The same parser and options as its whole read (`compact`), records numbered from 1: at
    10^7 rows the whole read held 7.7 GB (the file's bytes and every cell). A file the
    parser or UTF-8 refuses, or one without a record, is the record path's to report
    (`Fallback`: nothing is written here).
    """
    at = 1
    try:
        with pd.read_csv(  # a BOM is not part of the first column's name
            path, encoding="utf-8-sig", chunksize=_PART_ROWS, **csv_options(path)
        ) as reader:
            for part in reader:
                part.index = pd.RangeIndex(at, at + len(part))
                at += len(part)
                yield part
    except (UnicodeDecodeError, ValueError, pd.errors.ParserError, pd.errors.EmptyDataError):
        raise Fallback from None
    if at == 1:
        raise Fallback  # no record: the record path's (empty) tables


def _hashes(df: pd.DataFrame) -> np.ndarray:
    """A 64-bit hash of every row's values (equal rows, equal hashes; in this process)."""
    import polars as pl  # on first use (~40 MB): the importers load without it

    return pl.from_pandas(df).hash_rows(seed=38).to_numpy()


def _merged(sorted_: np.ndarray, new: np.ndarray) -> np.ndarray:
    """`sorted_` with the hashes `new` (none of them in it, all distinct) in sorted place."""
    new = np.sort(new)
    return np.insert(sorted_, np.searchsorted(sorted_, new), new)


class _Stream:
    """The state kept across parts, and the parts' tables appended to the writers."""

    def __init__(self, fields: dict[str, Any]) -> None:
        self.fields = fields
        self.firsts: list[pd.DataFrame] = []  # each part's new items' first records
        self.starts = np.zeros(1, dtype=np.int64)  # the item number of each one's first
        self.item_hash = np.empty(0, dtype=np.uint64)  # sorted
        self.item_no = np.empty(0, dtype=np.int64)  # the item of each hash
        self.judgment_hash = np.empty(0, dtype=np.uint64)  # sorted
        self.valid = False
        self.n_items = self.n_rows = 0
        self.writers: dict[str, pq.ParquetWriter] = {}

    def write(self, parts: Iterator[pd.DataFrame], paths: dict[str, Path]) -> None:
        """Append every part's tables to the parquet files at `paths` (by kind)."""
        try:
            while (got := self.part(parts)) is not None:  # no part is held here
                items, judgments = got
                del got
                self.append("items", items, paths["items"])
                del items
                self.append("judgments", judgments, paths["judgments"])
                del judgments
        finally:
            for w in self.writers.values():
                w.close()

    def part(self, parts: Iterator[pd.DataFrame]) -> tuple[pd.DataFrame, pd.DataFrame] | None:
        """The items first seen in the next part and its judgments (None: no part left).

        The part is read here, so that nothing else holds it while its tables are built.
        """
        frame = next(parts, None)
        if frame is None:
            return None
        columns, k, n_items = self._with_earlier(frame)
        del frame  # `tables` frees the part's columns once it has read them
        items, judgments = columns.tables(require_valid=False)
        if judgments is None or n_items != len(items):
            raise Fallback  # an earlier item's hash matched a key of another
        if k:
            items = items.iloc[k:].reset_index(drop=True)  # `schema.coerce`: a RangeIndex
            judgments = judgments.iloc[k:].reset_index(drop=True)
        self._check_judgment_keys(judgments)
        self.valid = self.valid or bool(judgments["valid"].any())
        return items, judgments

    def _with_earlier(self, frame: pd.DataFrame) -> tuple[_Columns, int, int]:
        """The part's records after the first records of its items seen in earlier parts.

        Returns their columns, how many records were put in front, and the part's items.
        The part's new items are remembered.
        """
        keys, _, first = _Columns(frame, self.fields).item_keys()
        h = _hashes(pd.DataFrame({k: v.take(first) for k, v in keys.items()}))
        del keys
        if len(np.unique(h)) != len(h):
            raise Fallback  # two items of the part share a hash
        at = np.searchsorted(self.item_hash, h)
        seen = at < len(self.item_hash)
        seen[seen] = self.item_hash[at[seen]] == h[seen]
        earlier = self._firsts(self.item_no[at[seen]])
        self._remember(frame.take(first[~seen]), h[~seen])
        whole = pd.concat([earlier, frame], ignore_index=True) if len(earlier) else frame
        return _Columns(whole, self.fields), len(earlier), len(first)

    def _firsts(self, numbers: np.ndarray) -> pd.DataFrame:
        """The first records of the items `numbers` (seen in earlier parts)."""
        if not len(numbers):
            return pd.DataFrame()
        which = np.searchsorted(self.starts, numbers, side="right") - 1
        pieces = [
            self.firsts[p].take(numbers[which == p] - self.starts[p]) for p in np.unique(which)
        ]
        return pd.concat(pieces, ignore_index=True)

    def _remember(self, firsts: pd.DataFrame, h: np.ndarray) -> None:
        """Keep the new items' first records; their hashes go into the sorted index."""
        base = int(self.starts[-1])
        numbers = base + np.arange(len(h))
        order = np.argsort(h, kind="stable")
        at = np.searchsorted(self.item_hash, h[order])
        self.item_hash = np.insert(self.item_hash, at, h[order])
        self.item_no = np.insert(self.item_no, at, numbers[order])
        self.firsts.append(firsts.reset_index(drop=True))
        self.starts = np.append(self.starts, base + len(h))

    def _check_judgment_keys(self, judgments: pd.DataFrame) -> None:
        """Fall back on a judgment key (or its hash) written in an earlier part."""
        h = _hashes(judgments[list(schema.JUDGMENTS.key)])
        at = np.searchsorted(self.judgment_hash, h)
        inside = at < len(self.judgment_hash)
        if (self.judgment_hash[at[inside]] == h[inside]).any() or len(np.unique(h)) != len(h):
            raise Fallback  # a repeated key: `schema.validate` names its row in one frame
        self.judgment_hash = _merged(self.judgment_hash, h)

    def append(self, kind: str, df: pd.DataFrame, path: Path) -> None:
        """Append `df` to the `kind` table at `path` as `tables.write` would convert it."""
        spec = _SPECS[kind]
        if kind == "items" and "cluster" in self.fields:
            schema.validate(df, spec, source=str(path))  # `with_clusters` came after new_items
        table = pa.Table.from_pandas(schema.coerce(df, spec), preserve_index=False)
        writer = self.writers.get(kind)
        if writer is None:
            writer = self.writers[kind] = pq.ParquetWriter(path, table.schema, compression="zstd")
        elif not table.schema.equals(writer.schema, check_metadata=False):
            raise Fallback  # another arrow type in a later part
        else:
            table = table.replace_schema_metadata(writer.schema.metadata)
        if table.num_rows:
            writer.write_table(table)
        if kind == "items":
            self.n_items += table.num_rows
        else:
            self.n_rows += table.num_rows


__all__ = ["stream_import"]
