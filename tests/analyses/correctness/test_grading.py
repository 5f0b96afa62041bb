import json

import numpy as np
import pandas as pd
import pytest

from judgelab.analyses.correctness import grading as c


def _table(rows):
    """rows: (judge, question, candidate, human, verdict)."""
    return pd.DataFrame(
        [
            {"judge": j, "condition": "", "question_uid": q, "candidate_model": m,
             "human": h, "verdict": v}
            for j, q, m, h, v in rows
        ]
    )  # fmt: skip


def test_kappa_hand_computed():
    # p_o = 3/4; human C/I = .5/.5, judge C/I = .25/.75 -> p_e = .5; kappa = .25/.5
    assert c.cohen_kappa(["C", "C", "I", "I"], ["C", "I", "I", "I"]) == pytest.approx(0.5)
    # perfect disagreement on a balanced table: p_o = 0, p_e = .5 -> kappa = -1
    assert c.cohen_kappa(["C", "I"], ["I", "C"]) == pytest.approx(-1.0)


def test_kappa_degenerate_all_one_class_is_nan_not_error():
    assert np.isnan(c.cohen_kappa(["C"] * 5, ["C"] * 5))  # p_e = 1
    rates = c.correctness_rates(_table([("J", "q1", "m", "Correct", "Correct")] * 3), n_boot=20)
    k = rates[rates.metric == "kappa"].iloc[0]
    assert np.isnan(k["value"]) and "p_e = 1" in k["note"]
    assert rates[rates.metric == "fpr"].iloc[0]["note"]  # no human-Incorrect items


def test_fpr_fnr_on_a_2x2_worked_example():
    # TP=40 FN=10 FP=5 TN=45: FPR = 5/50, FNR = 10/50; p_o=.85, p_e=.5*.45+.5*.55=.5 -> .7
    r = c.rates_from_counts(np.array([40, 10, 5, 45, 0, 0]))
    assert float(r["fpr"]) == pytest.approx(0.1)
    assert float(r["fnr"]) == pytest.approx(0.2)
    assert float(r["kappa"]) == pytest.approx(0.7)
    assert float(r["agreement"]) == pytest.approx(0.85)


def test_invalid_policy_error_counts_invalid_as_wrong():
    # cells TP=1 FN=0 FP=0 TN=1, one invalid on a human-Incorrect item
    counts = np.array([1, 0, 0, 1, 0, 1])
    excl = c.rates_from_counts(counts, invalid_policy="exclude")
    err = c.rates_from_counts(counts, invalid_policy="error")
    assert float(excl["fpr"]) == 0.0 and float(err["fpr"]) == pytest.approx(0.5)  # 1/(0+1+1)
    # error: p_o = 2/3; human C 1/3, I 2/3; judge C 1/3, I 1/3 -> p_e = 1/9+2/9 = 1/3
    assert float(err["kappa"]) == pytest.approx((2 / 3 - 1 / 3) / (2 / 3))
    with pytest.raises(ValueError, match="invalid_policy"):
        c.rates_from_counts(counts, invalid_policy="drop")


def test_correctness_table_joins_and_checks():
    items = pd.DataFrame(
        {
            "benchmark": "b", "split": "s", "item_id": ["0", "1", "2"],
            "question": ["q", "q", "r"], "gold": ["Correct", "Incorrect", None],
            "meta": [json.dumps({"candidate_model": m}) for m in ("x", "y", "x")],
        }
    )  # fmt: skip
    j = pd.DataFrame(
        {
            "benchmark": "b", "split": "s", "item_id": ["0", "0", "0", "1", "2"], "judge": "J",
            "condition": "", "sample": [0, 1, 2, 0, 0], "valid": [True, True, False, True, True],
            "verdict": ["Correct", "Incorrect", None, "Correct", "Correct"],
        }
    )  # fmt: skip
    t = c.correctness_table(items, j)
    assert len(t) == 2  # item 2 has no human label
    # item 0: one Correct vote, one Incorrect vote, one invalid -> tie -> invalid (None)
    assert t.set_index("item_id").loc["0", "verdict"] is None
    assert t.set_index("item_id").loc["1", "candidate_model"] == "y"
    with pytest.raises(KeyError, match="gold"):
        c.correctness_table(items.drop(columns="gold"), j)
    with pytest.raises(ValueError, match="not one of"):
        c.correctness_table(items, j.assign(verdict="A"))


def test_self_vs_others_difference_and_paired_bootstrap():
    rows = []
    # 4 questions; judge J's own answers (m1) all human-Incorrect and it says Correct on 3 of 4
    # others (m2) human-Incorrect, judged Correct on 1 of 4: FPR self 3/4, others 1/4, diff 1/2
    pairs = [("Correct", "Correct"), ("Correct", "Incorrect")]
    pairs += [("Correct", "Incorrect"), ("Incorrect", "Incorrect")]
    for i, (vs, vo) in enumerate(pairs):
        rows += [("J", f"q{i}", "m1", "Incorrect", vs), ("J", f"q{i}", "m2", "Incorrect", vo)]
    t = c.mark_self(
        _table(rows), judge_family={"J": "fam"}, candidate_family={"m1": "fam", "m*": "o"}
    )
    assert t["candidate_is_judge"].tolist() == [True, False] * 4  # exact name beats the glob
    out = c.self_vs_others(t, metrics=("fpr",), n_boot=500, seed=1).iloc[0]
    assert (out["self"], out["others"], out["diff"]) == (0.75, 0.25, 0.5)
    assert (out["n_self"], out["n_others"], out["n_clusters"]) == (4, 4, 4)
    assert out["diff_low"] <= 0.5 <= out["diff_high"]
    # paired resampling: a question where self says Correct never removes the others' row
    assert 0 <= out["p_value"] <= 1
    again = c.self_vs_others(t, metrics=("fpr",), n_boot=500, seed=1).iloc[0]
    assert again["diff_low"] == out["diff_low"]  # seeded


def test_self_vs_others_drops_judges_without_self_rows():
    t = _table([("J", "q", "m2", "Correct", "Correct"), ("J", "r", "m2", "Incorrect", "Correct")])
    t = c.mark_self(t, judge_family={"J": "fam"}, candidate_family={"m2": "other"})
    assert c.self_vs_others(t, n_boot=10).empty


def test_answered_split_and_kappa_by_subset():
    rows = [
        # q1: judge's own answer (jm) is Correct -> every q1 row is answered_correctly
        ("J", "q1", "jm", "Correct", "Correct"), ("J", "q1", "x", "Incorrect", "Incorrect"),
        # q2: own answer Incorrect -> answered_incorrectly
        ("J", "q2", "jm", "Incorrect", "Correct"), ("J", "q2", "x", "Correct", "Incorrect"),
        # q3: judge did not answer -> excluded from both subsets (kept in overall)
        ("J", "q3", "x", "Correct", "Correct"),
    ]  # fmt: skip
    t = c.mark_answered(_table(rows), judge_candidate={"J": "jm"})
    assert t["judge_answered"].iloc[:4].tolist() == [
        "correct",
        "correct",
        "incorrect",
        "incorrect",
    ]
    assert pd.isna(t["judge_answered"].iloc[4])
    t2 = c.mark_answered(_table(rows), judge_candidate={"J": "jm"}, ambiguous="incorrect")
    assert t2["judge_answered"].iloc[4] == "incorrect"
    k = c.kappa_by_answered(t, n_boot=50).query("metric == 'kappa'").set_index("subset")
    assert k.loc["answered_correctly", "value"] == pytest.approx(1.0)  # 2/2 agree, balanced
    assert k.loc["answered_incorrectly", "value"] == pytest.approx(-1.0)  # 0/2 agree, balanced
    # overall: p_o = 3/5; human C 3/5, judge C 3/5 -> p_e = .36+.16 = .52; (.6-.52)/.48
    assert k.loc["overall", "value"] == pytest.approx(0.08 / 0.48)
    assert k.loc["overall", "n"] == 5


def test_pairwise_final_and_symmetrized_kappa():
    j = pd.DataFrame(
        {
            "judge": "J", "item_id": ["a", "a", "b", "b", "c", "c", "d"],
            "valid": [True, True, True, True, True, False, False],
            "chosen": ["pos", "pos", "pos", "neg", "neg", None, None],
        }
    )  # fmt: skip
    f = c.pairwise_final(j)
    assert f.set_index("item_id")["final"].to_dict() == {
        "a": "pos", "b": "tie", "c": "neg", "d": "invalid"
    }  # fmt: skip
    k = c.pairwise_kappa(f, n_boot=50).iloc[0]
    # acc = 1/4, wrong = 1/4 -> kappa = (1/4 - 1/4) / (2 - 1/2) = 0
    assert k["value"] == pytest.approx(0.0) and k["tie_rate"] == pytest.approx(0.5)
    all_pos = c.pairwise_kappa(f.assign(final="pos"), n_boot=10).iloc[0]
    assert all_pos["value"] == pytest.approx(1.0)  # (1 - 0) / (2 - 1)


def test_rates_display_and_missing_column():
    r = c.correctness_rates(
        _table([("J", "q1", "m", "Correct", "Correct"), ("J", "q2", "m", "Incorrect", "Correct")]),
        n_boot=20,
    )
    d = c.rates_display(r, index=["judge"])
    assert d.loc[0, "fpr"].startswith("1.00±") and d.loc[0, "fpr"].endswith("(n=1)")
    with pytest.raises(KeyError):
        c.correctness_rates(r.drop(columns="metric").rename(columns={"value": "x"}), by=("nope",))


def test_rate_bars_draws_one_bar_per_group_with_labels():
    from judgelab.analyses.correctness import plots as pc

    data = pd.DataFrame(
        {
            "judge": ["A", "A", "B", "B"], "group": ["self", "others"] * 2,
            "value": [0.4, 0.2, 0.1, 0.3], "ci_low": [0.3, 0.1, 0.0, 0.2],
            "ci_high": [0.5, 0.3, 0.2, 0.4], "n": [10, 20, 30, 40], "metric": "fpr",
        }
    )  # fmt: skip
    ax = pc.rate_bars(data, x="judge", hue="group", ylabel="FPR", title="t")
    assert len(ax.patches) == 4 and ax.get_ylabel() == "FPR" and ax.get_title() == "t"
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["self", "others"]
    fig = pc.faceted_rate_bars(data, x="judge", hue="group", col="metric")
    assert len(fig.axes) == 1
    with pytest.raises(KeyError):
        pc.rate_bars(data.drop(columns="ci_low"), x="judge")
