"""Unit tests of judges beside human annotators and of anchor sensitivity (issue 35, s45)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from judgelab.analyses import stability as st

SLOTS = ["response1", "response2"]
CODES = {"0": "tie", "1": "response1", "2": "response2"}


def _items(pos_slots, annotators, *, label_key="annotators"):
    return pd.DataFrame(
        {
            "benchmark": "b",
            "split": "s",
            "item_id": [f"i{i}" for i in range(len(pos_slots))],
            "meta": [
                json.dumps({"pos_slot": p, label_key: a, "model_pos": "x", "model_neg": "y"})
                for p, a in zip(pos_slots, annotators, strict=True)
            ],
            "cluster": [f"c{i}" for i in range(len(pos_slots))],
            "gold": "pos",
        }
    )


def _judge(name, chosen, *, order=0):
    n = len(chosen)
    return pd.DataFrame(
        {
            "benchmark": "b",
            "split": "s",
            "item_id": [f"i{i}" for i in range(n)],
            "order": order,
            "judge": name,
            "sample": 0,
            "valid": [c is not None for c in chosen],
            "chosen": chosen,
            "cluster": [f"c{i}" for i in range(n)],
        }
    )


def test_with_humans_maps_judges_and_annotators_to_slots():
    items = _items(["response1", "response2", "response2"], [[1, 1, 2], [2, 0, 0], [0, 1, 2]])
    raters = st.with_humans(
        _judge("J", ["pos", "pos", "tie"]), items, labels="meta.annotators", codes=CODES,
        slots=SLOTS,
    )  # fmt: skip
    slot = raters.set_index(["judge", "item_id"])["slot"]
    # pos is response1 on i0 and response2 on i1; tie stays tie
    assert [slot["J", f"i{i}"] for i in range(3)] == ["response1", "response2", "tie"]
    assert [slot["annotator3", f"i{i}"] for i in range(3)] == ["response2", "tie", "response2"]
    # majority: i0 two of three say 1, i1 two say 0, i2 three different labels -> none
    assert slot["human majority", "i0"] == "response1" and slot["human majority", "i1"] == "tie"
    assert ("human majority", "i2") not in slot.index
    kinds = raters.drop_duplicates("judge").set_index("judge")["rater_kind"]
    assert kinds["J"] == "judge" and kinds["annotator1"] == "annotator"


def test_with_humans_bad_labels_name_the_item():
    items = _items(["response1"], [[1, 7, 2]])
    with pytest.raises(ValueError, match=r"item 'i0'.*7"):
        st.with_humans(_judge("J", ["pos"]), items, labels="meta.annotators", codes=CODES,
                       slots=SLOTS)  # fmt: skip
    with pytest.raises(ValueError, match=r"item 'i0'.*'output_1'"):
        st.slot_labels(_judge("J", ["pos"]), _items(["output_1"], [[1, 1, 1]]), slots=SLOTS)
    with pytest.raises(KeyError):
        st.slot_labels(_judge("J", ["pos"]).drop(columns="chosen"), items, slots=SLOTS)


def test_single_human_label_repeats_on_both_orders():
    items = _items(["output_1", "output_2"], [1, 1], label_key="label")
    both = pd.concat([_judge("G", ["pos", "neg"]), _judge("G", ["neg", "neg"], order=1)])
    raters = st.with_humans(
        both, items, labels="meta.label", codes={"1": "output_1", "2": "output_2"},
        slots=["output_1", "output_2"],
    )  # fmt: skip
    hum = raters[raters["judge"] == "humans"]
    assert len(hum) == 4 and set(hum["slot"]) == {"output_1"}
    shift = st.verdict_shift(raters, label="slot", reference="humans", n_boot=99)
    agree = shift.set_index("measure").loc["agreement", "value"]
    # G's slots: i0 order0 output_1, i1 order0 output_1, i0 order1 output_2, i1 order1
    # output_1: 3 of 4 units agree with the humans' output_1
    assert agree == pytest.approx(0.75)


def test_human_gap_hand_computed_and_planted():
    # i0: humans (1, 1, 2), judge 1 -> judge-human 2/3, human-human 1/3
    items = _items(["response1"], [[1, 1, 2]])
    raters = st.with_humans(_judge("J", ["pos"]), items, labels="meta.annotators",
                            codes=CODES, slots=SLOTS)  # fmt: skip
    gap = st.human_gap(raters, n_boot=99).set_index("measure")["value"]
    assert gap["judge-human"] == pytest.approx(2 / 3)
    assert gap["human-human"] == pytest.approx(1 / 3)
    assert gap["gap"] == pytest.approx(1 / 3)
    # planted: 60 items the three humans agree on; the judge agrees on 40 -> gap -1/3
    n = 60
    items = _items(["response1"] * n, [[1, 1, 1]] * n)
    chosen = ["pos"] * 40 + ["neg"] * 20
    rng = np.random.default_rng(3)
    raters = st.with_humans(_judge("J", list(rng.permutation(chosen))), items,
                            labels="meta.annotators", codes=CODES, slots=SLOTS)  # fmt: skip
    row = st.human_gap(raters, n_boot=499).set_index("measure").loc["gap"]
    assert row["value"] == pytest.approx(-1 / 3)
    assert row["ci_high"] < 0 < 0.05 - row["p_value"] and row["n"] == n


def test_humans_reason_and_pair_kinds():
    items = _items(["response1"], [[1, 1, 1]])
    assert st.humans_reason(items, labels="meta.annotators") is None
    assert "meta.nobody" in st.humans_reason(items, labels="meta.nobody")
    raters = pd.DataFrame(
        {"judge": ["J", "K", "annotator1"], "rater_kind": ["judge", "judge", "annotator"]}
    )
    shift = pd.DataFrame({"a": ["J", "J", "annotator1"], "b": ["K", "annotator1", "annotator1"]})
    kinds = st.pair_kinds(shift, raters)["kind"].tolist()
    assert kinds == ["judge-judge", "judge-human", "human-human"]


def test_pairwise_wins_both_directions_and_humans():
    items = _items(["response1", "response2"], [[1, 1, 1]] * 2)
    items.loc[1, "gold"] = "tie"
    wins = st.pairwise_wins(_judge("J", ["pos", "neg"]), items, human="gold")
    v = wins.set_index(["rater", "item_id", "system"])["value"]
    assert v["J", "i0", "x"] == 1.0 and v["J", "i0", "y"] == 0.0
    assert v["J", "i1", "x"] == 0.0 and v["J", "i1", "y"] == 1.0
    assert v["humans", "i1", "x"] == 0.5 and v["humans", "i0", "y"] == 0.0
    assert len(wins) == 8  # (2 judge + 2 human comparisons) x 2 directions


def test_wins_from_scores_hand_computed_and_duplicates():
    scores = pd.DataFrame(
        {
            "rater": "g",
            "system": ["a", "b", "c", "a", "b", "c"],
            "item_id": ["q1", "q1", "q1", "q2", "q2", "q2"],
            "cluster": ["q1", "q1", "q1", "q2", "q2", "q2"],
            "value": [9, 7, 7, 3, 8, 1],
        }
    )
    w = st.wins_from_scores(scores)
    v = w.set_index(["item_id", "system", "opponent"])["value"]
    assert v["q1", "a", "b"] == 1.0 and v["q1", "b", "c"] == 0.5 and v["q2", "a", "b"] == 0.0
    assert len(w) == 12  # 2 questions x 6 ordered pairs
    with pytest.raises(ValueError, match="two scores for one question"):
        st.wins_from_scores(pd.concat([scores, scores.head(1)]))


def _planted_wins(rates_by_anchor, n_q=100):
    """Wins of systems against anchors: system s beats anchor A on the first rate*n_q questions."""
    rows = []
    for anchor, rates in rates_by_anchor.items():
        for system, rate in rates.items():
            for q in range(n_q):
                value = 1.0 if q < rate * n_q else 0.0
                rows.append(("r", system, anchor, "b", "s", f"q{q}", f"q{q}", value))
    wins = pd.DataFrame(rows, columns=list(st.anchors.WIN_COLUMNS))
    back = wins.rename(columns={"system": "opponent", "opponent": "system"})
    return pd.concat([wins, back.assign(value=1 - back["value"])[wins.columns]])


def test_anchor_sensitivity_planted_reversal_and_agreement():
    wins = _planted_wins(
        {
            "A1": {"s1": 0.9, "s2": 0.5, "s3": 0.1},
            "A2": {"s1": 0.1, "s2": 0.5, "s3": 0.9},  # the order reverses
            "A3": {"s1": 0.8, "s2": 0.6, "s3": 0.3},  # the order of A1
        }
    )
    assert st.anchor_reason(wins, min_opponents=3) is None
    res = st.anchor_sensitivity(wins, min_opponents=3, n_boot=199, n_boot_wild=99)
    taus = res.taus.set_index(["anchor_1", "anchor_2"])
    assert taus.loc[("A1", "A2"), "tau"] == pytest.approx(-1.0)
    assert taus.loc[("A1", "A2"), "ci_high"] < 0
    assert taus.loc[("A1", "A3"), "tau"] == pytest.approx(1.0)
    assert taus.loc[("A1", "A3"), "ci_low"] > 0
    leaders = res.leaders.set_index("anchor")["leader"]
    assert leaders["A1"] == "s1" and leaders["A2"] == "s3"
    board = res.board.set_index(["anchor", "system"])
    assert board.loc[("A2", "s3"), "value"] == pytest.approx(0.9)
    assert not board.index.isin([("A1", "A1")]).any()  # an anchor is not ranked against itself


def test_anchor_reason_single_baseline_and_two_systems():
    star = _planted_wins({"base": {"s1": 0.5, "s2": 0.4, "s3": 0.7}})
    assert "single baseline ('base')" in st.anchor_reason(star, min_opponents=2)
    assert st.anchor_sensitivity(star, n_boot=19, n_boot_wild=19).taus.empty
    two = _planted_wins({"s2": {"s1": 0.5}})
    assert "2 systems" in st.anchor_reason(two)


def test_systems_by_rater_and_leaderboard_skips_unscored_cells():
    wins = _planted_wins({"A": {"s1": 0.5, "s2": 0.6}})
    scores = pd.DataFrame({"rater": "single", "system": ["s1"]})
    table = st.systems_by_rater(wins, scores).set_index("rater")
    assert table.loc["r", "n_systems"] == 3 and table.loc["single", "systems"] == "s1"
    rng = np.random.default_rng(0)
    long = pd.DataFrame(
        [
            {"rater": r, "system": s, "cluster": f"c{c}", "value": float(rng.random() < 0.5)}
            for r in ("r1", "r2")
            for s in "abc"
            for c in range(20)
            if not (r == "r2" and s == "a")
        ]
    )
    board = st.leaderboard_stability(long, reference=None, n_boot=19, n_boot_wild=19).board
    assert len(board) == 5 and not ((board["rater"] == "r2") & (board["system"] == "a")).any()
