"""Read one data file's mapped fields column-wise, in every shape `mapped_fast` takes.

`read_frame(path, fields)` returns one pandas column per mapped column path (named by the
path, as `mapped_fast._Columns` reads them), row for row the records `reshape.read` would
make: JSONL is streamed in record batches by arrow's reader and parquet read natively, each
batch cut down at once to the values the mapping reads (a nested path `eval.verdict` is
the struct's field), so the rest of the file is never held; `explode` makes one row per list
element (`_index` its position) and a `join` that adds rows one row per output row (`_join`
the output file's name), both column-wise. `_file` is the file's name.

It raises `Fallback` — the record path runs and raises its usual error, or handles the
shape — on anything it does not read exactly as the record path does: invalid UTF-8, a too
long or unparsable line, a schema that changes between batches, a path through JSON text or
beyond a list's end, a value of another type than text, integer, boolean or null, an empty or null
list to explode (an item without judgments), a join key that is empty, repeats, is unknown,
or an item some output file lacks (the import's notes would count it).
"""

from __future__ import annotations

import codecs
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from pyarrow import json as pa_json

from judgelab.core import tables
from judgelab.data.importers import fieldpath
from judgelab.data.importers.base import SourceFormatError
from judgelab.data.importers.mapping_spec import PSEUDO_COLUMNS, Field
from judgelab.data.importers.mapping_spec import normalise as _norm
from judgelab.data.importers.records import read_records
from judgelab.data.importers.reshape import _joined_file

JSONL = (".jsonl", ".ndjson")
SUFFIXES = (".csv", ".tsv", *JSONL, ".parquet")
_JOINED = "joined"
_BLOCK = 1 << 22  # bytes of JSONL a batch (at least two of its longest lines)
_ROWS = 1 << 16  # rows of parquet a batch
_FRAME = 1 << 18  # rows of a part that `iter_frames` yields (at least)


class Fallback(Exception):
    """The record path must run (it raises the precise error, or handles the shape)."""


def read_frame(path: Path, fields: dict[str, Any]) -> pd.DataFrame:
    """The mapped column paths of `path`'s records as a frame (see the module docstring)."""
    frames = list(iter_frames(path, fields, rows=None))
    return frames[0]


def iter_frames(path: Path, fields: dict[str, Any], rows: int | None = _FRAME) -> Any:
    """`read_frame`'s frame in consecutive parts of at least `rows` rows (None: one part).

    A joined file's rows come a range of items at a time (each item's rows in one part;
    the files themselves are read whole: their rows are aligned by key). A column whose
    type changes from one part to the next falls back, as it does within one frame.
    """
    explode, join = fields.get("explode"), fields.get("join")
    if (explode is not None and join is not None) or (explode and explode.keys is not None):
        raise Fallback
    wanted = sorted({f.column for f in fields.values() if isinstance(f, Field) and f.column})
    base, under = _split(wanted, explode, join)
    if join is not None:
        if join.adds != "rows":
            raise Fallback
        parts: Any = _joined(path, join, base, under, rows)
    elif explode is not None:
        parts = _grouped(_exploded(path, explode.path, base, under), rows)
    else:
        parts = _grouped(_read(path, base), rows)
    types, total = None, 0
    for cols, n in parts:
        if n == 0:
            continue
        now = {p: c.type for p, c in cols.items()}
        if types is not None and now != types:
            raise Fallback  # another type in a later part
        types, total = now, total + n
        if "_file" in wanted:
            cols["_file"] = pa.chunked_array([pa.repeat(pa.scalar(path.name), n)])
        yield pd.DataFrame({p: _pandas(cols.pop(p)) for p in wanted}, index=pd.RangeIndex(n))
    if total == 0:
        raise Fallback


def _split(wanted: list[str], explode: Any, join: Any) -> tuple[list[str], list[str]]:
    """The paths read in the record (`base`) and inside the exploded list or joined row."""
    base, under = [], []
    for p in wanted:
        if p in PSEUDO_COLUMNS:
            ok = p == "_file" or (p == "_index" and explode) or (p == "_join" and join)
            if not ok:
                raise Fallback
        elif join is not None and _within(p, _JOINED):
            under.append(p)
        elif explode is not None and (p == explode.path or _within(p, explode.path)):
            under.append(p)
        else:
            base.append(p)
    return base, under


def _grouped(batches: Any, rows: int | None) -> Any:
    """Consecutive batches' columns joined into parts of at least `rows` rows (None: one)."""
    chunks: dict[str, list] = {}
    n = 0
    for cols, m in batches:
        for p, arr in cols.items():
            chunks.setdefault(p, []).append(arr)
        n += m
        if rows is not None and n >= rows:
            part, chunks, m = _chunked(chunks), {}, n  # `part` is emptied by the reader
            n = 0
            yield part, m
    if n:
        yield _chunked(chunks), n
    elif rows is None:
        raise Fallback  # no records


def _within(path: str, head: str) -> bool:
    """Whether `path` goes into `head` (`head.key` or `head[i]`)."""
    return path.startswith(head) and path[len(head) : len(head) + 1] in (".", "[")


_TEXT = (pa.string(), pa.large_string())


def _pandas(col: pa.ChunkedArray) -> Any:
    """An arrow column as `mapped_fast` reads it: arrow strings, or Python values."""
    if col.type in _TEXT:
        return pd.array(col, dtype="string")
    return pd.Series(col.to_pylist(), dtype=object)


def _leaf(
    batch: pa.RecordBatch | pa.Table, path: str, *, lists: bool = False, literal: bool = True
) -> Any:
    """The value at `path` of every row: a column, or a field of nested records.

    A column named like the whole path is read first (`literal`), as `fieldpath.resolve`
    does in a record; inside a joined row it is not (the path goes through `joined`).
    """
    names = batch.schema.names
    if path in names and (literal or ("." not in path and "[" not in path)):
        arr, steps = batch.column(path), ()
    else:
        head, steps = fieldpath.parse(path)
        if head not in names:
            raise Fallback
        arr = batch.column(head)
    for step in steps:
        arr = _index(arr, step) if isinstance(step, int) else _field(arr, step)
    return _plain(arr, lists=lists)


def _field(arr: Any, key: str) -> Any:
    """Field `key` of records (null where the record is); a step into JSON text falls back."""
    if not pa.types.is_struct(arr.type) or arr.type.get_field_index(key) < 0:
        raise Fallback
    return pc.struct_field(arr, key)


def _index(arr: Any, i: int) -> Any:
    """Element `i` of lists (null where the list is); a list too short for it falls back."""
    if not (pa.types.is_list(arr.type) or pa.types.is_large_list(arr.type)) or i < 0:
        raise Fallback
    lengths = pc.list_value_length(arr)
    if pc.any(pc.less_equal(lengths, i)).as_py():
        raise Fallback  # MISSING in the record path (and perhaps an error)
    return pc.list_element(arr, i)


def _plain(arr: Any, *, lists: bool = False) -> Any:
    """`arr` as text, int64, bool or null values (a list too, if `lists`); else fall back."""
    t = arr.type
    if pa.types.is_dictionary(t):
        arr, t = arr.cast(t.value_type), t.value_type
    if t in _TEXT or t in (pa.bool_(), pa.null(), pa.int64()):
        return arr
    if pa.types.is_integer(t):
        try:
            return arr.cast(pa.int64())
        except pa.ArrowInvalid:  # an unsigned integer beyond int64
            raise Fallback from None
    if lists and (pa.types.is_list(t) or pa.types.is_large_list(t)):
        return arr
    raise Fallback


def _batches(path: Path, heads: list[str] | None = None) -> Any:
    """The file's record batches (a CSV/TSV file as one); `heads`: the columns parquet reads."""
    suffix = path.suffix.lower()
    if suffix in JSONL:
        longest = _checked_utf8(path)
        opts = pa_json.ReadOptions(block_size=max(_BLOCK, 2 * longest + 2))
        try:
            yield from pa_json.open_json(path, read_options=opts)
        except (pa.ArrowException, OSError):
            raise Fallback from None
    elif suffix == ".parquet":
        try:
            pf = pq.ParquetFile(path)
            names = set(pf.schema_arrow.names)
            cols = None if heads is None else [h for h in heads if h in names]
            yield from pf.iter_batches(batch_size=_ROWS, columns=cols)
        except (pa.ArrowException, OSError):
            raise Fallback from None
    elif suffix in (".csv", ".tsv"):
        try:
            df = read_records(path, compact=True)[0]
        except SourceFormatError:
            raise Fallback from None
        yield pa.RecordBatch.from_pandas(df, preserve_index=False)
    else:
        raise Fallback


def _checked_utf8(path: Path) -> int:
    """The longest line of a UTF-8 file, read in blocks.

    Falls back on bad bytes, a BOM, no data, or a line over the record path's limit.
    """
    check = codecs.getincrementaldecoder("utf-8")()
    longest, run, data = 0, 0, False
    try:
        with path.open("rb") as fh:
            head = fh.read(3)
            if head == b"\xef\xbb\xbf":
                raise Fallback
            fh.seek(0)
            while block := fh.read(1 << 24):
                check.decode(block)
                data = data or bool(block.strip())
                ends = np.flatnonzero(np.frombuffer(block, dtype=np.uint8) == 10)
                if len(ends):
                    longest = max(longest, run + int(ends[0]), int(np.diff(ends).max(initial=0)))
                    run = len(block) - int(ends[-1]) - 1
                else:
                    run += len(block)
            check.decode(b"", final=True)
    except (UnicodeDecodeError, OSError):
        raise Fallback from None
    longest = max(longest, run)
    if not data or longest > tables.max_line_bytes():
        raise Fallback
    return longest


def _heads(paths: list[str]) -> list[str]:
    return sorted({p if "." not in p and "[" not in p else fieldpath.column_of(p) for p in paths})


def _read(path: Path, paths: list[str], inner: tuple[str, ...] = ()) -> Any:
    """The values at `paths` of every record, batch by batch (`_leaf`; `inner`: not literal)."""
    for batch in _batches(path, _heads(paths) + sorted(paths)):
        yield {p: _leaf(batch, p, literal=p not in inner) for p in paths}, batch.num_rows


def _chunked(chunks: dict[str, list]) -> dict[str, pa.ChunkedArray]:
    try:
        return {p: pa.chunked_array(c) for p, c in chunks.items() if c}
    except (pa.ArrowException, ValueError):  # another type in a later batch
        raise Fallback from None


def _exploded(path: Path, at: str, base: list[str], under: list[str]) -> Any:
    """One row per element of the list at `at`; `under` read in the element, `_index`."""
    for batch in _batches(path, _heads([*base, at]) + sorted([*base, at])):
        lists = _leaf(batch, at, lists=True)
        if not (pa.types.is_list(lists.type) or pa.types.is_large_list(lists.type)):
            raise Fallback
        lengths = pc.list_value_length(lists).to_numpy(zero_copy_only=False)
        if lists.null_count or (lengths == 0).any():
            raise Fallback  # an item without judgments: the record path keeps it
        parent = pc.list_parent_indices(lists)
        flat = pc.list_flatten(lists)
        starts = np.cumsum(lengths) - lengths
        cols = {"_index": pa.array(np.arange(len(flat)) - np.repeat(starts, lengths))}
        for p in base:
            cols[p] = _leaf(batch, p).take(parent)
        element = pa.table({"x": flat})
        if set(under) & set(batch.schema.names):
            raise Fallback  # a column named like the path is read instead (`fieldpath`)
        for p in under:
            cols[p] = _leaf(element, "x" + p[len(at) :])
        yield cols, len(flat)


def _keys(col: pa.ChunkedArray) -> np.ndarray:
    """The join key of every row as the record path compares them (`normalise`d text)."""
    codes, uniq = pd.factorize(_pandas(col), use_na_sentinel=True)
    if (codes < 0).any():
        raise Fallback  # an empty key
    return np.array([_norm(u) for u in uniq.tolist()], dtype=object)[codes]


def _joined(
    path: Path, join: Any, base: list[str], under: list[str], rows: int | None
) -> Iterator[tuple[dict[str, pa.ChunkedArray], int]]:
    """One row per output row of every joined file, in item order, then the files' order.

    At least `rows` rows a part, whole items (None: one part); a part holds its items'
    texts once per file (at 10^7 rows all at once: 6.9 GB).
    """
    extra = [join.left] if join.left is not None and join.left not in base else []
    cols, n = next(_grouped(_read(path, base + extra), None))
    left = pd.Index(_keys(cols[join.left])) if join.left is not None else None
    if left is not None and not left.is_unique:
        raise Fallback
    if any(p[len(_JOINED)] != "." for p in under):
        raise Fallback  # joined[0]...
    rel = [p[len(_JOINED) + 1 :] for p in under]
    names, parts, where = list(join.files), [], []
    for k, (name, file) in enumerate(join.files.items()):
        try:
            other = _joined_file(path, name, file)
        except SourceFormatError:
            raise Fallback from None
        if not other.is_file():
            raise Fallback
        if join.right in rel and ("." in join.right or "[" in join.right):
            raise Fallback  # read as a column for the key, through records for the value
        right = [join.right] if join.right is not None and join.right not in rel else []
        got, m = next(_grouped(_read(other, rel + right, inner=tuple(rel)), None))
        if m != n:
            raise Fallback  # a line count that differs, or an item without this output
        if left is None:
            idx = np.arange(n)
        else:
            idx = left.get_indexer(pd.Index(_keys(got[join.right])))
            if (idx < 0).any() or len(np.unique(idx)) != n:
                raise Fallback  # an unknown or repeated key
        parts.append(pa.table({r: got[r] for r in rel} or {"x": [0] * m}))
        where.append(idx * len(names) + k)
    try:
        joined = pa.concat_tables(parts, promote_options="default")
    except (pa.ArrowException, ValueError):
        raise Fallback from None
    k = len(names)
    src = np.empty(n * k, dtype=np.int64)
    src[np.concatenate(where)] = np.arange(n * k)
    per = n if rows is None else max(1, -(-rows // k))  # items a part
    for a in range(0, n, per):
        b = min(n, a + per)
        out = {p: cols[p].take(np.repeat(np.arange(a, b), k)) for p in base}
        for p, r in zip(under, rel, strict=True):
            out[p] = joined.column(r).take(src[a * k : b * k])
        out["_join"] = pa.chunked_array([pa.array(np.tile(np.array(names, dtype=object), b - a))])
        yield out, (b - a) * k


__all__ = ["SUFFIXES", "Fallback", "read_frame"]
