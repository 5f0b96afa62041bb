import json
from dataclasses import replace

import pandas as pd
import pytest

from judgelab.data.importers import SourceFormatError
from judgelab.data.importers.llmbar import import_llmbar
from judgelab.data.sources import SourceFile, parse_source, registry_dir

DATASET = [
    {"input": "Say hi.", "output_1": "Hi!", "output_2": "Bye.", "label": 1},
    {"input": "Add 2+2.", "output_1": "5", "output_2": "4", "label": 2},
]


def _pair(winner_false, winner_true, text_false="Output (a)", text_true="Output (b)"):
    return {
        "swap = False": {"completion": [text_false, "stop"], "winner": winner_false},
        "swap = True": {"completion": [text_true, "stop"], "winner": winner_true},
    }


def _write(root, rel, obj):
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(obj))
    return rel


def _source(paths, **options):
    src = parse_source(registry_dir() / "llmbar.yaml")
    return replace(src, files=[SourceFile(p) for p in paths], options={**src.options, **options})


@pytest.fixture()
def tree(tmp_path):
    base = "LLMBar/Natural"
    paths = [_write(tmp_path, f"{base}/dataset.json", DATASET)]
    vanilla = [
        DATASET[0] | {"results": [_pair("1", "1")]},
        DATASET[1] | {"results": [_pair("1", None, text_true="I cannot answer")]},
    ]
    rating = [
        DATASET[0]
        | {
            "results": [
                {
                    "score_1": ["6", "stop"],
                    "score_2": ["6", "stop"],
                    "swap = False": {"winner": "2"},
                    "swap = True": {"winner": "1"},
                }
            ]
        },
        DATASET[1]
        | {
            "results": [
                {
                    "score_1": ["", "content management policy"],
                    "score_2": ["3", "stop"],
                    "swap = False": {"winner": "1"},
                    "swap = True": {"winner": "2"},
                }
            ]
        },
    ]
    paths.append(_write(tmp_path, f"{base}/evaluators/GPT-4/Vanilla/result.json", vanilla))
    paths.append(_write(tmp_path, f"{base}/evaluators/GPT-4/Rating/result.json", rating))
    return tmp_path, paths


def _rows(judgments, judge):
    j = judgments[judgments["judge"] == judge].sort_values(["item_id", "order"])
    cols = ["item_id", "order", "verdict", "valid", "chosen", "correct"]
    return [tuple(None if pd.isna(v) else v for v in row) for row in j[cols].to_numpy(object)]


def test_items_take_pos_from_label(tree):
    root, paths = tree
    items = import_llmbar(root, _source(paths)).items
    assert items["split"].tolist() == ["Natural", "Natural"]
    # label 1 -> pos = output_1; label 2 -> pos = output_2 ("4")
    assert items["response_pos"].tolist() == ["Hi!", "4"]
    assert items["response_neg"].tolist() == ["Bye.", "5"]
    assert items["gold"].tolist() == ["pos", "pos"]


def test_vanilla_orders_are_not_flipped_twice(tree):
    root, paths = tree
    j = import_llmbar(root, _source(paths)).judgments
    assert set(j["judge"]) == {"GPT-4.Vanilla", "GPT-4.Rating"}
    # item 0 (pos = output_1): swap=False shows output_1 first -> order 0, winner 1 -> A, pos.
    #   swap=True shows output_2 first -> order 1; winner "1" (already original index) means
    #   output_1, shown second -> B, still pos.
    # item 1 (pos = output_2): swap=False shows output_1 first -> order 1; winner 1 -> A, neg.
    #   swap=True shows output_2 (pos) first -> order 0; winner None -> invalid, correct False.
    assert _rows(j, "GPT-4.Vanilla") == [
        ("0", 0, "A", True, "pos", True),
        ("0", 1, "B", True, "pos", True),
        ("1", 0, None, False, None, False),
        ("1", 1, "A", True, "neg", False),
    ]
    invalid = j[(j["judge"] == "GPT-4.Vanilla") & ~j["valid"]]
    assert invalid["output"].tolist() == ["I cannot answer"]  # raw output kept


def test_rating_ties_and_unparseable_scores(tree):
    root, paths = tree
    j = import_llmbar(root, _source(paths)).judgments
    # item 0: 6 vs 6 -> a tie in both orders (LLMBar's positional winner ignored);
    # item 1: score_1 is "" -> both rows invalid, LLMBar's fallback winners ignored.
    assert _rows(j, "GPT-4.Rating") == [
        ("0", 0, "6|6", True, "tie", False),
        ("0", 1, "6|6", True, "tie", False),
        ("1", 0, None, False, None, False),
        ("1", 1, None, False, None, False),
    ]


def test_rating_ties_position_option_keeps_llmbar_winner(tree):
    root, paths = tree
    j = import_llmbar(root, _source(paths, rating_ties="position")).judgments
    # item 0, swap=False: LLMBar says "2" (= neg, order 0); swap=True: "1" (= pos, order 1)
    assert _rows(j, "GPT-4.Rating")[:2] == [
        ("0", 0, "6|6", True, "neg", False),
        ("0", 1, "6|6", True, "pos", True),
    ]


def test_rating_verdict_is_in_presented_frame(tmp_path):
    paths = [_write(tmp_path, "LLMBar/Natural/dataset.json", DATASET[:1])]
    rec = DATASET[0] | {
        "results": [
            {
                "score_1": ["8", "stop"],
                "score_2": ["3", "stop"],
                "swap = False": {"winner": "1"},
                "swap = True": {"winner": "1"},
            }
        ]
    }
    paths.append(_write(tmp_path, "LLMBar/Natural/evaluators/GPT-4/Rating/result.json", [rec]))
    j = import_llmbar(tmp_path, _source(paths)).judgments.sort_values("order")
    # order 0 shows output_1 (score 8) first -> "8|3"; order 1 shows output_2 first -> "3|8"
    assert j["verdict"].tolist() == ["8|3", "3|8"]
    assert j["chosen"].tolist() == ["pos", "pos"]


def test_result_not_matching_dataset_is_rejected(tree):
    root, paths = tree
    bad = [
        DATASET[0] | {"results": [_pair("1", "1")]},
        DATASET[1] | {"input": "Other", "results": [_pair("1", "1")]},
    ]
    paths.append(_write(root, "LLMBar/Natural/evaluators/PaLM2/CoT/result.json", bad))
    with pytest.raises(SourceFormatError, match=r"CoT/result\.json, row 1, column 'input'"):
        import_llmbar(root, _source(paths))


def test_bad_label_and_unknown_option(tmp_path):
    paths = [_write(tmp_path, "LLMBar/Natural/dataset.json", [DATASET[0] | {"label": 3}])]
    with pytest.raises(SourceFormatError, match=r"row 0, column 'label'"):
        import_llmbar(tmp_path, _source(paths))
    with pytest.raises(SourceFormatError, match="rating_ties"):
        import_llmbar(tmp_path, _source(paths, rating_ties="coin"))


def test_i37_2h_llmbar_writes_shown_first(tree):
    """Issue 37 item 2h: every judgment keeps the slot shown first, beside the gold order."""
    root, paths = tree
    got = import_llmbar(root, _source(paths))
    j = got.judgments[got.judgments["judge"] == "GPT-4.Vanilla"].sort_values(
        ["item_id", "shown_first"]
    )
    assert j["shown_first"].tolist() == ["1", "2", "1", "2"]
    assert j["order"].tolist() == [0, 1, 1, 0]  # item 1's gold is slot 2
    rating = got.judgments[got.judgments["judge"] == "GPT-4.Rating"]
    assert sorted(rating["shown_first"]) == ["1", "1", "2", "2"]
