"""The length-controlled win rate and the comparison with the published leaderboard."""

import numpy as np
import pandas as pd
import pytest

from judgelab.analyses import length
from judgelab.errors import ChoiceError


def test_length_controlled_winrate_recovers_intercept(rng):
    n = 4000
    diff = rng.normal(300, 400, n)  # model longer on average
    z = np.tanh(diff / diff.std(ddof=1))
    p = 1 / (1 + np.exp(-(-0.5 + 2.0 * z)))
    pref = 1 + p  # continuous AlpacaEval preference: 2 = the neg slot (model)
    v = pd.DataFrame(
        {
            "judge": "a",
            "split": "m vs base",
            "benchmark": "b",
            "item_id": np.arange(n).astype(str),
            "verdict": [f"{x:.4f}" for x in pref],
            "chosen": np.where(pref > 1.5, "neg", "pos"),
            "len_neg": 500 + diff,
            "len_pos": 500.0,
            "len_unit": "chars",
        }
    )
    out = length.length_controlled_winrate(v, n_boot=200).iloc[0]
    # LC = expit(-0.5) = 37.75 %; raw = mean soft preference
    assert out["lc_winrate"] == pytest.approx(37.75, abs=2.5)
    assert out["raw_winrate"] == pytest.approx(100 * p.mean(), abs=0.01)  # verdicts: 4 decimals
    assert out["length_coef"] == pytest.approx(2.0, abs=0.3)
    assert length.length_controlled_winrate(v, model_slot="").empty


def test_compare_published_aliases():
    ours = pd.DataFrame(
        {
            "judge": [
                "weighted_alpaca_eval_gpt4_turbo.alpaca_eval",
                "alpaca_eval_gpt4.alpaca_eval",
            ],
            "model": ["example", "example"],
            "baseline": ["gpt4_1106_preview", "text_davinci_003"],
            "raw_winrate": [70.0, 60.0],
            "lc_winrate": [80.0, 50.0],
        }
    )
    pub = pd.DataFrame(
        {
            "model": ["NullModel"],
            "published_winrate": [76.9],
            "published_lc_winrate": [86.5],
            "published_avg_length": [872.0],
        }
    )
    both = length.compare_published(ours, pub, aliases={"example": "NullModel"})
    assert np.isnan(both["published_winrate"].iloc[1])  # another annotator and baseline
    out = both.iloc[0]
    assert out["published_lc_winrate"] == 86.5
    assert out["lc_minus_raw"] == pytest.approx(10.0)
    assert out["published_lc_minus_raw"] == pytest.approx(9.6)  # 86.5 - 76.9


def test_preference_for_slot_hard_and_soft():
    v = pd.DataFrame({"verdict": ["1.9", "A", "tie", None], "chosen": ["neg", "pos", "tie", None]})
    soft = length.preference_for_slot(v, slot="pos")
    assert soft[:3].round(2).tolist() == [0.1, 1.0, 0.5] and np.isnan(soft[3])
    hard = length.preference_for_slot(v, slot="pos", soft=False)
    assert hard[:3].tolist() == [0.0, 1.0, 0.5]
    with pytest.raises(ChoiceError, match="slot must be one of"):
        length.preference_for_slot(v, slot="tie")


def test_length_controlled_winrate_checks_model_slot():
    v = pd.DataFrame(columns=["judge", "split", "verdict", "chosen", "len_pos", "len_neg"])
    with pytest.raises(ChoiceError, match=r"model_slot must be one of \('pos', 'neg'\)"):
        length.length_controlled_winrate(v, model_slot="both")


def test_winrates_long_has_four_estimates_per_row():
    compared = pd.DataFrame(
        {
            "judge": ["weighted.alpaca_eval"],
            "model": ["m"],
            "raw_winrate": [40.0],
            "raw_low": [30.0],
            "raw_high": [50.0],
            "lc_winrate": [45.0],
            "lc_low": [35.0],
            "lc_high": [55.0],
            "published_winrate": [41.0],
            "published_lc_winrate": [46.0],
        }
    )
    long = length.winrates_long(compared)
    assert long["model"].unique().tolist() == ["m (weighted)"]
    assert long["estimate"].tolist() == [
        "raw (ours)",
        "LC (ours)",
        "raw (published)",
        "LC (published)",
    ]
    assert long["value"].tolist() == pytest.approx([0.40, 0.45, 0.41, 0.46])
    assert long["ci_low"].iloc[0] == pytest.approx(0.30) and np.isnan(long["ci_low"].iloc[2])


def test_i34_3_winrate_reason_says_why_without_a_baseline_model():
    # 03 on LLMBar: no model against a fixed baseline; the section was an empty table and plot
    assert length.length_controlled_winrate(pd.DataFrame(), model_slot="").empty
    assert "no evaluated model against a fixed baseline" in length.winrate_reason("")
    assert length.winrate_reason("neg") is None
