"""The generic importer's YAML mapping: validation errors name the file and the key."""

from __future__ import annotations

import pytest

from judgelab.data.importers import SourceFormatError
from judgelab.data.importers.mapping_spec import Field, load_mapping, normalise, parse_mapping


def test_mapping_yaml_errors(tmp_path):
    p = tmp_path / "m.yaml"
    p.write_text("benchmark: x\nquestoin: q\n")
    with pytest.raises(SourceFormatError, match=r"m\.yaml: mapping key 'questoin': unknown"):
        load_mapping(p)
    p.write_text("task: pairwise\n")
    with pytest.raises(SourceFormatError, match="'benchmark': missing"):
        load_mapping(p)
    p.write_text(
        "benchmark: x\nresponse_1: a\nresponse_2: b\nverdict: {column: v, map: {x: first}}\n"
    )
    with pytest.raises(SourceFormatError, match="map value 'first'"):
        load_mapping(p)


def test_bare_strings_are_columns_or_constants_by_field():
    fields = parse_mapping(
        {
            "benchmark": "b",
            "split": "test",
            "question": "q",
            "response_1": "r1",
            "response_2": "r2",
            "gold": {"column": "g", "map": {1: "1"}},
        }
    )
    assert fields["split"] == Field(value="test")  # a constant field
    assert fields["question"] == Field(column="q")  # a per-row field
    assert fields["gold"].map == {"1": "1"}  # map keys read as the cells are
    assert normalise(2.0) == "2" and normalise(True) == "true"


def test_task_must_be_one_of_the_tasks():
    with pytest.raises(
        SourceFormatError, match=r"mapping key 'task': task must be one of .*, got 'rank'"
    ):
        parse_mapping({"benchmark": "b", "task": "rank"})
