"""Position preference, consistency categories, run stability (`analyses.pairwise.position`)."""

from __future__ import annotations

import pandas as pd
import pytest

from judgelab.analyses import pairwise


def test_position_preference_hand_example(judgments, six):
    out = pairwise.item_outcomes(judgments(six))
    pref = pairwise.position_preference(pairwise.pairwise_rates(out, n_boot=100))
    row = pref[pref["aggregation"] == "split"].iloc[0]
    # spec 000 §4.7: 4 A-verdicts over 10 valid ones; legacy: over 9 valid non-tie ones
    assert (row["pos_a_rate"], row["n_valid"]) == (pytest.approx(4 / 10), 10)
    assert (row["pos_a_rate_decisive"], row["n_verdicts"]) == (pytest.approx(4 / 9), 9)
    assert row["decisive_low"] <= 4 / 9 <= row["decisive_high"]
    assert row["run_gap"] == pytest.approx(1 / 6)
    # one item A-both-times (i2) vs one B-both-times (i3): sign test p = 1
    assert (row["n_biased_first"], row["n_biased_second"]) == (1, 1)
    assert row["p_sign"] == pytest.approx(1.0)
    # default test: the wild cluster bootstrap of the decisive share = 1/2 (4 A vs 5 B)
    assert row["test"] == row["method"] and row["method"].startswith("wild cluster bootstrap")
    assert row["p_value"] == row["p_bootstrap"]
    assert row["p_value"] > 0.3 and row["n_clusters"] == 5  # i6 has no valid verdict
    assert row["decisive_low"] < 0.5 < row["decisive_high"] and row["few_clusters"]
    legacy = pairwise.position_preference(pairwise.pairwise_rates(out, n_boot=100), test="sign")
    assert legacy["p_value"].tolist() == legacy["p_sign"].tolist()


def test_consistency_categories_sum_to_one_in_order(judgments, six):
    out = pairwise.item_outcomes(judgments(six))
    cats = pairwise.consistency_categories(pairwise.pairwise_rates(out, n_boot=50))
    split = cats[cats["aggregation"] == "split"]
    assert split["category"].astype(str).tolist() == list(pairwise.CATEGORIES)
    # 2/6 + 1/6 + 1/6 + 1/6 + 1/6
    assert split["value"].tolist() == pytest.approx([2 / 6, 1 / 6, 1 / 6, 1 / 6, 1 / 6])
    assert split["value"].sum() == pytest.approx(1.0)


def test_samples_are_kept_apart_and_run_stability(judgments):
    # CONS per sample: 2/2, 1/2, 0/2 -> mean 0.5, sd sqrt((0.25 + 0 + 0.25) / 2) = 0.5
    runs = [
        judgments([("a", "pos", "pos"), ("b", "neg", "neg")], sample=0),
        judgments([("a", "pos", "pos"), ("b", "pos", "neg")], sample=1),
        judgments([("a", "neg", "pos"), ("b", "pos", "neg")], sample=2),
    ]
    out = pairwise.item_outcomes(pd.concat(runs, ignore_index=True))
    assert len(out) == 6  # 2 items x 3 samples, not 2 items
    rates = pairwise.pairwise_rates(out, n_boot=50)
    cons = pairwise.rates_for(rates, metric="cons", aggregation="split")
    assert cons["sample"].tolist() == [0, 1, 2]
    assert cons["value"].tolist() == pytest.approx([1.0, 0.5, 0.0])
    stab = pairwise.run_stability(rates, metric="cons")
    row = stab[stab["aggregation"] == "split"].iloc[0]
    assert row["n_samples"] == 3
    assert (row["mean"], row["sd"], row["min"], row["max"], row["range"]) == pytest.approx(
        (0.5, 0.5, 0.0, 1.0, 1.0)
    )


def test_i34_3_stability_reason_says_why_with_one_run(judgments):
    one = pairwise.pairwise_rates(
        pairwise.item_outcomes(judgments([("a", "pos", "pos"), ("b", "neg", "pos")])), n_boot=20
    )
    assert pairwise.run_stability(one)["sd"].isna().all()  # what 02 showed: SD NaN, one dot
    assert "once per item" in pairwise.stability_reason(one)
    runs = [
        judgments([("a", "pos", "pos"), ("b", "neg", "neg")], sample=0),
        judgments([("a", "pos", "pos"), ("b", "pos", "neg")], sample=1),
    ]
    two = pairwise.pairwise_rates(pairwise.item_outcomes(pd.concat(runs)), n_boot=20)
    assert pairwise.stability_reason(two) is None
