import numpy as np
import pandas as pd
import pytest

from judgelab.core.side_by_side import compare_methods


def _table(p, low=None):
    return pd.DataFrame(
        {
            "judge": ["a", "b", "c", "d"],
            "diff": [0.1, 0.2, 0.3, 0.4],
            "p_value": p,
            "ci_low": low if low is not None else [0.0] * 4,
            "ci_high": [1.0] * 4,
        }
    )


def test_a_conclusion_changes_only_where_one_method_rejects_and_the_other_does_not():
    default = _table([0.01, 0.20, 0.04, np.nan])
    earlier = _table([0.01, 0.03, 0.06, 0.01], low=[0.5, 0.6, 0.7, 0.8])
    side = compare_methods(
        default, earlier, keys=["judge"], interval=("ci_low", "ci_high"), shown=["diff"]
    )
    assert list(side.columns) == [
        "judge", "diff", "p_value", "p_value_earlier", "ci_low", "ci_low_earlier",
        "ci_high", "ci_high_earlier", "conclusion_changes",
    ]  # fmt: skip
    # d: the default declined its test (no p), so there is no conclusion to compare.
    assert side["conclusion_changes"].tolist() == [False, True, True, False]
    assert side["ci_low_earlier"].tolist() == [0.5, 0.6, 0.7, 0.8]


def test_rows_the_earlier_run_lacks_are_kept_without_a_change_and_order_follows_default():
    default = _table([0.01, 0.5, 0.01, 0.5]).iloc[::-1]
    earlier = _table([0.5, 0.5, 0.5, 0.5]).iloc[:2]
    side = compare_methods(default, earlier, keys=["judge"], suffix="_t")
    assert side["judge"].tolist() == ["d", "c", "b", "a"]
    assert side["p_value_t"].isna().tolist() == [True, True, False, False]
    assert side["conclusion_changes"].tolist() == [False, False, False, True]


def test_every_p_column_counts():
    default = _table([0.5] * 4).assign(p_adj=[0.01, 0.5, 0.5, 0.5])
    earlier = _table([0.5] * 4).assign(p_adj=[0.5] * 4)
    side = compare_methods(default, earlier, keys=["judge"], p_columns=["p_value", "p_adj"])
    assert side["conclusion_changes"].tolist() == [True, False, False, False]


def test_a_repeated_key_or_a_missing_column_is_refused_by_name():
    table = _table([0.1] * 4)
    doubled = pd.concat([table, table.iloc[:1]])
    with pytest.raises(ValueError, match="earlier table repeats the key {'judge': 'a'}"):
        compare_methods(table, doubled, keys=["judge"])
    with pytest.raises(KeyError, match="lacks \\['n_eff'\\]"):
        compare_methods(table, table, keys=["judge"], shown=["n_eff"])
