"""The generic importer: a CSV / TSV / JSONL / JSON / parquet file of judgments + a YAML mapping.

`import_file(data_file, mapping)` returns the items and judgments tables. The mapping (its
format: `judgelab.data.importers.mapping_spec`) says which column holds what; the file is read
by `judgelab.data.importers.records.read_records`; this module assembles the tables.

Order semantics. A pairwise verdict may be mapped to `A`/`B` (the position shown: first /
second), to `1`/`2` (the file's slot, already un-swapped, as LLMBar's `winner`), to
`pos`/`neg`, or to `tie`. `chosen` is always un-swapped. `order` is 0 when response_pos was
shown as A. With two slots, the gold slot becomes response_pos; without gold the slots are
put in a canonical order (alphabetical by `model_1`/`model_2` when given, else the first
row's slot order) recorded as `model_pos`/`model_neg` in `meta`. Rows of the same item may
list the slots in either order: they are matched by text. A verdict value outside the map,
or an empty one, is kept as `valid=False` with its raw output. `correct` is null without
gold, else `valid and chosen == gold` (pairwise) / `valid and verdict == gold` (pointwise).

Errors (`SourceFormatError`) name the file, the line (JSONL) or row (others, 1-based data
row), and the column.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from judgelab.core import schema
from judgelab.data import clustering
from judgelab.data.importers.base import Imported, SourceFormatError
from judgelab.data.importers.mapping_spec import ALL_FIELDS as ALL_FIELDS
from judgelab.data.importers.mapping_spec import COLUMN_FIELDS as COLUMN_FIELDS
from judgelab.data.importers.mapping_spec import CONSTANT_FIELDS as CONSTANT_FIELDS
from judgelab.data.importers.mapping_spec import PAIRWISE_VERDICTS as PAIRWISE_VERDICTS
from judgelab.data.importers.mapping_spec import Field as Field
from judgelab.data.importers.mapping_spec import load_mapping as load_mapping
from judgelab.data.importers.mapping_spec import normalise as _norm
from judgelab.data.importers.mapping_spec import parse_mapping as parse_mapping
from judgelab.data.importers.records import read_records as read_records

_TRUE = {"1", "true", "yes", "y", "t", "swapped"}
_FALSE = {"0", "false", "no", "n", "f", "", "none"}
_SAFE = re.compile(r"[^A-Za-z0-9._\-]+")


def _isnull(value: Any) -> bool:
    if value is None:
        return True
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):
        return False


def _text(value: Any) -> str | None:
    if _isnull(value):
        return None
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False)
    return _norm(value) if not isinstance(value, str) else value


class _Rows:
    """Resolve mapped fields row by row, with errors naming file, line/row and column."""

    def __init__(self, df: pd.DataFrame, fields: dict[str, Any], file: str, unit: str):
        self.df, self.fields, self.file, self.unit = df, fields, file, unit
        for key, f in fields.items():
            cols = f if key == "meta" else ([f.column] if f.column else [])
            for col in cols:
                if col not in df.columns:
                    raise SourceFormatError(
                        file,
                        f"mapping field '{key}' names a column that is not in the file "
                        f"(columns: {', '.join(map(str, df.columns))})",
                        column=col,
                    )

    def error(self, idx: int, problem: str, column: str | None) -> SourceFormatError:
        where = {"line": idx} if self.unit == "line" else {"row": idx}
        return SourceFormatError(self.file, problem, column=column, **where)

    def raw(self, key: str, idx: int, row: pd.Series) -> Any:
        f = self.fields.get(key)
        if f is None:
            return None
        return f.value if f.column is None else row[f.column]

    def get(self, key: str, idx: int, row: pd.Series, default: Any = None) -> Any:
        f = self.fields.get(key)
        if f is None:
            return default
        value = self.raw(key, idx, row)
        if f.map is not None and not _isnull(value):
            return f.map.get(_norm(value), _Unmapped(value))
        return default if _isnull(value) else value


@dataclass(frozen=True)
class _Unmapped:
    raw: Any


def _flag(rows: _Rows, key: str, idx: int, row: pd.Series) -> bool:
    value = rows.get(key, idx, row, default=False)
    if isinstance(value, _Unmapped):
        raise rows.error(idx, f"value {value.raw!r} is not in the map", rows.fields[key].column)
    text = _norm(value).lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise rows.error(idx, f"expected a true/false value, got {value!r}", rows.fields[key].column)


def _int(rows: _Rows, key: str, idx: int, row: pd.Series, allowed: tuple[int, ...] | None) -> int:
    value = rows.get(key, idx, row, default=0)
    col = rows.fields[key].column if key in rows.fields else None
    try:
        out = int(_norm(value)) if not isinstance(value, _Unmapped) else None
    except ValueError:
        out = None
    if out is None or out < 0 or (allowed is not None and out not in allowed):
        raise rows.error(
            idx, f"expected {allowed or 'a non-negative integer'}, got {value!r}", col
        )
    return out


def safe_id(text: str) -> str:
    """Return `text` made file-name safe (letters, digits, `.`, `_`, `-`).

    >>> safe_id("gpt-4o / vanilla prompt")
    'gpt-4o_vanilla_prompt'
    """
    return _SAFE.sub("_", text).strip("_") or "judge"


def import_frame(
    df: pd.DataFrame, fields: dict[str, Any], *, file: str, unit: str = "row"
) -> Imported:
    """Apply a parsed mapping to a frame read by `read_records`; return the two tables."""
    rows = _Rows(df, fields, file, unit)
    task = rows.get("task", 0, df.iloc[0], default="pairwise")
    items: dict[tuple[str, str], dict[str, Any]] = {}
    judgments: list[dict[str, Any]] = []
    has_verdict = "verdict" in fields
    benchmark = str(fields["benchmark"].value if fields["benchmark"].column is None else "")
    unit_of: dict[tuple[str, str], str | None] = {}
    by_column = "cluster" in fields and fields["cluster"].column is not None
    for pos, (idx, row) in enumerate(df.iterrows()):
        bench = benchmark or _text(rows.get("benchmark", idx, row))
        split = _text(rows.get("split", idx, row, default="default")) or "default"
        # The row number is the id only when no column is mapped; an empty cell is an error.
        item_id = _text(rows.get("item_id", idx, row)) if "item_id" in fields else str(pos)
        if item_id is None:
            raise rows.error(idx, "empty item id", fields["item_id"].column)
        key = (split, item_id)
        text = {k: _text(rows.get(k, idx, row)) for k in ("question", "context", "reference")}
        meta = {c: _jsonable(row[c]) for c in fields.get("meta", [])}
        slot_of: dict[str, str] = {}
        if task == "pairwise":
            _, slot_of = _pairwise_item(rows, idx, row, text, meta, key, items)
        else:
            _pointwise_item(rows, idx, row, task, {**text, "meta": meta}, key, items)
        items[key]["benchmark"] = bench
        if by_column:
            unit_of.setdefault(key, _text(rows.get("cluster", idx, row)))
        if has_verdict:
            rec = _judgment(rows, idx, row, task, slot_of, gold=items[key]["gold"])
            judgments.append({"benchmark": bench, "split": split, "item_id": item_id, **rec})
    items_df = _with_units(schema.new_items(list(items.values())), fields, unit_of)
    judg_df = schema.new_judgments(judgments) if has_verdict else None
    return Imported(items_df, judg_df)


def _with_units(
    items: pd.DataFrame, fields: dict[str, Any], unit_of: dict[tuple[str, str], str | None]
) -> pd.DataFrame:
    """Set the items' `cluster` from the mapping's `cluster` (a rule, or a column's values).

    Without one the column is left out: the registry source's rule (or, for a file import,
    `item`) is applied by `judgelab.data.ingest`.
    """
    f = fields.get("cluster")
    if f is None:
        return items
    if f.column is None:
        return clustering.with_clusters(items, f.value)
    raw = [unit_of.get((s, i)) for s, i in zip(items["split"], items["item_id"], strict=True)]
    given = pd.Series(
        [
            None if v is None or v == "" else f"{b}|{s}|column|{v}"
            for b, s, v in zip(items["benchmark"], items["split"], raw, strict=True)
        ],
        index=items.index,
        dtype="string",
    )
    return clustering.with_clusters(items.assign(cluster=given), ("item",))


def _pointwise_item(
    rows: _Rows,
    idx: int,
    row: pd.Series,
    task: str,
    texts: dict[str, Any],
    key: tuple[str, str],
    items: dict[tuple[str, str], dict[str, Any]],
) -> None:
    """Add the row's single-response item to `items` (a repeat must agree with the first)."""
    split, item_id = key
    item = {
        "benchmark": None,
        "split": split,
        "item_id": item_id,
        "task": task,
        **texts,
        "response": _text(rows.get("response", idx, row)),
        "gold": _gold_pointwise(rows, idx, row),
    }
    if key in items and (items[key]["response"], items[key]["gold"]) != (
        item["response"],
        item["gold"],
    ):
        raise rows.error(idx, f"item {item_id!r} has another response or gold than before", None)
    items.setdefault(key, item)


def _judgment(
    rows: _Rows,
    idx: int,
    row: pd.Series,
    task: str,
    slot_of: dict[str, str],
    *,
    gold: str | None,
) -> dict[str, Any]:
    """Return the judgment columns of one row (without benchmark, split and item id)."""
    judge_raw = _text(rows.get("judge", idx, row, default="imported")) or "imported"
    raw_verdict = rows.raw("verdict", idx, row)
    verdict = rows.get("verdict", idx, row)
    fields = rows.fields
    output = _text(rows.get("output", idx, row)) if "output" in fields else _text(raw_verdict)
    rec: dict[str, Any] = {
        "judge": safe_id(judge_raw),
        "model": _text(rows.get("model", idx, row)),
        "prompt": _text(rows.get("prompt", idx, row)),
        "condition": _text(rows.get("condition", idx, row, default="")) or "",
        "sample": _int(rows, "sample", idx, row, None) if "sample" in fields else 0,
        "output": output,
    }
    if rec["model"] is None and "model" not in fields:
        rec["model"] = judge_raw
    if task == "pairwise":
        order, chosen, value = _pairwise_verdict(rows, idx, row, verdict, slot_of)
        rec.update(order=order, verdict=value, valid=chosen is not None, chosen=chosen)
        rec["correct"] = None if gold is None else bool(chosen is not None and chosen == gold)
        return rec
    valid = not _isnull(verdict) and not isinstance(verdict, _Unmapped)
    value = _text(verdict) if valid else None
    if valid and value == "":
        valid, value = False, None
    rec.update(order=0, verdict=value, valid=valid, chosen=None)
    rec["correct"] = None if gold is None else bool(valid and value == gold)
    return rec


def _jsonable(value: Any) -> Any:
    if isinstance(value, (list, dict)):
        return value
    if hasattr(value, "tolist"):  # numpy scalars and arrays (parquet list cells)
        return value.tolist()
    return None if _isnull(value) else value


def _gold_pointwise(rows: _Rows, idx: int, row: pd.Series) -> str | None:
    gold = rows.get("gold", idx, row)
    if isinstance(gold, _Unmapped):
        raise rows.error(
            idx, f"gold value {gold.raw!r} is not in the map", rows.fields["gold"].column
        )
    return _text(gold)


def _pairwise_item(
    rows: _Rows,
    idx: int,
    row: pd.Series,
    text: dict[str, Any],
    meta: dict[str, Any],
    key: tuple[str, str],
    items: dict[tuple[str, str], dict[str, Any]],
) -> tuple[dict[str, Any], dict[str, str]]:
    """Return the item of this row and the slot -> pos/neg map for this row."""
    if "response_pos" in rows.fields:
        pos, neg = (
            _text(rows.get("response_pos", idx, row)),
            _text(rows.get("response_neg", idx, row)),
        )
        gold, slots = "pos", {"pos": "pos", "neg": "neg"}
        models = (None, None)
    else:
        r1, r2 = _text(rows.get("response_1", idx, row)), _text(rows.get("response_2", idx, row))
        models = (_text(rows.get("model_1", idx, row)), _text(rows.get("model_2", idx, row)))
        g = rows.get("gold", idx, row)
        if isinstance(g, _Unmapped):
            raise rows.error(
                idx, f"gold value {g.raw!r} is not in the map", rows.fields["gold"].column
            )
        g = None if _isnull(g) else _norm(g)
        if g not in (None, "1", "2", "tie"):
            raise rows.error(
                idx, f"gold must map to '1', '2' or 'tie', got {g!r}", rows.fields["gold"].column
            )
        if g == "2" or (g in (None, "tie") and models[0] and models[1] and models[1] < models[0]):
            pos, neg, slots, models = r2, r1, {"2": "pos", "1": "neg"}, (models[1], models[0])
        else:
            pos, neg, slots = r1, r2, {"1": "pos", "2": "neg"}
        gold = {"1": "pos", "2": "pos", "tie": "tie", None: None}[g]
    split, item_id = key
    if key in items:
        have = items[key]
        if (have["response_pos"], have["response_neg"]) == (neg, pos) and pos != neg:
            slots = {s: ("neg" if v == "pos" else "pos") for s, v in slots.items()}
            pos, neg = neg, pos
            if gold == "pos":
                raise rows.error(
                    idx, f"item {item_id!r}: gold disagrees with an earlier row", None
                )
        elif (have["response_pos"], have["response_neg"]) != (pos, neg):
            raise rows.error(
                idx, f"item {item_id!r} has other responses than an earlier row", None
            )
        if have["gold"] != gold:
            raise rows.error(
                idx, f"item {item_id!r}: gold {gold!r} != earlier {have['gold']!r}", None
            )
        return have, slots
    if models[0] or models[1]:
        meta = {**meta, "model_pos": models[0], "model_neg": models[1]}
    item = {
        "benchmark": None,
        "split": split,
        "item_id": item_id,
        "task": "pairwise",
        **text,
        "response_pos": pos,
        "response_neg": neg,
        "gold": gold,
        "meta": meta,
    }
    items[key] = item
    return item, slots


def _pairwise_verdict(
    rows: _Rows, idx: int, row: pd.Series, verdict: Any, slot_of: dict[str, str]
) -> tuple[int, str | None, str | None]:
    """Return (order, chosen, verdict-as-shown) of one pairwise row."""
    if "response_pos" in rows.fields:
        order = _int(rows, "order", idx, row, (0, 1)) if "order" in rows.fields else 0
        shown_a = "pos" if order == 0 else "neg"
    else:
        swapped = _flag(rows, "swapped", idx, row) if "swapped" in rows.fields else False
        first_slot = "2" if swapped else "1"
        shown_a = slot_of[first_slot]
        order = 0 if shown_a == "pos" else 1
    if _isnull(verdict) or isinstance(verdict, _Unmapped):
        return order, None, None
    v = _norm(verdict)
    if rows.fields["verdict"].map is None:
        v = {"a": "A", "b": "B", "tie": "tie", "c": "tie"}.get(v.lower(), v)
    if v == "tie":
        return order, "tie", "tie"
    if v in ("A", "B"):
        chosen = shown_a if v == "A" else ("neg" if shown_a == "pos" else "pos")
        return order, chosen, v
    if v in ("pos", "neg"):
        chosen = v
    elif v in slot_of:
        chosen = slot_of[v]
    else:
        return order, None, None
    # Report the verdict in the presentation frame too.
    return order, chosen, "A" if chosen == shown_a else "B"


def import_file(data_file: str | Path, mapping: str | Path | dict[str, Any]) -> Imported:
    """Read `data_file` and apply `mapping` (a YAML path or its parsed content)."""
    fields = load_mapping(mapping) if isinstance(mapping, (str, Path)) else parse_mapping(mapping)
    df, unit = read_records(data_file)
    return import_frame(df, fields, file=str(data_file), unit=unit)


def import_mapped(root: Path, source: Any) -> Imported:
    """Registry importer: apply `source.options["mapping"]` to every file of the source."""
    mapping = source.options.get("mapping")
    if mapping is None:
        raise SourceFormatError(source.registry_file or source.name, "options.mapping is missing")
    parts = [import_file(root / f.path, mapping) for f in source.files]
    items = pd.concat([p.items for p in parts], ignore_index=True)
    judg = [p.judgments for p in parts if p.judgments is not None]
    items = items.drop_duplicates(subset=list(schema.ITEMS.key), keep="first")
    return Imported(
        schema.new_items(items.reset_index(drop=True)),
        schema.new_judgments(pd.concat(judg, ignore_index=True)) if judg else None,
    )


__all__ = [
    "import_file",
    "import_frame",
    "import_mapped",
    "load_mapping",
    "parse_mapping",
    "read_records",
    "safe_id",
]
