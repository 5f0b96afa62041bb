"""Krippendorff's alpha, Cohen's kappa and error correlation on hand-computed examples."""

from __future__ import annotations

import krippendorff
import numpy as np
import pandas as pd
import pytest

from judgelab.analyses.juries import agreement
from judgelab.core import schema

PAIRS = {"pos": ("pos", "pos"), "neg": ("neg", "neg"), "tie": ("pos", "neg")}


def judgments(labels: dict[str, list[str]], *, split: str = "s") -> pd.DataFrame:
    """Judgments giving each judge the consolidated labels listed (items i0, i1, ...)."""
    rows = []
    for judge, per_item in labels.items():
        for i, label in enumerate(per_item):
            for order, chosen in enumerate(PAIRS[label]):
                rows.append(
                    {"benchmark": "b", "split": split, "item_id": f"i{i}", "judge": judge,
                     "prompt": "p", "order": order, "valid": True, "chosen": chosen,
                     "correct": chosen == "pos"}
                )  # fmt: skip
    return schema.new_judgments(rows)


def test_alpha_is_one_for_identical_raters():
    data = np.array([[0, 1, 2, 0, 1], [0, 1, 2, 0, 1], [0, 1, 2, 0, 1]], dtype=float)
    assert agreement.krippendorff_alpha(data, level_of_measurement="nominal") == 1.0


def test_alpha_hand_computed_nominal_example():
    # coders A = 0 0 1 1, B = 0 1 1 1. Coincidences: unit 1 adds o00 = 2, unit 2 adds
    # o01 = o10 = 1, units 3-4 add o11 = 2 each -> o = [[2, 1], [1, 4]], n0 = 3, n1 = 5, n = 8.
    # alpha = 1 − (n − 1)·(o01 + o10) / (n² − n0² − n1²) = 1 − 7·2 / (64 − 9 − 25) = 1 − 14/30
    data = np.array([[0, 0, 1, 1], [0, 1, 1, 1]], dtype=float)
    assert agreement.krippendorff_alpha(data, level_of_measurement="nominal") == pytest.approx(
        1 - 14 / 30
    )
    o = agreement.unit_coincidences(data, n_values=2).sum(axis=0)
    assert o.tolist() == [[2.0, 1.0], [1.0, 4.0]]


def test_level_of_measurement_is_passed_explicitly(monkeypatch):
    seen = {}
    real = krippendorff.alpha

    def spy(**kwargs):
        seen.update(kwargs)
        return real(**kwargs)

    monkeypatch.setattr(krippendorff, "alpha", spy)
    agreement.krippendorff_alpha(np.array([[0, 1], [0, 1.0]]), level_of_measurement="nominal")
    assert seen["level_of_measurement"] == "nominal"
    with pytest.raises(ValueError, match="level_of_measurement"):
        agreement.krippendorff_alpha(np.zeros((2, 2)), level_of_measurement="categorical")


def test_alpha_undefined_with_one_value():
    assert np.isnan(agreement.krippendorff_alpha(np.zeros((2, 3)), level_of_measurement="nominal"))


def test_vectorised_coincidences_match_the_package(rng):
    data = rng.integers(0, 3, size=(5, 40)).astype(float)
    data[rng.random(data.shape) < 0.25] = np.nan
    o = agreement.unit_coincidences(data, n_values=3).sum(axis=0)
    expected = krippendorff.alpha(reliability_data=data, level_of_measurement="nominal")
    assert agreement.nominal_alpha_from_coincidences(o) == pytest.approx(expected)


def test_alpha_table_identical_and_independent_judges():
    same = judgments({"a": ["pos", "neg", "tie", "pos"], "b": ["pos", "neg", "tie", "pos"]})
    row = agreement.alpha_table(same, n_boot=100).iloc[0]
    assert row["alpha"] == 1.0 and row["ci_low"] == 1.0 and row["n_units"] == 4
    assert row["level_of_measurement"] == "nominal"
    # tie as missing leaves 3 pairable units per judge
    row = agreement.alpha_table(same, tie_as_missing=True, across=None, n_boot=20).iloc[0]
    assert row["n_units"] == 3


def test_alpha_item_order_units():
    data = judgments({"a": ["pos", "neg"], "b": ["pos", "tie"]})
    long = agreement.ratings(data, units="item_order")
    # b's tie item is (pos, neg) per order: units i1#0 (neg vs pos) and i1#1 (neg vs neg)
    assert len(long) == 8 and long["unit"].nunique() == 4


def test_cohen_kappa_hand_example():
    # J1 = pos pos neg neg, J2 = pos neg neg neg: p_o = 3/4, p_e = .5·.25 + .5·.75 = .5
    # kappa = (.75 − .5) / (1 − .5) = .5
    data = judgments({"J1": ["pos", "pos", "neg", "neg"], "J2": ["pos", "neg", "neg", "neg"]})
    k = agreement.cohen_kappa_matrix(data, n_boot=100)
    row = k[(k["split"] == "s") & (k["judge_1"] == "J1") & (k["judge_2"] == "J2")].iloc[0]
    assert row["kappa"] == pytest.approx(0.5)
    assert row["agreement"] == pytest.approx(0.75) and row["n"] == 4
    diag = k[(k["judge_1"] == "J1") & (k["judge_2"] == "J1") & (k["split"] == "s")]
    assert diag["kappa"].item() == 1.0


def test_error_correlation_worked_example():
    # errors X = 1 1 0 0, Y = 1 0 0 0: p1 = .5, p2 = .25, p11 = .25
    # phi = (.25 − .125) / sqrt(.5·.5·.25·.75) = .125 / .2165 = 1/√3
    data = judgments({"X": ["neg", "tie", "pos", "pos"], "Y": ["neg", "pos", "pos", "pos"]})
    e = agreement.error_correlation(data, n_boot=100)
    row = e[(e["split"] == "s") & (e["judge_1"] == "X") & (e["judge_2"] == "Y")].iloc[0]
    assert row["phi"] == pytest.approx(1 / np.sqrt(3))
    assert row["both_wrong"] == pytest.approx(0.25)
    assert row["expected_both_wrong"] == pytest.approx(0.5 * 0.25)
    assert (row["error_1"], row["error_2"], row["n"]) == (0.5, 0.25, 4)
    mean = agreement.mean_off_diagonal(e)
    assert mean.loc[mean["split"] == "s", "mean_phi"].item() == pytest.approx(1 / np.sqrt(3))


def test_error_correlation_undefined_without_variance():
    data = judgments({"X": ["pos", "pos"], "Y": ["neg", "pos"]})  # X never errs
    e = agreement.error_correlation(data, across=None, n_boot=10)
    assert np.isnan(e[(e["judge_1"] == "X") & (e["judge_2"] == "Y")]["phi"].item())


def test_missing_column_raises_key_error():
    with pytest.raises(KeyError, match="prompt"):
        agreement.alpha_table(judgments({"a": ["pos"]}).drop(columns=["prompt"]))
