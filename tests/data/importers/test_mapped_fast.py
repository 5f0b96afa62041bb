"""The column-wise importer gives the record path's tables exactly, and falls back on errors."""

from __future__ import annotations

import csv
import json

import pandas as pd
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, currently_in_test_context, event, given, settings
from hypothesis import strategies as st

from judgelab.core import tables
from judgelab.data.importers import (
    SourceFormatError,
    mapped_fast,
    mapped_shapes,
    mapped_stream,
    mapping,
    reshape,
)
from judgelab.errors import SchemaError

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


# --- issue 37 item 3: a property test over generated flat mappings ---------------------------
#
# Two implementations of one mapping language stay (the record path for every shape, the
# column-wise path for a flat pairwise file, ~10x faster at 10^6 rows): this test keeps them
# one language. For every generated file and mapping, either the column-wise path declines
# (None) or both give identical tables; and whenever the record path refuses the input, the
# column-wise path declines it, so the user sees the record path's error.

RAW_VERDICTS = ["A", "B", "a", "b", "1", "2", "tie", "C", "pos", "neg", "[[A]]", "[[B]]", "x"]
MAP_TARGETS = ["A", "B", "1", "2", "pos", "neg", "tie", None]


@st.composite
def flat_cases(draw):
    """A flat pairwise file (CSV or JSONL) and a mapping over it: generated columns, verdict
    maps, missing values, ties, slots listed in either order, items that disagree."""
    jsonl = draw(st.booleans())
    posneg = draw(st.booleans())
    n_items = draw(st.integers(1, 4))
    texts = st.sampled_from(["Hello!", "Go away.", "4", "5", "same"])
    items = [
        {
            "q": draw(st.sampled_from([None, "Q1", "Q2"])),
            "r1": draw(texts),
            "r2": draw(texts),
            "gold": draw(st.sampled_from([None, "1", "2", "tie", "1", "2", "3"])),
            "m1": draw(st.sampled_from([None, "", "alpha", "zeta"])),
            "m2": draw(st.sampled_from([None, "", "alpha", "zeta"])),
        }
        for _ in range(n_items)
    ]
    rows = []
    for k in range(draw(st.integers(1, 10))):
        i = draw(st.integers(0, n_items - 1))
        item = items[i]
        flip = draw(st.booleans())  # the file lists this record's slots the other way round
        gold = item["gold"]
        if flip and draw(st.integers(0, 7)):  # mostly a consistent gold, sometimes not
            gold = {"1": "2", "2": "1"}.get(gold, gold)
        row = {
            "id": f"q{i}" if not draw(st.booleans()) or not jsonl else i,
            "q": item["q"] if draw(st.integers(0, 19)) else "other question",
            "r1": item["r2"] if flip else item["r1"],
            "r2": item["r1"] if flip else item["r2"],
            "m1": item["m2"] if flip else item["m1"],
            "m2": item["m1"] if flip else item["m2"],
            "gold": gold,
            "swap": draw(st.sampled_from([None, True, False] + ([] if jsonl else ["1", "0"]))),
            "order": draw(st.sampled_from([0, 1, None] if posneg else [0])),
            "v": draw(st.sampled_from([None, *RAW_VERDICTS])),
            "judge": draw(st.sampled_from(["j1", "j-2", None])),
            "sample": k if draw(st.integers(0, 9)) else 0,  # a repeated key now and then
        }
        if jsonl and row["gold"] is not None and draw(st.booleans()):
            row["gold"] = int(row["gold"]) if row["gold"].isdigit() else row["gold"]
        if jsonl and draw(st.booleans()):  # a JSON key left out rather than null
            row = {k: v for k, v in row.items() if v is not None or k == "id"}
        rows.append(row)
    raw = {"benchmark": "gen", "item_id": "id", "judge": {"column": "judge"}}
    if posneg:
        raw.update(response_pos="r1", response_neg="r2")
        if draw(st.booleans()):
            raw["order"] = "order"
    else:
        raw.update(response_1="r1", response_2="r2")
        if draw(st.booleans()):
            raw["gold"] = draw(
                st.sampled_from(["gold", {"column": "gold", "map": {"1": "1", "2": "2"}}])
            )
        if draw(st.booleans()):
            raw["swapped"] = "swap"
        if draw(st.booleans()):
            raw.update(model_1="m1", model_2="m2")
    raw["sample"] = "sample"
    for key, column in (("question", "q"), ("output", "v")):
        if draw(st.booleans()):
            raw[key] = column
    if draw(st.booleans()):
        keys = draw(st.lists(st.sampled_from(RAW_VERDICTS), min_size=1, max_size=6, unique=True))
        raw["verdict"] = {
            "column": "v",
            "map": {k: draw(st.sampled_from(MAP_TARGETS)) for k in keys},
        }
    else:
        raw["verdict"] = "v"
    return jsonl, rows, raw


def _write_flat(path, rows, jsonl):
    if jsonl:
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        return
    with path.open("w", newline="", encoding="utf-8") as out:
        writer = csv.DictWriter(out, fieldnames=list(dict.fromkeys(k for r in rows for k in r)))
        writer.writeheader()
        for r in rows:
            writer.writerow(
                {
                    k: ""
                    if v is None
                    else str(v).lower()
                    if v in (True, False) and isinstance(v, bool)
                    else v
                    for k, v in r.items()
                }
            )


def _check_case(where, case) -> None:
    """Both paths on one generated case: identical tables, or the record path's refusal."""
    jsonl, rows, raw = case
    path = where / ("gen.jsonl" if jsonl else "gen.csv")
    _write_flat(path, rows, jsonl)
    _compare(path, raw)


def _compare(path, raw) -> str:
    """Both paths on one file: identical tables (and no notes), or the record path's refusal.

    Returns what happened: "refused", "declined" or "ran".
    """
    fields = mapping.parse_mapping(raw)
    refused = None
    try:
        shaped = reshape.read([path], fields)
        slow = mapping.import_records(shaped, fields)
    except (SourceFormatError, SchemaError) as exc:
        refused = exc
    try:
        fast = mapped_fast.fast_import([path], fields, allow_invalid=False)
    except SchemaError as exc:  # the tables' own check (a repeated key): the same error
        assert str(exc) == str(refused)
        fast = None
    _check_streamed(path, fields, fast)
    if fast is None and refused is not None:
        return "refused"
    if refused is not None:
        assert fast is None, (
            f"the column-wise path imported what the record path refuses: {refused}"
        )
        return "refused"
    if currently_in_test_context():
        event(f"column-wise path {'ran' if fast is not None else 'declined'}")
    if fast is None:
        return "declined"
    pd.testing.assert_frame_equal(fast.items, slow.items)
    pd.testing.assert_frame_equal(fast.judgments, slow.judgments)
    assert shaped.notes == []  # the import's summary would have notes the fast path lacks
    return "ran"


def _check_streamed(path, fields, fast) -> None:
    """`mapped_stream` in parts of 3 rows writes `fast`'s tables, or (no `fast`) nothing.

    JSONL keeps its blocks (a tiny block can change what arrow's reader infers, a fallback
    of the reader's own, `test_mapped_shapes`): a generated JSONL file is one part.
    """
    out = path.parent / "streamed"
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(mapped_stream, "_PART_ROWS", 3)
        mp.setattr(mapped_shapes, "_ROWS", 2)  # parquet: parts of record batches of 2 rows
        got = mapped_stream.stream_import(
            [path], fields, out / "items.parquet", out / "judgments.parquet", allow_invalid=False
        )
    if fast is None or fast.judgments is None:
        assert got is None, "streamed what one frame does not"
        assert not out.exists() or not any(out.iterdir())
        return
    assert got == (len(fast.items), len(fast.judgments))
    tables.write_items(fast.items, path.parent / "items.parquet")
    tables.write_judgments(fast.judgments, path.parent / "judgments.parquet")
    for kind in ("items", "judgments"):
        want, have = (pq.read_table(f / f"{kind}.parquet") for f in (path.parent, out))
        assert have.equals(want, check_metadata=True), kind


_PROPERTY = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow]}


@settings(max_examples=60, **_PROPERTY)
@given(case=flat_cases())
def test_i37_3_both_paths_give_identical_tables(tmp_path_factory, case):
    _check_case(tmp_path_factory.mktemp("gen"), case)


@pytest.mark.slow
@settings(max_examples=300, **_PROPERTY)
@given(case=flat_cases())
def test_i37_3_both_paths_give_identical_tables_long_run(tmp_path_factory, case):
    _check_case(tmp_path_factory.mktemp("gen"), case)


def test_i37_3_the_generated_cases_reach_the_column_wise_path(tmp_path):
    """The property test is not vacuous: a plain generated case takes the column-wise path."""
    rows = [
        {"id": "q0", "r1": "a", "r2": "b", "gold": "1", "swap": "true", "v": "A"},
        {"id": "q0", "r1": "b", "r2": "a", "gold": "2", "swap": "1", "v": "tie"},
        {"id": "q1", "r1": "c", "r2": "d", "gold": "", "swap": "", "v": "x"},
    ]
    path = tmp_path / "gen.csv"
    _write_flat(path, rows, jsonl=False)
    raw = {
        "benchmark": "gen",
        "item_id": "id",
        "response_1": "r1",
        "response_2": "r2",
        "gold": "gold",
        "swapped": "swap",
        "verdict": "v",
    }
    fast, slow = both_paths(path, raw)
    assert fast is not None
    pd.testing.assert_frame_equal(fast.judgments, slow.judgments)
    chosen = fast.judgments["chosen"]
    assert chosen.astype(object).where(chosen.notna(), None).tolist() == ["neg", "tie", None]


# --- issue 38 item 2: the same property over every shape the column-wise path reads ----------
#
# A generated flat case is rewritten as nested records, an exploded list, joined files or a
# parquet file (the mapping's paths rewritten to match); both paths must still agree.

SHAPES = ("nested", "exploded", "joined", "parquet")
JUDGMENT_COLUMNS = ("swap", "order", "v", "judge", "sample")
ITEM = ("q", "r1", "r2", "m1", "m2", "gold")


def _repath(raw, rename):
    """The mapping with each field's column renamed by `rename(column)`."""
    out = {}
    for key, spec in raw.items():
        if isinstance(spec, dict) and "column" in spec:
            out[key] = {**spec, "column": rename(spec["column"])}
        elif isinstance(spec, str) and key not in ("benchmark", "task"):
            out[key] = rename(spec)
        else:
            out[key] = spec
    return out


def _jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def _shaped(where, draw, rows, raw, shape):
    """Write `rows` in `shape`; return the data file and the mapping that reads it."""
    if shape == "parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        try:
            table = pa.Table.from_pylist(rows)
        except (pa.ArrowException, TypeError):  # mixed types in a column: as text
            cols = dict.fromkeys(k for r in rows for k in r)
            text = [{k: None if r.get(k) is None else str(r[k]) for k in cols} for r in rows]
            table = pa.Table.from_pylist(text)
        pq.write_table(table, where / "gen.parquet")
        return where / "gen.parquet", raw
    if shape == "nested":
        inner = set(draw(st.lists(st.sampled_from(["q", "r1", "r2", "v", "judge", "swap"]))))
        out = [
            {
                **{k: v for k, v in r.items() if k not in inner},
                "rec": {k: r[k] for k in inner & set(r)},
            }
            for r in rows
        ]
        _jsonl(where / "gen.jsonl", out)
        return where / "gen.jsonl", _repath(raw, lambda c: f"rec.{c}" if c in inner else c)
    judged = lambda c: c in JUDGMENT_COLUMNS  # noqa: E731
    base = lambda r: {k: v for k, v in r.items() if not judged(k)}  # noqa: E731
    own = lambda r: {k: v for k, v in r.items() if judged(k)}  # noqa: E731
    if shape == "exploded":
        out = []
        for r in rows:  # consecutive rows of the same item values: one record, a list
            if out and base(r) == {k: v for k, v in out[-1].items() if k != "js"}:
                out[-1]["js"].append(own(r))
            else:
                out.append({**base(r), "js": [own(r)]})
        if draw(st.integers(0, 9)) == 0:
            out.append({**base(rows[0]), "js": []})  # an item without judgments
        _jsonl(where / "gen.jsonl", out)
        raw = {**_repath(raw, lambda c: f"js.{c}" if judged(c) else c), "explode": "js"}
        if "response_1" in raw and draw(st.booleans()):
            raw["swapped"] = {"column": "_index", "map": {0: False, 1: True}}
        return where / "gen.jsonl", raw
    by_id = {}
    for r in rows:
        by_id.setdefault(json.dumps(r["id"]), []).append(r)
    items = [group[0] for group in by_id.values()]
    fill = draw(st.integers(0, 3)) > 0  # mostly every item has a row in every output file
    on_line = draw(st.booleans())
    files = {}
    for k in range(min(2, max(map(len, by_id.values())))):
        outs = []
        for group in by_id.values():
            if k < len(group) or fill:
                outs.append({"qid": group[0]["id"], **own(group[min(k, len(group) - 1)])})
        _jsonl(where / f"out_{k}.jsonl", outs if on_line else outs[::-1])
        files[f"o{k}"] = f"out_{k}.jsonl"
    _jsonl(where / "items.jsonl", [base(r) for r in items])
    raw = _repath(raw, lambda c: f"joined.{c}" if judged(c) else c)
    raw["join"] = {"files": files, **({} if on_line else {"on": {"left": "id", "right": "qid"}})}
    if "response_1" in raw and draw(st.booleans()):
        raw["swapped"] = {"column": "_join", "map": {"o0": False, "o1": True}}
    return where / "items.jsonl", raw


@st.composite
def shaped_cases(draw):
    """A generated flat case (`flat_cases`, as JSON values) and the shape to write it in."""
    _, rows, raw = draw(flat_cases())
    if draw(st.booleans()):  # tidy: an item's rows agree, one verdict reads (more cases run)
        first = {}
        for r in rows:
            r["id"] = str(r["id"])  # one JSON type a column, as arrow reads it
            if r.get("swap") in ("1", "0"):
                r["swap"] = r["swap"] == "1"
            r.update({k: v for k, v in first.setdefault(r["id"], r).items() if k in ITEM})
        rows[0]["v"] = "A"
    return draw(st.sampled_from(SHAPES)), rows, raw, draw


def _check_shaped(tmp_path_factory, case, data) -> None:
    shape, rows, raw, _ = case
    where = tmp_path_factory.mktemp(shape)
    path, raw = _shaped(where, data.draw, rows, raw, shape)
    event(f"{shape}: {_compare(path, raw)}")


@settings(max_examples=100, **_PROPERTY)
@given(case=shaped_cases(), data=st.data())
def test_i38_2_every_shape_gives_the_record_paths_tables(tmp_path_factory, case, data):
    _check_shaped(tmp_path_factory, case, data)


@pytest.mark.slow
@settings(max_examples=600, **_PROPERTY)
@given(case=shaped_cases(), data=st.data())
def test_i38_2_every_shape_gives_the_record_paths_tables_long_run(tmp_path_factory, case, data):
    _check_shaped(tmp_path_factory, case, data)


@pytest.mark.parametrize("shape", SHAPES)
def test_i38_2_each_shape_reaches_the_column_wise_path(tmp_path, shape):
    """The property above is not vacuous: a plain case of each shape takes the fast path."""
    rows = [
        {"id": "q0", "r1": "a", "r2": "b", "gold": "1", "swap": "false", "v": "A", "judge": "j"},
        {"id": "q0", "r1": "a", "r2": "b", "gold": "1", "swap": "true", "v": "tie", "judge": "j"},
        {"id": "q1", "r1": "c", "r2": "d", "gold": "2", "swap": "false", "v": "x", "judge": "j"},
        {"id": "q1", "r1": "c", "r2": "d", "gold": "2", "swap": "true", "v": "B", "judge": "j"},
    ]
    raw = {
        "benchmark": "gen",
        "item_id": "id",
        "response_1": "r1",
        "response_2": "r2",
        "gold": "gold",
        "swapped": "swap",
        "verdict": "v",
        "judge": {"column": "judge"},
    }
    path, raw = _shaped(tmp_path, _fixed, rows, raw, shape)
    assert _compare(path, raw) == "ran"


def _fixed(strategy):
    """A fixed draw for `_shaped`: nest the verdict and judge, no empty list, complete joins."""
    kind = repr(strategy)
    if kind.startswith("lists("):
        return ["v", "judge"]
    if kind.startswith("integers("):
        return 1
    assert kind == "booleans()", kind
    return False
