"""`judgelab judge` without the analysis stack: items, tables and merge check in pyarrow.

Issue 38, item 3. The runner's public API (`runner.run`) speaks pandas; the command line
only needs the summary, so for the common case (an items `.parquet` file, an online remote
judge, a rerun that adds no rows from an older table) `run` plans, requests and builds from
plain records and writes the judgments table with pyarrow, loading no pandas, scipy or
matplotlib. The table has the same columns, dtypes, rows, order and pandas metadata as the
pandas path writes (`tests/judges/test_light.py` compares both).

Whenever a case is not this simple, `read_items` / `run` return None *before anything is
requested* and the caller takes the pandas path, which also gives the error messages (an
invalid items file, an unknown split, a judge id another model wrote). A rerun whose merge
keeps older rows converts its rows to pandas there and merges as `runner.run` does.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Collection
from datetime import datetime
from importlib import metadata
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from judgelab.core import locks
from judgelab.core.atomic import atomic_path
from judgelab.core.columns import ITEMS, JUDGMENTS, TableSpec
from judgelab.judges import summary as summary_mod
from judgelab.judges import table as table_mod
from judgelab.judges.cache import check_record, opened
from judgelab.judges.requesting import held_keys, request_missing
from judgelab.judges.resolved import Resolved
from judgelab.judges.rows import DETAIL_COLUMNS, KEY_COLUMNS
from judgelab.judges.spec import JudgeSpec
from judgelab.judges.store import details_path, judgments_path
from judgelab.judges.summary import RunResult, Summary

Records = list[dict[str, Any]]
ITEM_COLUMNS = ["benchmark", "split", "item_id"]

#: The arrow type of each column kind, as `pa.Table.from_pandas(schema.coerce(...))` writes it.
_ARROW = {
    "str": pa.large_string(),
    "json": pa.large_string(),
    "int": pa.int64(),
    "float": pa.float64(),
    "bool": pa.bool_(),
    "datetime": pa.timestamp("us", tz="UTC"),
}
_SPECIAL = {"order": pa.int8(), "sample": pa.int32()}
#: pandas metadata (`pandas_type`, `numpy_type`) of each column kind, as pandas records it.
_PANDAS = {
    "str": ("object", "string"),
    "json": ("object", "string"),
    "int": ("int64", "Int64"),
    "float": ("float64", "float64"),
    "datetime": ("datetimetz", "datetime64[us]"),
}


def _pandas_meta(spec: TableSpec, names: list[str]) -> bytes:
    """Return the `pandas` schema metadata pandas writes for these canonical columns."""
    cols = []
    for name in names:
        col = spec.column(name)
        if name in _SPECIAL:
            kinds = (str(_SPECIAL[name]), str(_SPECIAL[name]))
        elif col.kind == "bool":
            kinds = ("bool", "bool" if not col.nullable else "boolean")
        else:
            kinds = _PANDAS[col.kind]
        extra = {"timezone": "UTC"} if col.kind == "datetime" else None
        cols.append(
            {
                "name": name,
                "field_name": name,
                "pandas_type": kinds[0],
                "numpy_type": kinds[1],
                "metadata": extra,
            }
        )
    meta = {
        "index_columns": [],
        "column_indexes": [],
        "columns": cols,
        "attributes": {},
        "creator": {"library": "pyarrow", "version": pa.__version__},
        "pandas_version": metadata.version("pandas"),
    }
    return json.dumps(meta).encode()


def judgments_schema(names: list[str] | None = None) -> pa.Schema:
    """Return the arrow schema of a judgments table (every required column by default)."""
    names = names or [c.name for c in JUDGMENTS.columns if c.required]
    fields = [pa.field(n, _SPECIAL.get(n, _ARROW[JUDGMENTS.column(n).kind])) for n in names]
    return pa.schema(fields, metadata={b"pandas": _pandas_meta(JUDGMENTS, names)})


# --------------------------------------------------------------------------- items


def _read(path: str | Path, columns: list[str] | None = None) -> pa.Table:
    """Read a parquet file without `pq.read_table`, whose dataset layer imports pandas."""
    with pq.ParquetFile(path) as f:
        return f.read(columns=columns)


def _is_text(t: pa.DataType) -> bool:
    return pa.types.is_string(t) or pa.types.is_large_string(t)


def _column_ok(table: pa.Table, name: str) -> bool:
    """True when column `name` certainly passes `schema.validate` (else: the pandas path)."""
    col, arr = ITEMS.column(name), table.column(name)
    if not col.nullable and arr.null_count:
        return False
    if col.kind in ("str", "json") and not _is_text(arr.type):
        return False
    if col.kind == "float":
        if not pa.types.is_floating(arr.type):
            return False
        values = arr.to_pylist()
        return col.minimum is None or all(v is None or not v < col.minimum for v in values)
    if col.domain is not None and not set(arr.to_pylist()) <= set(col.domain):
        return False
    if col.kind == "json":
        for value in arr.to_pylist():
            try:
                if value is not None and not isinstance(json.loads(value), dict):
                    return False
            except ValueError:
                return False
    return True


def read_items(path: str | Path) -> Records | None:
    """Return an items `.parquet` file as records (None for missing values), or None.

    None: the file is not one this path is sure `tables.read_items` accepts unchanged (a
    jsonl file, an unusual dtype, a duplicate key, ...): the caller reads it with pandas,
    which names any problem (file, row, column).
    """
    if Path(path).suffix != ".parquet":
        return None
    try:
        table = _read(path)
    except (pa.ArrowException, OSError):
        return None
    names = table.column_names
    if len(set(names)) != len(names) or not set(names) <= set(ITEMS.names):
        return None
    if any(c.required and c.name not in names for c in ITEMS.columns):
        return None
    if not all(_column_ok(table, n) for n in names):
        return None
    table = table.select([n for n in ITEMS.names if n in names])  # canonical order
    records = table.to_pylist()
    if len({tuple(r[c] for c in ITEMS.key) for r in records}) != len(records):
        return None
    for r in records:  # NaN lengths are missing values, as `item_records` gives them
        for k, v in r.items():
            if isinstance(v, float) and math.isnan(v):
                r[k] = None
    return records


# --------------------------------------------------------------------------- tables


def benchmarks(records: Records) -> list[str]:
    """Return the benchmarks of item records, sorted (`store.benchmarks` of a frame)."""
    return sorted({str(r["benchmark"]) for r in records})


def _read_columns(path: Path, columns: list[str]) -> dict[str, list[Any]] | None:
    """Return these columns of an existing table, {} when it does not exist, None if unread."""
    if not path.exists():
        return {}
    try:
        return _read(path, columns).to_pydict()
    except (pa.ArrowException, OSError, KeyError):
        return None


def _existing(records: Records, spec: JudgeSpec) -> tuple[str, ...] | None:
    """Return the conditions of the judge's tables; None when `runner.run` must decide.

    None: a table written by another model or template (the pandas path refuses it and
    says why) or one that cannot be read.
    """
    found: list[str] = []
    for bench in benchmarks(records):
        have = _read_columns(
            judgments_path(bench, spec.judge_id), ["model", "prompt", "condition"]
        )
        if have is None:
            return None
        for model, prompt in zip(have.get("model", []), have.get("prompt", []), strict=True):
            if (model is not None and model != spec.model) or (
                prompt is not None and prompt != spec.prompt_id
            ):
                return None
        found += [c for c in have.get("condition", []) if "candidate=" not in c]
    return tuple(dict.fromkeys(found))


def _keeps_old_rows(rows: Records, records: Records, judge_id: str) -> bool:
    """True when `merge_existing` would keep rows of an existing table that `rows` lack."""
    new = {tuple(str(r[c]) for c in KEY_COLUMNS) for r in rows}
    known = {tuple(str(r[c]) for c in ITEM_COLUMNS) for r in records}
    for bench in benchmarks(records):
        old = _read_columns(judgments_path(bench, judge_id), KEY_COLUMNS)
        if old is None:
            continue  # unreadable: replaced, as `merge_existing` does
        for key in zip(*(old.get(c, []) for c in KEY_COLUMNS), strict=True):
            key = tuple(map(str, key))
            if key[:3] in known and key not in new:
                return True
    return False


def _text(v: Any) -> str | None:
    return v if v is None or isinstance(v, str) else str(v)


def _number(v: Any) -> float | None:
    ok = isinstance(v, int | float) and not isinstance(v, bool)
    return float(v) if ok and not math.isnan(v) else None


def _time(v: Any) -> datetime | None:
    return None if v is None else datetime.fromisoformat(str(v).replace("Z", "+00:00"))


def judgments_table(rows: Records) -> pa.Table:
    """Return judgment rows as the arrow table `tables.write_judgments(to_table(rows))` writes."""
    sch = judgments_schema()
    cols: dict[str, list[Any]] = {}
    for f in sch:
        kind = JUDGMENTS.column(f.name).kind
        values = [r.get(f.name) for r in rows]
        if kind in ("str", "json"):
            values = [_text(v) for v in values]
        elif kind == "float":
            values = [_number(v) for v in values]
        elif kind == "datetime":
            values = [_time(v) for v in values]
        cols[f.name] = values
    return _with_meta(cols, sch)


def _with_meta(cols: dict[str, list[Any]], sch: pa.Schema) -> pa.Table:
    """Return `cols` as a table of schema `sch`, its metadata set last.

    `from_pydict` with pandas metadata in its schema would import pandas.
    """
    import polars as pl  # builds from Python values without pandas (pyarrow imports it)

    of = {"large_string": pl.String, "int8": pl.Int8, "int32": pl.Int32, "int64": pl.Int64}
    of |= {"double": pl.Float64, "bool": pl.Boolean, "null": pl.Null}
    of["timestamp[us, tz=UTC]"] = pl.Datetime("us", "UTC")
    types = {f.name: of[str(f.type)] for f in sch}
    plain = pl.DataFrame(cols, schema=types).to_arrow().cast(sch.remove_metadata())
    return plain.replace_schema_metadata(sch.metadata)


def _detail_type(values: list[Any]) -> pa.DataType:
    """Return the arrow type pandas infers for one diagnostics column (`det.to_parquet`)."""
    present = [v for v in values if v is not None]
    if not present:
        return pa.null()
    if all(isinstance(v, str) for v in present):
        return pa.large_string()
    return pa.int64() if len(present) == len(values) else pa.float64()


def details_table(details: Records) -> pa.Table:
    """Return diagnostics rows as the arrow table `store.write` writes with pandas."""
    cols = {c: [d.get(c) for d in details] for c in DETAIL_COLUMNS}
    fields = [pa.field(c, _detail_type(v)) for c, v in cols.items()]
    kinds = {"large_string": ("object", "str"), "null": ("empty", "object")}
    kinds |= {"int64": ("int64", "int64"), "double": ("float64", "float64")}
    meta = [
        {
            "name": f.name,
            "field_name": f.name,
            "pandas_type": kinds[str(f.type)][0],
            "numpy_type": kinds[str(f.type)][1],
            "metadata": None,
        }
        for f in fields
    ]
    pandas = {
        "index_columns": [],
        "column_indexes": [],
        "columns": meta,
        "attributes": {},
        "creator": {"library": "pyarrow", "version": pa.__version__},
        "pandas_version": metadata.version("pandas"),
    }
    sch = pa.schema(fields, metadata={b"pandas": json.dumps(pandas).encode()})
    return _with_meta(cols, sch)


def write(rows: Records, details: Records, judge_id: str) -> list[Path]:
    """Write one judgments table (and its details) per benchmark, atomically (`store.write`)."""
    written = []
    for bench in sorted({r["benchmark"] for r in rows}):
        path = judgments_path(bench, judge_id)
        with atomic_path(path) as tmp:
            part = [r for r in rows if r["benchmark"] == bench]
            pq.write_table(judgments_table(part), tmp, compression="zstd")
        written.append(path)
        with atomic_path(details_path(bench, judge_id)) as tmp:
            pq.write_table(details_table([d for d in details if d["benchmark"] == bench]), tmp)
    return written


# --------------------------------------------------------------------------- the run


def _resolved(records: Records, spec: JudgeSpec, conditions: list[str] | None) -> Resolved | None:
    existing = _existing(records, spec)
    if existing is None:
        return None
    judge = Resolved.of(spec, conditions, existing=existing)
    if any(c.startswith("reference=") for c in judge.conditions):
        from judgelab.judges.references import DERIVED_REFERENCES  # loads pandas: rare

        wanted = {c.split("=", 1)[1] for c in judge.conditions if c.startswith("reference=")}
        if wanted & set(DERIVED_REFERENCES) and any(r.get("meta") is not None for r in records):
            return None  # references drawn into the items' meta: the pandas path
    return judge


def _select(records: Records, splits: list[str] | None, limit: int | None) -> Records | None:
    if limit is not None and limit < 1:
        return None
    if splits and not set(splits) <= {str(r["split"]) for r in records}:
        return None
    chosen = [r for r in records if not splits or r["split"] in splits]
    return chosen[:limit] if limit is not None else chosen


def _summary(spec, records, chosen, rows, details, asked, written, t0) -> Summary:
    """Return the run's summary, counted as `runner._summarize` counts a remote judge's."""
    return summary_mod.from_request(
        spec,
        asked,
        written,
        t0,
        benchmark=",".join(benchmarks(records)),
        planned=asked.planned,
        not_applicable=asked.skipped,
        rows=len(rows),
        invalid=sum(1 for r in rows if not r["valid"]),
        pending=sum(1 for d in details if d["status"] == "pending"),
        cost_usd=None if spec.price_in is None else asked.stats.cost_usd,
    )


def _build(records: Records, judge: Resolved, c: Any, whole: Any, prebuilt: Any):
    """Return (rows, details) of the judge over all `records` from the cache (`runner._build`)."""
    p = whole or table_mod.plan_for(records, judge)
    keys, parsed = p.keys, None
    if prebuilt is not None and prebuilt.plan is p:
        prebuilt.poll()
        keys, parsed = prebuilt.keys_left(), prebuilt.parsed
    stored = c.get_many(keys)
    responses = {k: check_record(v)[0] for k, v in stored.items() if isinstance(v, dict)}
    return table_mod.build_rows(records, p, responses, parsed=parsed, records=records)


def _merged(rows, details, records, judge_id):
    """Return (judgments, details, written) merged with the older table by the pandas path."""
    import pandas as pd

    from judgelab.judges import store
    from judgelab.judges.rows import built

    items = pd.DataFrame(records)
    merged = store.merge_existing(built(rows, details), items, judge_id)
    written = store.write(merged, judge_id) if len(merged.judgments) else []
    return merged.judgments, merged.details, written


def run(
    records: Records,
    spec: JudgeSpec,
    *,
    splits: list[str] | None = None,
    limit: int | None = None,
    conditions: list[str] | None = None,
    progress: bool = True,
    evict_invalid: bool = False,
    held: Collection[str] | None = None,
) -> RunResult | None:
    """Judge `records` (`read_items`) as `runner.run(..., write_tables=True)` does.

    Returns None, having requested nothing, when the run is not one this path takes (an
    offline baseline, derived references, an unknown split, a table of another judge): the
    caller runs `runner.run`. The result's tables are arrow tables (pandas frames when the
    merge kept rows of an older table).
    """
    t0 = time.monotonic()
    if spec.is_offline:
        return None
    judge = _resolved(records, spec, conditions)
    chosen = _select(records, splits, limit)
    if judge is None or chosen is None:
        return None
    p = table_mod.plan_for(chosen, judge)
    benches = benchmarks(records)
    with opened(None) as c:
        asked = request_missing(p, c, spec, progress, evict_invalid, chosen, held_keys(spec, held))
        try:
            with locks.locked_targets(judgments_path(b, spec.judge_id) for b in benches):
                now = _resolved(records, spec, conditions)
                if now is None:  # another process wrote the table meanwhile: pandas path
                    return None
                same = len(chosen) == len(records) and now.conditions == judge.conditions
                rows, details = _build(records, now, c, p if same else None, asked.prebuilt)
                if _keeps_old_rows(rows, records, spec.judge_id):
                    judgments, det, written = _merged(rows, details, records, spec.judge_id)
                else:
                    written = write(rows, details, spec.judge_id) if rows else []
                    judgments, det = judgments_table(rows), details_table(details)
        finally:
            if asked.prebuilt is not None:
                asked.prebuilt.close()
    summary = _summary(spec, records, chosen, rows, details, asked, written, t0)
    return RunResult(judgments, det, summary, written)


def unparsed(judgments: Any) -> tuple[int, int, str]:
    """Return (rows, invalid verdicts, first invalid raw output) of an arrow or pandas table."""
    if isinstance(judgments, pa.Table):
        valid, output = judgments.column("valid").to_pylist(), judgments.column("output")
        output = output.to_pylist()
    else:
        valid = judgments["valid"].astype("boolean").fillna(False).tolist()
        output = judgments["output"].tolist()
    bad = [o for v, o in zip(valid, output, strict=True) if not v]
    raws = [o for o in bad if isinstance(o, str)]
    return len(valid), len(bad), raws[0] if raws else ""
