"""The column-wise importer gives the record path's tables exactly, and falls back on errors."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from judgelab.data.importers import SourceFormatError, mapped_fast, mapping, reshape

PAIR_CSV = """id,instruction,out1,out2,label,swap,winner,judge,run
q1,Say hi,Hello!,Go away.,1,false,[[A]],gpt-4:v1,0
q1,Say hi,Hello!,Go away.,1,true,[[A]],gpt-4:v1,0
q2,Add 2+2,5,4,2,false,[[B]],gpt-4:v1,1
q2,Add 2+2,5,4,2,true,garbage,gpt-4:v1,1
q3,Pick,x,y,tie,false,[[C]],other,0
q4,No gold,a,b,,yes,[[B]],other,0
q4,No gold,b,a,,yes,[[A]],other,0
q5,Empty verdict,c,d,1,0,,other,0
"""
PAIR_MAPPING = {
    "benchmark": "demo",
    "task": "pairwise",
    "split": "test",
    "item_id": "id",
    "question": "instruction",
    "response_1": "out1",
    "response_2": "out2",
    "gold": {"column": "label", "map": {"1": "1", "2": "2", "tie": "tie"}},
    "swapped": "swap",
    "verdict": {"column": "winner", "map": {"[[A]]": "A", "[[B]]": "B", "[[C]]": "tie"}},
    "judge": {"column": "judge"},
    "sample": "run",
}
MODELS_JSONL = [
    {"id": 1, "q": "x", "a": "r1", "b": "r2", "ma": "zeta", "mb": "alpha", "v": "A", "s": False},
    {"id": 1, "q": "x", "a": "r2", "b": "r1", "ma": "alpha", "mb": "zeta", "v": "b", "s": False},
    {"id": 2, "q": None, "a": "r3", "b": "r4", "ma": "m1", "mb": "m2", "v": "1", "s": True},
    {"id": 3, "q": "y", "a": "r5", "b": "r6", "ma": "m1", "mb": "m2", "v": "pos", "s": False},
    {"id": 4, "q": "z", "a": "r7", "b": "r8", "ma": None, "mb": None, "v": "2", "s": True},
    {"id": 5, "q": "z", "a": "r9", "b": "r0", "v": "C", "s": False, "cat": "c"},
    {"id": 6, "q": "w", "a": "x1", "b": "x2", "v": None, "s": False, "cat": "c"},
]
MODELS_MAPPING = {
    "benchmark": "demo",
    "split": {"column": "cat"},
    "item_id": "id",
    "question": "q",
    "response_1": "a",
    "response_2": "b",
    "model_1": "ma",
    "model_2": "mb",
    "swapped": "s",
    "verdict": "v",
    "model": "gpt",
    "condition": {"column": "cat"},
    "cluster": "question",
}
POSNEG_CSV = """item,ctx,good,bad,o,verdict,gold_known
i1,c1,yes,no,0,A,
i1,c1,yes,no,1,tie,
i2,c2,ok,ko,1,B,x
i2,c2,ok,ko,0,maybe,x
"""
POSNEG_MAPPING = {
    "benchmark": "b",
    "item_id": "item",
    "context": "ctx",
    "response_pos": "good",
    "response_neg": "bad",
    "order": "o",
    "verdict": "verdict",
    "output": "gold_known",
}


def both_paths(path, raw_mapping):
    fields = mapping.parse_mapping(raw_mapping)
    fast = mapped_fast.fast_import([path], fields, allow_invalid=False)
    slow = mapping.import_records(reshape.read([path], fields), fields)
    return fast, slow


@pytest.mark.parametrize(
    ("name", "content", "raw"),
    [
        ("pairs.csv", PAIR_CSV, PAIR_MAPPING),
        ("pairs.tsv", PAIR_CSV.replace(",", "\t"), PAIR_MAPPING),
        ("models.jsonl", "\n".join(json.dumps(r) for r in MODELS_JSONL) + "\n", MODELS_MAPPING),
        ("posneg.csv", POSNEG_CSV, POSNEG_MAPPING),
        ("items_only.csv", PAIR_CSV, {k: v for k, v in PAIR_MAPPING.items() if k != "verdict"}),
    ],
)
def test_same_tables_as_the_record_path(tmp_path, name, content, raw):
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    fast, slow = both_paths(path, raw)
    assert fast is not None  # the column-wise path ran
    pd.testing.assert_frame_equal(fast.items, slow.items)
    if slow.judgments is None:
        assert fast.judgments is None
    else:
        pd.testing.assert_frame_equal(fast.judgments, slow.judgments)
        assert (~fast.judgments["valid"]).any() and fast.judgments["valid"].any()


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (("Say hi,Hello!", "Say bye,Hello!", 1), "question"),  # items disagree
        (("q2,Add 2+2,5,4,2,true", "q2,Add 2+2,5,3,2,true", 1), "other responses"),
        ((",1,false,[[A]]", ",7,false,[[A]]", 1), "not in the map"),  # unmapped gold
        ((",true,garbage", ",maybe,garbage", 1), "true/false"),
    ],
)
def test_errors_come_from_the_record_path(tmp_path, change, message):
    path = tmp_path / "bad.csv"
    old, new, count = change
    path.write_text(PAIR_CSV.replace(old, new, count), encoding="utf-8")
    fields = mapping.parse_mapping(PAIR_MAPPING)
    assert mapped_fast.fast_import([path], fields, allow_invalid=False) is None
    with pytest.raises(SourceFormatError, match=message) as err:
        mapping.import_file(path, PAIR_MAPPING)
    assert "bad.csv" in str(err.value) and "row" in str(err.value)


def test_shapes_it_does_not_handle_take_the_record_path(tmp_path):
    path = tmp_path / "j.csv"
    path.write_text(PAIR_CSV, encoding="utf-8")
    for extra in ({"meta": ["run"]}, {"cluster": {"column": "run"}}, {"task": "pointwise"}):
        fields = mapping.parse_mapping({**PAIR_MAPPING, **extra})
        assert not mapped_fast.eligible([path], fields)
    all_invalid = PAIR_CSV.replace("[[", "((")
    path.write_text(all_invalid, encoding="utf-8")
    with pytest.raises(SourceFormatError, match="verdicts are invalid"):
        mapping.import_file(path, PAIR_MAPPING)


def test_mixed_json_types_take_the_record_path(tmp_path):
    rows = [dict(r) for r in MODELS_JSONL]
    rows[2]["v"], rows[3]["s"] = 1, "f"  # a number among strings, a string among booleans
    path = tmp_path / "mixed.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    fast, slow = both_paths(path, MODELS_MAPPING)
    assert fast is None
    imported = mapping.import_file(path, MODELS_MAPPING)
    pd.testing.assert_frame_equal(imported.judgments, slow.judgments)
