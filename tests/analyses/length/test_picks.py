"""P(picks longer): by gold condition, for pointwise score pairs, and on the sample set."""

import pandas as pd
import pytest

from judgelab.analyses import length
from judgelab.core import lengths
from judgelab.data import catalog
from judgelab.errors import ChoiceError


def test_picks_longer_hand_values(hand_verdicts):
    out = length.picks_longer(hand_verdicts, n_boot=200).set_index("condition")
    # all: 3 of 4 decisive verdicts pick the longer one
    assert out.loc["all", "value"] == pytest.approx(0.75)
    assert out.loc["all", "n"] == 4 and out.loc["all", "n_items"] == 2
    # longer is better (item 1): 2/2; longer is worse (item 2): 1/2; balanced = (1 + .5)/2
    assert out.loc["longer is better", "value"] == pytest.approx(1.0)
    assert out.loc["longer is worse", "value"] == pytest.approx(0.5)
    assert out.loc["balanced", "value"] == pytest.approx(0.75)
    assert out.loc["all", "ci_low"] <= 0.75 <= out.loc["all", "ci_high"]


def test_picks_longer_rejects_unknown_condition(hand_verdicts):
    with pytest.raises(ChoiceError, match="condition must be one of"):
        length.picks_longer(hand_verdicts, conditions=("all", "shorter"), n_boot=10)


def test_picks_longer_by_abs_diff_bins(hand_verdicts):
    out = length.picks_longer(
        hand_verdicts, abs_diff_edges=[0, 4, 8], conditions=("all",), n_boot=20
    )
    assert list(out["abs_diff_bin"].cat.categories) == ["[0, 4)", "[4, 8)", "≥8"]
    assert out["abs_diff_bin"].astype(str).tolist() == ["[4, 8)"]  # |d| = 5 for both items
    assert out["group"].tolist() == ["j"] and out["value"].iloc[0] == pytest.approx(0.75)


def test_score_pairs_hand_values():
    table = pd.DataFrame(
        {
            "judge": "g",
            "benchmark": "b",
            "split": ["A", "B", "C"],
            "item_id": "q1",
            "score": [8.0, 5.0, 5.0],
            "len_response": [100.0, 50.0, 200.0],
        }
    )
    pairs = length.score_pairs(table)
    # (A,B): higher score is longer -> 1; (A,C): higher score is shorter -> 0; (B,C): tie
    assert sorted(pairs["picked_longer"]) == [0.0, 1.0]
    out = length.picks_longer(pairs, conditions=("all",), n_boot=50)
    assert out["value"].iloc[0] == pytest.approx(0.5) and out["n_items"].iloc[0] == 1


def test_sample_set_runs_end_to_end():
    loaded = catalog.load_source("sample:length_bias")
    items = lengths.add_lengths(loaded.items)
    v = length.pairwise_verdicts(items, loaded.judgments)
    picks = length.picks_longer(v, n_boot=100).set_index(["judge", "condition"])
    # the illustrative "prefers-longer" judge picks the longer response ~85 % of the time
    assert picks.loc[("illustrative-prefers-longer", "all"), "value"] > 0.7
