"""Turn the data files of one mapped import into records: globs, joins, exploded lists.

Each `Record` is one row the mapping is applied to, with the place it came from (`Loc`:
file, line or row) so every later error can name it. Steps, in order, per data file:

1. read it (`records.read_records`); every record gets `_file` (the file's name) and the
   constants the mapping captures from that name (`Field.filename`);
2. `join`: pair each record with its record in every output file (by line number, or on a
   key), under `joined`, the output file's name under `_join`; a record no output file
   has is kept as an item without a judgment (and counted in the notes). An output file
   must lie inside the data file's folder (links resolved);
3. `explode`: one record per element of a list, the element at the exploded path, its
   0-based position at `_index`; an empty list keeps the item without a judgment.
"""

from __future__ import annotations

import glob
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from judgelab.core.names import check_inside
from judgelab.data.importers import fieldpath
from judgelab.data.importers.base import SourceFormatError
from judgelab.data.importers.mapping_spec import Field, Join, normalise
from judgelab.data.importers.records import read_records
from judgelab.errors import UnsafeNameError

#: Where a field captured from the file name is kept on a record.
CAPTURED = "_filename:"


@dataclass(frozen=True)
class Loc:
    """A place in a data file: file, unit ("line" for JSONL, else "row") and number."""

    file: str
    unit: str
    index: int
    note: str = ""

    def error(self, problem: str, column: str | None = None) -> SourceFormatError:
        """Return a `SourceFormatError` naming this place (and the joined file, if any)."""
        where = {"line": self.index} if self.unit == "line" else {"row": self.index}
        text = f"{problem} ({self.note})" if self.note else problem
        return SourceFormatError(self.file, text, column=column, **where)

    def __str__(self) -> str:
        text = f"{self.file} {self.unit} {self.index}"
        return f"{text} ({self.note})" if self.note else text


@dataclass
class Record:
    """One row to map: where it is from, its 0-based record number in its file, its values."""

    loc: Loc
    pos: int
    row: dict[str, Any]
    judged: bool = True


@dataclass
class Reshaped:
    """The records of an import and notes for its summary (e.g. unmatched records)."""

    records: list[Record]
    notes: list[str] = field(default_factory=list)


def expand(files: str | Path | list[str | Path] | tuple[str | Path, ...]) -> list[Path]:
    """Return the data files: each argument as is, or its glob matches (sorted)."""
    args = [files] if isinstance(files, (str, Path)) else list(files)
    out: list[Path] = []
    for arg in args:
        text = str(arg)
        if any(ch in text for ch in "*?[") and not Path(text).exists():
            matches = sorted(glob.glob(text, recursive=True))
            if not matches:
                raise SourceFormatError(text, "no file matches this pattern")
            out.extend(Path(m) for m in matches)
        else:
            out.append(Path(text))
    seen: set[Path] = set()
    unique = []
    for p in out:
        if p.resolve() not in seen:
            seen.add(p.resolve())
            unique.append(p)
    return unique


def _captures(path: Path, fields: dict[str, Any]) -> dict[str, str]:
    out = {}
    for key, f in fields.items():
        if not isinstance(f, Field) or f.filename is None:
            continue
        m = f.filename.search(path.name)
        if m is None:
            raise SourceFormatError(
                str(path),
                f"mapping key '{key}': the file name does not match {f.filename.pattern!r}",
            )
        named = m.groupdict().get("value")
        out[CAPTURED + key] = named if named is not None else m.group(1)
    return out


def _rows(path: Path) -> tuple[list[dict[str, Any]], list[int], str]:
    df, unit = read_records(path)
    rows = df.astype(object).where(df.notna(), None).to_dict("records")
    return rows, [int(i) for i in df.index], unit


def read(files: list[Path], fields: dict[str, Any]) -> Reshaped:
    """Read, join and explode every data file into records (see the module docstring)."""
    out = Reshaped([])
    for path in files:
        rows, index, unit = _rows(path)
        consts = {"_file": path.name, **_captures(path, fields)}
        records = [
            Record(Loc(str(path), unit, idx), pos, {**row, **consts})
            for pos, (idx, row) in enumerate(zip(index, rows, strict=True))
        ]
        join = fields.get("join")
        if join is not None:
            records = _join(path, records, join, out.notes)
        explode = fields.get("explode")
        if explode is not None:
            records = _explode(records, explode, out.notes)
        out.records.extend(records)
    return out


def _key(rec: dict[str, Any], path: str, loc: Loc) -> str:
    value = fieldpath.resolve(rec, path)
    if value is fieldpath.MISSING or value is None or value != value:  # NaN != NaN
        raise loc.error("empty join key", path)
    return normalise(value)


def _join(path: Path, records: list[Record], join: Join, notes: list[str]) -> list[Record]:
    """Pair each record with its record in every joined file (see `Join`)."""
    out: list[Record] = []
    matched = [False] * len(records)
    for name, rel in join.files.items():
        other = _joined_file(path, name, rel)
        rows, index, unit = _rows(other)
        if join.left is None:
            if len(rows) != len(records):
                raise SourceFormatError(
                    str(other),
                    f"join by line: {len(rows)} records here but {len(records)} in {path}",
                )
            pairs = list(enumerate(zip(index, rows, strict=True)))
        else:
            by_key: dict[str, int] = {}
            for i, rec in enumerate(records):
                k = _key(rec.row, join.left, rec.loc)
                if k in by_key:
                    first = records[by_key[k]].loc
                    raise rec.loc.error(f"join key {k!r} repeats {first}", join.left)
                by_key[k] = i
            pairs, seen = [], {}
            for idx, row in zip(index, rows, strict=True):
                here = Loc(str(other), unit, idx)
                k = _key(row, join.right, here)
                if k not in by_key:
                    raise here.error(f"join key {k!r} is not in {path}", join.right)
                if k in seen:
                    raise here.error(f"join key {k!r} repeats {unit} {seen[k]}", join.right)
                seen[k] = idx
                pairs.append((by_key[k], (idx, row)))
        missing = len(records) - len(pairs)
        if missing:
            notes.append(f"{missing} records of {path.name} have no output in {other.name}")
        for i, (idx, row) in pairs:
            base = records[i]
            matched[i] = True
            note = f"joined with {other} {unit} {idx}"
            loc = Loc(base.loc.file, base.loc.unit, base.loc.index, note)
            out.append(Record(loc, base.pos, {**base.row, "joined": row, "_join": name}))
    for i, rec in enumerate(records):
        if not matched[i]:
            out.append(Record(rec.loc, rec.pos, {**rec.row, "_join": None}, judged=False))
    out.sort(key=lambda r: r.pos)  # stable: file order within a record
    return out


def _joined_file(path: Path, name: str, rel: str) -> Path:
    """Return the joined file `rel` of data file `path`, refused when it leads out of its folder.

    The mapping already refused `..` and absolute paths; here links are resolved, so a link
    beside the data file cannot pull a file from elsewhere into the tables (issue 32, 11).
    """
    other = path.parent / rel
    if other.exists():
        try:
            check_inside(other, path.parent)
        except UnsafeNameError:
            raise SourceFormatError(
                str(other),
                f"mapping key 'join.files.{name}': resolves to {other.resolve()}, outside the "
                f"data file's folder {path.parent}; joined files must lie inside it",
            ) from None
    return other


def _as_list(value: Any) -> list[Any] | None:
    if isinstance(value, str) and value[:1] == "[":
        try:
            value = json.loads(value)
        except ValueError:
            return None
    if hasattr(value, "tolist") and not isinstance(value, (str, bytes)):
        value = value.tolist()
    return list(value) if isinstance(value, (list, tuple)) else None


def _explode(records: list[Record], path: str, notes: list[str]) -> list[Record]:
    """One record per element of the list at `path` (an empty list: no judgment)."""
    out: list[Record] = []
    empty = 0
    for rec in records:
        raw = fieldpath.resolve(rec.row, path)
        if raw is fieldpath.MISSING or raw is None:
            values: list[Any] | None = []
        else:
            values = _as_list(raw)
        if values is None:
            raise rec.loc.error(
                f"explode: expected a list, got {type(raw).__name__} {str(raw)[:60]!r}", path
            )
        if not values:
            empty += 1
            out.append(Record(rec.loc, rec.pos, {**rec.row, "_index": None}, judged=False))
            continue
        for i, element in enumerate(values):
            row = {
                **rec.row,
                path: element,
                fieldpath.EXPLODED: path,
                fieldpath.ELEMENT: element,
                "_index": i,
            }
            loc = Loc(rec.loc.file, rec.loc.unit, rec.loc.index, _joined(rec.loc.note, path, i))
            out.append(Record(loc, rec.pos, row, rec.judged))
    if empty:
        notes.append(f"{empty} records have no element in '{path}' (items without judgments)")
    return out


def _joined(note: str, path: str, i: int) -> str:
    here = f"{path}[{i}]"
    return f"{note}; {here}" if note else here


__all__ = ["CAPTURED", "Loc", "Record", "Reshaped", "expand", "read"]
