"""`mapped_shapes` reads every shape in record batches as the record path reads records."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from judgelab.data.importers import mapped_fast, mapped_shapes, mapping, reshape

ROOT = Path(__file__).resolve().parents[3]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench import imports as shapes  # noqa: E402


def _both(path, raw):
    fields = mapping.parse_mapping(raw)
    fast = mapped_fast.fast_import([path], fields, allow_invalid=False)
    slow = mapping.import_records(reshape.read([path], fields), fields)
    return fast, slow


@pytest.mark.parametrize("shape", shapes.SHAPES)
def test_many_small_batches_give_the_record_paths_tables(tmp_path, monkeypatch, shape):
    monkeypatch.setattr(mapped_shapes, "_BLOCK", 512)  # JSONL: a few lines a batch
    monkeypatch.setattr(mapped_shapes, "_ROWS", 7)  # parquet: 7 rows a batch
    path = shapes.write_import_files(tmp_path, 300, chunk=40, shapes=(shape,))[shape]
    if shape == "parquet":
        pq.write_table(pq.read_table(path), path, row_group_size=50)
    fast, slow = _both(path, shapes.MAPPINGS[shape])
    assert fast is not None
    pd.testing.assert_frame_equal(fast.items, slow.items)
    pd.testing.assert_frame_equal(fast.judgments, slow.judgments)
    assert len(fast.judgments) == 300


def _lines(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


ROW = {"id": "q1", "a": "x", "b": "y", "v": "A"}
RAW = {"benchmark": "b", "item_id": "id", "response_1": "a", "response_2": "b", "verdict": "v"}


def test_a_field_that_appears_in_a_later_batch_takes_the_record_path(tmp_path, monkeypatch):
    monkeypatch.setattr(mapped_shapes, "_BLOCK", 256)
    rows = [{**ROW, "id": f"q{i}"} for i in range(40)]
    rows[-1]["eval"] = {"v": "B"}  # arrow's streaming reader fixed the schema without it
    path = tmp_path / "late.jsonl"
    _lines(path, rows)
    fast, slow = _both(path, {**RAW, "verdict": "eval.v", "output": "v"})
    assert fast is None and slow.judgments["valid"].sum() == 1


@pytest.mark.parametrize(
    ("rows", "raw"),
    [
        ([{**ROW, "js": []}, {**ROW, "id": "q2", "js": [{"v": "A"}]}], {"explode": "js"}),
        ([{**ROW, "js": None}, {**ROW, "id": "q2", "js": [{"v": "A"}]}], {"explode": "js"}),
        ([{**ROW, "r": ["x"]}, {**ROW, "id": "q2", "r": ["x", "y"]}], {"response_2": "r[1]"}),
        ([{**ROW, "e": '{"v": "A"}'}], {"verdict": "e.v"}),  # JSON text in a cell
        ([{**ROW, "v": 1.0}], {}),  # a float (a big integer would lose digits)
    ],
    ids=["empty list", "null list", "short list", "json text", "float"],
)
def test_what_it_does_not_read_exactly_takes_the_record_path(tmp_path, rows, raw):
    if "explode" in raw:
        raw = {**raw, "verdict": "js.v"}
    path = tmp_path / "j.jsonl"
    _lines(path, rows)
    fast, slow = _both(path, {**RAW, **raw})
    assert fast is None and len(slow.items) >= 1


def test_a_column_named_like_a_joined_path_is_not_read_for_it(tmp_path):
    _lines(tmp_path / "items.jsonl", [ROW, {**ROW, "id": "q2"}])
    out = [{"qid": "q1", "v": "B", "e.v": "A"}, {"qid": "q2", "v": "B", "e.v": "A"}]
    _lines(tmp_path / "out.jsonl", out)
    join = {"files": {"o": "out.jsonl"}, "on": {"left": "id", "right": "qid"}}
    raw = {**RAW, "join": join, "verdict": "joined.v", "output": "joined.e.v"}
    with pytest.raises(Exception, match="absent from every record"):
        _both(tmp_path / "items.jsonl", raw)  # the record path: joined.e.v goes into e
    fields = mapping.parse_mapping(raw)
    assert mapped_fast.fast_import([tmp_path / "items.jsonl"], fields, allow_invalid=False) is None


def test_parquet_reads_only_the_mapped_columns_and_narrow_integers(tmp_path):
    table = pa.table(
        {
            "id": pa.array([1, 2, 2], pa.int16()),
            "a": ["x", "u", "u"],
            "b": ["y", "w", "w"],
            "v": pa.array(["A", "B", "tie"]).dictionary_encode(),
            "s": pa.array([0, 0, 1], pa.uint8()),
            "unmapped": pa.array([1.5, None, 2.5]),  # a float column nobody reads
        }
    )
    pq.write_table(table, tmp_path / "j.parquet")
    fast, slow = _both(tmp_path / "j.parquet", {**RAW, "swapped": "s"})
    assert fast is not None
    pd.testing.assert_frame_equal(fast.judgments, slow.judgments)
    big = table.set_column(4, "s", pa.array([0, 0, 2**63], pa.uint64()))
    pq.write_table(big, tmp_path / "big.parquet")
    fields = mapping.parse_mapping({**RAW, "swapped": "s"})
    assert mapped_fast.fast_import([tmp_path / "big.parquet"], fields, allow_invalid=False) is None
