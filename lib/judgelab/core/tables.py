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
from typing import TYPE_CHECKING, Any, BinaryIO

import pyarrow as pa
import pyarrow.parquet as pq

from judgelab.core.atomic import atomic_path as atomic_path
from judgelab.core.atomic import current_umask as current_umask
from judgelab.core.atomic import write_text as write_text
from judgelab.errors import JsonlError as JsonlError
from judgelab.errors import LineTooLong as LineTooLong
from judgelab.errors import NotUTF8 as NotUTF8
from judgelab.errors import TableError as TableError

if TYPE_CHECKING:  # pandas and the schema's checks load on first use: `judgelab judge` reads
    import pandas as pd  # specs and writes tables without them (issue 38, item 3)

    from judgelab.core import schema


def _spec(kind: str) -> schema.TableSpec:
    from judgelab.core import schema

    try:
        return schema.SPECS[kind]
    except KeyError:
        raise ValueError(
            f"unknown table kind {kind!r}; expected one of {sorted(schema.SPECS)}"
        ) from None


def write(df: pd.DataFrame, path: str | os.PathLike[str], kind: str) -> Path:
    """Validate `df` as a `kind` table ("items" or "judgments") and write it atomically."""
    from judgelab.core import schema

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
    from judgelab.core import schema

    spec = _spec(kind)
    p = Path(path)
    if not p.exists():
        raise TableError(f"{p}: no such {kind} table")
    try:
        table = pq.read_table(p, columns=columns)
    except (pa.ArrowException, OSError) as exc:
        raise TableError(f"{p}: not a readable parquet {kind} table ({exc})") from None
    # each column's Arrow buffers are freed as it is converted: 10^7 items peaked at 3.5 GB
    # and kept 2.4 GB, now 3.0 and 1.9 GB (the table is not used again)
    df = table.to_pandas(self_destruct=True, split_blocks=True)
    del table
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


MAX_LINE_BYTES_ENV = "JUDGELAB_MAX_LINE_BYTES"
DEFAULT_MAX_LINE_BYTES = 64 * 2**20


def max_line_bytes() -> int:
    """Return the per-line limit of JSON-lines records (`JUDGELAB_MAX_LINE_BYTES`, 64 MiB).

    A 400 MB line costs gigabytes to parse; a longer one is refused before it is parsed.
    """
    raw = os.environ.get(MAX_LINE_BYTES_ENV, "").strip()
    if not raw:
        return DEFAULT_MAX_LINE_BYTES
    try:
        limit = int(raw)
    except ValueError:
        limit = 0
    if limit <= 0:
        raise TableError(f"{MAX_LINE_BYTES_ENV}={raw!r}: expected a positive number of bytes")
    return limit


def too_long(source: str, lineno: int, limit: int) -> LineTooLong:
    """Return the `LineTooLong` of line `lineno` of `source` over `limit` bytes."""
    return LineTooLong(
        source,
        f"line longer than {limit:,} bytes, the limit per JSON-lines record (refused before "
        f"parsing; set {MAX_LINE_BYTES_ENV} to raise it)",
        lineno,
    )


def _parse_line(line: str, source: str, lineno: int, limit: int) -> dict[str, Any] | None:
    """Return the object on one JSON-lines line (None for a blank line); checks size first."""
    n = len(line)
    if n > limit or (4 * n > limit and len(line.encode("utf-8", "surrogatepass")) > limit):
        raise too_long(source, lineno, limit)
    if not line.strip():
        return None
    try:
        value = json.loads(line)
    except json.JSONDecodeError as exc:
        raise JsonlError(source, f"malformed JSON ({exc.msg})", lineno) from None
    except RecursionError:
        raise JsonlError(source, "JSON nested too deeply to parse", lineno) from None
    if not isinstance(value, dict):
        raise JsonlError(source, f"expected a JSON object, got {type(value).__name__}", lineno)
    return value


def parse_jsonl(text: str, *, source: str) -> list[tuple[int, dict[str, Any]]]:
    """Parse JSON-lines text into (line number, object) pairs; blank lines are skipped.

    Raises:
        JsonlError: a line is not JSON, not an object, nested too deeply or longer than
            `max_line_bytes()` (`LineTooLong`), or there is no record at all.
    """
    limit = max_line_bytes()
    records = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        value = _parse_line(line, source, lineno, limit)
        if value is not None:
            records.append((lineno, value))
    if not records:
        raise JsonlError(source, "empty file (no JSON records)")
    return records


SKIP_CHUNK = 2**20


def bounded_lines(fh: BinaryIO, limit: int) -> Iterator[bytes | None]:
    """Yield the lines of a binary file (line endings kept); None for one over `limit` bytes.

    No line is held whole once it is over `limit` bytes (its line ending not counted): at
    most `limit + 2` bytes are read to tell, then None is yielded, and only when the caller
    asks for the next line is the rest skipped, in chunks of at most `SKIP_CHUNK` bytes (a
    caller that stops at None reads no further).
    """
    while chunk := fh.readline(limit + 2):
        ending = 2 if chunk.endswith(b"\r\n") else 1 if chunk.endswith(b"\n") else 0
        if len(chunk) - ending <= limit:
            yield chunk
            continue
        yield None
        while not chunk.endswith(b"\n") and (chunk := fh.readline(SKIP_CHUNK)):
            pass


def _utf8_lines(path: Path, limit: int) -> Iterator[tuple[int, str]]:
    """Yield the (line number, text) of a UTF-8 file, reading at most `limit` bytes a line.

    Lines are numbered as `str.splitlines` numbers them, and undecodable bytes raise the
    `NotUTF8` that `read_utf8` raises; a line over `limit` raises `LineTooLong` unread.
    """
    source, offset, physical, lineno, head = str(path), 0, 1, 0, None
    with open(path, "rb") as fh:
        for chunk in bounded_lines(fh, limit):
            if chunk is None:
                raise too_long(source, lineno + 1, limit)
            if head is None:
                chunk = chunk[3:] if chunk.startswith(b"\xef\xbb\xbf") else chunk
                head = chunk[:2]
            try:
                text = chunk.decode("utf-8")
            except UnicodeDecodeError as exc:
                byte = chunk[exc.start : exc.start + 1].hex()
                where = offset + exc.start
                problem = f"not UTF-8 text (byte 0x{byte} at offset {where}: {exc.reason})"
                if head in (b"\xff\xfe", b"\xfe\xff"):
                    problem += "; the file looks like UTF-16 (save it as UTF-8)"
                raise NotUTF8(source, problem, physical) from None
            for line in text.splitlines():
                lineno += 1
                yield lineno, line
            offset, physical = offset + len(chunk), physical + 1


def read_jsonl(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Read a JSON-lines file line by line; a bad line raises `TableError` naming file and line.

    No line longer than `max_line_bytes()` is ever read whole (`LineTooLong`).
    """
    p, limit = Path(path), max_line_bytes()
    records = []
    for lineno, line in _utf8_lines(p, limit):
        value = _parse_line(line, str(p), lineno, limit)
        if value is not None:
            records.append(value)
    if not records:
        raise JsonlError(str(p), "empty file (no JSON records)")
    return records


# --- all-or-nothing writes of several files (imports: items + judgments + manifest) ---


def stage_path(target: Path) -> Path:
    """Create an empty temporary file beside `target` (the mode `open` gives); return it."""
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        os.fchmod(fd, 0o666 & ~current_umask())
    finally:
        os.close(fd)
    return Path(tmp_name)


def fsync_file(path: Path) -> None:
    """Flush `path` to disk."""
    with open(path, "rb+") as fh:
        os.fsync(fh.fileno())


def _stage(target: Path, content: pd.DataFrame | str | Path, kind: str) -> Path:
    """Write `content` to a fsynced temporary file beside `target`; return its path.

    A `Path` is a file already staged (`stage_path`, written and fsynced): it is returned.
    """
    if isinstance(content, Path):
        return content
    tmp = stage_path(target)
    try:
        if isinstance(content, str):
            tmp.write_text(content, encoding="utf-8")
        else:
            from judgelab.core import schema

            spec = _spec(kind)
            schema.validate(content, spec, source=str(target))
            table = pa.Table.from_pandas(schema.coerce(content, spec), preserve_index=False)
            pq.write_table(table, tmp, compression="zstd")
        fsync_file(tmp)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return tmp


def _backup(target: Path) -> Path | None:
    """Keep the current `target` under a hidden name (a hard link, else a copy)."""
    if not target.exists():
        return None
    backup = target.with_name(f".{target.name}.{os.getpid()}.bak")
    backup.unlink(missing_ok=True)
    try:
        os.link(target, backup)
    except OSError:
        import shutil

        shutil.copy2(target, backup)
    return backup


def write_all(entries: list[tuple[Path, pd.DataFrame | str | Path | None, str]]) -> list[Path]:
    """Write several files all-or-nothing: every one becomes visible, or none does.

    Each entry is `(path, content, kind)`: a DataFrame is validated and written as a `kind`
    table, a str as UTF-8 text, a Path is a file the caller staged beside `path`
    (`stage_path`, fsynced; it is renamed or, on failure, removed), None deletes `path`.
    Every new file is first staged and fsynced beside its target (a full disk fails here,
    before anything is visible); only then are they renamed into place. A failure while
    renaming puts every earlier target back.
    """
    staged: list[tuple[Path, Path | None]] = []
    try:
        for path, content, kind in entries:
            target = Path(path)
            staged.append((target, None if content is None else _stage(target, content, kind)))
    except BaseException:
        for _, tmp in staged:
            if tmp is not None:
                tmp.unlink(missing_ok=True)
        raise
    done: list[tuple[Path, Path | None]] = []
    try:
        for target, tmp in staged:
            backup = _backup(target)
            done.append((target, backup))
            if tmp is None:
                target.unlink(missing_ok=True)
            else:
                os.replace(tmp, target)
    except BaseException:
        for target, backup in reversed(done):
            if backup is not None:
                os.replace(backup, target)
            else:
                target.unlink(missing_ok=True)
        for _, tmp in staged:
            if tmp is not None:
                tmp.unlink(missing_ok=True)
        raise
    for _, backup in done:
        if backup is not None:
            backup.unlink(missing_ok=True)
    for folder in {t.parent for t, _ in staged if t.parent.exists()}:
        with contextlib.suppress(OSError):
            dir_fd = os.open(folder, os.O_RDONLY)
            try:
                os.fsync(dir_fd)
            finally:
                os.close(dir_fd)
    return [t for t, tmp in staged if tmp is not None]
