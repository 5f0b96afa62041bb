"""Parquet tables on disk: validated on read and on write, written atomically.

A write goes to a temporary file in the destination folder, is flushed and fsynced, then
renamed over the target with `os.replace`; a crash at any moment leaves either the old table
or the new one, never a half-written file at the target path.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from judgelab.core import schema
from judgelab.errors import JsonlError as JsonlError
from judgelab.errors import NotUTF8 as NotUTF8
from judgelab.errors import TableError as TableError


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike[str], *, suffix: str = "") -> Iterator[Path]:
    """Yield a temporary path beside `path`; on success rename it over `path`.

    On any exception the temporary file is removed and `path` is left untouched.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(
        prefix=f".{target.name}.", suffix=f".tmp{suffix}", dir=target.parent
    )
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        yield tmp
        with open(tmp, "rb+") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp, target)
        with contextlib.suppress(OSError):
            dir_fd = os.open(target.parent, os.O_RDONLY)
            try:
                os.fsync(dir_fd)
            finally:
                os.close(dir_fd)
    finally:
        if tmp.exists():
            tmp.unlink()


def write_text(path: str | os.PathLike[str], text: str) -> Path:
    """Write `text` to `path` atomically (UTF-8)."""
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return Path(path)


def _spec(kind: str) -> schema.TableSpec:
    try:
        return schema.SPECS[kind]
    except KeyError:
        raise ValueError(
            f"unknown table kind {kind!r}; expected one of {sorted(schema.SPECS)}"
        ) from None


def write(df: pd.DataFrame, path: str | os.PathLike[str], kind: str) -> Path:
    """Validate `df` as a `kind` table ("items" or "judgments") and write it atomically."""
    spec = _spec(kind)
    schema.validate(df, spec, source=str(path))
    table = pa.Table.from_pandas(schema.coerce(df, spec), preserve_index=False)
    with atomic_path(path) as tmp:
        pq.write_table(table, tmp, compression="zstd")
    return Path(path)


def read(
    path: str | os.PathLike[str], kind: str, *, columns: list[str] | None = None
) -> pd.DataFrame:
    """Read a `kind` table from parquet, validate it, and return it with canonical dtypes.

    Raises:
        TableError: the file is missing, not parquet, or truncated (the message names it).
        schema.SchemaError: the content violates the schema (names file, column, row, key).
    """
    spec = _spec(kind)
    p = Path(path)
    if not p.exists():
        raise TableError(f"{p}: no such {kind} table")
    try:
        table = pq.read_table(p, columns=columns)
    except (pa.ArrowException, OSError) as exc:
        raise TableError(f"{p}: not a readable parquet {kind} table ({exc})") from None
    df = table.to_pandas()
    if columns is not None:
        return df
    schema.validate(df, spec, source=str(p))
    return schema.coerce(df, spec)


def write_items(df: pd.DataFrame, path: str | os.PathLike[str]) -> Path:
    """Write an items table atomically after validating it."""
    return write(df, path, "items")


def write_judgments(df: pd.DataFrame, path: str | os.PathLike[str]) -> Path:
    """Write a judgments table atomically after validating it."""
    return write(df, path, "judgments")


def read_items(path: str | os.PathLike[str]) -> pd.DataFrame:
    """Read and validate an items table."""
    return read(path, "items")


def read_judgments(path: str | os.PathLike[str]) -> pd.DataFrame:
    """Read and validate a judgments table."""
    return read(path, "judgments")


def read_utf8(path: str | os.PathLike[str]) -> str:
    """Return the text of a UTF-8 file (a leading BOM is dropped).

    Raises:
        NotUTF8: the bytes are not UTF-8; the message names the file, the line and the byte,
            and says so when the file looks like UTF-16 (as some spreadsheet exports are).
    """
    data = Path(path).read_bytes()
    body = data[3:] if data.startswith(b"\xef\xbb\xbf") else data
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = body.count(b"\n", 0, exc.start) + 1
        byte = body[exc.start : exc.start + 1].hex()
        problem = f"not UTF-8 text (byte 0x{byte} at offset {exc.start}: {exc.reason})"
        if body[:2] in (b"\xff\xfe", b"\xfe\xff"):
            problem += "; the file looks like UTF-16 (save it as UTF-8)"
        raise NotUTF8(str(path), problem, line) from None


def parse_jsonl(text: str, *, source: str) -> list[tuple[int, dict[str, Any]]]:
    """Parse JSON-lines text into (line number, object) pairs; blank lines are skipped.

    Raises:
        JsonlError: a line is not JSON or not an object, or there is no record at all.
    """
    records = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as exc:
            raise JsonlError(source, f"malformed JSON ({exc.msg})", lineno) from None
        if not isinstance(value, dict):
            raise JsonlError(source, f"expected a JSON object, got {type(value).__name__}", lineno)
        records.append((lineno, value))
    if not records:
        raise JsonlError(source, "empty file (no JSON records)")
    return records


def read_jsonl(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Read a JSON-lines file; a bad line raises `TableError` naming the file and line."""
    p = Path(path)
    return [record for _, record in parse_jsonl(read_utf8(p), source=str(p))]
