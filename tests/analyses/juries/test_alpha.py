"""Krippendorff's alpha on hand-computed examples and against the `krippendorff` package."""

from __future__ import annotations

import krippendorff
import numpy as np
import pytest

from judgelab.analyses import juries


def test_alpha_is_one_for_identical_raters():
    data = np.array([[0, 1, 2, 0, 1], [0, 1, 2, 0, 1], [0, 1, 2, 0, 1]], dtype=float)
    assert juries.krippendorff_alpha(data, level_of_measurement="nominal") == 1.0


def test_alpha_hand_computed_nominal_example():
    # coders A = 0 0 1 1, B = 0 1 1 1. Coincidences: unit 1 adds o00 = 2, unit 2 adds
    # o01 = o10 = 1, units 3-4 add o11 = 2 each -> o = [[2, 1], [1, 4]], n0 = 3, n1 = 5, n = 8.
    # alpha = 1 − (n − 1)·(o01 + o10) / (n² − n0² − n1²) = 1 − 7·2 / (64 − 9 − 25) = 1 − 14/30
    data = np.array([[0, 0, 1, 1], [0, 1, 1, 1]], dtype=float)
    assert juries.krippendorff_alpha(data, level_of_measurement="nominal") == pytest.approx(
        1 - 14 / 30
    )
    o = juries.unit_coincidences(data, n_values=2).sum(axis=0)
    assert o.tolist() == [[2.0, 1.0], [1.0, 4.0]]


def test_level_of_measurement_is_passed_explicitly(monkeypatch):
    seen = {}
    real = krippendorff.alpha

    def spy(**kwargs):
        seen.update(kwargs)
        return real(**kwargs)

    monkeypatch.setattr(krippendorff, "alpha", spy)
    juries.krippendorff_alpha(np.array([[0, 1], [0, 1.0]]), level_of_measurement="nominal")
    assert seen["level_of_measurement"] == "nominal"
    with pytest.raises(ValueError, match="level_of_measurement"):
        juries.krippendorff_alpha(np.zeros((2, 2)), level_of_measurement="categorical")


def test_alpha_undefined_with_one_value():
    assert np.isnan(juries.krippendorff_alpha(np.zeros((2, 3)), level_of_measurement="nominal"))


def test_vectorised_coincidences_match_the_package(rng):
    data = rng.integers(0, 3, size=(5, 40)).astype(float)
    data[rng.random(data.shape) < 0.25] = np.nan
    o = juries.unit_coincidences(data, n_values=3).sum(axis=0)
    expected = krippendorff.alpha(reliability_data=data, level_of_measurement="nominal")
    assert juries.nominal_alpha_from_coincidences(o) == pytest.approx(expected)


def test_alpha_table_identical_and_independent_judges(labelled):
    same = labelled({"a": ["pos", "neg", "tie", "pos"], "b": ["pos", "neg", "tie", "pos"]})
    row = juries.alpha_table(same, n_boot=100).iloc[0]
    assert row["alpha"] == 1.0 and row["ci_low"] == 1.0 and row["n_units"] == 4
    assert row["level_of_measurement"] == "nominal"
    # tie as missing leaves 3 pairable units per judge
    row = juries.alpha_table(same, tie_as_missing=True, across=None, n_boot=20).iloc[0]
    assert row["n_units"] == 3


def test_missing_column_raises_key_error(labelled):
    with pytest.raises(KeyError, match="prompt"):
        juries.alpha_table(labelled({"a": ["pos"]}).drop(columns=["prompt"]))
