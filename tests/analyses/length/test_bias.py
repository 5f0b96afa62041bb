"""Length bias: buckets, bins, P(picks longer), regressions, LC win rate, plots."""

import numpy as np
import pandas as pd
import pytest

from judgelab.analyses.length import bias as length_bias
from judgelab.analyses.length import plots as plots_length
from judgelab.core import lengths, schema
from judgelab.data import catalog


def words(n: int) -> str:
    return " ".join(["w"] * n)


def make_pairwise(specs):
    """specs: (item_id, len_pos, len_neg, chosen_order0, chosen_order1)."""
    items = schema.new_items(
        [
            {
                "benchmark": "b",
                "split": "s",
                "item_id": i,
                "task": "pairwise",
                "context": words(lp + ln),
                "response_pos": words(lp),
                "response_neg": words(ln),
                "gold": "pos",
                "meta": {"model_pos": "base", "model_neg": "mod"},
            }
            for i, lp, ln, _, _ in specs
        ]
    )
    rows = []
    for i, _, _, c0, c1 in specs:
        for order, c in ((0, c0), (1, c1)):
            rows.append(
                {
                    "benchmark": "b",
                    "split": "s",
                    "item_id": i,
                    "judge": "j",
                    "order": order,
                    "verdict": c,
                    "valid": c is not None,
                    "chosen": c,
                    "correct": None if c is None else c == "pos",
                }
            )
    return lengths.add_lengths(items), schema.new_judgments(rows)


def test_diff_buckets_boundaries_and_nesting():
    d = [-128, -127, -64, -1, 0, 1, 64, 127, 128]
    table = pd.DataFrame({"len_diff": d})
    out = length_bias.diff_buckets(table, thresholds=[1, 64, 128])
    got = {b: sorted(g["len_diff"]) for b, g in out.groupby("bucket", observed=True)}
    # d <= -x and d >= x, boundary included
    assert got["N(128+)"] == [-128]
    assert got["N(64+)"] == [-128, -127, -64]
    assert got["N(1+)"] == [-128, -127, -64, -1]
    assert got["d = 0"] == [0]
    assert got["P(1+)"] == [1, 64, 127, 128]
    assert got["P(64+)"] == [64, 127, 128]
    assert got["P(128+)"] == [128]
    assert set(got["N(128+)"]) <= set(got["N(64+)"]) <= set(got["N(1+)"])
    assert set(got["P(128+)"]) <= set(got["P(64+)"]) <= set(got["P(1+)"])
    assert list(out["bucket"].cat.categories) == [
        "N(128+)",
        "N(64+)",
        "N(1+)",
        "d = 0",
        "P(1+)",
        "P(64+)",
        "P(128+)",
    ]


def test_diff_buckets_disjoint_each_row_once():
    table = pd.DataFrame({"len_diff": [-128, -127, -64, -1, 0, 1, 64, 127, 128]})
    out = length_bias.diff_buckets(table, thresholds=[1, 64, 128], mode="disjoint")
    got = {b: sorted(g["len_diff"]) for b, g in out.groupby("bucket", observed=True)}
    assert got["N(64+)"] == [-127, -64]  # -128 < d <= -64
    assert got["P(1+)"] == [1]  # 1 <= d < 64
    assert sorted(out["len_diff"]) == sorted(table["len_diff"])  # every row exactly once


def test_diff_buckets_rejects_zero_threshold_and_bad_mode():
    with pytest.raises(ValueError, match="> 0"):
        length_bias.diff_buckets(pd.DataFrame({"len_diff": [0]}), thresholds=[0, 16])
    with pytest.raises(ValueError, match="mode"):
        length_bias.diff_buckets(pd.DataFrame({"len_diff": [0]}), mode="overlap")
    with pytest.raises(KeyError):
        length_bias.diff_buckets(pd.DataFrame({"x": [0]}))


def test_percentile_bins_cover_every_row_once(rng):
    values = pd.Series(rng.integers(0, 30, size=500).astype(float))  # many ties
    bins = length_bias.bin_lengths(values, edges=[0, 20, 40, 60, 80, 100])
    assert bins.notna().all()
    assert bins.value_counts().sum() == 500


def test_percentile_bins_hand_values():
    # percentile 50 of 1..10 = 5.5: bins [1, 5.5] and (5.5, 10]
    bins = length_bias.bin_lengths(pd.Series(np.arange(1, 11.0)), edges=[0, 50, 100])
    assert bins.value_counts(sort=False).tolist() == [5, 5]
    # the label names the largest length in the bin: 5 (rounding the cut 5.5 gave "≤6",
    # a length of the second bin)
    assert list(bins.cat.categories) == ["P0–50 (≤5)", "P50–100 (≤10)"]


def test_percentile_bin_labels_never_name_a_length_of_the_next_bin():
    # 1..10 at percentiles 20/40/60/80 = 2.8, 4.6, 6.4, 8.2: bins {1,2} {3,4} {5,6} {7,8}
    # {9,10}; rounding the cuts labelled them ≤3, ≤5, ≤6, ≤8 (3 and 5 sit in the next bin)
    x = pd.Series(np.arange(1, 11.0))
    bins = length_bias.bin_lengths(x, edges=[0, 20, 40, 60, 80, 100])
    assert list(bins.cat.categories) == [
        "P0–20 (≤2)",
        "P20–40 (≤4)",
        "P40–60 (≤6)",
        "P60–80 (≤8)",
        "P80–100 (≤10)",
    ]
    # mean lengths of pairs are halves: 1, 1.5, 2, 2.5 -> median 1.75: {1, 1.5} {2, 2.5}
    halves = length_bias.bin_lengths(pd.Series([1.0, 1.5, 2, 2.5]), edges=[0, 50, 100])
    assert list(halves.cat.categories) == ["P0–50 (≤1.5)", "P50–100 (≤2.5)"]
    for label, top in zip(bins.cat.categories, [2, 4, 6, 8, 10], strict=True):
        assert x[bins == label].max() == top


def test_value_bins_left_closed_last_open():
    bins = length_bias.bin_lengths(
        pd.Series([0, 15, 16, 63, 64, 300.0]), edges=[0, 16, 64], by="value"
    )
    assert bins.astype(str).tolist() == [
        "[0, 16)",
        "[0, 16)",
        "[16, 64)",
        "[16, 64)",
        "≥64",
        "≥64",
    ]


def test_pairwise_verdicts_and_picks_longer_hand_values():
    items, judg = make_pairwise(
        [
            ("1", 10, 5, "pos", "pos"),  # pos longer; picks longer twice
            ("2", 5, 10, "neg", "pos"),  # neg longer; picks longer once of two
            ("3", 7, 7, "pos", "neg"),  # equal lengths: left out
            ("4", 10, 5, "tie", None),  # tie and invalid: left out
        ]
    )
    v = length_bias.pairwise_verdicts(items, judg)
    assert v.loc[v["item_id"] == "2", "len_diff"].tolist() == [-5.0, -5.0]
    assert v.loc[v["item_id"] == "2", "first_shown"].tolist() == ["pos", "neg"]
    assert v["model_neg"].unique().tolist() == ["mod"]
    out = length_bias.picks_longer(v, n_boot=200).set_index("condition")
    # all: 3 of 4 decisive verdicts pick the longer one
    assert out.loc["all", "value"] == pytest.approx(0.75)
    assert out.loc["all", "n"] == 4 and out.loc["all", "n_items"] == 2
    # longer is better (item 1): 2/2; longer is worse (item 2): 1/2; balanced = (1 + .5)/2
    assert out.loc["longer is better", "value"] == pytest.approx(1.0)
    assert out.loc["longer is worse", "value"] == pytest.approx(0.5)
    assert out.loc["balanced", "value"] == pytest.approx(0.75)
    assert out.loc["all", "ci_low"] <= 0.75 <= out.loc["all", "ci_high"]


def test_pairwise_verdicts_needs_lengths():
    items, judg = make_pairwise([("1", 3, 2, "pos", "pos")])
    with pytest.raises(KeyError, match="add_lengths"):
        length_bias.pairwise_verdicts(items.drop(columns=["len_pos"]), judg)


def test_item_table_consistent_accuracy_and_scores():
    items, judg = make_pairwise([("1", 3, 2, "pos", "pos"), ("2", 3, 2, "pos", "neg")])
    t = length_bias.item_table(items, judg).set_index("item_id")
    # item 1 correct in both orders -> CA 1; item 2 wrong in order 1 -> CA 0, inconsistent
    assert t.loc["1", "correct"] == 1.0 and t.loc["2", "correct"] == 0.0
    assert t.loc["1", "consistent"] == 1.0 and t.loc["2", "consistent"] == 0.0
    assert t.loc["1", "len_response"] == 2.5  # (3 + 2) / 2
    assert t.loc["1", "len_diff"] == 1.0


def test_rate_by_group_keeps_empty_bins():
    table = pd.DataFrame(
        {
            "benchmark": "b",
            "split": "s",
            "item_id": ["1", "2", "3"],
            "judge": "j",
            "bin": pd.Categorical(["a", "a", "c"], categories=["a", "b", "c"], ordered=True),
            "correct": [1.0, 0.0, 1.0],
        }
    )
    out = length_bias.rate_by_group(table, by=("judge", "bin"), n_boot=100)
    assert out["bin"].astype(str).tolist() == ["a", "b", "c"]
    assert out["n"].tolist() == [2, 0, 1]
    assert out["value"].iloc[0] == pytest.approx(0.5)  # 1 of 2
    assert np.isnan(out["value"].iloc[1])
    with pytest.raises(KeyError):
        length_bias.rate_by_group(table, value="missing")


def simulate(rng, n, length_effect, gold_effect=1.5, intercept=0.2):
    order = rng.integers(0, 2, n)
    diff = rng.normal(0, 50, n)  # len_pos - len_neg
    first_pos = order == 0
    d_first = np.where(first_pos, diff, -diff)
    z = d_first / d_first.std(ddof=1)
    eta = intercept + length_effect * z + gold_effect * np.where(first_pos, 0.5, -0.5)
    chose_first = rng.random(n) < 1 / (1 + np.exp(-eta))
    chosen = np.where(chose_first == first_pos, "pos", "neg")
    return pd.DataFrame(
        {
            "judge": "sim",
            "benchmark": "b",
            "split": "s",
            "item_id": np.arange(n).astype(str),
            "order": order,
            "chosen": chosen,
            "len_pos": 200 + diff,
            "len_neg": 200.0,
            "correct": chosen == "pos",
            "len_unit": "words",
        }
    )


def test_length_regression_recovers_planted_effect(rng):
    reg = length_bias.length_regression(simulate(rng, 4000, 1.0)).set_index("term")
    assert 0.8 < reg.loc["length", "coef"] < 1.2  # planted 1.0 per SD
    assert reg.loc["length", "ci_low"] > 0 and reg.loc["length", "p_value"] < 1e-6
    assert 1.2 < reg.loc["gold", "coef"] < 1.8  # planted 1.5
    assert reg.loc["length", "x"] == "response shown first (A)"


def test_length_regression_finds_no_effect_when_none_planted(rng):
    reg = length_bias.length_regression(simulate(rng, 4000, 0.0)).set_index("term")
    assert reg.loc["length", "ci_low"] < 0 < reg.loc["length", "ci_high"]
    assert abs(reg.loc["length", "coef"]) < 0.15


def test_length_regression_single_order_uses_pos_slot(rng):
    sim = simulate(rng, 2000, 1.0)
    reg = length_bias.length_regression(sim[sim["order"] == 0])
    assert set(reg["term"]) == {"intercept", "length"}  # gold is constant: no gold term
    assert reg["x"].iloc[0].startswith("pos slot")


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
    out = length_bias.length_controlled_winrate(v, n_boot=200).iloc[0]
    # LC = expit(-0.5) = 37.75 %; raw = mean soft preference
    assert out["lc_winrate"] == pytest.approx(37.75, abs=2.5)
    assert out["raw_winrate"] == pytest.approx(100 * p.mean(), abs=0.01)  # verdicts: 4 decimals
    assert out["length_coef"] == pytest.approx(2.0, abs=0.3)
    assert length_bias.length_controlled_winrate(v, model_slot="").empty


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
    both = length_bias.compare_published(ours, pub, aliases={"example": "NullModel"})
    assert np.isnan(both["published_winrate"].iloc[1])  # another annotator and baseline
    out = both.iloc[0]
    assert out["published_lc_winrate"] == 86.5
    assert out["lc_minus_raw"] == pytest.approx(10.0)
    assert out["published_lc_minus_raw"] == pytest.approx(9.6)  # 86.5 - 76.9


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
    pairs = length_bias.score_pairs(table)
    # (A,B): higher score is longer -> 1; (A,C): higher score is shorter -> 0; (B,C): tie
    assert sorted(pairs["picked_longer"]) == [0.0, 1.0]
    out = length_bias.picks_longer(pairs, conditions=("all",), n_boot=50)
    assert out["value"].iloc[0] == pytest.approx(0.5) and out["n_items"].iloc[0] == 1


def test_score_length_regression_planted(rng):
    n = 1500
    length = rng.uniform(50, 500, n)
    model = rng.choice(["m1", "m2"], n)
    score = 3 + 0.01 * length + np.where(model == "m2", 1.0, 0.0) + rng.normal(0, 1, n)
    table = pd.DataFrame(
        {
            "judge": "g",
            "split": model,
            "item_id": np.arange(n).astype(str),
            "score": score,
            "len_response": length,
            "len_unit": "words",
        }
    )
    out = length_bias.score_length_regression(table).iloc[0]
    assert out["coef_per_100"] == pytest.approx(1.0, abs=0.15)  # 0.01 points per unit


def test_sample_set_runs_end_to_end():
    loaded = catalog.load_source("sample:length_bias")
    items = lengths.add_lengths(loaded.items)
    v = length_bias.pairwise_verdicts(items, loaded.judgments)
    picks = length_bias.picks_longer(v, n_boot=100).set_index(["judge", "condition"])
    # the illustrative "prefers-longer" judge picks the longer response ~85 % of the time
    assert picks.loc[("illustrative-prefers-longer", "all"), "value"] > 0.7


def test_rate_lines_draws_one_line_per_judge_with_n():
    data = pd.DataFrame(
        {
            "judge": ["a", "a", "b", "b"],
            "bin": ["x", "y", "x", "y"],
            "value": [0.5, 0.6, 0.7, 0.8],
            "ci_low": 0.4,
            "ci_high": 0.9,
            "n": [10, 12, 10, 14],
        }
    )
    ax = plots_length.rate_lines(data, style=None, xlabel="bin", title="t")
    assert len(ax.lines) >= 2
    labels = [t.get_text() for t in ax.get_xticklabels()]
    assert labels == ["x\nn=10", "y\nn=12–14"]
    assert ax.get_ylabel() == "accuracy (%)"


def test_plots_handle_empty_tables():
    empty = pd.DataFrame(columns=["judge", "bin", "value", "ci_low", "ci_high", "n", "condition"])
    ax = plots_length.rate_lines(empty)
    assert any("no data" in t.get_text() for t in ax.texts)
    ax = plots_length.interval_forest(empty)
    assert any("no data" in t.get_text() for t in ax.texts)
