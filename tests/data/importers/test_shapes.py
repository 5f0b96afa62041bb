"""Importer shapes beyond the worked examples: parquet nesting, CSV JSON cells, re-imports."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from judgelab.core import paths, tables
from judgelab.data import ingest
from judgelab.data.importers import SourceFormatError, fieldpath
from judgelab.data.importers.mapping import import_file


def test_paths_resolve_in_dicts_lists_json_text_and_dotted_columns():
    rec = {
        "a": {"b": [10, {"c": "x"}]},
        "s": '{"k": [1, 2]}',
        "dotted.name": 5,
        "q": {"key.with.dots": 3},
    }
    assert fieldpath.resolve(rec, "a.b[1].c") == "x"
    assert fieldpath.resolve(rec, "a.b[-2]") == 10
    assert fieldpath.resolve(rec, "s.k[1]") == 2
    assert fieldpath.resolve(rec, "dotted.name") == 5
    assert fieldpath.resolve(rec, 'q["key.with.dots"]') == 3
    assert fieldpath.resolve(rec, "a.b[5]") is fieldpath.MISSING
    assert fieldpath.resolve(rec, "a.zz") is fieldpath.MISSING
    assert fieldpath.resolve({"a": None}, "a.b") is None  # null on the way: null, not absent
    assert fieldpath.keys_at(rec, "a.b[1].zz") == ["c"]
    for bad in ("", ".a", "a..b", "a[x]", "a[1"):
        with pytest.raises(ValueError):
            fieldpath.parse(bad)


def test_parquet_struct_and_list_columns_explode(tmp_path):
    df = pd.DataFrame(
        {
            "id": ["q1", "q2"],
            "pair": [{"a": "x1", "b": "y1"}, {"a": "x2", "b": "y2"}],
            "runs": [[{"w": "A"}, {"w": "A"}], [{"w": "B"}]],
        }
    )
    p = tmp_path / "nested.parquet"
    df.to_parquet(p)
    mapping = {
        "benchmark": "pq",
        "item_id": "id",
        "response_1": "pair.a",
        "response_2": "pair.b",
        "explode": "runs",
        "swapped": {"column": "_index", "map": {0: False, 1: True}},
        "verdict": "runs.w",
        "judgment_meta": {"position": "_index"},
    }
    j = import_file(p, mapping).judgments
    assert j[["item_id", "shown_first", "verdict"]].values.tolist() == [
        ["q1", "1", "A"],
        ["q1", "2", "A"],
        ["q2", "1", "B"],
    ]
    assert [json.loads(m) for m in j["judgment_meta"]] == [
        {"position": 0},
        {"position": 1},
        {"position": 0},
    ]
    # no gold: slot 1 is canonically pos; q1's two "A"s pick different responses, q2's B slot 2
    assert j["chosen"].tolist() == ["pos", "neg", "neg"]


def test_csv_cells_holding_json_are_read_by_path(tmp_path):
    p = tmp_path / "j.csv"
    p.write_text('id,r1,r2,scores\nq1,a,b,"{""winner"": ""B""}"\n', encoding="utf-8")
    mapping = {"benchmark": "c", "item_id": "id", "response_1": "r1", "response_2": "r2"}
    j = import_file(p, {**mapping, "verdict": "scores.winner"}).judgments
    assert j["verdict"].tolist() == ["B"]


def test_an_empty_list_keeps_the_item_without_judgments(tmp_path):
    p = tmp_path / "j.jsonl"
    p.write_text(
        '{"id": "q1", "r": ["a", "b"], "js": [{"v": "A"}]}\n'
        '{"id": "q2", "r": ["c", "d"], "js": []}\n'
    )
    mapping = {
        "benchmark": "e",
        "item_id": "id",
        "response_1": "r[0]",
        "response_2": "r[1]",
        "explode": "js",
        "verdict": "js.v",
    }
    imp = import_file(p, mapping)
    assert imp.items["item_id"].tolist() == ["q1", "q2"]
    assert imp.judgments["item_id"].tolist() == ["q1"]


def test_allow_invalid_keeps_a_failed_judge(tmp_path):
    p = tmp_path / "j.csv"
    p.write_text("id,r1,r2,v\nq1,a,b,ERR\nq2,c,d,ERR\n")
    mapping = {"benchmark": "f", "item_id": "id", "response_1": "r1", "response_2": "r2"}
    with pytest.raises(SourceFormatError, match="all 2 verdicts are invalid"):
        import_file(p, {**mapping, "verdict": "v"})
    j = import_file(p, {**mapping, "verdict": "v"}, allow_invalid=True).judgments
    assert j["valid"].tolist() == [False, False] and j["output"].tolist() == ["ERR", "ERR"]


def test_a_glob_is_one_import_and_importing_one_of_its_files_alone_loses_nothing(tmp_path):
    for judge in ("j1", "j2"):
        (tmp_path / f"out_{judge}.csv").write_text("id,r1,r2,v\nq1,a,b,A\nq2,c,d,B\n")
    mapping = {
        "benchmark": "globbed",
        "judge": {"filename": r"out_(?P<value>\w+)\.csv"},
        "item_id": "id",
        "response_1": "r1",
        "response_2": "r2",
        "verdict": "v",
    }
    report = ingest.import_mapped_file(str(tmp_path / "out_*.csv"), mapping)
    assert report.n_judgments == 4 and len(report.judgment_paths) == 2
    again = ingest.import_mapped_file(str(tmp_path / "out_*.csv"), mapping)  # replaces itself
    assert again.n_judgments == 4
    ingest.import_mapped_file(tmp_path / "out_j1.csv", mapping)  # another import, same rows
    j = tables.read_judgments(paths.judgments() / "globbed" / "j2.parquet")
    assert len(j) == 2  # the glob import's j2 rows are still there
