"""`mapped_stream` writes, part by part, the tables the in-memory column-wise import writes."""

from __future__ import annotations

import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from judgelab.core import tables
from judgelab.data.importers import mapped_fast, mapped_shapes, mapped_stream, mapping
from judgelab.errors import SchemaError

ROOT = Path(__file__).resolve().parents[3]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench import imports as shapes  # noqa: E402


def _small_parts(monkeypatch, rows=5):
    monkeypatch.setattr(mapped_stream, "_PART_ROWS", rows)
    monkeypatch.setattr(mapped_shapes, "_ROWS", 3)  # parquet: 3 rows a batch
    monkeypatch.setattr(mapped_shapes, "_BLOCK", 1)  # JSONL: a few lines a batch


def _written(imported, folder):
    tables.write_items(imported.items, folder / "items.parquet")
    tables.write_judgments(imported.judgments, folder / "judgments.parquet")
    return folder


def _same_files(a, b):
    for kind in ("items", "judgments"):
        left, right = pq.read_table(a / f"{kind}.parquet"), pq.read_table(b / f"{kind}.parquet")
        assert left.equals(right, check_metadata=True), kind


def _stream(path, raw, out, flag=False):
    fields = mapping.parse_mapping(raw)
    return mapped_stream.stream_import(
        [path],
        fields,
        out / "items.parquet",
        out / "judgments.parquet",
        allow_invalid=flag,
    )


@pytest.mark.parametrize("shape", shapes.SHAPES)
def test_small_parts_write_the_in_memory_tables(tmp_path, monkeypatch, shape):
    _small_parts(monkeypatch, rows=7)  # odd: an item's two rows fall in two parts
    path = shapes.write_import_files(tmp_path / "src", 60, chunk=20, shapes=(shape,))[shape]
    fields = mapping.parse_mapping(shapes.MAPPINGS[shape])
    fast = mapped_fast.fast_import([path], fields, allow_invalid=False)
    ref = _written(fast, tmp_path / "ref")
    assert _stream(path, shapes.MAPPINGS[shape], tmp_path / "out") == (30, 60)
    _same_files(ref, tmp_path / "out")


ROWS = [  # q1's rows are far apart: its later row meets its first record from a part before
    "id,q,a,b,label,v,judge",
    "q1,Q one,x,y,,A,j1",
    "q2,Q two,u,w,2,B,j1",
    "q3,Q three,m,n,1,tie,j1",
    "q1,Q one,y,x,,A,j2",  # slots in the other order: matched by the first record's texts
    "q4,Q four,s,t,2,B,j1",
]
RAW = {
    "benchmark": "b",
    "item_id": "id",
    "question": "q",
    "response_1": "a",
    "response_2": "b",
    "gold": {"column": "label", "map": {"1": "1", "2": "2"}},
    "verdict": "v",
    "judge": {"column": "judge"},
}


def _invalid(line):
    return line.replace(",A,", ",?,").replace(",B,", ",?,").replace(",tie,", ",?,")


def _parquet(tmp_path, lines):
    import pandas as pd

    path = tmp_path / "data.parquet"
    cells = [[c or None for c in ln.split(",")] for ln in lines[1:]]  # empty: null
    rows = [dict(zip(lines[0].split(","), c, strict=True)) for c in cells]
    pd.DataFrame(rows).to_parquet(path, index=False)
    return path


def test_an_item_seen_in_an_earlier_part_is_matched_by_its_first_record(tmp_path, monkeypatch):
    _small_parts(monkeypatch, rows=2)
    path = _parquet(tmp_path, ROWS)
    fast = mapped_fast.fast_import([path], mapping.parse_mapping(RAW), allow_invalid=False)
    assert _stream(path, RAW, tmp_path / "out") == (4, 5)
    _same_files(_written(fast, tmp_path / "ref"), tmp_path / "out")
    judg = tables.read_judgments(tmp_path / "out" / "judgments.parquet")
    assert judg["chosen"].tolist()[::3] == ["pos", "neg"]  # q1 by j2: A is slot "y", neg


@pytest.mark.parametrize(
    "change",
    [
        lambda r: r[:4] + ["q1,Q other,y,x,,A,j2"] + r[5:],  # q1's question disagrees
        lambda r: r[:4] + ["q1,Q one,x,y,,B,j1"] + r[5:],  # q1/j1 again: a repeated key
        lambda r: [r[0]] + [_invalid(ln) for ln in r[1:]],  # no verdict reads
    ],
    ids=["disagreeing-item", "repeated-key", "no-valid-verdict"],
)
def test_what_one_frame_refuses_across_parts_writes_nothing(tmp_path, monkeypatch, change):
    _small_parts(monkeypatch, rows=2)
    lines = change(list(ROWS))
    path = _parquet(tmp_path, lines)
    out = tmp_path / "out"
    out.mkdir()
    (out / "items.parquet").write_text("the old table")
    assert _stream(path, RAW, out) is None  # the caller runs the in-memory import
    assert sorted(p.name for p in out.iterdir()) == ["items.parquet"]  # no temporary file
    assert (out / "items.parquet").read_text() == "the old table"


def test_import_file_to_falls_back_to_the_in_memory_import(tmp_path, monkeypatch):
    _small_parts(monkeypatch, rows=2)
    out = tmp_path / "out"
    items, judg = out / "items.parquet", out / "judgments.parquet"
    path = _parquet(tmp_path, [*ROWS, "q1,Q one,x,y,,B,j1"])  # a repeated key
    with pytest.raises(SchemaError, match="duplicate key"):  # the in-memory import's error
        mapping.import_file_to(path, RAW, items, judg)
    assert not items.exists() and not judg.exists()
    path = _parquet(tmp_path, ROWS)
    raw = {**RAW, "meta": {"asked": "q"}}  # `meta`: the record path, then written
    assert mapping.import_file_to(path, raw, items, judg) == (4, 5)
    assert len(tables.read_judgments(judg)) == 5
    assert mapping.import_file_to(path, RAW, items, judg) == (4, 5)  # streamed
    _same_files(_written(mapping.import_file(path, RAW), tmp_path / "ref"), out)


def _csv(tmp_path, lines, *, name="data.csv", sep=",", head=b""):
    path = tmp_path / name
    path.write_bytes(head + "\n".join(ln.replace(",", sep) for ln in lines).encode() + b"\n")
    return path


@pytest.mark.parametrize(
    ("name", "sep", "head"),
    [("data.csv", ",", b""), ("data.csv", ",", b"\xef\xbb\xbf"), ("data.tsv", "\t", b"")],
    ids=["csv", "csv-with-bom", "tsv"],
)
def test_a_csv_file_is_read_a_part_at_a_time(tmp_path, monkeypatch, name, sep, head):
    """Parts of 2 records: the streamed tables are the in-memory import's (quoted newlines
    and an item whose rows fall in different parts included)."""
    _small_parts(monkeypatch, rows=2)
    lines = [*ROWS[:2], 'q2,"Q two, on\nthree lines\n",u,w,2,B,j1', *ROWS[3:]]
    if sep == "\t":
        lines = [ln.replace('"Q two, on', '"Q two on') for ln in lines]
    path = _csv(tmp_path, lines, name=name, sep=sep, head=head)
    fast = mapped_fast.fast_import([path], mapping.parse_mapping(RAW), allow_invalid=False)
    assert fast is not None and fast.items["question"].str.contains("\n").any()
    assert _stream(path, RAW, tmp_path / "out") == (4, 5)
    _same_files(_written(fast, tmp_path / "ref"), tmp_path / "out")
    parts = list(mapped_stream._csv_parts(path))
    assert [len(p) for p in parts] == [2, 2, 1]
    assert [p.index[0] for p in parts] == [1, 3, 5]  # records numbered as in the whole read


@pytest.mark.parametrize(
    "lines",
    [ROWS[:1], [*ROWS[:3], "q9,Q \udcff,x,y,1,A,j1", *ROWS[3:]]],
    ids=["no-record", "not-utf8-in-a-later-part"],
)
def test_a_csv_file_the_parts_cannot_read_writes_nothing(tmp_path, monkeypatch, lines):
    _small_parts(monkeypatch, rows=2)
    path = tmp_path / "data.csv"
    path.write_bytes(("\n".join(lines) + "\n").encode("utf-8", "surrogateescape"))
    out = tmp_path / "out"
    out.mkdir()
    assert _stream(path, RAW, out, flag=True) is None  # the record path reports it
    assert list(out.iterdir()) == []
