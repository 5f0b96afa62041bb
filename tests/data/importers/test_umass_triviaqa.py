import json
from dataclasses import replace

import pandas as pd
import pytest

from judgelab.data.importers import SourceFormatError
from judgelab.data.importers.umass_triviaqa import import_umass_triviaqa
from judgelab.data.sources import SourceFile, parse_source, registry_dir

PROMPT = "Q: Where is Narita airport?\nA: Tokyo\n\nQ: Capital of France?\nA:"


def _write(root, rel, rows):
    pd.DataFrame(rows).to_csv(root / rel, index=False)
    return rel


def _source(paths):
    src = parse_source(registry_dir() / "umass_llm_eval_triviaqa.yaml")
    return replace(src, files=[SourceFile(p) for p in paths])


def _row(human, gpt4, em, **extra):
    return {
        "model": "llama2-7b-chat",
        "response": PROMPT,
        "question": "Capital of France?",
        "references": "Paris\nParis, France",
        "benchmark": "triviaQA-400-v1.5.0",
        "GPT-4": gpt4,
        "EM": em,
        **extra,
        "HumanJudgement": human,
    }


def test_verdicts_gold_and_the_prompt_is_not_an_answer(tmp_path):
    rel = _write(
        tmp_path,
        "TriviaQA_Judges_w_HumanJudgement_V1.csv",
        [
            _row("True", "True", "False"),  # GPT-4 agrees with humans, EM does not
            _row("False", "True", ""),  # GPT-4 lenient; EM cell empty -> invalid
            _row("True", "maybe", "True"),  # GPT-4 unparseable -> invalid, raw kept
        ],
    )
    items, j = import_umass_triviaqa(tmp_path, _source([rel]))
    assert items["split"].unique().tolist() == ["V1"]
    assert items["gold"].tolist() == ["Correct", "Incorrect", "Correct"]
    assert items["response"].isna().all()  # the CSV's response column is the exam prompt
    meta = json.loads(items["meta"].iloc[0])
    assert meta["exam_prompt"] == PROMPT and meta["candidate_model"] == "llama2-7b-chat"
    j = j.sort_values(["judge", "item_id"])
    rows = [
        tuple(None if pd.isna(v) else v for v in r)
        for r in j[["judge", "verdict", "valid", "correct", "output"]].to_numpy(object)
    ]
    # correct = valid and verdict == gold (invalid with gold -> False)
    assert rows == [
        ("EM.baseline", "Incorrect", True, False, "False"),
        ("EM.baseline", None, False, False, ""),
        ("EM.baseline", "Correct", True, True, "True"),
        ("GPT-4.umass", "Correct", True, True, "True"),
        ("GPT-4.umass", "Correct", True, False, "True"),
        ("GPT-4.umass", None, False, False, "maybe"),
    ]
    assert set(j["prompt"]) == {"baseline", "umass"}


def test_v2_human_column_and_missing_gold(tmp_path):
    row = _row("", "True", "True")
    row.pop("HumanJudgement")
    row |= {"Human-Eval": "", "Human-Eval_Confidence": ""}
    rel = _write(tmp_path, "TriviaQA_Judges_w_HumanJudgement_V2.csv", [row])
    items, j = import_umass_triviaqa(tmp_path, _source([rel]))
    assert items["split"].tolist() == ["V2"] and items["gold"].isna().all()
    assert j["correct"].isna().all() and len(j) == 2  # GPT-4 and EM, Confidence is no judge


def test_missing_human_column(tmp_path):
    row = _row("True", "True", "True")
    row.pop("HumanJudgement")
    rel = _write(tmp_path, "TriviaQA_Judges_w_HumanJudgement_V1.csv", [row])
    with pytest.raises(SourceFormatError, match="column 'HumanJudgement'"):
        import_umass_triviaqa(tmp_path, _source([rel]))
