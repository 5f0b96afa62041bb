"""Human alignment under each tie policy, its intervals, and the Table 1 layout (spec 004 §2.5)."""

import math

import pandas as pd
import pytest

from judgelab.analyses import faithfulness


def prefs_table():
    # 10 pairs: 5 pos, 2 neg, 2 ties, 1 invalid, in two source groups
    pref = ["pos"] * 5 + ["neg"] * 2 + ["tie"] * 2 + ["invalid"]
    return pd.DataFrame(
        {
            "pair_id": [str(i) for i in range(10)],
            "group": [0] * 5 + [1] * 5,
            "metric": "faithfulness",
            "judge": "j",
            "method": "Baseline",
            "score_pos": 0.0,
            "score_neg": 0.0,
            "pref": pref,
        }
    )


def test_alignment_under_each_tie_policy():
    miss = faithfulness.alignment(prefs_table(), tie_policy="miss", n_boot=200).iloc[0]
    assert (miss["n"], miss["aligned"], miss["ties"], miss["invalid"]) == (10, 5, 2, 1)
    assert miss["alignment"] == 0.5  # 5 / 10
    half = faithfulness.alignment(prefs_table(), tie_policy="half", n_boot=200).iloc[0]
    assert half["alignment"] == 0.6  # (5 + 2 * 0.5) / 10
    assert half["exact_low"] == pytest.approx(0.26238, abs=1e-4)  # Clopper-Pearson of 6/10
    one_tie = faithfulness.alignment(
        prefs_table().drop(index=8), tie_policy="half", n_boot=50
    ).iloc[0]
    assert one_tie["aligned"] == 5.5  # 5 + 0.5 over 9 pairs
    assert math.isnan(one_tie["exact_low"])  # no exact interval for a fractional count
    rnd = faithfulness.alignment(prefs_table(), tie_policy="random", seed=1, n_boot=200).iloc[0]
    assert rnd["alignment"] in (0.5, 0.6, 0.7)  # 5 + 0, 1 or 2 coin wins, never the invalid
    again = faithfulness.alignment(prefs_table(), tie_policy="random", seed=1, n_boot=200).iloc[0]
    assert again["alignment"] == rnd["alignment"]  # seeded
    # Clopper-Pearson for 5/10 at 95 %: [0.1871, 0.8129]
    assert miss["exact_low"] == pytest.approx(0.18709, abs=1e-4)
    assert miss["exact_high"] == pytest.approx(0.81291, abs=1e-4)
    assert miss["wilson_low"] < 0.5 < miss["wilson_high"]
    # sign test on decided pairs: 5 pos vs 2 neg, p = 2 * P(X >= 5 | 7, 0.5) = 2 * 29/128
    assert miss["p_sign"] == pytest.approx(58 / 128)  # legacy column (independent pairs)
    assert 0.2 < miss["p_value"] <= 1.0  # default: cluster-bootstrap p (no evidence either)
    assert miss["boot_low"] <= 0.5 <= miss["boot_high"]
    every = faithfulness.alignment_by_tie_policy(prefs_table(), n_boot=50)
    assert list(every["tie_policy"]) == ["miss", "half", "random"]
    with pytest.raises(ValueError, match="tie_policy"):
        faithfulness.alignment(prefs_table(), tie_policy="drop")


def test_table1_layout_and_forest_plot():
    aligned = faithfulness.alignment(prefs_table(), n_boot=50)
    t = faithfulness.table1(aligned)
    mine = t[t["source"] == "yours"].iloc[0]
    assert mine["Faithfulness"].startswith("50.0 [") and mine["Faithfulness"].endswith("n=10")
    assert mine["Answer Relevancy"] == ""
    paper = t[
        (t["source"] == "paper · Romanian")
        & (t["judge"] == "Gemini 2.5 Pro")
        & (t["method"] == "Ragas")
    ].iloc[0]
    # spec 004 §2.5: 96 % at n = 100 -> Wilson [90.2, 98.4]
    assert paper["Faithfulness"] == "96.0 [90–98] n=100"
    ax = faithfulness.plots.alignment_forest(aligned)
    assert ax.get_xlim() == (0.0, 100.0)
    assert "(n=10)" in ax.get_yticklabels()[0].get_text()


def test_alignment_t_reference_matches_its_test_on_planted_sources():
    import numpy as np

    from judgelab.analyses import faithfulness as fa
    from judgelab.simulate import faithfulness as sim_faith

    s = sim_faith.faithbench(np.random.default_rng(11), discrimination=0.5)
    prefs = fa.pointwise_preferences(s.extra["scores"], fa.faithbench_pairs(s.items))
    t = fa.alignment(prefs, n_boot=2000, reference="t").iloc[0]
    pc = fa.alignment(prefs, n_boot=2000, reference="percentile").iloc[0]
    assert t["reference"] == "t" and t["alignment"] == pc["alignment"]
    assert 30 < t["n_clusters"] <= 40  # sources with both labels form pairs
    ratio = (t["ci_high"] - t["ci_low"]) / (pc["ci_high"] - pc["ci_low"])
    assert 0.93 < ratio < 1.15  # t_{G-1} / z ≈ 1.03 (± MC noise of the percentile ends)
    assert t["ci_low"] < s.truth["alignment"] < t["ci_high"]
    # the p-value tests margin = 0 with the same SE: a clearly positive margin rejects
    assert t["margin"] > 0 and 0 <= t["p_value"] <= 1
