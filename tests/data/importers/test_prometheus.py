import json
from dataclasses import replace

import pandas as pd
import pytest

from judgelab.data.importers import SourceFormatError
from judgelab.data.importers.prometheus import import_prometheus
from judgelab.data.sources import SourceFile, parse_source, registry_dir


def _prompt(response, reference=True):
    ref = "###Reference Answer (Score 5):\nGold.\n\n" if reference else ""
    return (
        "###Task Description:\nGrade it.\n\n###The instruction to evaluate:\nName a fruit."
        f"\n\n###Response to evaluate:\n{response}\n\n{ref}###Score Rubrics:\n[Good?]\n"
        "Score 1: bad\n\n###Feedback: "
    )


def _write(root, rel, obj):
    (root / rel).write_text(json.dumps(obj))
    return rel


@pytest.fixture()
def tree(tmp_path):
    paths = [
        _write(
            tmp_path,
            "mt_bench_eval.json",
            [
                {
                    "idx": 81,
                    "response_source": "chatgpt",
                    "category": "writing",
                    "instruction": _prompt("Apple."),
                    "gpt4_score": [3, 2, "n/a"],
                    "gpt4_feedback": ["f0", "f1", "f2"],
                },
            ],
        ),
        _write(
            tmp_path,
            "hhh_alignment_eval.json",
            [
                {
                    "source": "harmless",
                    "chosen_instruction": _prompt("Apple.", reference=False),
                    "rejected_instruction": _prompt("A rock.", reference=False),
                },
            ],
        ),
    ]
    src = parse_source(registry_dir() / "prometheus_eval.yaml")
    return tmp_path, replace(src, files=[SourceFile(p) for p in paths])


def test_repeated_scores_are_samples(tree):
    items, j = import_prometheus(*tree)
    it = items.set_index("item_id")
    assert it.loc["81:chatgpt", ["question", "response", "reference"]].tolist() == [
        "Name a fruit.",
        "Apple.",
        "Gold.",
    ]
    j = j.sort_values("sample")
    assert j["sample"].tolist() == [0, 1, 2]
    # 3 and 2 are scores; "n/a" is not an integer 1-5 -> invalid, feedback kept
    assert [None if pd.isna(v) else v for v in j["verdict"]] == ["3", "2", None]
    assert j["valid"].tolist() == [True, True, False]
    assert j["output"].tolist() == ["f0", "f1", "f2"]


def test_hhh_pairs_are_pairwise_items(tree):
    items, _ = import_prometheus(*tree)
    pair = items[items["split"] == "hhh_alignment"].iloc[0]
    assert (pair["task"], pair["response_pos"], pair["response_neg"], pair["gold"]) == (
        "pairwise",
        "Apple.",
        "A rock.",
        "pos",
    )


def test_score_feedback_mismatch(tree):
    root, src = tree
    _write(
        root,
        "mt_bench_eval.json",
        [
            {
                "idx": 1,
                "response_source": "x",
                "category": "c",
                "instruction": _prompt("a"),
                "gpt4_score": [3, 2],
                "gpt4_feedback": ["f0"],
            }
        ],
    )
    with pytest.raises(SourceFormatError, match=r"row 0, column 'gpt4_feedback'"):
        import_prometheus(root, src)
