import json
from dataclasses import replace

import pandas as pd
import pytest

from judgelab.data.importers import SourceFormatError
from judgelab.data.importers.pandalm import import_pandalm
from judgelab.data.sources import SourceFile, parse_source, registry_dir


def _item(idx, a1, a2, a3, response1="r1"):
    return {
        "idx": idx,
        "motivation_app": "Grammarly",
        "cmp_key": "bloom-7b_llama-7b",
        "instruction": "Fix this.",
        "input": "teh cat" if idx == 0 else "",
        "response1": response1,
        "response2": f"r2-{idx}",
        "annotator1": a1,
        "annotator2": a2,
        "annotator3": a3,
    }


def _write(root, rel, obj):
    (root / rel).write_text(json.dumps(obj))
    return rel


@pytest.fixture()
def tree(tmp_path):
    paths = [
        _write(
            tmp_path,
            "testset-v1.json",
            [
                _item(0, 2, 1, 2),  # majority 2 -> pos = response2
                _item(1, 1, 1, 0),  # majority 1 -> pos = response1
                _item(2, 0, 0, 2),  # majority 0 -> gold tie
                _item(3, 0, 1, 2, response1=True),  # no majority -> gold null; JSON true as text
            ],
        ),
        _write(
            tmp_path,
            "pandalm-7b-testset-v1.json",
            [
                {
                    "idx": i,
                    "pandalm_result": r,
                    "pandalm_reason": "why",
                    "pandalm_reference": "ref",
                }
                for i, r in enumerate([2, 2, 0, 1])
            ],
        ),
        _write(
            tmp_path,
            "gpt-3.5-turbo-testset-v1.json",
            [
                {"idx": i, "gpt_result": r, "gpt_reason": "", "gpt_reference": ""}
                for i, r in enumerate(["1", "garbage", "Tie", "2"])
            ],
        ),
    ]
    src = parse_source(registry_dir() / "pandalm.yaml")
    return tmp_path, replace(src, files=[SourceFile(p) for p in paths])


def _rows(j, cols):
    return [tuple(None if pd.isna(v) else v for v in row) for row in j[cols].to_numpy(object)]


def test_majority_gold(tree):
    items = import_pandalm(*tree).items
    assert [None if pd.isna(g) else g for g in items["gold"]] == ["pos", "pos", "tie", None]
    assert items["response_pos"].tolist() == ["r2-0", "r1", "r1", "True"]
    assert items["question"].iloc[0] == "Fix this.\n\nteh cat"
    meta = json.loads(items["meta"].iloc[3])
    assert meta["non_text_json_values"] == ["response1"]
    assert json.loads(items["meta"].iloc[0])["model_pos"] == "llama-7b"


def test_single_order_and_garbage(tree):
    j = import_pandalm(*tree).judgments.sort_values(["judge", "item_id"])
    # response1 is always shown first: order 0 where pos = response1 (items 1, 2, 3), else 1.
    # gpt-3.5: item0 "1" -> response1 = neg (A), wrong; item1 garbage -> invalid, wrong;
    #          item2 Tie on tie gold -> correct; item3 "2" -> neg, no gold -> None.
    # pandalm: item0 2 -> pos (B), right; item1 2 -> neg; item2 0 -> tie, right; item3 1 -> pos.
    assert _rows(j, ["judge", "order", "verdict", "valid", "chosen", "correct"]) == [
        ("gpt-3.5-turbo.pandalm", 1, "A", True, "neg", False),
        ("gpt-3.5-turbo.pandalm", 0, None, False, None, False),
        ("gpt-3.5-turbo.pandalm", 0, "tie", True, "tie", True),
        ("gpt-3.5-turbo.pandalm", 0, "B", True, "neg", None),
        ("pandalm-7b.pandalm", 1, "B", True, "pos", True),
        ("pandalm-7b.pandalm", 0, "B", True, "neg", False),
        ("pandalm-7b.pandalm", 0, "tie", True, "tie", True),
        ("pandalm-7b.pandalm", 0, "A", True, "pos", None),
    ]
    garbage = j[~j["valid"]]["output"].iloc[0]
    assert json.loads(garbage)["gpt_result"] == "garbage"


def test_bad_annotator_value(tree):
    root, src = tree
    _write(root, "testset-v1.json", [_item(0, 2, 5, 2)])
    with pytest.raises(SourceFormatError, match=r"row 0, column 'annotator2'"):
        import_pandalm(root, src)
