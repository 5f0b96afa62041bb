"""Pairwise correctness: final choice and symmetrized kappa (`analyses.correctness.pairs`)."""

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
