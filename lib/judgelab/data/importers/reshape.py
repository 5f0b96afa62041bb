"""Turn the data files of one mapped import into records: globs, joins, exploded lists.

Each `Record` is one row the mapping is applied to, with the place it came from (`Loc`:
file, line or row) so every later error can name it. Steps, in order, per data file:

1. read it (`records.read_records`; a `.txt` file's lines are the column `txt_column`; with
   `reader: TOOL` the tool's bridge, `judgelab.data.bridges`, makes the records);
   every record gets `_file` (the file's name) and the constants the mapping captures from
   that name (`Field.filename`) or from its path (`Field.path`, `/` separators);
2. `join` that adds rows: pair each record with its record in every output file (by line
   number, or on a key), under `joined`, the output file's name under `_join`; a record no
   output file has is kept as an item without a judgment (and counted in the notes).
   A `join` that adds columns puts every file's row beside the record, at `joined.<name>`
   (a record that some file lacks is an error naming it and the file; records sharing a
   key, as a sample's epochs, all get its row). An output file must
   lie inside the data file's folder (links resolved);
3. `explode`: one record per element of a list, the element at the exploded path, its
   0-based position at `_index`; an empty list keeps the item without a judgment. With
   `keys`, one record per named key of the record at the path, in the order given, the
   key's value at the path, the key at `_key` (a key absent from a record is an error).
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
from judgelab.data.importers.mapping_spec import Explode, Field, Join, normalise
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
        if not isinstance(f, Field) or f.capture is None:
            continue
        what, subject = (
            ("name", path.name) if f.filename is not None else ("path", path.as_posix())
        )
        m = f.capture.search(subject)
        if m is None:
            raise SourceFormatError(
                str(path),
                f"mapping key '{key}': the file {what} does not match {f.capture.pattern!r}",
            )
        named = m.groupdict().get("value")
        out[CAPTURED + key] = named if named is not None else m.group(1)
    return out


def _rows(
    path: Path, fields: dict[str, Any], *, joined: bool = False
) -> tuple[list[dict[str, Any]], list[int], str]:
    """A data file's rows, row numbers and unit (a joined file is a table, never a log)."""
    reader = None if joined else fields.get("reader")
    if reader is not None:  # a tool's log: its bridge makes the records (numbered from 1)
        from judgelab.data import bridges

        if not path.is_file():
            raise SourceFormatError(str(path), "file not found")
        records = bridges.read(reader, path)
        return records, list(range(1, len(records) + 1)), "row"
    df, unit = read_records(path, txt_column=fields.get("txt_column"))
    rows = df.astype(object).where(df.notna(), None).to_dict("records")
    return rows, [int(i) for i in df.index], unit


def read(files: list[Path], fields: dict[str, Any]) -> Reshaped:
    """Read, join and explode every data file into records (see the module docstring)."""
    out = Reshaped([])
    for path in files:
        rows, index, unit = _rows(path, fields)
        consts = {"_file": path.name, **_captures(path, fields)}
        records = [
            Record(Loc(str(path), unit, idx), pos, {**row, **consts})
            for pos, (idx, row) in enumerate(zip(index, rows, strict=True))
        ]
        join = fields.get("join")
        if join is not None and join.adds == "columns":
            records = _join_columns(path, records, join, fields)
        elif join is not None:
            records = _join(path, records, join, out.notes, fields)
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


def _pairs(
    path: Path, records: list[Record], join: Join, other: Path, fields: dict[str, Any]
) -> tuple[list[tuple[int, tuple[int, dict[str, Any]]]], str]:
    """Return (record number, (index, row)) of every row of joined file `other`, and its unit."""
    rows, index, unit = _rows(other, fields, joined=True)
    if join.left is None:
        if len(rows) != len(records):
            raise SourceFormatError(
                str(other),
                f"join by line: {len(rows)} records here but {len(records)} in {path}",
            )
        return list(enumerate(zip(index, rows, strict=True))), unit
    by_key: dict[str, list[int]] = {}
    for i, rec in enumerate(records):
        k = _key(rec.row, join.left, rec.loc)
        if k in by_key and join.adds != "columns":
            first = records[by_key[k][0]].loc
            raise rec.loc.error(f"join key {k!r} repeats {first}", join.left)
        # a join that adds columns gives each record with the key the row (epochs of a
        # sample, outputs of a test); a join that adds rows needs one record a key
        by_key.setdefault(k, []).append(i)
    pairs, seen = [], {}
    for idx, row in zip(index, rows, strict=True):
        here = Loc(str(other), unit, idx)
        k = _key(row, join.right, here)
        if k not in by_key:
            raise here.error(f"join key {k!r} is not in {path}", join.right)
        if k in seen:
            raise here.error(f"join key {k!r} repeats {unit} {seen[k]}", join.right)
        seen[k] = idx
        pairs.extend((i, (idx, row)) for i in by_key[k])
    return pairs, unit


def _join_columns(
    path: Path, records: list[Record], join: Join, fields: dict[str, Any]
) -> list[Record]:
    """Put every joined file's row beside its record, at `joined.<name>` (see `Join`)."""
    beside: list[dict[str, Any]] = [{} for _ in records]
    for name, rel in join.files.items():
        other = _joined_file(path, name, rel)
        pairs, _ = _pairs(path, records, join, other, fields)
        for i, (_, row) in pairs:
            beside[i][name] = row
        for rec, got in zip(records, beside, strict=True):
            if name not in got:
                key = _key(rec.row, join.left, rec.loc) if join.left else rec.loc.index
                raise rec.loc.error(
                    f"join (adds columns): {other} has no row with join key {key!r}",
                    join.left,
                )
    return [
        Record(r.loc, r.pos, {**r.row, "joined": got}, r.judged)
        for r, got in zip(records, beside, strict=True)
    ]


def _join(
    path: Path, records: list[Record], join: Join, notes: list[str], fields: dict[str, Any]
) -> list[Record]:
    """Pair each record with its record in every joined file (see `Join`)."""
    out: list[Record] = []
    matched = [False] * len(records)
    for name, rel in join.files.items():
        other = _joined_file(path, name, rel)
        pairs, unit = _pairs(path, records, join, other, fields)
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


def _named(rec: Record, raw: Any, explode: Explode) -> list[Any]:
    """The values of the named keys of `raw` (a record), in the order the mapping lists them."""
    if isinstance(raw, str) and raw[:1] == "{":
        try:
            raw = json.loads(raw)
        except ValueError:
            pass
    if not isinstance(raw, dict):
        raise rec.loc.error(
            f"explode: expected a record with keys {list(explode.keys)}, got "
            f"{type(raw).__name__} {str(raw)[:60]!r}",
            explode.path,
        )
    for key in explode.keys or ():
        if key not in raw:
            found = ", ".join(map(repr, list(raw)[:12]))
            raise rec.loc.error(
                f"explode: key {key!r} is absent from this record (keys there: {found})",
                explode.path,
            )
    return [raw[key] for key in explode.keys or ()]


def _explode(records: list[Record], explode: Explode, notes: list[str]) -> list[Record]:
    """One record per element of the list (or named key) at the path (empty: no judgment)."""
    out: list[Record] = []
    empty = 0
    path = explode.path
    for rec in records:
        raw = fieldpath.resolve(rec.row, path)
        if raw is fieldpath.MISSING or raw is None:
            values: list[Any] | None = []
        elif explode.keys is not None:
            values = _named(rec, raw, explode)
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
                "_key": None if explode.keys is None else explode.keys[i],
            }
            step = i if explode.keys is None else json.dumps(explode.keys[i])
            loc = Loc(rec.loc.file, rec.loc.unit, rec.loc.index, _joined(rec.loc.note, path, step))
            out.append(Record(loc, rec.pos, row, rec.judged))
    if empty:
        notes.append(f"{empty} records have no element in '{path}' (items without judgments)")
    return out


def _joined(note: str, path: str, i: int | str) -> str:
    here = f"{path}[{i}]"
    return f"{note}; {here}" if note else here


__all__ = ["CAPTURED", "Loc", "Record", "Reshaped", "expand", "read"]
