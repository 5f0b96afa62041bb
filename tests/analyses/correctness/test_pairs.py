"""Pairwise correctness: final choice and symmetrized kappa (`analyses.correctness.pairs`)."""

import numpy as np
import pandas as pd
import pytest

from judgelab.analyses import correctness


def test_pairwise_final_and_symmetrized_kappa():
    j = pd.DataFrame(
        {
            "judge": "J", "item_id": ["a", "a", "b", "b", "c", "c", "d"],
            "valid": [True, True, True, True, True, False, False],
            "chosen": ["pos", "pos", "pos", "neg", "neg", None, None],
        }
    )  # fmt: skip
    f = correctness.pairwise_final(j)
    assert f.set_index("item_id")["final"].to_dict() == {
        "a": "pos", "b": "tie", "c": "neg", "d": "invalid"
    }  # fmt: skip
    k = correctness.pairwise_kappa(f, n_boot=50).iloc[0]
    # acc = 1/4, wrong = 1/4 -> kappa = (1/4 - 1/4) / (2 - 1/2) = 0
    assert k["value"] == pytest.approx(0.0) and k["tie_rate"] == pytest.approx(0.5)
    all_pos = correctness.pairwise_kappa(f.assign(final="pos"), n_boot=10).iloc[0]
    assert all_pos["value"] == pytest.approx(1.0)  # (1 - 0) / (2 - 1)


def test_pairwise_kappa_interval_is_the_wild_one_of_its_linearization():
    rng = np.random.default_rng(0)
    final = rng.choice(["pos", "neg", "tie"], size=120, p=[0.6, 0.25, 0.15])
    f = pd.DataFrame({"judge": "J", "item_id": [f"i{i}" for i in range(120)], "final": final,
                      "q": [f"q{i // 8}" for i in range(120)]})  # fmt: skip
    k = correctness.pairwise_kappa(f, cluster="q", n_boot=199).iloc[0]
    acc, wrong = np.mean(final == "pos"), np.mean(final == "neg")
    assert k["value"] == pytest.approx((acc - wrong) / (2 - acc - wrong))
    assert k["ci_low"] < k["value"] < k["ci_high"] and k["n_eff_clusters"] <= 15.5
    assert k["method"].endswith("of the linearized kappa") and bool(k["few_clusters"])
    old = correctness.pairwise_kappa(f, cluster="q", n_boot=199, inference="bootstrap").iloc[0]
    assert old["value"] == k["value"] and old["method"].startswith("bootstrap, percentile")
    # about as wide as the earlier percentile bootstrap over the same 15 questions
    assert 0.6 < (k["ci_high"] - k["ci_low"]) / (old["ci_high"] - old["ci_low"]) < 1.6
