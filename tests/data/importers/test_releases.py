"""Released tables whose column names vary: a missing column names the variants looked for."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from judgelab.data.importers import SourceFormatError, releases


def test_need_column_takes_the_first_variant_present():
    df = pd.DataFrame({"query_id": ["1"], "question": ["q"]})
    assert releases.need_column(df, "f.jsonl", "id", ("example_id", "query_id", "id")) == (
        "query_id"
    )
    assert releases.pick_column(df, "f.jsonl", "source", ("source",)) is None
    with pytest.raises(
        SourceFormatError,
        match=r"f\.jsonl, column 'answerKey': missing answer key column; looked for answerKey, "
        r"answer_key \(columns: query_id, question\)",
    ):
        releases.need_column(df, "f.jsonl", "answer key", ("answerKey", "answer_key"))


def test_cells_become_plain_python():
    assert releases.plain_value(np.array([1, 2])) == [1, 2]
    assert releases.plain_value({"a": np.nan}) == {"a": None}
    assert releases.cell_text(np.int64(3)) == "3" and releases.cell_text(pd.NA) is None
