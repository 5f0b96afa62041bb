"""Error correlation (phi) between judges on worked examples."""

from __future__ import annotations

import numpy as np
import pytest

from judgelab.analyses import juries


def test_error_correlation_worked_example(labelled):
    # errors X = 1 1 0 0, Y = 1 0 0 0: p1 = .5, p2 = .25, p11 = .25
    # phi = (.25 − .125) / sqrt(.5·.5·.25·.75) = .125 / .2165 = 1/√3
    data = labelled({"X": ["neg", "tie", "pos", "pos"], "Y": ["neg", "pos", "pos", "pos"]})
    e = juries.error_correlation(data, n_boot=100)
    row = e[(e["split"] == "s") & (e["judge_1"] == "X") & (e["judge_2"] == "Y")].iloc[0]
    assert row["phi"] == pytest.approx(1 / np.sqrt(3))
    assert row["both_wrong"] == pytest.approx(0.25)
    assert row["expected_both_wrong"] == pytest.approx(0.5 * 0.25)
    assert (row["error_1"], row["error_2"], row["n"]) == (0.5, 0.25, 4)
    mean = juries.mean_off_diagonal(e)
    assert mean.loc[mean["split"] == "s", "mean_phi"].item() == pytest.approx(1 / np.sqrt(3))


def test_error_correlation_undefined_without_variance(labelled):
    data = labelled({"X": ["pos", "pos"], "Y": ["neg", "pos"]})  # X never errs
    e = juries.error_correlation(data, across=None, n_boot=10)
    assert np.isnan(e[(e["judge_1"] == "X") & (e["judge_2"] == "Y")]["phi"].item())
