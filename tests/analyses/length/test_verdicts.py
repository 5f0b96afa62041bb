"""The verdict and item tables, and the keys the length analyses share."""

import numpy as np
import pandas as pd
import pytest

from judgelab.analyses import length


def test_pairwise_verdicts_hand_values(hand_verdicts):
    v = hand_verdicts
    assert v.loc[v["item_id"] == "2", "len_diff"].tolist() == [-5.0, -5.0]
    assert v.loc[v["item_id"] == "2", "first_shown"].tolist() == ["pos", "neg"]
    assert v["model_neg"].unique().tolist() == ["mod"]
    # 1/0 only for pos/neg verdicts on unequal lengths: items 1 and 2
    decisive = v[v["picked_longer"].notna()]
    assert sorted(decisive["item_id"].unique()) == ["1", "2"]
    assert v["longer"].tolist()[:6] == ["pos", "pos", "neg", "neg", "equal", "equal"]


def test_pairwise_verdicts_reads_models_from_meta_as_strings(make_pairwise):
    items, judg = make_pairwise([("1", 3, 2, "pos", "pos")])
    v = length.pairwise_verdicts(items, judg)
    assert v["model_pos"].dtype == "string" and v["model_pos"].tolist() == ["base", "base"]
    no_meta = length.pairwise_verdicts(items.assign(meta=None), judg)
    assert no_meta["model_neg"].isna().all() and no_meta["model_neg"].dtype == "string"


def test_pairwise_verdicts_needs_lengths(make_pairwise):
    items, judg = make_pairwise([("1", 3, 2, "pos", "pos")])
    with pytest.raises(KeyError, match="add_lengths"):
        length.pairwise_verdicts(items.drop(columns=["len_pos"]), judg)


def test_item_table_consistent_accuracy_and_scores(make_pairwise):
    items, judg = make_pairwise([("1", 3, 2, "pos", "pos"), ("2", 3, 2, "pos", "neg")])
    t = length.item_table(items, judg).set_index("item_id")
    # item 1 correct in both orders -> CA 1; item 2 wrong in order 1 -> CA 0, inconsistent
    assert t.loc["1", "correct"] == 1.0 and t.loc["2", "correct"] == 0.0
    assert t.loc["1", "consistent"] == 1.0 and t.loc["2", "consistent"] == 0.0
    assert t.loc["1", "len_response"] == 2.5  # (3 + 2) / 2
    assert t.loc["1", "len_diff"] == 1.0


def test_item_table_rejects_mixed_units(make_pairwise):
    items, judg = make_pairwise([("1", 3, 2, "pos", "pos"), ("2", 3, 2, "pos", "neg")])
    items.loc[items.index[1], "len_unit"] = "chars"
    with pytest.raises(ValueError, match="mix length units"):
        length.item_table(items, judg)


def test_keys_units_and_labels():
    df = pd.DataFrame(
        {"benchmark": ["b", "b"], "split": ["s", "s"], "item_id": [1, 2], "judge": ["a", "c"]}
    )
    keys = length.item_key(df)
    assert isinstance(keys, np.ndarray) and keys[0] != keys[1]
    assert length.group_label(df, ["judge", "split"]).tolist() == ["a · s", "c · s"]
    assert length.length_unit(df) == ""
    assert length.length_unit(df.assign(len_unit=[None, "words"])) == "words"
    with pytest.raises(KeyError, match="add_lengths"):
        length.require_lengths(df, ["len_pos"], "t")


def test_group_rows_takes_a_whole_frame_as_it_is_and_a_part_as_iloc():
    from judgelab.analyses.length.verdicts import group_rows

    frame = pd.DataFrame({"judge": ["a", "a", "b"], "x": [1, 2, 3]})
    groups = frame.groupby("judge").indices
    assert group_rows(frame, groups["a"]).equals(frame.iloc[[0, 1]])
    whole = frame[frame["judge"] == "a"]
    assert group_rows(whole, whole.groupby("judge").indices["a"]) is whole
