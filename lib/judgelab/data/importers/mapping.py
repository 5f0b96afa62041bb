"""The generic importer: a CSV / TSV / JSONL / JSON / parquet file of judgments + a YAML mapping.

`import_file(data_files, mapping)` returns the items and judgments tables. The mapping (its
format: `judgelab.data.importers.mapping_spec`) says which column holds what; the files are
read, joined and exploded into records by `judgelab.data.importers.reshape`; fields are read
per record by `mapped_rows`, items are assembled (and checked to agree) by `mapped_items`,
and this module builds the judgments.

Order semantics. A pairwise verdict may be mapped to `A`/`B` (the position shown: first /
second), to `1`/`2` (the file's slot, already un-swapped, as LLMBar's `winner`), to
`pos`/`neg`, or to `tie`. `chosen` is always un-swapped. `order` is 0 when response_pos was
shown as A. With two slots, the gold slot becomes response_pos; without gold the slots are
put in a canonical order (alphabetical by `model_1`/`model_2` when given, else the first
row's slot order) recorded as `model_pos`/`model_neg` in `meta`. Rows of the same item may
list the slots in either order: they are matched by text. A verdict value outside the map,
or an empty one, is kept as `valid=False` with its raw output. `correct` is null without
gold, else `valid and chosen == gold` (pairwise) / `valid and verdict == gold` (pointwise).

Each pairwise judgment also keeps `shown_first`: the source's own slot shown as A ("1"/"2";
"pos"/"neg" for a pos/neg source), so per-presentation figures in the source's frame can be
read back. A data file whose every verdict is invalid is an error (naming the column and
three raw values) unless `allow_invalid`.

Errors (`SourceFormatError`) name the file, the line (JSONL) or row (others, 1-based data
row), and the column.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pandas as pd

from judgelab.core import schema, tables
from judgelab.core.names import safe_name
from judgelab.data import clustering
from judgelab.data.importers import mapped_fast, mapped_stream, reshape
from judgelab.data.importers.base import Imported, SourceFormatError
from judgelab.data.importers.mapped_items import ItemKey, Items
from judgelab.data.importers.mapped_rows import (
    Rows,
    Unmapped,
    flag,
    integer,
    isnull,
    jsonable,
    text,
)
from judgelab.data.importers.mapping_spec import ALL_FIELDS as ALL_FIELDS
from judgelab.data.importers.mapping_spec import COLUMN_FIELDS as COLUMN_FIELDS
from judgelab.data.importers.mapping_spec import CONSTANT_FIELDS as CONSTANT_FIELDS
from judgelab.data.importers.mapping_spec import PAIRWISE_VERDICTS as PAIRWISE_VERDICTS
from judgelab.data.importers.mapping_spec import Field as Field
from judgelab.data.importers.mapping_spec import load_mapping as load_mapping
from judgelab.data.importers.mapping_spec import mapping_fields
from judgelab.data.importers.mapping_spec import normalise as _norm
from judgelab.data.importers.mapping_spec import parse_mapping as parse_mapping
from judgelab.data.importers.records import read_records as read_records
from judgelab.data.importers.reshape import Record
from judgelab.errors import UnsafeNameError


def import_records(
    shaped: reshape.Reshaped, fields: dict[str, Any], *, allow_invalid: bool = False
) -> Imported:
    """Apply a parsed mapping to the records of `reshape.read`; return the two tables."""
    records = shaped.records
    rows = Rows(records, fields)
    task = text(rows.get("task", records[0], default="pairwise")) or "pairwise"
    items = Items()
    judgments: list[dict[str, Any]] = []
    where: list[Record] = []
    unit_of: dict[ItemKey, str | None] = {}
    for rec in records:
        key = _item_key(rows, rec, fields)
        texts = {k: text(rows.get(k, rec)) for k in ("question", "context", "reference")}
        meta = {n: jsonable(rows.resolve(rec, p)) for n, p in fields.get("meta", {}).items()}
        values: dict[str, Any] = {**texts, **{f"meta.{k}": v for k, v in meta.items()}}
        if rows.column("cluster") is not None:
            values["cluster"] = unit_of.setdefault(key, text(rows.get("cluster", rec)))
        slot_of: dict[str, str] = {}
        if task == "pairwise":
            _, slot_of = items.pairwise(rows, rec, key, texts, meta)
        else:
            own = items.pointwise(rows, rec, key, task, {**texts, "meta": meta})
            values.update(response=own["response"], gold=own["gold"])
        items.agree(key, rec, values, rows)
        if "verdict" in fields and rec.judged:
            rec_j = _judgment(rows, rec, task, slot_of, gold=items.rows[key]["gold"])
            judgments.append({"benchmark": key[0], "split": key[1], "item_id": key[2], **rec_j})
            where.append(rec)
    rows.check_found(records)
    if "item_id" not in fields:
        _check_content_repeats(judgments, where, items, rows)
    if not allow_invalid:
        _check_some_valid(rows, judgments, where, task)
    items_df = _with_units(schema.new_items(list(items.rows.values())), fields, unit_of)
    judg_df = schema.new_judgments(judgments) if "verdict" in fields else None
    return Imported(items_df, judg_df)


def _item_key(rows: Rows, rec: Record, fields: dict[str, Any]) -> ItemKey:
    """Return (benchmark, split, item id) of a record (the id: its record number by default)."""
    bench = text(rows.get("benchmark", rec))
    if not bench:
        raise rec.loc.error("empty benchmark", rows.column("benchmark"))
    split = text(rows.get("split", rec, default="default")) or "default"
    # Without an item_id column the id is derived from the item's text; an empty cell is an
    # error.
    if "item_id" not in fields:
        return bench, split, content_id(rows, rec, fields)
    item_id = text(rows.get("item_id", rec))
    if item_id is None:
        raise rec.loc.error("empty item id", rows.column("item_id"))
    return bench, split, item_id


#: The fields whose text makes an item: its id, when no item_id column is mapped, hashes them.
CONTENT_FIELDS = ("question", "context", "reference")
RESPONSE_FIELDS = ("response", "response_1", "response_2", "response_pos", "response_neg")
CONTENT_NOTE = (
    "no item_id column: item ids derived from the content (c + sha256 of question, context, "
    "reference and the responses, in any slot order), so the same item judged by several "
    "judges or in several rows is one item"
)


def content_id(rows: Rows, rec: Record, fields: dict[str, Any]) -> str:
    """Return a record's content-based item id: `c` + 16 hex digits of a sha256.

    The hash covers the question, context and reference and the responses sorted (the two
    slots of a pairwise item may be listed in either order); the same text always gets the
    same id, in any file, row order or judge.
    """
    parts = [text(rows.get(k, rec)) or "" for k in CONTENT_FIELDS if k in fields]
    responses = sorted(text(rows.get(k, rec)) or "" for k in RESPONSE_FIELDS if k in fields)
    blob = json.dumps([parts, responses], ensure_ascii=False)
    return "c" + hashlib.sha256(blob.encode("utf-8")).hexdigest()[:16]


def _check_content_repeats(
    judgments: list[dict[str, Any]], where: list[Record], items: Items, rows: Rows
) -> None:
    """Refuse one judge's second judgment of content-identical items (ids from content).

    Without an item_id column two rows with the same text are one item; the same judge,
    condition, order and sample twice is then a repeat the file does not tell apart.
    """
    seen: dict[tuple, Record] = {}
    for j, rec in zip(judgments, where, strict=True):
        key = tuple(j.get(k) for k in ("benchmark", "split", "item_id", "judge"))
        key += tuple(j.get(k) for k in ("condition", "order", "sample"))
        if key in seen:
            question = str(items.rows[key[:3]].get("question") or "")
            shown = question if len(question) <= 80 else question[:77] + "..."
            raise rec.loc.error(
                f"the same item (question {shown!r}, first at {seen[key]}) is judged again by "
                f"{j['judge']!r} in order {j.get('order')}, sample {j.get('sample')}: without "
                "an item_id column identical text is one item; map item_id (or sample)",
                rows.column("question"),
            )
        seen[key] = rec


def _check_some_valid(
    rows: Rows, judgments: list[dict[str, Any]], where: list[Record], task: str
) -> None:
    """Raise when every verdict of a data file is unmapped or empty (unless allowed)."""
    by_file: dict[str, list[int]] = {}
    for i, rec in enumerate(where):
        by_file.setdefault(rec.loc.file, []).append(i)
    for file, idx in by_file.items():
        if any(judgments[i]["valid"] for i in idx):
            continue
        raw = []
        for i in idx:
            value = text(rows.raw("verdict", where[i]))
            if value not in raw:
                raw.append(value)
        examples = ", ".join(repr(v if v is None else v[:60]) for v in raw[:3])
        f = rows.fields["verdict"]
        if f.map is not None:
            why = "none is in the verdict map"
        elif task == "pairwise":
            why = "none reads as A/B/tie, 1/2 or pos/neg"
        else:
            why = "every one is empty"
        raise SourceFormatError(
            file,
            f"all {len(idx)} verdicts are invalid: {why} (e.g. {examples}); "
            "fix the mapping, or pass --allow-invalid if that is expected",
            column=rows.column("verdict") or "verdict",
        )


def _with_units(
    items: pd.DataFrame, fields: dict[str, Any], unit_of: dict[ItemKey, str | None]
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
    keys = zip(items["benchmark"], items["split"], items["item_id"], strict=True)
    given = pd.Series(
        [
            None if not unit_of.get((b, s, i)) else f"{b}|{s}|column|{unit_of[(b, s, i)]}"
            for b, s, i in keys
        ],
        index=items.index,
        dtype="string",
    )
    return clustering.with_clusters(items.assign(cluster=given), ("item",))


def _judgment(
    rows: Rows, rec: Record, task: str, slot_of: dict[str, str], *, gold: str | None
) -> dict[str, Any]:
    """Return the judgment columns of one record (without benchmark, split and item id)."""
    judge_raw = _judge_name(rows, rec)
    verdict = rows.get("verdict", rec)
    fields = rows.fields
    raw = rows.get("output", rec) if "output" in fields else rows.raw("verdict", rec)
    output = text(raw)
    out: dict[str, Any] = {
        "judge": judge_raw,
        "model": text(rows.get("model", rec)),
        "prompt": text(rows.get("prompt", rec)),
        "condition": text(rows.get("condition", rec, default="")) or "",
        "sample": integer(rows, "sample", rec, None) if "sample" in fields else 0,
        "output": output,
    }
    if "judgment_meta" in fields:
        out["judgment_meta"] = {
            n: jsonable(rows.resolve(rec, p)) for n, p in fields["judgment_meta"].items()
        }
    if out["model"] is None and "model" not in fields:
        out["model"] = judge_raw
    if task == "pairwise":
        order, first, chosen, value = _pairwise_verdict(rows, rec, verdict, slot_of)
        out.update(order=order, verdict=value, valid=chosen is not None, chosen=chosen)
        out["shown_first"] = first
        out["correct"] = None if gold is None else bool(chosen is not None and chosen == gold)
        return out
    valid = not isnull(verdict) and not isinstance(verdict, Unmapped)
    value = text(verdict) if valid else None
    if valid and value == "":
        valid, value = False, None
    out.update(order=0, verdict=value, valid=valid, chosen=None)
    out["correct"] = None if gold is None else bool(valid and value == gold)
    return out


def _judge_name(rows: Rows, rec: Record) -> str:
    """Return the judge of a record: a safe name as given, never rewritten (issue 32, 16).

    A value the judge's `map` does not list is used as it is (the map renames some judges).

    Raises:
        SourceFormatError: naming the file, row/line and column (or mapping key), why the
            name is refused, and how to map it to a safe one.
    """
    value = rows.get("judge", rec, default="imported")
    name = text(value.raw if isinstance(value, Unmapped) else value) or "imported"
    try:
        return safe_name("judge", name)
    except UnsafeNameError as exc:
        column = rows.column("judge")
        raise rec.loc.error(
            f"{exc} ({'' if column else 'mapping key judge; '}a judge name becomes a file "
            "name and is never rewritten: map the value to a safe name, e.g. "
            "judge: {column: ..., map: {raw value: safe-name}})",
            column,
        ) from None


def _pairwise_verdict(
    rows: Rows, rec: Record, verdict: Any, slot_of: dict[str, str]
) -> tuple[int, str, str | None, str | None]:
    """Return (order, source slot shown first, chosen, verdict-as-shown) of one record."""
    if "response_pos" in rows.fields:
        order = integer(rows, "order", rec, (0, 1)) if "order" in rows.fields else 0
        shown_a = first = "pos" if order == 0 else "neg"
    else:
        swapped = flag(rows, "swapped", rec) if "swapped" in rows.fields else False
        first = "2" if swapped else "1"
        shown_a = slot_of[first]
        order = 0 if shown_a == "pos" else 1
    if isnull(verdict) or isinstance(verdict, Unmapped):
        return order, first, None, None
    v = _norm(verdict)
    if rows.fields["verdict"].map is None:
        v = {"a": "A", "b": "B", "tie": "tie", "c": "tie"}.get(v.lower(), v)
    if v == "tie":
        return order, first, "tie", "tie"
    if v in ("A", "B"):
        chosen = shown_a if v == "A" else ("neg" if shown_a == "pos" else "pos")
        return order, first, chosen, v
    if v in ("pos", "neg"):
        chosen = v
    elif v in slot_of:
        chosen = slot_of[v]
    else:
        return order, first, None, None
    # Report the verdict in the presentation frame too.
    return order, first, chosen, "A" if chosen == shown_a else "B"


def import_file(
    data_files: str | Path | list[str | Path],
    mapping: str | Path | dict[str, Any],
    *,
    allow_invalid: bool = False,
) -> Imported:
    """Read the data file(s) and apply `mapping` (a YAML path or its parsed content).

    Args:
        data_files: A file, a glob pattern, or a list of them: one import.
        mapping: The mapping (`mapping_spec`).
        allow_invalid: Accept a file whose every verdict is unmapped (else an error).
    """
    return import_with_notes(data_files, mapping, allow_invalid=allow_invalid)[0]


def import_with_notes(
    data_files: str | Path | list[str | Path],
    mapping: str | Path | dict[str, Any],
    *,
    allow_invalid: bool = False,
) -> tuple[Imported, list[str]]:
    """`import_file`, also returning the notes for the import summary (unmatched records)."""
    fields = mapping_fields(mapping)
    files = reshape.expand(data_files)
    fast = mapped_fast.fast_import(files, fields, allow_invalid=allow_invalid)
    if fast is not None:  # one file, flat, nested, exploded or joined: column-wise, same tables
        return fast, []
    shaped = reshape.read(files, fields)
    imported = import_records(shaped, fields, allow_invalid=allow_invalid)
    notes = list(shaped.notes)
    if "item_id" not in fields:
        notes.append(
            f"{CONTENT_NOTE} ({len(shaped.records)} records -> {len(imported.items)} items)"
        )
    return imported, notes


def import_file_to(
    data_files: str | Path | list[str | Path],
    mapping: str | Path | dict[str, Any],
    items_path: str | Path,
    judgments_path: str | Path,
    *,
    allow_invalid: bool = False,
) -> tuple[int, int | None]:
    """`import_file`, written as the items and judgments tables (each atomically).

    A column-wise import is streamed part by part (`mapped_stream`: 10^7 rows within 4 GB);
    any other is imported in memory, then written (`tables.write_*`). The tables are the
    same either way. Returns the number of items and of judgments (None: no judgments
    table, none written).
    """
    fields = mapping_fields(mapping)
    files = reshape.expand(data_files)
    counts = mapped_stream.stream_import(
        files, fields, items_path, judgments_path, allow_invalid=allow_invalid
    )
    if counts is not None:
        return counts
    imported = import_with_notes(files, mapping, allow_invalid=allow_invalid)[0]
    tables.write_items(imported.items, items_path)
    if imported.judgments is None:
        return len(imported.items), None
    tables.write_judgments(imported.judgments, judgments_path)
    return len(imported.items), len(imported.judgments)


def import_mapped(root: Path, source: Any) -> Imported:
    """Registry importer: apply `source.options["mapping"]` to the source's files (one import)."""
    mapping = source.options.get("mapping")
    if mapping is None:
        raise SourceFormatError(source.registry_file or source.name, "options.mapping is missing")
    return import_file([root / f.path for f in source.files], mapping)


__all__ = [
    "import_file",
    "import_file_to",
    "import_mapped",
    "import_records",
    "import_with_notes",
    "load_mapping",
    "parse_mapping",
    "read_records",
]
