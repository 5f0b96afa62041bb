import json

import pandas as pd
import pytest

from judgelab.analyses import pairwise, reference


def _items(n=6, split="s"):
    return pd.DataFrame(
        {
            "benchmark": "b", "split": split, "item_id": [str(i) for i in range(n)],
            "question": [f"q{i}" for i in range(n)], "reference": [f"ref {i}" for i in range(n)],
            "response": [f"answer {i}" for i in range(n)],
            "gold": [("Correct", "Incorrect")[i % 2] for i in range(n)],
            "meta": [json.dumps({"candidate_model": "m", "references": {"wrong": f"bad {i}"}})
                     for i in range(n)],
        }
    )  # fmt: skip


def test_random_reference_never_own_and_stable():
    items = _items(8)
    a = reference.reference_for_condition(items, "random", seed=3)
    assert all(r != own for r, own in zip(a, items["reference"], strict=True))
    assert a.notna().all()
    b = reference.reference_for_condition(items.iloc[::-1], "random", seed=3)
    assert a.tolist() == b.loc[items.index].tolist()  # same draw whatever the row order
    assert a.tolist() == reference.reference_for_condition(items, "random", seed=3).tolist()


def test_random_reference_same_for_every_candidate_of_a_question():
    items = pd.concat([_items(4), _items(4).assign(item_id=lambda d: d.item_id + "x")])
    refs = reference.reference_for_condition(items.reset_index(drop=True), "random", seed=0)
    assert refs.iloc[:4].tolist() == refs.iloc[4:].tolist()


def test_random_reference_skips_identical_reference_text():
    items = _items(3).assign(reference=["same", "same", "other"])
    refs = reference.reference_for_condition(items, "random", seed=0)
    # "same" questions can only draw "other"; "other" can only draw "same"
    assert refs.tolist() == ["other", "other", "same"]


def test_other_conditions():
    items = _items(2)
    assert reference.reference_for_condition(items, "none").isna().all()
    assert reference.reference_for_condition(items, "human").tolist() == ["ref 0", "ref 1"]
    assert reference.reference_for_condition(items, "wrong").tolist() == ["bad 0", "bad 1"]
    assert reference.reference_for_condition(items, "self", self_model="m").tolist() == [
        "answer 0", "answer 1"
    ]  # fmt: skip
    # verified: only the Correct answer (item 0) is a reference
    v = reference.reference_for_condition(items, "verified_other", verified_model="m")
    assert v.iloc[0] == "answer 0" and pd.isna(v.iloc[1])
    with pytest.raises(ValueError, match="reference condition must be one of"):
        reference.reference_for_condition(items, "oracle")
    with pytest.raises(ValueError, match="needs the candidate model"):
        reference.reference_for_condition(items, "self")


def _pairwise(judge_rows):
    return pd.DataFrame(
        [
            {"benchmark": "b", "split": "s", "item_id": i, "judge": f"M.{s}", "model": "M",
             "prompt": s, "condition": "", "order": o, "sample": 0, "valid": True,
             "chosen": ch, "correct": ch == "pos"}
            for s, i, o, ch in judge_rows
        ]
    )  # fmt: skip


def test_strategy_conditions_and_paired_comparison():
    rows = []
    # Vanilla: item 1 correct in both orders, item 2 not; Reference: both correct
    for s, res in (("Vanilla", {"1": "pos", "2": "neg"}), ("Reference", {"1": "pos", "2": "pos"})):
        for i, ch in res.items():
            rows += [(s, i, 0, ch), (s, i, 1, ch)]
    j = reference.strategy_conditions(
        _pairwise(rows), strategies={"Vanilla": "none", "Reference": "self"}
    )
    assert set(j["condition"]) == {"reference=none", "reference=self"} and set(j["judge"]) == {"M"}
    out = pairwise.item_outcomes(j, groups=("judge", "condition", "benchmark", "split"))
    cmp = reference.compare_conditions(out, across=None, n_boot=50).iloc[0]
    # CA none = 1/2, self = 2/2; conditions are sorted: none - self = -1/2; one discordant item
    assert (cmp["condition_1"], cmp["condition_2"]) == ("reference=none", "reference=self")
    assert cmp["diff"] == pytest.approx(-0.5) and (cmp["only_1"], cmp["only_2"]) == (0, 1)
    with pytest.raises(ValueError, match="without judgments"):
        reference.strategy_conditions(_pairwise(rows), strategies={"CoT": "none"})


def test_similarity_judgments_argmax_and_tie():
    items = pd.DataFrame(
        {
            "benchmark": "b", "split": "s", "item_id": ["0", "1"],
            "response_pos": ["the cat sat", "x"], "response_neg": ["a dog ran", "x"],
        }
    )  # fmt: skip
    refs = pd.Series(["the cat sat down", "y"])
    j = reference.similarity_judgments(
        items, references={"reference=human": refs}, methods=["token_f1"]
    )
    assert len(j) == 4  # 2 items x 2 orders
    chosen = j.groupby("item_id")["chosen"].first().to_dict()
    assert chosen == {"0": "pos", "1": "tie"}  # equal scores (0 and 0) are a tie
    with pytest.raises(ValueError, match="unknown similarity"):
        reference.similarity_judgments(items, references={"r": refs}, methods=["bleu"])


def test_references_from_outputs():
    j = pd.DataFrame(
        {
            "judge": ["g", "g", "h"], "benchmark": "b", "split": "s", "item_id": ["0", "1", "0"],
            "output": [json.dumps({"gpt_reference": "R0"}), "not json", json.dumps({"x": 1})],
        }
    )  # fmt: skip
    r = reference.references_from_outputs(j, judge="g", field="gpt_reference")
    assert r["reference"].tolist() == ["R0"]
    with pytest.raises(ValueError, match="no judgments"):
        reference.references_from_outputs(j, judge="z", field="gpt_reference")
