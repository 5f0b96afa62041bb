import pandas as pd
import pytest

from judgelab.data.importers import SourceFormatError
from judgelab.data.importers.common import (
    assemble,
    format_score,
    number_or_none,
    pairwise_outcome,
    parse_bracket_verdict,
    pointwise_outcome,
    read_delimited,
    read_json,
    read_jsonl,
)


@pytest.mark.parametrize(
    ("winner", "pos", "first", "gold", "expected"),
    [
        # pos = slot 1 shown first -> order 0; slot 1 wins -> A, pos, correct
        ("1", "1", "1", "pos", (0, "A", True, "pos", True)),
        # pos = slot 1 shown second (swap) -> order 1; slot 1 wins -> B (second), still pos
        ("1", "1", "2", "pos", (1, "B", True, "pos", True)),
        # pos = slot 2 shown second -> order 1; slot 1 (first) wins -> A, neg, wrong
        ("1", "2", "1", "pos", (1, "A", True, "neg", False)),
        # tie on a pos item: chosen tie, not correct
        ("tie", "1", "1", "pos", (0, "tie", True, "tie", False)),
        # tie on a tie-gold item: correct
        ("tie", "2", "1", "tie", (1, "tie", True, "tie", True)),
        # unparseable with gold: invalid, correct False
        (None, "1", "2", "pos", (1, None, False, None, False)),
        # no gold: correct is null whatever happens
        ("2", "1", "2", None, (1, "A", True, "neg", None)),
    ],
)
def test_pairwise_outcome(winner, pos, first, gold, expected):
    out = pairwise_outcome(winner, pos_slot=pos, first_slot=first, gold=gold)
    assert (out["order"], out["verdict"], out["valid"], out["chosen"], out["correct"]) == expected


def test_pointwise_outcome():
    assert pointwise_outcome("Correct", gold="Correct") == {
        "order": 0,
        "verdict": "Correct",
        "valid": True,
        "chosen": None,
        "correct": True,
    }
    # invalid with gold -> correct False; no gold -> None
    assert pointwise_outcome(None, gold="Correct")["correct"] is False
    assert pointwise_outcome("7", gold=None)["correct"] is None


def test_parse_bracket_verdict():
    labels = {"A": "A", "B": "B", "C": "tie"}
    assert parse_bracket_verdict("x [[A]] y [[A]]", labels) == "A"  # repeated, consistent
    assert parse_bracket_verdict("[[C]]", labels) == "tie"
    assert parse_bracket_verdict("[[B]] is better than [[A]]", labels) is None  # conflict
    assert parse_bracket_verdict("Assistant A is better. [A]", labels) is None  # no tag
    assert parse_bracket_verdict("[[D]] [[B]]", labels) == "B"  # D is not a label
    assert parse_bracket_verdict(None, labels) is None


def test_number_or_none_is_the_one_numeric_cell_reader():
    values = (9, "9.5", " 2 ", -1, None, "", "n/a", True, False, float("nan"), [1])
    assert [number_or_none(v) for v in values] == [
        9.0,
        9.5,
        2.0,
        -1.0,
        None,
        None,
        None,
        None,
        None,
        None,
        None,
    ]
    assert number_or_none(float("inf")) == float("inf")  # finite checks are the caller's
    assert format_score(float("inf")) is None


def test_format_score():
    assert [format_score(v) for v in (9, 9.0, "9", 9.5, -1, None, "", True)] == [
        "9",
        "9",
        "9",
        "9.5",
        "-1",
        None,
        None,
        None,
    ]


def test_read_json_names_file_and_line(tmp_path):
    (tmp_path / "bad.json").write_text('[\n{"a": 1},\n{"a": }\n]')
    with pytest.raises(SourceFormatError, match=r"bad\.json, line 3: malformed JSON"):
        read_json(tmp_path, "bad.json")
    (tmp_path / "empty.json").write_text("  ")
    with pytest.raises(SourceFormatError, match="empty file"):
        read_json(tmp_path, "empty.json")
    with pytest.raises(SourceFormatError, match="file not found"):
        read_json(tmp_path, "missing.json")


def test_read_jsonl_names_line(tmp_path):
    (tmp_path / "x.jsonl").write_text('{"a": 1}\n\n[1]\n')
    with pytest.raises(SourceFormatError, match=r"x\.jsonl, line 3: expected a JSON object"):
        read_jsonl(tmp_path, "x.jsonl")


def test_read_delimited_missing_column(tmp_path):
    (tmp_path / "t.csv").write_text("a,b\n1,\n")
    df = read_delimited(tmp_path, "t.csv", columns=["a"])
    assert df["b"].tolist() == [""]  # empty cells stay empty strings, never NaN
    with pytest.raises(SourceFormatError, match=r"t\.csv, column 'c': missing column"):
        read_delimited(tmp_path, "t.csv", columns=["c"])


def _item(item_id):
    return {
        "benchmark": "b",
        "split": "s",
        "item_id": item_id,
        "task": "pointwise",
        "response": "r",
        "meta": {},
    }


def test_assemble_rejects_judgment_of_unknown_item():
    judgment = {"benchmark": "b", "split": "s", "item_id": "2", "judge": "j.p", "valid": False}
    with pytest.raises(SourceFormatError, match=r"unknown item s/2 \(judge j\.p\)"):
        assemble([_item("1")], [judgment], what="src")
    imported = assemble([_item("1")], None, what="src")
    assert imported.judgments is None and isinstance(imported.items, pd.DataFrame)


def test_import_summary_counts_rows_valid_invalid_and_ties_per_judge():
    from judgelab.data.importers.base import summarize

    judgments = pd.DataFrame(
        {
            "judge": ["b", "a", "a", "a", "b", "a"],
            "valid": [True, True, False, True, False, True],
            "chosen": ["pos", "tie", None, "neg", None, "tie"],
            "correct": [True, None, None, False, None, None],
            "order": [0, 0, 1, 1, 0, 1],
        }
    )
    got = summarize(judgments).to_dict("records")
    assert got == [
        {"judge": "a", "rows": 4, "valid": 3, "invalid": 1, "ties": 2},
        {"judge": "b", "rows": 2, "valid": 1, "invalid": 1, "ties": 0},
    ]
