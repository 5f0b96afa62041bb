"""Agreement, kappa, FPR/FNR and their display (`analyses.correctness.rates`)."""

import numpy as np
import pytest

from judgelab.analyses import correctness


def test_kappa_hand_computed():
    # p_o = 3/4; human C/I = .5/.5, judge C/I = .25/.75 -> p_e = .5; kappa = .25/.5
    assert correctness.cohen_kappa(["C", "C", "I", "I"], ["C", "I", "I", "I"]) == pytest.approx(
        0.5
    )
    # perfect disagreement on a balanced table: p_o = 0, p_e = .5 -> kappa = -1
    assert correctness.cohen_kappa(["C", "I"], ["I", "C"]) == pytest.approx(-1.0)


def test_kappa_degenerate_all_one_class_is_nan_not_error(table_of):
    assert np.isnan(correctness.cohen_kappa(["C"] * 5, ["C"] * 5))  # p_e = 1
    rates = correctness.correctness_rates(
        table_of([("J", "q1", "m", "Correct", "Correct")] * 3), n_boot=20
    )
    k = rates[rates.metric == "kappa"].iloc[0]
    assert np.isnan(k["value"]) and "p_e = 1" in k["note"]
    assert rates[rates.metric == "fpr"].iloc[0]["note"]  # no human-Incorrect items


def test_fpr_fnr_on_a_2x2_worked_example():
    # TP=40 FN=10 FP=5 TN=45: FPR = 5/50, FNR = 10/50; p_o=.85, p_e=.5*.45+.5*.55=.5 -> .7
    r = correctness.rates_from_counts(np.array([40, 10, 5, 45, 0, 0]))
    assert float(r["fpr"]) == pytest.approx(0.1)
    assert float(r["fnr"]) == pytest.approx(0.2)
    assert float(r["kappa"]) == pytest.approx(0.7)
    assert float(r["agreement"]) == pytest.approx(0.85)


def test_invalid_policy_error_counts_invalid_as_wrong():
    # cells TP=1 FN=0 FP=0 TN=1, one invalid on a human-Incorrect item
    counts = np.array([1, 0, 0, 1, 0, 1])
    excl = correctness.rates_from_counts(counts, invalid_policy="exclude")
    err = correctness.rates_from_counts(counts, invalid_policy="error")
    assert float(excl["fpr"]) == 0.0 and float(err["fpr"]) == pytest.approx(0.5)  # 1/(0+1+1)
    # error: p_o = 2/3; human C 1/3, I 2/3; judge C 1/3, I 1/3 -> p_e = 1/9+2/9 = 1/3
    assert float(err["kappa"]) == pytest.approx((2 / 3 - 1 / 3) / (2 / 3))
    with pytest.raises(ValueError, match="invalid_policy"):
        correctness.rates_from_counts(counts, invalid_policy="drop")


def test_rates_display_and_missing_column(table_of):
    r = correctness.correctness_rates(
        table_of(
            [("J", "q1", "m", "Correct", "Correct"), ("J", "q2", "m", "Incorrect", "Correct")]
        ),
        n_boot=20,
    )
    d = correctness.rates_display(r, index=["judge"])
    assert d.loc[0, "fpr"].startswith("1.00±") and d.loc[0, "fpr"].endswith("(n=1)")
    with pytest.raises(KeyError):
        correctness.correctness_rates(
            r.drop(columns="metric").rename(columns={"value": "x"}), by=("nope",)
        )
