"""What every importer returns, the error it raises, and the import summary."""

from __future__ import annotations

from typing import NamedTuple

import pandas as pd

from judgelab.data.importers.frame_check import tally
from judgelab.errors import SourceFormatError as SourceFormatError


class Imported(NamedTuple):
    """The tables one source yields; `judgments` is None for item-only sources."""

    items: pd.DataFrame
    judgments: pd.DataFrame | None


def summarize(judgments: pd.DataFrame) -> pd.DataFrame:
    """Count rows, valid, invalid and tie verdicts per judge (the import summary table)."""
    return summarize_tally(tally(judgments))


def summarize_tally(t: pd.DataFrame) -> pd.DataFrame:
    """`summarize` from the judgments' `frame_check.tally` (rows counted in `n`)."""
    valid = t["valid"].astype(bool)
    tie = (t["chosen"] == "tie").fillna(False).astype(bool)
    counts = pd.DataFrame(
        {
            "judge": t["judge"],
            "rows": t["n"],
            "valid": t["n"].where(valid, 0),
            "invalid": t["n"].where(~valid, 0),
            "ties": t["n"].where(tie, 0),
        }
    )
    return counts.groupby("judge", sort=True).sum().astype(int).reset_index()
