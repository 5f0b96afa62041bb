"""Issue 37 item 2: the importer shapes that real formats were missing.

Optional paths, captures from the relative path, a join that adds columns, one-value-per-line
text files, both orders from named keys of one record, integers with missing values, the
reversed-map note on a tie-heavy judge, `shown_first` from the LLMBar importer, and quoted
bracket paths.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml

from judgelab.data.importers import SourceFormatError, mapping
from judgelab.data.importers.frame_check import frame_warnings


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _jsonl(rows: list[dict]) -> str:
    return "".join(json.dumps(r) + "\n" for r in rows)


PAIRS = [
    {"id": "q1", "q": "Say hi", "a": "Hello!", "b": "Go away.", "gold": 1, "v": "A", "extra": {}},
    {"id": "q2", "q": "2+2?", "a": "5", "b": "4", "gold": 2, "v": "B", "extra": {"why": "x"}},
]
BASE = {
    "benchmark": "demo",
    "judge": "j",
    "item_id": "id",
    "question": "q",
    "response_1": "a",
    "response_2": "b",
    "gold": "gold",
    "verdict": "v",
}


def _judgments(imported) -> list[tuple]:
    cols = ["item_id", "judge", "order", "shown_first", "verdict", "chosen", "correct"]
    j = imported.judgments.sort_values(["item_id", "judge", "order"])
    return [tuple(None if pd.isna(v) else v for v in r) for r in j[cols].to_numpy(object)]


# --- a. optional paths ---------------------------------------------------------------------


def test_i37_2a_optional_path_absent_from_some_or_all_records_is_null(tmp_path):
    data = _write(tmp_path / "j.jsonl", _jsonl(PAIRS))
    raw = {**BASE, "judgment_meta": {"why": "extra.why"}}
    raw["output"] = {"column": "extra.why", "optional": True}
    got = mapping.import_file(data, raw)
    assert got.judgments.set_index("item_id")["output"].to_dict() == {"q1": None, "q2": "x"}
    # absent from every record (and a column not in the file at all): null, not an error
    for path in ("extra.because", "nowhere"):
        raw["output"] = {"column": path, "optional": True}
        got = mapping.import_file(data, {k: v for k, v in raw.items() if k != "judgment_meta"})
        assert got.judgments["output"].isna().all()
    # a path that is not optional keeps the error
    raw = {**BASE, "output": "extra.because"}
    with pytest.raises(SourceFormatError, match="'extra.because' is absent from every record"):
        mapping.import_file(data, raw)
    with pytest.raises(SourceFormatError, match="optional must be true or false"):
        mapping.parse_mapping({**BASE, "output": {"column": "x", "optional": "yes"}})


# --- b. capture from the relative path -------------------------------------------------------


def test_i37_2b_capture_from_the_folders_of_the_path(tmp_path):
    for judge, strategy, v in (("GPT-4", "Vanilla", "A"), ("LLaMA2", "Rating", "B")):
        rows = [dict(r, v=v) for r in PAIRS]
        _write(tmp_path / f"evaluators/{judge}/{strategy}/result.jsonl", _jsonl(rows))
    raw = {
        **BASE,
        "judge": {"path": r"evaluators/([^/]+)/[^/]+/result\.jsonl$"},
        "prompt": {"path": r"evaluators/[^/]+/(?P<value>[^/]+)/"},
    }
    got = mapping.import_file(str(tmp_path / "evaluators/*/*/result.jsonl"), raw)
    j = got.judgments.sort_values(["judge", "item_id"])
    assert j["judge"].tolist() == ["GPT-4", "GPT-4", "LLaMA2", "LLaMA2"]
    assert j["prompt"].tolist() == ["Vanilla", "Vanilla", "Rating", "Rating"]
    assert j["verdict"].tolist() == ["A", "A", "B", "B"]
    with pytest.raises(SourceFormatError, match="mapping key 'judge': the file path"):
        mapping.import_file(
            str(tmp_path / "evaluators/GPT-4/Vanilla/result.jsonl"),
            {**raw, "judge": {"path": "judges/([^/]+)/"}},
        )


# --- c./d. a join that adds columns, one value per line ---------------------------------------


def _faireval(tmp_path: Path) -> Path:
    qs = [{"question_id": 1, "text": "Say hi"}, {"question_id": 2, "text": "2+2?"}]
    _write(
        tmp_path / "answer_gpt35.jsonl",
        _jsonl([{"question_id": 2, "text": "4"}, {"question_id": 1, "text": "Hello!"}]),
    )
    _write(
        tmp_path / "answer_vicuna.jsonl",
        _jsonl([{"question_id": 1, "text": "Go away."}, {"question_id": 2, "text": "5"}]),
    )
    _write(tmp_path / "human.txt", "1\n1\n")
    return _write(tmp_path / "question.jsonl", _jsonl(qs))


FAIREVAL = {
    "benchmark": "faireval_demo",
    "item_id": "question_id",
    "question": "text",
    "join": {
        "files": {"gpt35": "answer_gpt35.jsonl", "vicuna": "answer_vicuna.jsonl"},
        "on": "question_id",
        "adds": "columns",
    },
    "response_1": "joined.gpt35.text",
    "response_2": "joined.vicuna.text",
    "model_1": {"value": "gpt35"},
    "model_2": {"value": "vicuna"},
}


def test_i37_2c_join_adds_columns_from_one_file_per_model(tmp_path):
    data = _faireval(tmp_path)
    got = mapping.import_file(data, FAIREVAL)
    items = got.items.set_index("item_id")
    assert items.loc["1", "response_pos"] == "Hello!"  # no gold: slots by model name
    assert items.loc["2", ["response_pos", "response_neg"]].tolist() == ["4", "5"]
    assert items.loc["2", "question"] == "2+2?"
    _write(tmp_path / "answer_vicuna.jsonl", _jsonl([{"question_id": 1, "text": "Go away."}]))
    with pytest.raises(
        SourceFormatError,
        match=r"question\.jsonl, line 2, column 'question_id': .*answer_vicuna\.jsonl has no row "
        "with join key '2'",
    ):
        mapping.import_file(data, FAIREVAL)


def test_i37_2d_one_value_per_line_text_file(tmp_path):
    data = _faireval(tmp_path)
    raw = {
        **FAIREVAL,
        "txt_column": "label",
        "join": {**FAIREVAL["join"], "on": "line"},
    }
    raw["join"]["files"] = {**raw["join"]["files"], "human": "human.txt"}
    _write(
        tmp_path / "answer_gpt35.jsonl",
        _jsonl([{"question_id": 1, "text": "Hello!"}, {"question_id": 2, "text": "4"}]),
    )
    raw["gold"] = {"column": "joined.human.label", "map": {"1": "1", "2": "2"}}
    got = mapping.import_file(data, raw)
    items = got.items.set_index("item_id")
    assert items.loc["1", "response_pos"] == "Hello!" and items.loc["2", "response_pos"] == "4"
    assert items["gold"].tolist() == ["pos", "pos"]
    # an empty line is a null value, on its line
    _write(tmp_path / "human.txt", "1\n\n")
    got = mapping.import_file(data, raw)
    assert got.items.set_index("item_id")["gold"].to_dict() == {"1": "pos", "2": None}
    # without the column's name a .txt file is refused, naming it and the mapping key
    raw.pop("txt_column")
    with pytest.raises(SourceFormatError, match=r"human\.txt: .*txt_column: NAME"):
        mapping.import_file(data, raw)


# --- e./i. both orders from named keys of one record, quoted bracket paths --------------------


LLMBAR_LIKE = [
    {
        "input": "Say hi",
        "output_1": "Hello!",
        "output_2": "Go away.",
        "label": 1,
        "results": [{"swap = False": {"winner": 1}, "swap = True": {"winner": 1}}],
    },
    {
        "input": "2+2?",
        "output_1": "5",
        "output_2": "4",
        "label": 2,
        "results": [{"swap = False": {"winner": 1}, "swap = True": {"winner": 2}}],
    },
]

NAMED_KEYS_YAML = """\
benchmark: named_demo
judge: j
question: input
response_1: output_1
response_2: output_2
gold: label
explode: {path: "results[-1]", keys: ["swap = False", "swap = True"]}
swapped: {column: _key, map: {"swap = False": false, "swap = True": true}}
verdict: {column: "results[-1].winner", map: {1: "1", 2: "2"}}
output: {column: 'results[0]["swap = True"].winner'}
"""


def test_i37_2e_both_orders_from_named_keys(tmp_path):
    data = _write(tmp_path / "result.json", json.dumps(LLMBAR_LIKE))
    got = mapping.import_file(data, yaml.safe_load(NAMED_KEYS_YAML))
    j = got.judgments.assign(
        q=got.judgments["item_id"].map(got.items.set_index("item_id")["question"])
    )
    rows = sorted(
        (q, first, ch, ok)
        for q, first, ch, ok in j[["q", "shown_first", "chosen", "correct"]].to_numpy(object)
    )
    assert rows == [
        ("2+2?", "1", "neg", False),
        ("2+2?", "2", "pos", True),
        ("Say hi", "1", "pos", True),
        ("Say hi", "2", "pos", True),
    ]
    assert sorted(j["output"]) == ["1", "1", "2", "2"]
    broken = [dict(LLMBAR_LIKE[0]), LLMBAR_LIKE[1]]
    broken[0]["results"] = [{"swap = False": {"winner": 1}}]
    data.write_text(json.dumps(broken), encoding="utf-8")
    with pytest.raises(SourceFormatError, match="row 1.*key 'swap = True' is absent"):
        mapping.import_file(data, yaml.safe_load(NAMED_KEYS_YAML))


def test_i37_2i_bracket_paths_need_quotes_inside_braces(tmp_path):
    quoted = _write(tmp_path / "ok.yaml", NAMED_KEYS_YAML)
    assert mapping.load_mapping(quoted)["verdict"].column == "results[-1].winner"
    bare = _write(
        tmp_path / "bare.yaml",
        NAMED_KEYS_YAML.replace('"results[-1].winner"', "results[-1].winner"),
    )
    with pytest.raises(SourceFormatError, match="line 9"):
        mapping.load_mapping(bare)


# --- f. integers with missing values stay integers -------------------------------------------


@pytest.mark.parametrize("suffix", [".jsonl", ".json", ".parquet"])
def test_i37_2f_integer_with_missing_stays_integer(tmp_path, suffix):
    rows = [dict(PAIRS[0], n=6603, s=0), dict(PAIRS[1], n=None, s=1)]
    path = tmp_path / f"j{suffix}"
    if suffix == ".jsonl":
        path.write_text(_jsonl(rows))
    elif suffix == ".json":
        path.write_text(json.dumps(rows))
    else:
        # arrow's own writer (no pandas metadata): an int64 column with a null
        pq.write_table(
            pa.Table.from_pylist([{k: v for k, v in r.items() if k != "extra"} for r in rows]),
            path,
        )
    got = mapping.import_file(path, {**BASE, "meta": ["n"], "judgment_meta": {"tokens": "n"}})
    metas = got.items.sort_values("item_id")["meta"].map(json.loads).tolist()
    assert [m["n"] for m in metas] == [6603, None]
    assert isinstance(metas[0]["n"], int)
    jm = got.judgments.sort_values("item_id")["judgment_meta"].map(json.loads).tolist()
    assert [m["tokens"] for m in jm] == [6603, None]
    assert "6603.0" not in "".join(got.items["meta"])


# --- g. the reversed-map note and ties ------------------------------------------------------


def _consistent_judge(n_items: int, tie_items: set[str], right: set[str]) -> pd.DataFrame:
    """Both orders of every item; the same pick in both (a tie, pos when right, else neg)."""
    rows = []
    for i in map(str, range(n_items)):
        chosen = "tie" if i in tie_items else ("pos" if i in right else "neg")
        for order in (0, 1):
            rows.append(
                {
                    "benchmark": "b",
                    "split": "s",
                    "item_id": i,
                    "judge": "tier",
                    "condition": "",
                    "sample": 0,
                    "order": order,
                    "valid": True,
                    "chosen": chosen,
                    "correct": chosen == "pos",
                    "shown_first": "1" if order == 0 else "2",
                }
            )
    return pd.DataFrame(rows)


def test_i37_2g_reversed_map_note_accounts_for_ties():
    # ties 36 % of the time (both orders), right on 65 % of its decisive verdicts: a correct
    # map, accuracy 0.415 in each order with ties counted wrong
    tie_items = {str(i) for i in range(200) if i % 25 < 9}  # 72 of 200 = 36 %
    decisive = [str(i) for i in range(200) if str(i) not in tie_items]
    judgments = _consistent_judge(200, tie_items, set(decisive[: round(0.65 * 128)]))
    chosen = judgments["chosen"]
    assert judgments["chosen"].eq("tie").mean() == pytest.approx(0.36)
    assert judgments["correct"].mean() == pytest.approx(0.415)
    assert frame_warnings(judgments) == []
    # the same judge with its decisive verdicts reversed is still reported
    flipped = judgments.assign(chosen=chosen.map({"pos": "neg", "neg": "pos", "tie": "tie"}))
    flipped = flipped.assign(correct=flipped["chosen"] == "pos")
    notes = frame_warnings(flipped)
    assert len(notes) == 1 and "looks reversed" in notes[0]
    assert "accuracy 0.352 (n=128)" in notes[0]
