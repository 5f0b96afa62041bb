"""`item_records` gives what `DataFrame.to_dict("records")` gives, None for missing values."""

from __future__ import annotations

import numpy as np
import pandas as pd

from judgelab.judges.rows import item_records


def _reference(items: pd.DataFrame) -> list[dict]:
    return items.astype(object).where(items.notna(), None).to_dict("records")


def test_values_and_types_equal_to_dict_records():
    items = pd.DataFrame(
        {
            "int": [1, 2, 3],
            "float": [1.5, np.nan, 2.0],
            "text": ["x", None, "z"],
            "string": pd.array(["p", None, "q"], dtype="string"),
            "mixed": [np.int64(3), {"k": 1}, np.float32(2.5)],
            "bool": [True, False, True],
            "nullable": pd.array([1, None, 3], dtype="Int64"),
            "time": pd.to_datetime(["2020-01-01", None, "2021-01-01"]),
            "category": pd.Categorical(["u", None, "u"]),
        },
        index=[7, 3, 5],
    )
    want, got = _reference(items), item_records(items)
    assert got == want
    for w, g in zip(want, got, strict=True):
        assert [type(v) for v in g.values()] == [type(v) for v in w.values()]
    assert got[1]["mixed"] == {"k": 1} and got[0]["mixed"] == 3 and type(got[0]["mixed"]) is int
    assert item_records(items.iloc[0:0]) == []
