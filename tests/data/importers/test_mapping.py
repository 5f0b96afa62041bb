"""The generic CSV/JSONL/parquet importer on tiny hand-made files."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from judgelab.data.importers import SourceFormatError
from judgelab.data.importers.mapping import import_file

PAIR_CSV = """id,instruction,out1,out2,label,swap,winner,judge
q1,Say hi,Hello!,Go away.,1,false,[[A]],gpt-4
q1,Say hi,Hello!,Go away.,1,true,[[A]],gpt-4
q2,Add 2+2,5,4,2,false,[[B]],gpt-4
q2,Add 2+2,5,4,2,true,garbage,gpt-4
q3,Pick,x,y,tie,false,[[C]],gpt-4
"""

PAIR_MAPPING = {
    "benchmark": "demo",
    "task": "pairwise",
    "split": "test",
    "item_id": "id",
    "question": "instruction",
    "response_1": "out1",
    "response_2": "out2",
    "gold": {"column": "label", "map": {"1": "1", "2": "2", "tie": "tie"}},
    "swapped": "swap",
    "verdict": {"column": "winner", "map": {"[[A]]": "A", "[[B]]": "B", "[[C]]": "tie"}},
    "judge": {"column": "judge"},
}


def L(series):
    """Plain Python values, nulls as None (pandas gives <NA>)."""
    return [None if pd.isna(v) else (v.item() if hasattr(v, "item") else v) for v in series]


def _write(tmp_path, name, text, encoding="utf-8"):
    p = tmp_path / name
    p.write_bytes(text.encode(encoding))
    return p


def test_pairwise_two_orders_swapped_frame(tmp_path):
    imp = import_file(_write(tmp_path, "j.csv", PAIR_CSV), PAIR_MAPPING)
    items = imp.items.set_index("item_id")
    # q2's gold is slot 2 ("4"), so response_pos = "4" and response_neg = "5".
    assert items.loc["q2", ["response_pos", "response_neg", "gold"]].tolist() == ["4", "5", "pos"]
    assert items.loc["q3", "gold"] == "tie"
    j = imp.judgments
    got = list(
        zip(
            L(j.item_id),
            L(j.order),
            L(j.verdict),
            L(j.chosen),
            L(j.valid),
            L(j.correct),
            strict=True,
        )
    )
    assert got == [
        # q1 gold slot 1; not swapped: pos shown as A (order 0); "A" -> pos -> correct.
        ("q1", 0, "A", "pos", True, True),
        # swapped: slot 2 (neg) shown first, so order 1; "A" is the neg response.
        ("q1", 1, "A", "neg", True, False),
        # q2 gold slot 2; not swapped: slot 1 (neg) shown as A -> order 1; "B" = slot 2 = pos.
        ("q2", 1, "B", "pos", True, True),
        # unmapped "garbage": kept, invalid, raw output kept, correct False (gold known).
        ("q2", 0, None, None, False, False),
        # tie on a tie-gold item is correct.
        ("q3", 0, "tie", "tie", True, True),
    ]
    assert j.output.tolist()[3] == "garbage"
    assert j.judge.unique().tolist() == ["gpt-4"]


def test_slot_verdicts_are_already_unswapped(tmp_path):
    # LLMBar style: winner names the original output (1/2) whatever the presentation order.
    csv = "id,o1,o2,label,swap,winner\nq,good,bad,1,true,1\nq,good,bad,1,false,2\n"
    mapping = {
        **{k: PAIR_MAPPING[k] for k in ("benchmark", "item_id")},
        "response_1": "o1",
        "response_2": "o2",
        "gold": "label",
        "swapped": "swap",
        "verdict": {"column": "winner", "map": {"1": "1", "2": "2"}},
    }
    j = import_file(_write(tmp_path, "l.csv", csv), mapping).judgments
    # row 1: swapped -> bad shown as A, order 1; winner 1 = good = pos (shown as B).
    # row 2: not swapped, order 0; winner 2 = bad = neg (shown as B).
    assert list(zip(L(j.order), L(j.chosen), L(j.verdict), L(j.correct), strict=True)) == [
        (1, "pos", "B", True),
        (0, "neg", "B", False),
    ]


def test_no_gold_rows_in_both_slot_orders_match_by_text(tmp_path):
    # Position-bias style: each row lists the models in presentation order, no gold.
    rows = [
        {"q": "1", "A": "m2", "B": "m1", "ra": "two", "rb": "one", "v": "[[A]]"},
        {"q": "1", "A": "m1", "B": "m2", "ra": "one", "rb": "two", "v": "[[A]]"},
    ]
    p = tmp_path / "r.jsonl"
    p.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    mapping = {
        "benchmark": "pb",
        "item_id": "q",
        "response_1": "ra",
        "response_2": "rb",
        "model_1": "A",
        "model_2": "B",
        "verdict": {"column": "v", "map": {"[[A]]": "A", "[[B]]": "B"}},
    }
    imp = import_file(p, mapping)
    # Alphabetical canonical slots: m1 ("one") is pos, m2 ("two") neg.
    item = imp.items.iloc[0]
    assert (item.response_pos, item.response_neg) == ("one", "two") and pd.isna(item.gold)
    assert json.loads(item.meta) == {"model_neg": "m2", "model_pos": "m1"}
    j = imp.judgments
    # row 1 shows m2 first (order 1) and picks A = m2 = neg; row 2 shows m1 first, picks pos.
    assert list(zip(L(j.order), L(j.chosen), strict=True)) == [(1, "neg"), (0, "pos")]
    assert j.correct.isna().all()


def test_pos_neg_columns_with_order(tmp_path):
    df = pd.DataFrame(
        {
            "id": ["a", "a"],
            "chosen": ["c", "c"],
            "rejected": ["r", "r"],
            "ord": [0, 1],
            "w": ["A", "A"],
            "run": [0, 0],
        }
    )
    p = tmp_path / "x.parquet"
    df.to_parquet(p)
    mapping = {
        "benchmark": "b",
        "item_id": "id",
        "response_pos": "chosen",
        "response_neg": "rejected",
        "order": "ord",
        "verdict": "w",
        "sample": "run",
    }
    j = import_file(p, mapping).judgments
    # order 1 means pos shown as B, so "A" there is neg.
    assert j.chosen.tolist() == ["pos", "neg"] and j.correct.tolist() == [True, False]


def test_pointwise_with_map_and_bom(tmp_path):
    csv = (
        "\ufeffqid,question,answer,human,judge_says\n"
        "1,Capital?,Paris,Correct,True\n2,Sum?,5,Incorrect,True\n3,X?,y,Correct,maybe\n"
    )
    mapping = {
        "benchmark": "tqa",
        "task": "pointwise",
        "item_id": "qid",
        "question": "question",
        "response": "answer",
        "gold": "human",
        "verdict": {"column": "judge_says", "map": {"True": "Correct", "False": "Incorrect"}},
        "judge": "GPT-4",
    }
    imp = import_file(_write(tmp_path, "p.csv", csv), mapping)
    j = imp.judgments
    # 1: Correct == Correct; 2: Correct != Incorrect; 3: "maybe" unmapped -> invalid,
    # so correct is False (gold known).
    assert L(j.verdict) == ["Correct", "Correct", None]
    assert L(j.valid) == [True, True, False]
    assert L(j.correct) == [True, False, False]
    assert imp.items.gold.tolist() == ["Correct", "Incorrect", "Correct"]


def test_mapping_names_missing_column(tmp_path):
    p = _write(tmp_path, "j.csv", PAIR_CSV)
    with pytest.raises(
        SourceFormatError, match=r"j\.csv, column 'nope': mapping field 'question'"
    ):
        import_file(p, {**PAIR_MAPPING, "question": "nope"})


def test_bad_swapped_value_names_row_and_column(tmp_path):
    csv = PAIR_CSV.replace("1,true,[[A]]", "1,perhaps,[[A]]")
    with pytest.raises(SourceFormatError, match=r"row 2, column 'swap': expected a true/false"):
        import_file(_write(tmp_path, "j.csv", csv), PAIR_MAPPING)
