"""Cohen's kappa between judges on a hand-computed example."""

from __future__ import annotations

import pytest

from judgelab.analyses import juries


def test_cohen_kappa_hand_example(labelled):
    # J1 = pos pos neg neg, J2 = pos neg neg neg: p_o = 3/4, p_e = .5·.25 + .5·.75 = .5
    # kappa = (.75 − .5) / (1 − .5) = .5
    data = labelled({"J1": ["pos", "pos", "neg", "neg"], "J2": ["pos", "neg", "neg", "neg"]})
    k = juries.cohen_kappa_matrix(data, n_boot=100)
    row = k[(k["split"] == "s") & (k["judge_1"] == "J1") & (k["judge_2"] == "J2")].iloc[0]
    assert row["kappa"] == pytest.approx(0.5)
    assert row["agreement"] == pytest.approx(0.75) and row["n"] == 4
    diag = k[(k["judge_1"] == "J1") & (k["judge_2"] == "J1") & (k["split"] == "s")]
    assert diag["kappa"].item() == 1.0
