import json
from dataclasses import replace

import pandas as pd
import pytest

from judgelab.data.importers import SourceFormatError
from judgelab.data.importers.alpaca_eval import import_alpaca_eval
from judgelab.data.sources import SourceFile, parse_source, registry_dir

BASE = {
    "dataset": "helpful_base",
    "generator_1": "gpt4_1106_preview",
    "generator_2": "gpt-3.5-turbo-0301",
}


def _rec(i, annotator, preference, **extra):
    return (
        BASE
        | {
            "instruction": f"Q{i}",
            "output_1": f"base{i}",
            "output_2": f"model{i}",
            "annotator": annotator,
            "preference": preference,
            "price_per_example": 0.01,
            "time_per_example": 1.5,
            "raw_completion": {"text": "m"},
        }
        | extra
    )


def _write(root, rel, records):
    (root / rel).write_text(json.dumps(records))
    return rel


def _source(paths):
    src = parse_source(registry_dir() / "alpaca_eval.yaml")
    return replace(src, files=[SourceFile(p) for p in paths])


def _rows(j, cols):
    return [tuple(None if pd.isna(v) else v for v in row) for row in j[cols].to_numpy(object)]


@pytest.fixture()
def tree(tmp_path):
    weighted = "weighted_alpaca_eval_gpt4_turbo"
    cot = "alpaca_eval_cot_gpt4_turbo_fn"
    paths = [
        _write(
            tmp_path,
            f"gpt-3.5-turbo-0301__{weighted}__annotations.json",
            [
                _rec(0, weighted, 1.9900139974),
                _rec(1, weighted, 1.5),
                _rec(2, weighted, None),
            ],
        ),
        _write(
            tmp_path,
            f"gpt-3.5-turbo-0301__{cot}__annotations.json",
            [
                _rec(0, cot, 1.0, referenced_models={"M": "output_1", "m": "output_2"}),
                _rec(1, cot, 2.0, referenced_models={"M": "output_2", "m": "output_1"}),
                _rec(2, cot, 1.0, referenced_models=None),
            ],
        ),
    ]
    return tmp_path, paths


def test_preferences_and_known_orders(tree):
    root, paths = tree
    items, j = import_alpaca_eval(root, _source(paths))
    assert items["split"].unique().tolist() == ["gpt-3.5-turbo-0301 vs gpt4_1106_preview"]
    assert len(items) == 3  # both annotators judged the same 3 items
    # slots keep the source order: pos = output_1 (baseline), neg = output_2 (model)
    assert items["response_pos"].tolist() == ["base0", "base1", "base2"]
    w = j[j["judge"] == "weighted_alpaca_eval_gpt4_turbo.alpaca_eval"].sort_values("item_id")
    # 1.99 > 1.5 -> output_2 -> neg; 1.5 -> tie; None -> invalid. Order unknown -> 0.
    assert _rows(w, ["order", "verdict", "valid", "chosen"]) == [
        (0, "1.9900139974", True, "neg"),
        (0, "1.5", True, "tie"),
        (0, None, False, None),
    ]
    c = j[j["judge"] == "alpaca_eval_cot_gpt4_turbo_fn.alpaca_eval"].sort_values("item_id")
    # item 0: "m" (listed first) = output_2 -> output_1 (pos) shown second -> order 1;
    #         preference 1 -> output_1 -> pos.
    # item 1: "m" = output_1 -> order 0; preference 2 -> neg.
    # item 2: no referenced_models -> order unknown -> 0.
    assert _rows(c, ["order", "verdict", "chosen"]) == [
        (1, "1.0", "pos"),
        (0, "2.0", "neg"),
        (0, "1.0", "pos"),
    ]
    assert c["correct"].isna().all()  # no gold
    assert c["cost_usd"].tolist() == [0.01] * 3 and c["latency_s"].tolist() == [1.5] * 3
    meta = [json.loads(m) for m in items.sort_values("item_id")["meta"]]
    assert [m["presentation_order_known_for"] for m in meta] == [
        [c_] for c_ in ["alpaca_eval_cot_gpt4_turbo_fn"] * 2
    ] + [[]]
    assert meta[0]["presentation_order"] == "unknown"


def test_conflicting_item_across_files_is_rejected(tree):
    root, paths = tree
    paths.append(
        _write(
            root,
            "gpt-3.5-turbo-0301__alpaca_eval_gpt4__annotations.json",
            [_rec(0, "alpaca_eval_gpt4", 2.0, output_2="other text")],
        )
    )
    with pytest.raises(SourceFormatError, match=r"alpaca_eval_gpt4__annotations\.json, row 0"):
        import_alpaca_eval(root, _source(paths))
