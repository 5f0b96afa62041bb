"""Read a data file of judgments (CSV, TSV, JSONL, JSON, parquet, TXT) into a frame.

`read_records(path)` returns the frame and the unit its index counts in: JSONL and TXT rows
keep their line number ("line"), other rows are numbered from 1 ("row"), so every error a
later step raises can name the place in the file. JSON values keep their type: an integer
column with missing values holds ints and None (never 6603.0), and so does a parquet
integer column with nulls.
"""

from __future__ import annotations

import codecs
import io
import json
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from judgelab.core import tables
from judgelab.data.importers.base import SourceFormatError


def read_records(
    path: str | Path, *, compact: bool = False, txt_column: str | None = None
) -> tuple[pd.DataFrame, str]:
    """Read a data file into a frame of strings; return it and the row unit ("line"/"row").

    CSV/TSV cells are read as text (empty -> null: None in an object column, or with
    `compact` NaN in the parser's string column, a fraction of the memory); JSONL rows keep
    their line number in the index so errors can name it. A `.txt` file holds one value a
    line, read as the column `txt_column` (required for one; an empty line is null).
    """
    p = Path(path)
    if not p.is_file():
        raise SourceFormatError(str(p), "file not found")
    if p.stat().st_size == 0:
        raise SourceFormatError(str(p), "empty file")
    suffix = p.suffix.lower()
    try:
        if suffix in (".csv", ".tsv"):
            df = pd.read_csv(io.BytesIO(_utf8_bytes(p)), encoding="utf-8", **csv_options(p))
            if not compact:
                for col in df.columns[df.isna().any().to_numpy()]:
                    df[col] = df[col].astype(object).where(df[col].notna(), None)
            df.index = pd.RangeIndex(1, len(df) + 1)
            unit = "row"
        elif suffix in (".jsonl", ".ndjson"):
            df, unit = _read_jsonl(p), "line"
        elif suffix == ".txt":
            df, unit = _read_txt(p, txt_column), "line"
        elif suffix == ".json":
            data = json.loads(tables.read_utf8(p))
            if (
                isinstance(data, dict)
                and len(data) == 1
                and isinstance(next(iter(data.values())), list)
            ):
                data = next(iter(data.values()))
            if not isinstance(data, list) or not all(isinstance(r, dict) for r in data):
                raise SourceFormatError(str(p), "expected a JSON list of objects")
            df = _ints_kept(pd.DataFrame(data), data)
            df.index = pd.RangeIndex(1, len(df) + 1)
            unit = "row"
        elif suffix == ".parquet":
            df = _read_parquet(p)
            df.index = pd.RangeIndex(1, len(df) + 1)
            unit = "row"
        else:
            raise SourceFormatError(
                str(p),
                f"unsupported file type {suffix!r} (csv, tsv, jsonl, json, parquet, txt)",
            )
    except tables.NotUTF8 as exc:
        raise SourceFormatError(exc.file, exc.problem, line=exc.line) from None
    except json.JSONDecodeError as exc:
        raise SourceFormatError(str(p), f"malformed JSON ({exc.msg})", line=exc.lineno) from None
    except RecursionError:  # issue 19 item 18
        raise SourceFormatError(str(p), "JSON nested too deeply to parse") from None
    except (pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise SourceFormatError(str(p), f"unreadable {suffix[1:]} ({exc})") from None
    except (OSError, ValueError) as exc:
        if isinstance(exc, SourceFormatError):
            raise
        raise SourceFormatError(str(p), f"unreadable {suffix[1:]} ({exc})") from None
    if len(df) == 0:
        raise SourceFormatError(str(p), "empty file (no data rows)")
    return df, unit


def csv_options(path: Path) -> dict[str, Any]:
    """Return the `read_csv` options of a CSV/TSV file read as text (an empty cell: null)."""
    sep = "\t" if path.suffix.lower() == ".tsv" else ","
    return {"sep": sep, "dtype": str, "keep_default_na": False, "na_values": [""]}


def _utf8_bytes(p: Path) -> bytes:
    """Return the bytes of a UTF-8 file without its BOM (`tables.read_utf8` names bad bytes).

    The parser reads bytes: a decoded copy in a `StringIO` costs four bytes a character.
    """
    data = p.read_bytes()
    body = data[3:] if data.startswith(b"\xef\xbb\xbf") else data
    check = codecs.getincrementaldecoder("utf-8")()
    try:  # in slices: no decoded copy of the whole file
        for start in range(0, len(body), 1 << 24):
            check.decode(body[start : start + (1 << 24)])
        check.decode(b"", final=True)
    except UnicodeDecodeError:
        tables.read_utf8(p)  # raises NotUTF8 naming the line and byte
        raise
    return body


def _read_jsonl(p: Path) -> pd.DataFrame:
    try:
        parsed = tables.parse_jsonl(tables.read_utf8(p), source=str(p))
    except (tables.JsonlError, tables.NotUTF8) as exc:
        raise SourceFormatError(exc.file, exc.problem, line=exc.line) from None
    records = [rec for _, rec in parsed]
    return _ints_kept(pd.DataFrame(records, index=pd.Index([n for n, _ in parsed])), records)


def _ints_kept(frame: pd.DataFrame, records: list[dict]) -> pd.DataFrame:
    """`frame` with each column of JSON integers and nulls as ints and None (not 6603.0).

    pandas reads such a column as floats; it is rebuilt from the records' own values.
    """
    for col in frame.columns[
        (frame.dtypes == "float64").to_numpy() & frame.isna().any().to_numpy()
    ]:
        values = [rec.get(col) for rec in records]
        if all(v is None or (isinstance(v, int) and not isinstance(v, bool)) for v in values):
            frame[col] = pd.Series(values, index=frame.index, dtype=object)
    return frame


def _read_parquet(p: Path) -> pd.DataFrame:
    """A parquet file's columns as pandas reads them, with integers kept as integers.

    pandas turns an integer column with nulls into floats (6603.0): such a column is read
    again from arrow as Python ints and None.
    """
    frame = pd.read_parquet(p)
    for field in pq.read_schema(p):
        if (
            pa.types.is_integer(field.type)
            and field.name in frame.columns
            and frame[field.name].dtype.kind == "f"
        ):
            values = pq.read_table(p, columns=[field.name]).column(0).to_pylist()
            frame[field.name] = pd.Series(values, index=frame.index, dtype=object)
    return frame


def _read_txt(p: Path, column: str | None) -> pd.DataFrame:
    """One value a line (line numbers kept; a trailing newline ends the last line)."""
    if column is None:
        raise SourceFormatError(
            str(p),
            "a .txt file holds one value a line: name its column with the mapping key "
            "txt_column: NAME",
        )
    lines = tables.read_utf8(p).splitlines()
    values = [line if line.strip() else None for line in lines]
    return pd.DataFrame({column: values}, index=pd.RangeIndex(1, len(values) + 1), dtype=object)


__all__ = ["csv_options", "read_records"]
