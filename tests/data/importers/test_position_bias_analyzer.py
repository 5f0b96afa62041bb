import csv
from dataclasses import replace

import pandas as pd
import pytest

from judgelab.data.importers import SourceFormatError
from judgelab.data.importers.position_bias_analyzer import import_position_bias_analyzer
from judgelab.data.sources import SourceFile, parse_source, registry_dir

JUDGE = "gpt-4-0613"
COLUMNS = [
    "cmp_index",
    "question_1",
    "question_2",
    "answer1_1",
    "answer1_2",
    "answer2_1",
    "answer2_2",
    "A",
    "B",
    "reference_answer_1",
    "reference_answer_2",
    "evaluating_guidance",
    "task",
    JUDGE,
]
ANSWERS = {"vicuna-13b-v1.3": ("v1", "v2"), "claude-v1": ("c1", "c2")}


def _row(a, b, judgment):
    return {
        "cmp_index": f"81;{a};{b}",
        "question_1": "Q1?",
        "question_2": "Q2?",
        "answer1_1": ANSWERS[a][0],
        "answer1_2": ANSWERS[a][1],
        "answer2_1": ANSWERS[b][0],
        "answer2_2": ANSWERS[b][1],
        "A": a,
        "B": b,
        "reference_answer_1": "nan",
        "reference_answer_2": "nan",
        "evaluating_guidance": "nan",
        "task": "writing",
        JUDGE: judgment,
    }


def _write(root, rep, rows, judge=JUDGE):
    rel = f"Repetition{rep}-MTBench_3q-4m-vicuna13b-v1_record0_{judge}_3/record_{judge}_3.tsv"
    path = root / rel
    path.parent.mkdir(parents=True)
    pd.DataFrame(rows, columns=COLUMNS).to_csv(
        path, sep="\t", index=False, quoting=csv.QUOTE_MINIMAL
    )
    return rel


def _source(paths):
    src = parse_source(registry_dir() / "position_bias_analyzer.yaml")
    return replace(src, files=[SourceFile(p) for p in paths])


def _rows(j):
    cols = ["sample", "order", "verdict", "valid", "chosen", "correct"]
    j = j.sort_values(["sample", "order"])
    return [tuple(None if pd.isna(v) else v for v in row) for row in j[cols].to_numpy(object)]


def test_two_presentations_pair_into_one_item(tmp_path):
    v, c = "vicuna-13b-v1.3", "claude-v1"
    paths = [
        _write(tmp_path, 1, [_row(v, c, "... [[A]]"), _row(c, v, "Tie? No: [[A]]")]),
        _write(tmp_path, 2, [_row(v, c, "[[C]]"), _row(c, v, "Assistant A is better.")]),
    ]
    items, j = import_position_bias_analyzer(tmp_path, _source(paths))
    # no gold: slots alphabetical, claude-v1 < vicuna-13b-v1.3 -> claude-v1 is response_pos
    assert items["item_id"].tolist() == ["81:claude-v1:vicuna-13b-v1.3"]
    assert items["response_pos"].iloc[0] == "[Turn 1]\nc1\n\n[Turn 2]\nc2"
    assert items["gold"].isna().all() and items["reference"].isna().all()
    assert set(j["judge"]) == {"gpt-4-0613.mtbench-pair"}
    # rep 1 (sample 0): vicuna shown as A -> order 1, A wins -> vicuna = neg;
    #                   claude shown as A -> order 0, A wins -> claude = pos.
    # rep 2 (sample 1): claude first (order 0) with no [[X]] tag -> invalid;
    #                   vicuna first (order 1) says [[C]] -> tie.
    assert _rows(j) == [
        (0, 0, "A", True, "pos", None),
        (0, 1, "A", True, "neg", None),
        (1, 0, None, False, None, None),
        (1, 1, "tie", True, "tie", None),
    ]
    assert j.loc[~j["valid"], "output"].tolist() == ["Assistant A is better."]


def test_cmp_index_must_match_a_b(tmp_path):
    row = _row("vicuna-13b-v1.3", "claude-v1", "[[A]]") | {"A": "claude-v1"}
    paths = [_write(tmp_path, 1, [row])]
    with pytest.raises(SourceFormatError, match=r"row 0, column 'cmp_index'"):
        import_position_bias_analyzer(tmp_path, _source(paths))


def test_judge_column_must_match_folder(tmp_path):
    rows = [_row("vicuna-13b-v1.3", "claude-v1", "[[A]]")]
    paths = [_write(tmp_path, 1, rows, judge="gemini-pro")]
    with pytest.raises(SourceFormatError, match="last column should be the judge 'gemini-pro'"):
        import_position_bias_analyzer(tmp_path, _source(paths))
