import json
from dataclasses import replace

import pandas as pd
import pytest

from judgelab.data.importers import SourceFormatError
from judgelab.data.importers.arena_bench import import_arena_bench
from judgelab.data.sources import SourceFile, parse_source, registry_dir


def _jsonl(root, rel, records):
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return rel


def _answer(model, qid, turns):
    return {"question_id": qid, "model_id": model, "choices": [{"index": 0, "turns": turns}]}


def _judgment(model, qid, score):
    return {
        "question_id": qid,
        "model": model,
        "user_prompt": "[Question]...",
        "judgment": f"Rating: [[{score}]]",
        "score": score,
    }


@pytest.fixture()
def tree(tmp_path):
    paths = [
        _jsonl(
            tmp_path,
            "question.jsonl",
            [
                {"question_id": "qa", "category": "arena-bench-v1", "turns": ["Why?"]},
                {"question_id": "qb", "category": "arena-bench-v1", "turns": ["How?"]},
            ],
        ),
        _jsonl(
            tmp_path,
            "reference_answer/gpt-4.jsonl",
            [_answer("gpt-4", "qa", ["Because."]), _answer("gpt-4", "qb", ["So."])],
        ),
        # the file stem differs from the model id, as for gpt-4-turbo.jsonl in the real data
        _jsonl(
            tmp_path,
            "model_answer/gpt-4-1106-preview.jsonl",
            [
                _answer("gpt-4-1106-preview", "qa", ["A1", "extra turn"]),
                _answer("gpt-4-1106-preview", "qb", ["B1"]),
            ],
        ),
        _jsonl(
            tmp_path,
            "model_judgment/gpt-4-turbo.jsonl",
            [
                _judgment("gpt-4-1106-preview", "qa", 8.0),
                _judgment("gpt-4-1106-preview", "qb", None),
            ],
        ),
    ]
    src = parse_source(registry_dir() / "arena_bench_v1.yaml")
    return tmp_path, replace(src, files=[SourceFile(p) for p in paths])


def test_scores_and_null_scores(tree):
    items, j = import_arena_bench(*tree)
    assert items["split"].unique().tolist() == ["gpt-4-1106-preview"]
    it = items.set_index("item_id")
    # the judged text is the first turn; the extra turn is only counted
    assert it.loc["qa", "response"] == "A1"
    assert json.loads(it.loc["qa", "meta"])["answer_turns"] == 2
    assert it.loc["qb", "reference"] == "So."
    j = j.sort_values("item_id")
    # 8.0 -> "8"; null score -> invalid, judgment text kept
    assert [None if pd.isna(v) else v for v in j["verdict"]] == ["8", None]
    assert j["valid"].tolist() == [True, False]
    assert j["output"].tolist() == ["Rating: [[8.0]]", "Rating: [[None]]"]
    assert set(j["judge"]) == {"gpt-4.single-ref"} and j["correct"].isna().all()


def test_judged_model_without_answers_is_rejected(tree):
    root, src = tree
    _jsonl(root, "model_judgment/gpt-4-turbo.jsonl", [_judgment("llama-13b", "qa", 3)])
    with pytest.raises(SourceFormatError, match=r"row 0, column 'model'"):
        import_arena_bench(root, src)


def test_response_is_the_answer_the_judge_graded(tmp_path):
    def prompt(answer):
        return (
            "[Question]\nWhy?\n\n[The Start of Reference Answer]\nBecause.\n"
            f"[The End of Reference Answer]\n\n[The Start of Assistant's Answer]\n{answer}\n"
            "[The End of Assistant's Answer]"
        )

    paths = [
        _jsonl(tmp_path, "question.jsonl", [{"question_id": q, "turns": ["Why?"]} for q in "xy"]),
        _jsonl(tmp_path, "reference_answer/gpt-4.jsonl", [_answer("gpt-4", "x", ["Because."])]),
        _jsonl(
            tmp_path,
            "model_answer/m.jsonl",
            [_answer("m", "x", ["Sample one."]), _answer("m", "y", ["Same  text\nhere."])],
        ),
        _jsonl(
            tmp_path,
            "model_judgment/m.jsonl",
            [
                # x: GPT-4 graded another sample of the answer than the one in model_answer/.
                {**_judgment("m", "x", 3.0), "user_prompt": prompt("Sample two, much longer.")},
                # y: the same answer with other white space: the file's text is kept.
                {**_judgment("m", "y", 9.0), "user_prompt": prompt("Same text here.")},
            ],
        ),
    ]
    src = replace(
        parse_source(registry_dir() / "arena_bench_v1.yaml"),
        files=[SourceFile(p) for p in paths],
    )
    items, _ = import_arena_bench(tmp_path, src)
    it = items.set_index("item_id")
    assert it.loc["x", "response"] == "Sample two, much longer."
    meta = json.loads(it.loc["x", "meta"])
    assert (
        meta["answer_file_response"] == "Sample one." and meta["response_source"] == "judge_prompt"
    )
    assert it.loc["y", "response"] == "Same  text\nhere."
    assert "response_source" not in json.loads(it.loc["y", "meta"])
