"""Seed benchmark loaders on tiny hand-made files in the real shapes."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from judgelab.data.importers import SourceFormatError, seeds
from judgelab.testing.sources import tiny_source, write_jsonl


def test_contextualjudgebench_rows_keep_their_order(tmp_path):
    (tmp_path / "data").mkdir()
    df = pd.DataFrame(
        {
            "negative_response": ["bad0", "bad1"],
            "positive_response": ["good0", "good1"],
            "context": ["[1] c", "[1] d"],
            "question": ["q0", "q1"],
            "question_id": ["s_7", "s_9"],
        }
    )
    df.to_parquet(tmp_path / "data/conciseness_qa-00000-of-00001.parquet")
    src = tiny_source("cjb", ["data/conciseness_qa-00000-of-00001.parquet"], "x:y")
    items = seeds.import_contextualjudgebench(tmp_path, src).items
    assert items.item_id.tolist() == ["conciseness_qa:0", "conciseness_qa:1"]
    assert items.response_pos.tolist() == ["good0", "good1"]
    assert set(items.gold) == {"pos"} and set(items.task) == {"pairwise"}
    meta = json.loads(items.meta[1])
    assert meta == {
        "criterion": "conciseness",
        "question_id": "s_9",
        "row_idx": 1,
        "task_type": "qa",
    }


def test_contextualjudgebench_missing_column_names_file(tmp_path):
    (tmp_path / "data").mkdir()
    pd.DataFrame({"context": ["c"], "question": ["q"], "positive_response": ["p"]}).to_parquet(
        tmp_path / "data/faithfulness_qa-00000-of-00001.parquet"
    )
    src = tiny_source("cjb", ["data/faithfulness_qa-00000-of-00001.parquet"], "x:y")
    with pytest.raises(SourceFormatError, match=r"faithfulness_qa.*column 'negative_response'"):
        seeds.import_contextualjudgebench(tmp_path, src)


def test_faitheval_counterfactual_and_unanswerable(tmp_path):
    (tmp_path / "data").mkdir()
    pd.DataFrame(
        {
            "id": ["Mercury_1"],
            "question": ["Which is a metal?"],
            "context": ["Wood is a metal."],
            "choices": [{"label": ["A", "B"], "text": ["wood", "iron"]}],
            "answerKey": ["A"],
            "num of options": [2],
        }
    ).to_parquet(tmp_path / "data/test-00000-of-00001.parquet")
    src = tiny_source("fe_cf", ["data/test-00000-of-00001.parquet"], "x:y", task="counterfactual")
    item = seeds.import_faitheval(tmp_path, src).items.iloc[0]
    # gold = the counterfactual key "A", whose text is "wood".
    assert (item.gold, item.reference, item.task) == ("A", "wood", "qa")
    assert json.loads(item.meta)["choices"][1] == {"label": "B", "text": "iron"}

    un = tmp_path / "un"
    write_jsonl(
        un / "u.jsonl",
        [
            {
                "qid": "squad_1",
                "question": "Who?",
                "context": "c",
                "answers": ["unknown"],
                "subset": "SQuAD",
            }
        ],
    )
    src = tiny_source("fe_un", ["u.jsonl"], "x:y", task="unanswerable")
    item = seeds.import_faitheval(un, src).items.iloc[0]
    assert item.gold == "unknown" and json.loads(item.meta)["subset"] == "SQuAD"


def test_bffbench_variant_columns_and_error(tmp_path):
    write_jsonl(
        tmp_path / "b.jsonl",
        [
            {
                "uid": "u1",
                "question_id": "7",
                "turns": ["What is IFRS 16?", "And the expense?"],
                "references": ["A lease standard.", "$7,875"],
            }
        ],
    )
    items = seeds.import_bffbench(tmp_path, tiny_source("bffbench", ["b.jsonl"], "x:y")).items
    assert items.item_id.tolist() == ["7:t1", "7:t2"]
    assert items.reference.tolist() == ["A lease standard.", "$7,875"]
    assert json.loads(items.meta[1])["previous_turns"] == ["What is IFRS 16?"]
    write_jsonl(
        tmp_path / "bad.jsonl", [{"question_id": "7", "prompts": ["x"], "references": ["y"]}]
    )
    with pytest.raises(SourceFormatError, match=r"bad\.jsonl, column 'turns'.*looked for turns"):
        seeds.import_bffbench(tmp_path, tiny_source("bffbench", ["bad.jsonl"], "x:y"))


def test_verdicts_consensus(tmp_path):
    conv = [{"role": "user", "content": "2+2?"}, {"role": "assistant", "content": "4"}]
    rows = [
        {
            "dataset": "bff",
            "qid": "1",
            "cid": "c1",
            "turn": 1,
            "model": "gpt-4o",
            "label": lab,
            "conv": conv,
        }
        for lab in ("Correct", "Correct", "Incorrect")
    ] + [
        {
            "dataset": "bff",
            "qid": "1",
            "cid": "c1",
            "turn": 1,
            "model": "phi-4",
            "label": lab,
            "conv": conv,
        }
        for lab in ("Correct", "Not Sure", "Incorrect")
    ]
    write_jsonl(tmp_path / "v.jsonl", rows)
    items = seeds.import_verdicts(tmp_path, tiny_source("verdicts", ["v.jsonl"], "x:y")).items
    # gpt-4o: 2 Correct of 3 -> Correct; phi-4: no label has 2 votes -> ambiguous (null).
    assert items.item_id.tolist() == ["1:t1:gpt-4o", "1:t1:phi-4"]
    assert [None if pd.isna(g) else g for g in items.gold] == ["Correct", None]
    assert items.response.tolist() == ["4", "4"] and items.question.tolist() == ["2+2?"] * 2
    rows[0]["label"] = "Maybe"
    write_jsonl(tmp_path / "v.jsonl", rows)
    with pytest.raises(SourceFormatError, match=r"v\.jsonl, row 1, column 'label'"):
        seeds.import_verdicts(tmp_path, tiny_source("verdicts", ["v.jsonl"], "x:y"))


def test_cmtbench_keeps_math_and_reasoning(tmp_path):
    write_jsonl(
        tmp_path / "mt_bench/question.jsonl",
        [
            {"question_id": 81, "category": "writing", "turns": ["w1", "w2"]},
            {
                "question_id": 111,
                "category": "math",
                "turns": ["Area?", "Circle?"],
                "reference": ["Area is 3", "5pi"],
            },
        ],
    )
    write_jsonl(
        tmp_path / "mt_bench/reference_answer/gpt-4.jsonl",
        [
            {
                "question_id": 111,
                "model_id": "gpt-4",
                "choices": [{"index": 0, "turns": ["0", "5pi"]}],
            },
        ],
    )
    src = tiny_source(
        "cmtbench", ["mt_bench/question.jsonl", "mt_bench/reference_answer/gpt-4.jsonl"], "x:y"
    )
    items = seeds.import_cmtbench(tmp_path, src).items
    assert items.item_id.tolist() == ["111:t1", "111:t2"]
    assert items.reference.tolist() == ["0", "5pi"]  # the original (wrong) GPT-4 reference
    assert json.loads(items.meta[0])["hints"] == ["Area is 3", "5pi"]


@pytest.mark.realdata
def test_real_mirror_cmtbench_and_contexteval(mirror):
    from judgelab.data import ingest as imports

    report = imports.import_source("cmtbench")
    # MT-Bench reasoning (101-110) + math (111-120) = 20 conversations x 2 turns = 40 items.
    assert report.n_items == 40
    items = pd.read_parquet(report.items_paths[0])
    assert items.reference.notna().all()  # every math/reasoning turn has a GPT-4 reference
    report = imports.import_source("contexteval")
    assert report.n_items == 3580  # the 3,580 queries of spec 002 §1.1
