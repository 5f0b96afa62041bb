"""Judge-vs-human tables built from items and judgments, and the averaged budget curves."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from judgelab.analyses.grounding import budget_curve, tables


def _items(golds, metas=None):
    metas = metas or [{}] * len(golds)
    return pd.DataFrame(
        {
            "benchmark": "b",
            "split": "s",
            "item_id": [str(i) for i in range(len(golds))],
            "gold": golds,
            "meta": [json.dumps(m) for m in metas],
            "cluster": [f"c{i // 2}" for i in range(len(golds))],
        }
    )


def test_pointwise_table_scores_pass_and_invalid_as_half():
    items = _items(
        ["Correct", "Incorrect", "Correct", None], [{"m": "x"}, {"m": "x"}, {"m": "y"}, {"m": "y"}]
    )
    j = pd.DataFrame(
        {
            "benchmark": "b",
            "split": "s",
            "item_id": ["0", "1", "2", "3", "0"],
            "judge": ["J", "J", "J", "J", "K"],
            "verdict": ["Correct", "Correct", None, "Correct", "Incorrect"],
            "valid": [True, True, False, True, True],
        }
    )
    t = tables.pointwise_table(j, items, positive="Correct", group="meta.m")
    got = t.set_index(["judge", "item_id"])
    assert got.loc[("J", "0"), ["judge_label", "human_label", "group"]].tolist() == [1.0, 1.0, "x"]
    assert got.loc[("J", "1"), "judge_label"] == 1.0 and got.loc[("J", "1"), "human_label"] == 0.0
    assert got.loc[("J", "2"), "judge_label"] == 0.5  # invalid verdict
    assert ("J", "3") not in got.index  # no gold
    assert got.loc[("K", "0"), "judge_label"] == 0.0 and got.loc[("K", "0"), "cluster"] == "c0"


def test_pairwise_table_averages_orders_and_scores_ties_half():
    items = _items(
        ["pos", "pos", "tie"],
        [{"pos_slot": "output_1"}, {"pos_slot": "output_2"}, {"pos_slot": "output_1"}],
    )
    first = tables.first_side(items, "slot:output_1")
    assert first.tolist() == [True, False, True]
    j = pd.DataFrame(
        {
            "benchmark": "b",
            "split": "s",
            "item_id": ["0", "0", "1", "2"],
            "judge": "J",
            "order": [0, 1, 0, 0],
            "chosen": ["pos", "neg", "pos", "tie"],
            "valid": True,
        }
    )
    t = tables.pairwise_table(j, items, first).set_index("item_id")
    # item 0: human: output_1 wins (1); judge: pos (1) and neg (0) -> 0.5
    assert t.loc["0", ["human_label", "judge_label"]].tolist() == [1.0, 0.5]
    # item 1: pos is output_2, so the first output loses (0); the judge picked pos -> 0
    assert t.loc["1", ["human_label", "judge_label"]].tolist() == [0.0, 0.0]
    assert t.loc["2", ["human_label", "judge_label"]].tolist() == [0.5, 0.5]


def test_first_side_by_model_key_and_bad_rule():
    items = _items(
        ["pos", "pos"],
        [{"cmp_key": "a_b", "model_pos": "a"}, {"cmp_key": "a_b", "model_pos": "b"}],
    )
    assert tables.first_side(items, "model:cmp_key").tolist() == [True, False]
    with pytest.raises(ValueError, match="slot:<value> or model:<key>"):
        tables.first_side(items, "other")


def test_per_group_focus_and_summary(rng):
    n = 120
    human = (rng.random(n) < 0.6).astype(float)
    judge = human.copy()
    judge[:20] = 1.0  # a lenient judge
    t = pd.DataFrame(
        {
            "judge": "J",
            "group": ["g1", "g2"] * (n // 2),
            "judge_label": judge,
            "human_label": human,
        }
    )
    curves = tables.per_group(
        t,
        budget_curve,
        judge_col="judge_label",
        human_col="human_label",
        budgets=[20, 40],
        reps=30,
    )
    assert set(curves["group"]) == {"g1", "g2"} and set(curves["method"]) >= {"naive", "ppi"}
    assert len(tables.focus(curves, ["J|g1"])) == len(curves) // 2
    summary = tables.summarise_curves(curves)
    assert (summary["n_pairs"] == 2).all()
    assert summary.loc[summary.method == "classical", "beats_classical"].eq(0).all()
