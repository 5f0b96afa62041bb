"""Resolve the mapped fields of one record (`reshape.Record`) for the generic importer.

`Rows` reads a field as its column path, file-name capture or constant, applies its value
map (an unmapped value is `Unmapped`), and raises errors that name the file, line/row and
column. It also remembers which nested paths resolved somewhere, so a path that resolves in
no record at all (a typo) is an error rather than a silently empty column, unless the field
is `optional` (then an absent path, or a column no file has, reads as null).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pandas as pd

from judgelab.data.importers import fieldpath
from judgelab.data.importers.base import SourceFormatError
from judgelab.data.importers.mapping_spec import PSEUDO_COLUMNS, Field
from judgelab.data.importers.mapping_spec import normalise as _norm
from judgelab.data.importers.reshape import CAPTURED, Record

_TRUE = {"1", "true", "yes", "y", "t", "swapped"}
_FALSE = {"0", "false", "no", "n", "f", "", "none"}


def isnull(value: Any) -> bool:
    """Return True for None and scalar NA values (a list or dict is never null)."""
    if value is None:
        return True
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):
        return False


def text(value: Any) -> str | None:
    """Return a cell as text (None for null; lists and dicts as JSON; 2.0 as "2")."""
    if isnull(value):
        return None
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False)
    return _norm(value) if not isinstance(value, str) else value


class Rows:
    """Resolve mapped fields record by record; errors name the file, line/row and column."""

    def __init__(self, records: list[Record], fields: dict[str, Any]):
        self.fields = fields
        have = set(PSEUDO_COLUMNS)
        for rec in records:
            have.update(rec.row)
        self.paths: dict[str, str] = {}
        for key, f in fields.items():
            if isinstance(f, Field) and f.optional:
                continue  # absent from some or every record: null
            for path in paths_of(key, f):
                self.paths[path] = key
                if fieldpath.column_of(path) not in have and path not in have:
                    cols = sorted(c for c in have if not c.startswith("_"))
                    raise SourceFormatError(
                        records[0].loc.file,
                        f"mapping field '{key}' names a column that is not in the file "
                        f"(columns: {', '.join(map(str, cols))})",
                        column=path,
                    )
        self.found: set[str] = set()

    def resolve(self, rec: Record, path: str) -> Any:
        """Return the value at `path` in `rec` (None when absent)."""
        value = fieldpath.resolve(rec.row, path)
        if value is fieldpath.MISSING:
            return None
        self.found.add(path)
        return value

    def check_found(self, records: list[Record]) -> None:
        """Raise when a nested path resolved in no record at all (a typo in the path)."""
        for path, key in self.paths.items():
            if path in self.found or fieldpath.column_of(path) == path:
                continue
            sample = next((r for r in records if r.judged), records[0])
            keys = fieldpath.keys_at(sample.row, path)
            hint = f" (keys there in {sample.loc}: {', '.join(keys[:12])})" if keys else ""
            raise SourceFormatError(
                sample.loc.file,
                f"mapping field '{key}': path {path!r} is absent from every record{hint}",
                column=path,
            )

    def column(self, key: str) -> str | None:
        """Return the column path of field `key` (None: a constant or not mapped)."""
        f = self.fields.get(key)
        return f.column if isinstance(f, Field) else None

    def raw(self, key: str, rec: Record) -> Any:
        """Return field `key` of `rec` before its value map."""
        f = self.fields.get(key)
        if f is None:
            return None
        if f.capture is not None:
            return rec.row[CAPTURED + key]
        return f.value if f.column is None else self.resolve(rec, f.column)

    def get(self, key: str, rec: Record, default: Any = None) -> Any:
        """Return field `key` of `rec` through its value map (`Unmapped` when not in it)."""
        f = self.fields.get(key)
        if f is None:
            return default
        value = self.raw(key, rec)
        if f.map is not None and not isnull(value):
            return f.map.get(_norm(value), Unmapped(value))
        return default if isnull(value) else value


def paths_of(key: str, f: Any) -> list[str]:
    """Return the column paths a mapped field reads."""
    if key in ("meta", "judgment_meta"):
        return list(f.values())
    if isinstance(f, Field) and f.column is not None:
        return [f.column]
    return []


@dataclass(frozen=True)
class Unmapped:
    """A value the field's map does not list (the verdict is then invalid)."""

    raw: Any


def flag(rows: Rows, key: str, rec: Record) -> bool:
    """Return a true/false field of `rec` (an unmapped or other value is an error)."""
    value = rows.get(key, rec, default=False)
    if isinstance(value, Unmapped):
        raise rec.loc.error(f"value {value.raw!r} is not in the map", rows.column(key))
    text = _norm(value).lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise rec.loc.error(f"expected a true/false value, got {value!r}", rows.column(key))


def integer(rows: Rows, key: str, rec: Record, allowed: tuple[int, ...] | None) -> int:
    """Return a non-negative integer field of `rec` (in `allowed` when given)."""
    value = rows.get(key, rec, default=0)
    try:
        out = int(_norm(value)) if not isinstance(value, Unmapped) else None
    except ValueError:
        out = None
    if out is None or out < 0 or (allowed is not None and out not in allowed):
        raise rec.loc.error(
            f"expected {allowed or 'a non-negative integer'}, got {value!r}", rows.column(key)
        )
    return out


def jsonable(value: Any) -> Any:
    """Return a cell as a JSON-friendly value (numpy scalars and arrays as Python values)."""
    if isinstance(value, (list, dict)):
        return value
    if hasattr(value, "tolist"):  # numpy scalars and arrays (parquet list cells)
        return value.tolist()
    return None if isnull(value) else value


__all__ = ["Rows", "Unmapped", "flag", "integer", "isnull", "jsonable", "paths_of", "text"]
