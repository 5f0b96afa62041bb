"""Builders shared by the correctness tests."""

from __future__ import annotations

import pandas as pd
import pytest


def build_table(rows):
    """Return a correctness table from (judge, question, candidate, human, verdict) rows."""
    return pd.DataFrame(
        [
            {"judge": j, "condition": "", "question_uid": q, "candidate_model": m,
             "human": h, "verdict": v}
            for j, q, m, h, v in rows
        ]
    )  # fmt: skip


@pytest.fixture()
def table_of():
    """The correctness-table builder (rows: judge, question, candidate, human, verdict)."""
    return build_table
