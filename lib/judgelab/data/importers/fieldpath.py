"""Field paths of the generic importer: `judgments[1].decision`, `scores.response_a`.

A path starts with a column (top-level key) name and goes on with `.key` or `[index]`
steps (`["key.with.dots"]` quotes a key). A cell holding JSON text (a CSV column with an
object or a list) is parsed when a step goes into it. A name that is itself a column (a
CSV header `scores.response_a`) is read as that column.

`resolve(record, path)` returns the value, or `MISSING` when a step finds no such key or
index (a null value along the way resolves to None).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

_STEP = re.compile(r"""\.([^.\[\]]+)|\[(-?\d+)\]|\[["']([^"']*)["']\]""")
_HEAD = re.compile(r"[^.\[\]]+")


class _Missing:
    """The value of a path that names no key or index of the record."""

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()


def parse(path: str) -> tuple[str, tuple[str | int, ...]]:
    """Split a path into its column and its steps; raise ValueError on bad syntax.

    >>> parse("judgments[1].decision")
    ('judgments', (1, 'decision'))
    >>> parse('scores["a.b"]')
    ('scores', ('a.b',))
    """
    if not isinstance(path, str) or not path:
        raise ValueError(f"a field path must be a non-empty string, got {path!r}")
    head = _HEAD.match(path)
    if head is None:
        raise ValueError(f"path {path!r} must start with a column name")
    steps: list[str | int] = []
    pos = head.end()
    while pos < len(path):
        m = _STEP.match(path, pos)
        if m is None:
            raise ValueError(
                f'path {path!r}: cannot read {path[pos:]!r} (use .key, [index] or ["key"])'
            )
        key, index, quoted = m.groups()
        steps.append(int(index) if index is not None else (key if key is not None else quoted))
        pos = m.end()
    return head.group(0), tuple(steps)


def column_of(path: str) -> str:
    """Return the top-level column a path starts from."""
    return parse(path)[0]


def _step(value: Any, step: str | int) -> Any:
    if value is None:
        return None
    if isinstance(value, str) and value[:1] in ("{", "["):
        try:
            value = json.loads(value)
        except ValueError:
            return MISSING
    if hasattr(value, "tolist") and not isinstance(value, (str, bytes)):
        value = value.tolist()  # numpy arrays from parquet list columns
    if isinstance(step, int):
        if isinstance(value, (list, tuple)) and -len(value) <= step < len(value):
            return value[step]
        return MISSING
    if isinstance(value, Mapping):
        return value.get(step, MISSING)
    return MISSING


#: Keys an exploded record carries: the path that was exploded and the list element.
EXPLODED, ELEMENT = "_exploded", "_element"


def resolve(record: Mapping[str, Any], path: str) -> Any:
    """Return the value `path` names in `record` (`MISSING` when a key or index is absent).

    In a record exploded from a list at path P (`reshape`), P names the element and paths
    under P (`P.key`, `P[0]`) go into it.
    """
    if path in record:
        return record[path]
    exploded = record.get(EXPLODED)
    if exploded and path.startswith(exploded) and path[len(exploded)] in ".[":
        value, steps = record[ELEMENT], parse("x" + path[len(exploded) :])[1]
    else:
        column, steps = parse(path)
        if column not in record:
            return MISSING
        value = record[column]
    for step in steps:
        value = _step(value, step)
        if value is MISSING:
            return MISSING
    return value


def keys_at(record: Mapping[str, Any], path: str) -> list[str]:
    """Return the keys found where `path` stops resolving (to help a user fix a typo)."""
    column, steps = parse(path)
    value: Any = record
    for step in (column, *steps):
        nxt = _step(value, step) if value is not record else record.get(step, MISSING)
        if nxt is MISSING:
            if isinstance(value, str) and value[:1] == "{":
                try:
                    value = json.loads(value)
                except ValueError:
                    return []
            if isinstance(value, Mapping):
                return [str(k) for k in value]
            if isinstance(value, (list, tuple)):
                return [f"[{i}]" for i in range(len(value))]
            return []
        value = nxt
    return []


__all__ = ["ELEMENT", "EXPLODED", "MISSING", "column_of", "keys_at", "parse", "resolve"]
