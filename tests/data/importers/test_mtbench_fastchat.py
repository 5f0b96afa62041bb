import json
from dataclasses import replace

import pandas as pd
import pytest

from judgelab.data.importers import SourceFormatError
from judgelab.data.importers.mtbench_fastchat import import_mtbench_fastchat
from judgelab.data.sources import SourceFile, parse_source, registry_dir


def _jsonl(root, rel, records):
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return rel


def _answer(model, qid, turns):
    return {"question_id": qid, "model_id": model, "choices": [{"index": 0, "turns": turns}]}


def _pair(qid, g1, g2):
    return {
        "question_id": qid,
        "model_1": "phi-3-dpo",
        "model_2": "phi-3",
        "judge": ["gpt-4", "pair-v2"],
        "g1_winner": g1,
        "g2_winner": g2,
        "g1_judgment": f"g1 says {g1}",
        "g2_judgment": f"g2 says {g2}",
        "g1_user_prompt": "...",
        "g2_user_prompt": "...",
        "turn": 1,
    }


@pytest.fixture()
def tree(tmp_path):
    paths = [
        _jsonl(
            tmp_path,
            "mt_bench/question.jsonl",
            [
                {"question_id": 81, "category": "writing", "turns": ["Write.", "Shorter."]},
                {"question_id": 111, "category": "math", "turns": ["2+2?", "3+3?"]},
            ],
        ),
        _jsonl(
            tmp_path, "mt_bench/reference_answer/gpt-4.jsonl", [_answer("gpt-4", 111, ["4", "6"])]
        ),
        _jsonl(
            tmp_path,
            "mt_bench/model_answer/phi-3.jsonl",
            [_answer("phi-3", 81, ["P1", "P2"]), _answer("phi-3", 111, ["4", "6"])],
        ),
        _jsonl(
            tmp_path,
            "mt_bench/model_answer/phi-3-dpo.jsonl",
            [_answer("phi-3-dpo", 81, ["D1", "D2"]), _answer("phi-3-dpo", 111, ["5", "7"])],
        ),
        _jsonl(
            tmp_path,
            "mt_bench/model_judgment/gpt-4_pair.jsonl",
            [_pair(81, "model_1", "model_1"), _pair(111, "error", "tie")],
        ),
        _jsonl(
            tmp_path,
            "mt_bench/model_judgment/gpt-4_single.jsonl",
            [
                {
                    "question_id": 81,
                    "model": "phi-3-dpo",
                    "judge": ["gpt-4", "single-v1-multi-turn"],
                    "score": 9,
                    "judgment": "Rating: [[9]]",
                    "turn": 2,
                },
                {
                    "question_id": 111,
                    "model": "phi-3-dpo",
                    "judge": ["gpt-4", "single-math-v1"],
                    "score": -1,
                    "judgment": "no rating",
                    "turn": 1,
                },
            ],
        ),
    ]
    src = parse_source(registry_dir() / "mtbench_fastchat_fork.yaml")
    return tmp_path, replace(src, files=[SourceFile(p) for p in paths])


def _rows(j, cols):
    return [tuple(None if pd.isna(v) else v for v in row) for row in j[cols].to_numpy(object)]


def test_g1_g2_are_the_two_orders(tree):
    items, j = import_mtbench_fastchat(*tree)
    pair = j[j["judge"] == "gpt-4.pair"].sort_values(["item_id", "order"])
    # slots alphabetical: phi-3 < phi-3-dpo -> pos = phi-3 = model_2.
    # q81 g1 shows model_1 (phi-3-dpo) as A -> order 1; winner model_1 -> A, neg.
    #     g2 shows model_2 (phi-3) as A     -> order 0; winner model_1 (shown second) -> B, neg.
    # q111 g1 "error" -> invalid (order 1); g2 tie (order 0).
    assert _rows(pair, ["item_id", "order", "verdict", "valid", "chosen", "output"]) == [
        ("q111-t1-phi-3-vs-phi-3-dpo", 0, "tie", True, "tie", "g2 says tie"),
        ("q111-t1-phi-3-vs-phi-3-dpo", 1, None, False, None, "g1 says error"),
        ("q81-t1-phi-3-vs-phi-3-dpo", 0, "B", True, "neg", "g2 says model_1"),
        ("q81-t1-phi-3-vs-phi-3-dpo", 1, "A", True, "neg", "g1 says model_1"),
    ]
    assert pair["correct"].isna().all()  # no gold
    assert set(pair["prompt"]) == {"pair-v2"}
    it = items.set_index("item_id")
    assert it.loc["q81-t1-phi-3-vs-phi-3-dpo", "response_pos"] == "P1"
    assert it.loc["q111-t1-phi-3-vs-phi-3-dpo", "reference"] == "4"


def test_single_scores_are_a_pointwise_judge(tree):
    items, j = import_mtbench_fastchat(*tree)
    single = j[j["judge"] == "gpt-4.single"].sort_values("item_id")
    # score 9 -> "9"; FastChat's -1 means "no rating parsed" -> invalid
    assert _rows(single, ["item_id", "verdict", "valid"]) == [
        ("q111-t1-phi-3-dpo", None, False),
        ("q81-t2-phi-3-dpo", "9", True),
    ]
    turn2 = items.set_index("item_id").loc["q81-t2-phi-3-dpo"]
    assert (turn2["question"], turn2["response"]) == ("Shorter.", "D2")
    meta = json.loads(turn2["meta"])
    assert meta["history"] == [{"user": "Write.", "assistant": "D1"}]


def test_missing_answer_is_reported(tree):
    root, src = tree
    (root / "mt_bench/model_answer/phi-3.jsonl").write_text(
        json.dumps(_answer("phi-3", 81, ["P1", "P2"])) + "\n"
    )
    with pytest.raises(SourceFormatError, match=r"gpt-4_pair\.jsonl, row 1.*no answer of 'phi-3'"):
        import_mtbench_fastchat(root, src)
