"""The `items` and `judgments` tables every part of judgelab speaks (DESIGN §2).

`validate_items(df)` / `validate_judgments(df)` check columns, dtypes, nulls, key uniqueness
and value domains, and raise `SchemaError` naming the table, the column, the first offending
row and key, and what was expected. `coerce_*` return a copy with the canonical dtypes.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from judgelab.core.columns import CHOSEN as CHOSEN
from judgelab.core.columns import DTYPES as _DTYPES
from judgelab.core.columns import ITEMS as ITEMS
from judgelab.core.columns import JUDGMENTS as JUDGMENTS
from judgelab.core.columns import ORDERS as ORDERS
from judgelab.core.columns import SPECS as SPECS
from judgelab.core.columns import TASKS as TASKS
from judgelab.core.columns import Column as Column
from judgelab.core.columns import TableSpec as TableSpec
from judgelab.errors import MESSAGE_LIMIT as MESSAGE_LIMIT
from judgelab.errors import VALUE_LIMIT as VALUE_LIMIT
from judgelab.errors import SchemaError as SchemaError
from judgelab.errors import clip as clip
from judgelab.errors import short_repr as short_repr

#: Columns of a verifier decisions table (criteria verification, spec 000 §4.4): the key of a
#: judged run and `verified` (nullable boolean). Built by `analyses.prompting`, read from files
#: by `data.catalog.prompting`.
DECISION_COLUMNS: tuple[str, ...] = (
    "benchmark",
    "split",
    "item_id",
    "judge",
    "order",
    "sample",
    "verified",
)


def _key_of(df: pd.DataFrame, spec: TableSpec, pos: int) -> dict[str, Any]:
    return {k: _plain(df[k].iloc[pos]) for k in spec.key if k in df.columns}


def _plain(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    return None if _isna_scalar(value) else value


def _isna_scalar(value: Any) -> bool:
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):
        return False


def _first(mask: pd.Series | np.ndarray) -> int:
    return int(np.flatnonzero(np.asarray(mask))[0])


_PY_TYPES: dict[str, tuple[type, ...]] = {
    "str": (str,),
    "json": (str,),
    "int": (int, np.integer),
    "float": (int, float, np.integer, np.floating),
    "bool": (bool, np.bool_),
    "datetime": (pd.Timestamp,),
}


def _kind_ok(series: pd.Series, kind: str) -> tuple[bool, int | None]:
    """Check that the non-null values of `series` have `kind`; return (ok, first bad row)."""
    if kind not in _PY_TYPES:
        raise ValueError(f"unknown column kind {kind!r}")
    dtype = series.dtype
    nonnull = series.notna().to_numpy()
    if pd.api.types.is_object_dtype(dtype) or isinstance(dtype, pd.CategoricalDtype):
        types = _PY_TYPES[kind]

        def bad_value(v: Any) -> bool:
            # bool is an int subclass: never accept it where a number is expected.
            if kind in ("int", "float") and isinstance(v, (bool, np.bool_)):
                return True
            return not isinstance(v, types)

        values = series.astype(object).to_numpy()
        bad = np.array(
            [nn and bad_value(v) for nn, v in zip(nonnull, values, strict=True)], dtype=bool
        )
        return (not bad.any()), (_first(bad) if bad.any() else None)
    if not nonnull.any():
        return True, None
    is_bool = pd.api.types.is_bool_dtype(dtype)
    ok = {
        "str": pd.api.types.is_string_dtype(dtype),
        "json": pd.api.types.is_string_dtype(dtype),
        "int": pd.api.types.is_integer_dtype(dtype) and not is_bool,
        "float": pd.api.types.is_numeric_dtype(dtype) and not is_bool,
        "bool": is_bool,
        "datetime": pd.api.types.is_datetime64_any_dtype(dtype),
    }[kind]
    if not ok and kind == "int" and pd.api.types.is_float_dtype(dtype):
        values = series.to_numpy(dtype="float64", na_value=np.nan)
        bad = nonnull & (np.mod(np.nan_to_num(values), 1) != 0)
        return (not bad.any()), (_first(bad) if bad.any() else None)
    return ok, (None if ok else _first(nonnull))


def require_columns(df: pd.DataFrame, columns: Sequence[str | None], what: str) -> None:
    """Raise `KeyError` naming `what` and the missing columns (None entries are skipped).

    The one check behind every analysis function's "needs columns ..." contract.

    >>> require_columns(pd.DataFrame({"a": [1]}), ["a", None], "f")
    """
    missing = [c for c in columns if c is not None and c not in df.columns]
    if missing:
        raise KeyError(f"{what}: missing column(s) {missing}; have {list(df.columns)}")


_Fail = Callable[..., SchemaError]


def validate(df: pd.DataFrame, spec: TableSpec, *, source: str | None = None) -> None:
    """Validate `df` against `spec`; raise `SchemaError` at the first problem found."""
    if not isinstance(df, pd.DataFrame):
        raise SchemaError(spec.name, f"expected a pandas DataFrame, got {type(df).__name__}")

    def fail(problem: str, **kw: Any) -> SchemaError:
        return SchemaError(spec.name, problem, source=source, **kw)

    _check_columns(df, spec, fail)
    for col in spec.columns:
        if col.name in df.columns:
            _check_values(df, spec, col, fail)
    _check_rows(df, spec, fail)


def _check_columns(df: pd.DataFrame, spec: TableSpec, fail: _Fail) -> None:
    """Raise on a missing, unexpected or duplicated column."""
    known = set(spec.names) | set(spec.derived)
    for col in spec.columns:
        if col.required and col.name not in df.columns:
            raise fail("missing column", column=col.name, expected=f"a {col.kind} column")
    extra = [c for c in df.columns if c not in known]
    if extra:
        raise fail(
            f"unexpected column(s) {extra}",
            column=str(extra[0]),
            expected="only " + ", ".join(spec.names),
        )
    if df.columns.duplicated().any():
        dup = df.columns[df.columns.duplicated()][0]
        raise fail("duplicate column name", column=str(dup))


def _check_values(df: pd.DataFrame, spec: TableSpec, col: Column, fail: _Fail) -> None:
    """Raise on the first value of `col` of the wrong kind, null, out of domain or range."""
    s = df[col.name]
    ok, pos = _kind_ok(s, col.kind)
    if not ok:
        raise fail(
            f"wrong dtype {s.dtype}"
            + (f", value {short_repr(_plain(s.iloc[pos]))}" if pos is not None else ""),
            column=col.name,
            row=pos,
            key=_key_of(df, spec, pos) if pos is not None else None,
            expected=f"{col.kind} values",
        )
    nulls = s.isna().to_numpy()
    if not col.nullable and nulls.any():
        pos = _first(nulls)
        raise fail(
            "null value",
            column=col.name,
            row=pos,
            key=_key_of(df, spec, pos),
            expected="no nulls" + (" (a key column)" if col.name in spec.key else ""),
        )
    if col.domain is not None:
        bad = ~nulls & ~s.isin(col.domain).to_numpy()
        if bad.any():
            pos = _first(bad)
            raise fail(
                f"value {short_repr(_plain(s.iloc[pos]))} outside its domain",
                column=col.name,
                row=pos,
                key=_key_of(df, spec, pos),
                expected="one of " + ", ".join(map(repr, col.domain)) + " or null"
                if col.nullable
                else "one of " + ", ".join(map(repr, col.domain)),
            )
    if col.minimum is not None:
        values = pd.to_numeric(s, errors="coerce").to_numpy(dtype="float64", na_value=np.nan)
        bad = ~np.isnan(values) & (values < col.minimum)
        if bad.any():
            pos = _first(bad)
            raise fail(
                f"value {short_repr(_plain(s.iloc[pos]))} below minimum",
                column=col.name,
                row=pos,
                key=_key_of(df, spec, pos),
                expected=f">= {col.minimum:g}",
            )
    if col.kind == "json":
        _check_json(df, spec, col, fail)


def _check_json(df: pd.DataFrame, spec: TableSpec, col: Column, fail: _Fail) -> None:
    """Raise on the first non-null value of a json column that is not a JSON object.

    Each distinct value is parsed once (an items table repeats `{}`); the first bad one in
    order of appearance is the first bad row.
    """
    values = df[col.name].to_numpy(dtype=object)  # text (`_check_values` checked the kind)
    codes, uniques = pd.factorize(values, use_na_sentinel=True)
    for i, value in enumerate(uniques.tolist()):
        if value is None or _isna_scalar(value):
            continue
        problem = _json_problem(value)
        if problem is not None:
            pos = _first(codes == i)
            raise fail(
                problem,
                column=col.name,
                row=pos,
                key=_key_of(df, spec, pos),
                expected="a JSON object",
            )


def _json_problem(value: Any) -> str | None:
    """Why `value` is not a JSON object's text (None: it is)."""
    try:
        parsed = json.loads(value)
    except (TypeError, ValueError) as exc:
        return f"invalid JSON ({exc})"
    if not isinstance(parsed, dict):
        return f"JSON {type(parsed).__name__}, not an object"
    return None


def _check_rows(df: pd.DataFrame, spec: TableSpec, fail: _Fail) -> None:
    """Raise on a duplicate key, or (judgments) a `chosen` on an invalid judgment."""
    dup = df.duplicated(subset=list(spec.key), keep="first").to_numpy()
    if dup.any():
        pos = _first(dup)
        raise fail(
            "duplicate key",
            column=", ".join(spec.key),
            row=pos,
            key=_key_of(df, spec, pos),
            expected="each key at most once",
        )
    if spec is JUDGMENTS:
        valid = df["valid"].astype("boolean").fillna(False).to_numpy(dtype=bool)
        bad = ~valid & df["chosen"].notna().to_numpy()
        if bad.any():
            pos = _first(bad)
            raise fail(
                f"chosen={short_repr(_plain(df['chosen'].iloc[pos]))} on an invalid judgment",
                column="chosen",
                row=pos,
                key=_key_of(df, spec, pos),
                expected="chosen is null when valid is false",
            )


def validate_items(df: pd.DataFrame, *, source: str | None = None) -> None:
    """Validate an items table; raise `SchemaError` naming table, column, row and key."""
    validate(df, ITEMS, source=source)


def validate_judgments(df: pd.DataFrame, *, source: str | None = None) -> None:
    """Validate a judgments table; raise `SchemaError` naming table, column, row and key."""
    validate(df, JUDGMENTS, source=source)


def coerce(df: pd.DataFrame, spec: TableSpec) -> pd.DataFrame:
    """Return a copy of `df` with canonical column order and dtypes (validate first)."""
    out = {}
    for col in spec.columns:
        if col.name not in df.columns:
            continue
        s = df[col.name]
        if col.kind == "datetime":
            s = pd.to_datetime(s, utc=True).astype(_DTYPES["datetime"])
        elif col.kind == "int" and col.name == "order":
            s = s.astype("int8")
        elif col.kind == "int" and col.name == "sample":
            s = s.astype("int32")
        elif col.kind == "bool" and not col.nullable:
            s = s.astype(bool)
        else:
            s = s.astype(_DTYPES[col.kind])
        out[col.name] = s
    return pd.DataFrame(out, index=pd.RangeIndex(len(df)))


def coerce_items(df: pd.DataFrame) -> pd.DataFrame:
    """Return `df` as an items table with canonical dtypes."""
    return coerce(df, ITEMS)


def coerce_judgments(df: pd.DataFrame) -> pd.DataFrame:
    """Return `df` as a judgments table with canonical dtypes."""
    return coerce(df, JUDGMENTS)


def empty(spec: TableSpec) -> pd.DataFrame:
    """Return an empty table with every required column in its canonical dtype."""
    cols = {}
    for c in spec.columns:
        if c.required:
            cols[c.name] = pd.Series([], dtype=_DTYPES[c.kind])
    df = pd.DataFrame(cols)
    return coerce(df, spec)


def new_judgments(rows: list[dict[str, Any]] | pd.DataFrame) -> pd.DataFrame:
    """Build a judgments table from rows, filling missing columns with nulls and defaults.

    Defaults: `condition=""`, `order=0`, `sample=0`, and null for every other missing column
    the schema requires (optional ones, `judgment_meta` and `shown_first`, are kept only
    when given; a dict `judgment_meta` is stored as a JSON string, keys sorted).
    """
    df = pd.DataFrame(rows) if not isinstance(rows, pd.DataFrame) else rows.copy()
    defaults: dict[str, Any] = {"condition": "", "order": 0, "sample": 0}
    for col in JUDGMENTS.columns:
        if col.required and col.name not in df.columns:
            df[col.name] = defaults.get(col.name, None)
    if "judgment_meta" in df.columns:
        df["judgment_meta"] = [
            json.dumps(m, sort_keys=True, ensure_ascii=False) if isinstance(m, dict) else m
            for m in df["judgment_meta"].astype(object)
        ]
    df = df[[c for c in JUDGMENTS.names if c in df.columns]]
    validate_judgments(df)
    return coerce_judgments(df)


def new_items(rows: list[dict[str, Any]] | pd.DataFrame) -> pd.DataFrame:
    """Build an items table from rows, filling optional text columns with nulls.

    `meta` may be given as a dict; it is stored as a JSON string (keys sorted).
    """
    df = pd.DataFrame(rows) if not isinstance(rows, pd.DataFrame) else rows.copy()
    for col in ITEMS.columns:
        if col.required and col.name not in df.columns:
            df[col.name] = "{}" if col.name == "meta" else None
    df["meta"] = [
        json.dumps(m, sort_keys=True, ensure_ascii=False) if isinstance(m, dict) else m
        for m in df["meta"].astype(object)
    ]
    df = df[[c for c in ITEMS.names if c in df.columns]]
    validate_items(df)
    return coerce_items(df)


def read_meta(value: Any) -> dict[str, Any]:
    """Return one `meta` cell as a dict: a dict as is, a JSON object string parsed, else `{}`.

    Validated tables hold a JSON object or null in `meta`; a string that is not a JSON object
    raises `ValueError` rather than being read as empty.

    >>> read_meta('{"turn": 2}'), read_meta(None), read_meta("")
    ({'turn': 2}, {}, {})
    """
    if isinstance(value, dict):
        return value
    if isinstance(value, str) and value:
        parsed = json.loads(value)
        if not isinstance(parsed, dict):
            raise ValueError(f"meta must be a JSON object, got {short_repr(value)}")
        return parsed
    return {}


def meta_field(meta: pd.Series, name: str, default: Any = None) -> pd.Series:
    """Return one field of a `meta` column (`default` where absent), parsing each value once.

    >>> meta_field(pd.Series(['{"a": 1}', None, '{"b": 2}']), "a").tolist()
    [1, None, None]
    """
    try:  # each distinct text read once, a missing value (code -1) is the default
        codes, distinct = pd.factorize(meta)
    except TypeError:  # unhashable cells (dicts, as an unvalidated table may hold)
        values = [read_meta(m).get(name, default) for m in meta.astype(object)]
        return pd.Series(values, index=meta.index, dtype=object)
    found = np.empty(len(distinct) + 1, dtype=object)
    found[:-1] = [read_meta(m).get(name, default) for m in distinct]
    found[-1] = default
    return pd.Series(found[codes], index=meta.index, dtype=object)
