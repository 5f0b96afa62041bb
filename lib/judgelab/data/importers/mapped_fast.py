"""The generic importer, column by column, for pairwise mappings (10^6 rows in seconds).

`import_records` maps a file record by record (`mapped_rows.Rows`), ~20 field look-ups a
row. When a mapping reads columns, nested record fields and constants of one CSV/TSV/JSONL/
parquet file (flat, with `explode` of a list, or with a `join` that adds rows: read
column-wise by `mapped_shapes`), with no file-name captures, `meta`, `judgment_meta` or
cluster column, and the task is pairwise, `fast_import` computes the same tables
column-wise instead (tested equal, `tests/data/importers/test_mapped_fast.py`). It raises
no mapping error of its own: any record the record path would reject (an unmapped gold,
items that disagree, a bad flag, a file of invalid verdicts, a JSONL line arrow cannot read
as `json` does...) makes it return None, and the caller runs the record path, which raises
its usual error naming file, row/line and column. The tables are validated by the same
`schema.new_*` calls.

Memory: CSV cells stay in the parser's arrow string columns; JSONL and parquet are read by
arrow in record batches cut down to the mapped values; no Python object is made per text
cell, and per-record logic runs once per distinct value (`_per_value`, `_coded`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from judgelab.core import schema
from judgelab.core.columns import DTYPES
from judgelab.core.names import safe_name
from judgelab.data import clustering
from judgelab.data.importers.base import Imported
from judgelab.data.importers.mapped_rows import _FALSE, _TRUE, text
from judgelab.data.importers.mapped_shapes import SUFFIXES, Fallback, read_frame
from judgelab.data.importers.mapping_spec import Field
from judgelab.data.importers.mapping_spec import normalise as _norm
from judgelab.data.importers.records import read_records
from judgelab.errors import UnsafeNameError

_SHAPES = ("judgment_meta", "meta", "txt_column", "reader")
_Fallback = Fallback
_UNMAPPED = object()
_SWAP = {"pos": "neg", "neg": "pos"}
_SHORT = {"a": "A", "b": "B", "tie": "tie", "c": "tie"}


def eligible(files: list[Path], fields: dict[str, Any]) -> bool:
    """Return whether the mapping and files can take the column-wise path."""
    if len(files) != 1 or files[0].suffix.lower() not in SUFFIXES:
        return False
    if any(fields.get(k) for k in _SHAPES):
        return False
    join, explode = fields.get("join"), fields.get("explode")
    if join is not None and (join.adds != "rows" or explode is not None):
        return False
    if explode is not None and explode.keys is not None:
        return False
    if "item_id" not in fields:  # content-based ids: the record path derives them
        return False
    task = fields.get("task")
    if task is not None and (
        task.column is not None or (text(task.value) or "pairwise") != "pairwise"
    ):
        return False
    cluster = fields.get("cluster")
    if cluster is not None and cluster.column is not None:
        return False
    return all(f.capture is None for f in fields.values() if isinstance(f, Field))


def fast_import(
    files: list[Path], fields: dict[str, Any], *, allow_invalid: bool
) -> Imported | None:
    """Return the import of `files` computed column-wise, or None (use the record path)."""
    if not eligible(files, fields):
        return None
    try:
        flat = not (fields.get("join") or fields.get("explode"))
        if flat and files[0].suffix.lower() in (".csv", ".tsv"):
            columns = _Columns(read_records(files[0], compact=True)[0], fields)
        else:
            columns = _Columns(read_frame(files[0], fields), fields)
        return columns.run(allow_invalid)
    except _Fallback:
        return None


def _per_value(values: Any, fn: Any) -> np.ndarray:
    """Return `fn(v)` of every value as an object array, computed once per distinct value.

    Nulls (None, NaN, NA) reach `fn` as None.
    """
    codes, uniques = _factorize(values)
    out = np.empty(len(uniques) + 1, dtype=object)
    for i, u in enumerate(uniques.tolist()):
        out[i] = fn(u)
    if (codes < 0).any():
        out[-1] = fn(None)
    return out[codes]  # the sentinel -1 picks the null's value


def _factorize(values: Any) -> tuple[np.ndarray, Any]:
    """Codes (-1: null) and distinct values; string arrays stay in arrow (no Python objects)."""
    if not isinstance(values, pd.api.extensions.ExtensionArray):
        values = pd.Series(values, dtype=object)
    return pd.factorize(values, use_na_sentinel=True)


def _coded(values: Any, fn: Any = None) -> Any:
    """`fn(v)` (default: the value) of every value as a string array, once per distinct value."""
    codes, uniques = _factorize(values)
    fn = fn or (lambda v: v)
    table = [fn(u) for u in uniques.tolist()]
    table.append(fn(None) if (codes < 0).any() else None)
    codes = np.where(codes < 0, len(table) - 1, codes)
    return pd.array(table, dtype="string").take(codes)


def _nulls(n: int, dtype: str = "string") -> Any:
    """An all-null array of `n` values."""
    return pd.Series(index=pd.RangeIndex(n), dtype=dtype).array


def _with_nulls(frame: pd.DataFrame, spec: schema.TableSpec) -> pd.DataFrame:
    """Add the required columns of `spec` that `frame` lacks as typed all-null columns.

    `schema.new_items` / `new_judgments` would add them as object columns of None, which
    validation then checks value by value; the stored tables are the same.
    """
    for col in spec.columns:
        if col.required and col.name not in frame.columns:
            frame[col.name] = _nulls(len(frame), DTYPES[col.kind])
    return frame


def _strings(values: Any) -> Any:
    """A nullable string array (validated and stored column-wise, not value by value)."""
    if isinstance(values, pd.arrays.StringArray | pd.core.arrays.ArrowStringArray):
        return values
    return pd.array(list(values) if not isinstance(values, np.ndarray) else values, dtype="string")


def _bool(result: Any) -> np.ndarray:
    """A comparison's result as a numpy bool array (a null compares False)."""
    if hasattr(result, "fillna"):
        return result.fillna(False).to_numpy(dtype=bool)
    return np.asarray(result, dtype=bool)


def _eq(a: Any, b: Any) -> np.ndarray:
    """Elementwise a == b of two string arrays, two nulls equal (Python's None == None)."""
    return _bool(a == b) | (pd.isna(a) & pd.isna(b))


def _where(cond: np.ndarray, a: Any, b: Any) -> Any:
    """`a` where `cond`, else `b` (string arrays)."""
    return _strings(pd.Series(a).where(cond, pd.Series(b)).array)


class _Columns:
    """The mapped fields of every record at once (`mapped_rows.Rows`, column-wise)."""

    def __init__(self, df: pd.DataFrame, fields: dict[str, Any]) -> None:
        self.fields = fields
        self.n = len(df)
        self.df = df
        for f in fields.values():
            if isinstance(f, Field) and f.column is not None and f.column not in df.columns:
                raise _Fallback

    def _column(self, key: str) -> pd.Series:
        f = self.fields[key]
        if f.column is None:
            return pd.Series([f.value] * self.n, dtype=object)
        return self.df[f.column]

    def raw(self, key: str) -> np.ndarray:
        """Field `key` before its value map, as an object array (None where absent)."""
        if key not in self.fields:
            return np.full(self.n, None, dtype=object)
        return _per_value(self._column(key), lambda v: v)

    def get(self, key: str, default: Any = None, *, unmapped: bool = False) -> np.ndarray:
        """Field `key` through its value map (`_UNMAPPED` where not in it, if `unmapped`)."""
        f = self.fields.get(key)
        if f is None:
            return np.full(self.n, default, dtype=object)
        mp = f.map

        def one(v: Any) -> Any:
            if v is None or v != v:
                return default
            return v if mp is None else mp.get(_norm(v), _UNMAPPED)

        out = _per_value(self._column(key), one)
        if mp is not None and not unmapped and any(v is _UNMAPPED for v in set(out.tolist())):
            raise _Fallback
        return out

    def texts(self, key: str, default: Any = None) -> Any:
        """`mapped_rows.text` of field `key` as a string array (`Rows.get`, then `text`)."""
        f = self.fields.get(key)
        if f is not None and f.column is not None and f.map is None:
            s = self.df[f.column]
            if pd.api.types.is_string_dtype(s.dtype) and s.dtype != object:
                out = s.array
                return out if default is None else out.fillna(default)
        if f is None and default is None:
            return _nulls(self.n)
        return _coded(self.get(key, default), lambda v: v if v is None else text(v))

    def integers(self, key: str, allowed: tuple[int, ...] | None) -> np.ndarray:
        """A non-negative integer field (in `allowed`); anything else falls back."""
        try:
            out = _per_value(self.get(key, 0), lambda v: int(_norm(v))).astype(np.int64)
        except ValueError:
            raise _Fallback from None
        if (out < 0).any() or (allowed is not None and not np.isin(out, allowed).all()):
            raise _Fallback
        return out

    def flags(self, key: str) -> np.ndarray:
        """A true/false field (`mapped_rows.flag`); another value falls back."""
        words = _per_value(self.get(key, False), lambda v: _norm(v).lower())
        true = np.isin(words, list(_TRUE))
        if not (true | np.isin(words, list(_FALSE))).all():
            raise _Fallback
        return true

    def run(self, allow_invalid: bool) -> Imported:
        """Return the items and judgments tables (`mapping.import_records`)."""
        return Imported(*self.tables(require_valid=not allow_invalid))

    def tables(self, *, require_valid: bool) -> tuple[pd.DataFrame, pd.DataFrame | None]:
        """The validated items and judgments tables (None without `verdict`).

        `require_valid`: fall back when no verdict is valid (the record path's error).
        """
        keys, code, first = self.item_keys()
        texts = {k: self.texts(k) for k in ("question", "context", "reference")}
        for key, values in texts.items():
            if key in self.fields and not _eq(values, values.take(first[code])).all():
                raise _Fallback  # the record path names the disagreeing records
        slots = self.slots(code, first)
        item_rows = self.items(keys, texts, slots, first)
        rows = None
        if "verdict" in self.fields:
            rows = self.judgments(keys, slots, first[code])
            if require_valid and not rows["valid"].any():
                raise _Fallback
        self.df = None  # the file's columns: what the tables do not share is freed here
        del keys, texts, slots
        items = schema.new_items(_with_nulls(item_rows, schema.ITEMS))
        del item_rows
        cluster = self.fields.get("cluster")
        if cluster is not None:
            items = clustering.with_clusters(items, cluster.value)
        if rows is None:
            return items, None
        return items, schema.new_judgments(_with_nulls(rows, schema.JUDGMENTS))

    def item_keys(self) -> tuple[dict[str, Any], np.ndarray, np.ndarray]:
        """Return (benchmark, split, item id) per record, item codes, each item's first row."""
        bench = self.texts("benchmark")
        if not (pd.notna(bench) & _bool(bench != "")).all():
            raise _Fallback
        split = self.texts("split", "default")
        split = split.fillna("default")
        split[_bool(split == "")] = "default"
        if "item_id" in self.fields:
            item_id = self.texts("item_id")
            if pd.isna(item_id).any():
                raise _Fallback
        else:
            item_id = _strings([str(i) for i in range(self.n)])
        keys = {"benchmark": bench, "split": split, "item_id": item_id}
        code = np.zeros(self.n, dtype=np.int64)
        for values in keys.values():  # combined codes, then renumbered by first appearance
            part, uniq = pd.factorize(values)
            code = pd.factorize(code * len(uniq) + part)[0].astype(np.int64)
        first = np.full(int(code.max()) + 1 if self.n else 0, -1, dtype=np.int64)
        first[code[::-1]] = np.arange(self.n)[::-1]
        return keys, code, first

    def slots(self, code: np.ndarray, first: np.ndarray) -> dict[str, Any]:
        """`mapped_items._slots` and the item agreement of `Items.pairwise`, per record.

        Returns `pos`, `neg`, `gold`, `model_pos`, `model_neg`, and `one_pos` (slot "1" —
        or the pos slot — is response_pos for this record, after matching by text).
        """
        if "response_pos" in self.fields:
            pos, neg = self.texts("response_pos"), self.texts("response_neg")
            gold = _coded(np.full(self.n, "pos", dtype=object))
            m1 = m2 = _nulls(self.n)
            two = np.zeros(self.n, dtype=bool)
        else:
            r1, r2 = self.texts("response_1"), self.texts("response_2")
            m1, m2 = self.texts("model_1"), self.texts("model_2")
            g = _per_value(self.get("gold"), lambda v: None if v is None else _norm(v))
            if not np.isin(g, [None, "1", "2", "tie"]).all():
                raise _Fallback
            gold = _coded(g, {"1": "pos", "2": "pos", "tie": "tie", None: None}.get)
            both = pd.notna(m1) & pd.notna(m2) & _bool(m1 != "") & _bool(m2 != "")
            lower = both & _bool(m2 < m1)
            two = (g == "2") | (np.isin(g, [None, "tie"]) & lower)
            pos, neg = _where(two, r2, r1), _where(two, r1, r2)
            m1, m2 = _where(two, m2, m1), _where(two, m1, m2)
        f = first[code]
        pf, nf = pos.take(f), neg.take(f)
        flip = _eq(pf, neg) & _eq(nf, pos) & ~_eq(pos, neg)
        if (flip & _bool(gold == "pos")).any():
            raise _Fallback
        if (~flip & ~(_eq(pf, pos) & _eq(nf, neg))).any() or not _eq(gold.take(f), gold).all():
            raise _Fallback
        one_pos = ~two ^ flip
        return {
            "pos": pos,
            "neg": neg,
            "gold": gold,
            "model_pos": m1,
            "model_neg": m2,
            "one_pos": one_pos,
        }

    def items(
        self, keys: dict[str, Any], texts: dict[str, Any], slots: dict, first: np.ndarray
    ) -> pd.DataFrame:
        """The items table's rows (before validation): each item from its first record."""
        mp = slots["model_pos"].take(first).to_numpy(dtype=object, na_value=None)
        mn = slots["model_neg"].take(first).to_numpy(dtype=object, na_value=None)
        meta = [
            json.dumps({"model_neg": b, "model_pos": a}, ensure_ascii=False) if a or b else "{}"
            for a, b in zip(mp, mn, strict=True)
        ]  # as `schema.new_items` writes a dict: keys sorted
        frame = pd.DataFrame(
            {
                **{k: v.take(first) for k, v in keys.items()},
                "task": _coded(np.full(len(first), "pairwise", dtype=object)),
                **{k: v.take(first) for k, v in texts.items()},
                "response_pos": slots["pos"].take(first),
                "response_neg": slots["neg"].take(first),
                "gold": slots["gold"].take(first),
                "meta": _strings(meta),
            }
        )
        return frame

    def judgments(self, keys: dict[str, Any], slots: dict, f: np.ndarray) -> pd.DataFrame:
        """The judgment columns of every record (`mapping._judgment`, pairwise)."""
        judge_raw = _per_value(self.texts("judge", "imported"), lambda j: j or "imported")
        judge = _coded(judge_raw, _safe_judge)
        model = self.texts("model")
        if "model" not in self.fields:
            model = _where(pd.notna(model), model, _coded(judge_raw))
        output = self.texts("output") if "output" in self.fields else self._raw_texts("verdict")
        if "response_pos" in self.fields:
            order = (
                self.integers("order", (0, 1)) if "order" in self.fields else np.zeros(self.n, int)
            )
            shown_a = np.where(order == 0, "pos", "neg")
            first, slot1 = shown_a, np.full(self.n, "pos")
        else:
            swapped = self.flags("swapped") if "swapped" in self.fields else np.zeros(self.n, bool)
            slot1 = np.where(slots["one_pos"], "pos", "neg")
            shown_a = np.where(swapped, np.where(slots["one_pos"], "neg", "pos"), slot1)
            first = np.where(swapped, "2", "1")
            order = (shown_a != "pos").astype(int)
        chosen, verdict = self.verdicts(shown_a, slot1, "response_pos" not in self.fields)
        sample = (
            self.integers("sample", None) if "sample" in self.fields else np.zeros(self.n, int)
        )
        gold = slots["gold"].take(f)
        correct = pd.array(_eq(chosen, gold) & pd.notna(chosen), dtype="boolean")
        correct[pd.isna(gold)] = pd.NA
        return pd.DataFrame(
            {
                **keys,
                "judge": judge,
                "model": model,
                "prompt": self.texts("prompt"),
                "condition": self.texts("condition", "").fillna(""),
                "sample": pd.array(sample, dtype="Int64"),
                "output": output,
                "order": pd.array(order, dtype="Int64"),
                "verdict": verdict,
                "valid": pd.notna(chosen),
                "chosen": chosen,
                "shown_first": _coded(first.astype(object)),
                "correct": correct,
            }
        )

    def _raw_texts(self, key: str) -> Any:
        """`text` of field `key` before its value map (the raw verdict kept as output)."""
        f = self.fields[key]
        if f.column is not None:
            s = self.df[f.column]
            if pd.api.types.is_string_dtype(s.dtype) and s.dtype != object:
                return s.array
        return _coded(self.raw(key), lambda v: v if v is None else text(v))

    def verdicts(self, shown_a: np.ndarray, slot1: np.ndarray, slotted: bool) -> tuple[Any, Any]:
        """(chosen, verdict as shown) of every record (`mapping._pairwise_verdict`)."""
        mapped = self.fields["verdict"].map is not None
        values = self.get("verdict", unmapped=True)
        vcode, uniq = _factorize(values)
        uniq = [*uniq.tolist(), None]
        combo = (vcode % (len(uniq))) * 4 + (shown_a == "pos") * 2 + (slot1 == "pos")
        codes, combos = pd.factorize(combo)
        results = []
        for c in combos.tolist():
            v = uniq[c // 4]
            a = "pos" if c & 2 else "neg"
            s = ("pos" if c & 1 else "neg") if slotted else None
            results.append(_verdict(v, a, s, mapped))
        chosen = pd.array([r[0] for r in results], dtype="string").take(codes)
        shown = pd.array([r[1] for r in results], dtype="string").take(codes)
        return chosen, shown


def _safe_judge(name: str) -> str:
    """The judge name as given when it is safe; the record path names the one that is not."""
    try:
        return safe_name("judge", name)
    except UnsafeNameError:
        raise _Fallback from None


def _verdict(v: Any, shown_a: str, slot1: str | None, mapped: bool) -> tuple[Any, Any]:
    """(chosen, verdict as shown) of one record (`mapping._pairwise_verdict`)."""
    if v is None or v is _UNMAPPED:
        return None, None
    v = _norm(v)
    if not mapped:
        v = _SHORT.get(v.lower(), v)
    if v == "tie":
        return "tie", "tie"
    if v in ("A", "B"):
        return (shown_a if v == "A" else _SWAP[shown_a]), v
    if v in ("pos", "neg"):
        chosen = v
    elif slot1 is not None and v in ("1", "2"):
        chosen = slot1 if v == "1" else _SWAP[slot1]
    else:
        return None, None
    return chosen, "A" if chosen == shown_a else "B"
