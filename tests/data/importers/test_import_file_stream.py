"""`import_mapped_file` streamed (`ingest_stream`) writes what the in-memory path writes.

Each case runs twice, into two data folders: once as `data import-file` runs it (streamed
where it can) and once forced in memory; the tables (read back), the manifests (their text,
the data folder aside) and the reports must be equal. Parts are a few rows, so an item's
rows and a table's rows fall in several parts.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from judgelab.cli import main as cli
from judgelab.core import schema, tables
from judgelab.data import ingest, ingest_stream, manifests
from judgelab.data.importers import mapped_shapes, mapped_stream
from judgelab.data.importers import mapping as mapping_importer

ROOT = Path(__file__).resolve().parents[3]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench import imports as shapes  # noqa: E402

REAL = ingest_stream.import_streamed
#: Two benchmarks (from a column), three judges, two splits, both orders of every item.
MULTI = {**shapes.FLAT_MAPPING, "benchmark": {"column": "bench"}}


@pytest.fixture(autouse=True)
def small_parts(monkeypatch):
    monkeypatch.setattr(mapped_stream, "_PART_ROWS", 7)  # odd: an item's rows in two parts
    monkeypatch.setattr(mapped_shapes, "_ROWS", 3)
    monkeypatch.setattr(ingest_stream, "_PART", 5)


def _flat(
    path: Path, n: int, *, right: bool = False, judges: int = 1, benches: int = 1, ids: str = "q"
) -> Path:
    """A flat parquet file of `n` rows (n/2 items x 2 orders); `right`: every verdict right."""
    row = np.arange(n)
    item = row // 2
    swap = row % 2 == 1
    label = np.where(item % 2 == 0, "1", "2")
    picks_1 = (label == "1") != swap  # the gold slot shown first
    ids = pd.Series(item).map((ids + "{}").format)
    df = pd.DataFrame(
        {
            "id": ids,
            "bench": np.where(item % benches == 0, "alpha", "beta"),
            "split": np.where(item % 3 == 0, "dev", "test"),
            "instruction": "Question " + ids,
            "out1": "First answer to " + ids,
            "out2": "Second answer to " + ids,
            "label": label,
            "swap": np.where(swap, "true", "false"),
            "winner": np.where(picks_1, "[[A]]", "[[B]]")
            if right
            else np.array(["[[A]]", "[[B]]", "[[C]]", "x"])[row % 4],  # fmt: skip
            "judge": np.array(["j1", "j2", "j3"])[row // 4 % judges],
        }
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    df.to_parquet(path, row_group_size=11)
    return path


def _yaml(path: Path, raw: dict) -> Path:
    path.write_text(yaml.safe_dump(raw))
    return path


def _run(where: Path, monkeypatch, calls, *, stream: bool) -> tuple[list, list]:
    """Run `calls` (data file, mapping, options) into the data folder `where`.

    Returns the reports and, per call, whether it was streamed.
    """
    monkeypatch.setenv("JUDGELAB_DATA", str(where))
    streamed = []

    def spy(*args, **kwargs):
        got = REAL(*args, **kwargs) if stream else None
        streamed.append(got is not None)
        return got

    monkeypatch.setattr(ingest_stream, "import_streamed", spy)
    reports = []
    for data, mapping, options in calls:
        asked = len(streamed)
        reports.append(ingest.import_mapped_file(data, mapping, **options))
        assert len(streamed) == asked + 1
    return reports, streamed


def _snapshot(where: Path) -> dict[str, object]:
    """Every table (read back) and manifest (text, the folder named `DATA`) under `where`."""
    out: dict[str, object] = {}
    for f in sorted(where.rglob("*")):
        rel = str(f.relative_to(where))
        assert not f.name.endswith((".tmp", ".bak")), f"left behind: {rel}"
        assert not f.name.startswith(".stream."), f"left behind: {rel}"
        if f.suffix == ".parquet":
            out[rel] = tables.read(f, "items" if f.parent.name == "items" else "judgments")
        elif f.suffix == ".json":
            out[rel] = f.read_text().replace(str(where), "DATA")
    return out


def _same(a: dict, b: dict) -> None:
    assert sorted(a) == sorted(b)
    for key, value in a.items():
        if isinstance(value, pd.DataFrame):
            pd.testing.assert_frame_equal(value, b[key], obj=key)
        else:
            assert value == b[key], key


def _same_reports(a, b, root_a: Path, root_b: Path) -> None:
    for x, y in zip(a, b, strict=True):
        assert (x.source, x.n_items, x.n_judgments, x.notes) == (
            y.source,
            y.n_items,
            y.n_judgments,
            y.notes,
        )
        for field in ("items_paths", "judgment_paths"):
            rel = [
                [p.relative_to(r) for p in getattr(z, field)]
                for z, r in ((x, root_a), (y, root_b))
            ]
            assert rel[0] == rel[1], field
        pd.testing.assert_frame_equal(x.summary, y.summary)
        pd.testing.assert_frame_equal(x.presentation, y.presentation)


def _compare(tmp_path, monkeypatch, calls) -> list[bool]:
    """Run `calls` streamed where possible and in memory; check the same result; say which."""
    got, streamed = _run(tmp_path / "one", monkeypatch, calls, stream=True)
    want, _ = _run(tmp_path / "two", monkeypatch, calls, stream=False)
    _same(_snapshot(tmp_path / "one"), _snapshot(tmp_path / "two"))
    _same_reports(got, want, tmp_path / "one", tmp_path / "two")
    return streamed


@pytest.mark.parametrize("shape", shapes.SHAPES)
def test_a_first_import_is_streamed_and_writes_the_in_memory_tables(tmp_path, monkeypatch, shape):
    data = shapes.write_import_files(tmp_path / "src", 60, chunk=20, shapes=(shape,))
    calls = [(data[shape], shapes.MAPPINGS[shape], {})]
    assert _compare(tmp_path, monkeypatch, calls) == [True]


def test_benchmarks_and_judges_are_split_into_their_tables(tmp_path, monkeypatch):
    data = _flat(tmp_path / "src" / "multi.parquet", 72, judges=3, benches=2)
    mapping = _yaml(tmp_path / "multi.yaml", MULTI)
    streamed = _compare(tmp_path, monkeypatch, [(data, mapping, {"replace": True})])
    assert streamed == [True]
    judged = sorted(p.name for p in (tmp_path / "one" / "judgments" / "beta").iterdir())
    assert [n for n in judged if not n.startswith(".")] == [f"j{i}.parquet" for i in (1, 2, 3)]


@pytest.mark.parametrize("limit", [1, 5, 1000])
def test_a_limit_is_streamed(tmp_path, monkeypatch, limit):
    # with 1, some judges keep no judgment (no table); 1000 is more than every split has
    data = _flat(tmp_path / "src" / "multi.parquet", 72, judges=3, benches=2)
    mapping = _yaml(tmp_path / "multi.yaml", MULTI)
    assert _compare(tmp_path, monkeypatch, [(data, mapping, {"limit": limit})]) == [True]


@pytest.mark.parametrize("limit", [None, 3])
def test_the_frame_warnings_and_accuracy_come_from_the_streamed_counts(
    tmp_path, monkeypatch, limit
):
    # every verdict right, read through a reversed verdict map: the inverted-frame warning
    data = _flat(tmp_path / "src" / "right.parquet", 80, right=True)
    flipped = {"[[A]]": "B", "[[B]]": "A", "[[C]]": "tie"}
    mapping = {**shapes.FLAT_MAPPING, "verdict": {"column": "winner", "map": flipped}}
    calls = [(data, mapping, {"limit": limit})]
    assert _compare(tmp_path, monkeypatch, calls) == [True]
    report = _run(tmp_path / "three", monkeypatch, calls, stream=True)[0][0]
    assert len(report.notes) == 1 and "looks reversed" in report.notes[0]  # all rows, always


@pytest.mark.parametrize("how", ["limit", "again", "other mapping", "replace", "other file"])
def test_what_merges_with_the_disk_falls_back_to_the_same_result(tmp_path, monkeypatch, how):
    data = _flat(tmp_path / "src" / "multi.parquet", 48, judges=2)
    first = (data, shapes.FLAT_MAPPING, {})
    # the same items and orders with the other judge name (another import, merged by key)
    renamed = {**shapes.FLAT_MAPPING, "judge": {"column": "judge", "map": {"j1": "k1"}}}
    # the same judgments with other verdicts: a clash with the first import's rows
    clash = {**shapes.FLAT_MAPPING, "verdict": {"column": "winner", "map": {"[[A]]": "B"}}}
    second = {
        "limit": [(data, shapes.FLAT_MAPPING, {"limit": 5})],
        "again": [first],
        "other mapping": [(data, renamed, {})],
        "replace": [(data, clash, {"replace": True})],
        "other file": [
            (_flat(tmp_path / "src" / "b.parquet", 20, ids="b"), shapes.FLAT_MAPPING, {})
        ],
    }[how]
    streamed = _compare(tmp_path, monkeypatch, [first, *second])
    assert streamed == [True, False]


def test_an_import_that_lands_first_is_merged_not_overwritten(tmp_path, monkeypatch):
    mine = _flat(tmp_path / "src" / "mine.parquet", 40)
    theirs = _flat(tmp_path / "src" / "theirs.parquet", 24, judges=2, ids="t")
    stage = manifests.stage

    def meanwhile(*args, **kwargs):  # another process imports between staging and commit
        monkeypatch.setattr(manifests, "stage", stage)
        ingest.import_mapped_file(theirs, shapes.FLAT_MAPPING)
        return stage(*args, **kwargs)

    monkeypatch.setenv("JUDGELAB_DATA", str(tmp_path / "one"))
    monkeypatch.setattr(manifests, "stage", meanwhile)
    ingest.import_mapped_file(mine, shapes.FLAT_MAPPING)
    monkeypatch.setattr(ingest_stream, "import_streamed", lambda *a, **k: None)
    monkeypatch.setenv("JUDGELAB_DATA", str(tmp_path / "two"))
    ingest.import_mapped_file(theirs, shapes.FLAT_MAPPING)
    ingest.import_mapped_file(mine, shapes.FLAT_MAPPING)
    _same(_snapshot(tmp_path / "one"), _snapshot(tmp_path / "two"))


def test_a_failed_rename_leaves_nothing_written(tmp_path, monkeypatch):
    data = _flat(tmp_path / "src" / "one.parquet", 30, judges=2)
    monkeypatch.setenv("JUDGELAB_DATA", str(tmp_path / "one"))
    real = os.replace

    def replace(src, dst):
        if str(dst).endswith(".json"):
            raise OSError(28, "No space left on device")
        return real(src, dst)

    monkeypatch.setattr(tables.os, "replace", replace)
    with pytest.raises(OSError, match="No space"):
        ingest.import_mapped_file(data, shapes.FLAT_MAPPING)
    assert _snapshot(tmp_path / "one") == {}


def test_the_cli_streams_a_flat_parquet(tmp_path, monkeypatch, capsys):
    data = shapes.write_import_files(tmp_path / "src", 40, chunk=20, shapes=("parquet",))
    mapping = _yaml(tmp_path / "m.yaml", shapes.FLAT_MAPPING)

    def in_memory(*args, **kwargs):
        raise AssertionError("data import-file fell back to the in-memory import")

    monkeypatch.setattr(mapping_importer, "import_with_notes", in_memory)
    args = ["data", "import-file", str(data["parquet"]), "--mapping", str(mapping)]
    assert cli.main(args) == 0
    out = capsys.readouterr().out
    assert "20 items, 40 judgments" in out


@pytest.mark.parametrize(
    "change",
    [
        {"question": "nope"},  # a column the file lacks
        {"verdict": {"column": "winner", "map": {"zzz": "A"}}},  # no valid verdict
        {"judge": {"column": "judge", "map": {"j2": "../x"}}},  # an unsafe name from the file
        {"judge": {"column": "judge", "map": {"j2": "J1"}}},  # two judges differing by case
    ],
)
def test_a_refused_import_fails_alike_and_writes_nothing(tmp_path, monkeypatch, change):
    data = _flat(tmp_path / "src" / "one.parquet", 40, judges=2)
    errors = []
    for stream, where in ((True, "one"), (False, "two")):
        with pytest.raises(Exception) as got:  # noqa: PT011 - compared below
            _run(
                tmp_path / where,
                monkeypatch,
                [(data, {**shapes.FLAT_MAPPING, **change}, {})],
                stream=stream,
            )
        errors.append((type(got.value), str(got.value)))
        assert _snapshot(tmp_path / where) == {}
    assert errors[0] == errors[1]


def _rows_text_by_row(df: pd.DataFrame, kind: str, cols: list[str]) -> list[str]:
    """`manifests.rows_text` as it was: `json.dumps` row by row."""
    canon = schema.coerce(df, schema.SPECS[kind])[cols].astype(object)
    canon = canon.where(canon.notna(), None)
    rows = canon.itertuples(index=False, name=None)
    return [json.dumps(list(r), default=str, ensure_ascii=False) for r in rows]


@pytest.mark.parametrize(
    "ids",
    [
        ["q1", "ünï ✓", "\u2028 line sep", "x" * 300],  # no escape: built column-wise
        ["q1", 'say "hi"', "back\\slash", "new\nline"],  # escaped: row by row
    ],
)
def test_row_keys_built_column_wise_are_json_dumps(ids):
    df = pd.DataFrame(
        {
            "benchmark": "b",
            "split": ["dev", "test", "dev", "test"],
            "item_id": ids,
            "judge": "j",
            "condition": ["", "c", "", "c"],
            "order": [0, 1, 1, 0],
            "sample": [0, 0, 2, 70000],
        }
    )
    df = schema.new_judgments(df.assign(verdict="A", valid=True, chosen="pos"))
    for kind in ("items", "judgments"):
        cols = list(schema.SPECS[kind].key)
        want = _rows_text_by_row(df[cols] if kind == "items" else df, kind, cols)
        got = manifests.rows_text(df[cols] if kind == "items" else df, kind, cols)
        assert got.tolist() == want
        canon = schema.coerce(df, schema.JUDGMENTS)[cols]
        assert (manifests._json_lists(canon) is None) == ('"' in ids[1])


def test_a_pointwise_file_falls_back_alike(tmp_path, monkeypatch):
    n = 50
    df = pd.DataFrame(
        {
            "qid": [f"q{i // 2}" for i in range(n)],
            "q": [f"question {i // 2}" for i in range(n)],
            "ans": [f"answer {i // 2}" for i in range(n)],
            "gold": "Correct",
            "v": np.array(["Correct", "Incorrect", "", "Correct", "Incorrect"])[np.arange(n) % 5],
            "judge": np.array(["j1", "j2"])[np.arange(n) % 2],
        }
    )
    data = tmp_path / "src" / "pointwise.parquet"
    data.parent.mkdir()
    df.to_parquet(data, row_group_size=7)
    raw = {
        "benchmark": "pw",
        "task": "pointwise",
        "item_id": "qid",
        "question": "q",
        "response": "ans",
        "gold": "gold",
        "verdict": "v",
        "judge": {"column": "judge"},
    }
    for limit in (None, 4):  # the column-wise path is pairwise only: imported in memory
        where = tmp_path / f"limit{limit}"
        assert _compare(where, monkeypatch, [(data, raw, {"limit": limit})]) == [False]


def test_a_mapped_cluster_rule_is_kept_when_streamed(tmp_path, monkeypatch):
    data = _flat(tmp_path / "src" / "multi.parquet", 40, judges=2)
    mapping = {**shapes.FLAT_MAPPING, "cluster": "question"}
    assert _compare(tmp_path, monkeypatch, [(data, mapping, {})]) == [True]
    items = tables.read(tmp_path / "one" / "items" / "scale.parquet", "items")
    assert items["cluster"].str.startswith("scale|question|").all()
