"""FaithEval accuracy with Wilson intervals and the AVG over source datasets (spec 003 §2.2)."""

import pytest

from judgelab.analyses import faithfulness


def test_accuracy_and_macro_vs_micro_average(graded):
    acc = faithfulness.accuracy(graded).set_index(["source_dataset", "mode"])
    assert acc.loc[("X", "strict"), "accuracy"] == 0.75  # 3 / 4
    assert acc.loc[("X", "nonstrict"), "accuracy"] == 1.0  # 4 / 4
    assert acc.loc[("X", "strict"), "ci_low"] < 0.75 < acc.loc[("X", "strict"), "ci_high"]
    macro = faithfulness.task_average(graded, n_boot=200, interval="percentile").set_index("mode")
    micro = faithfulness.task_average(graded, avg="micro", n_boot=200).set_index("mode")
    assert macro.loc["strict", "accuracy"] == pytest.approx((0.75 + 1.0) / 2)  # 0.875
    assert micro.loc["strict", "accuracy"] == pytest.approx(4 / 5)  # 0.8
    assert macro.loc["strict", "n"] == 5 and macro.loc["strict", "n_datasets"] == 2
    lo, hi = macro.loc["strict", ["ci_low", "ci_high"]]
    assert 0.5 <= lo <= 0.875 <= hi <= 1.0  # Y is always 1, X resamples in [0, 1]: ≥ 0.5
    # the default (wild cluster bootstrap of the contrast) on 5 one-item clusters: wide, flagged
    wild = faithfulness.task_average(graded).set_index("mode").loc["strict"]
    assert wild["accuracy"] == pytest.approx(0.875)
    assert 0.0 <= wild["ci_low"] <= 0.875 <= wild["ci_high"] <= 1.0
    assert wild["few_clusters"] and wild["method"].startswith("wild cluster bootstrap")
