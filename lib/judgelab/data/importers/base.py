"""What every importer returns, the error it raises, and the import summary."""

from __future__ import annotations

from typing import NamedTuple

import pandas as pd

from judgelab.errors import SourceFormatError as SourceFormatError


class Imported(NamedTuple):
    """The tables one source yields; `judgments` is None for item-only sources."""

    items: pd.DataFrame
    judgments: pd.DataFrame | None


def summarize(judgments: pd.DataFrame) -> pd.DataFrame:
    """Count rows, valid, invalid and tie verdicts per judge (the import summary table)."""
    g = judgments.groupby("judge", sort=True)
    out = pd.DataFrame(
        {
            "rows": g.size(),
            "valid": g["valid"].sum().astype(int),
            "invalid": g["valid"].apply(lambda s: int((~s.astype(bool)).sum())),
            "ties": g["chosen"].apply(lambda s: int((s == "tie").sum())),
        }
    )
    return out.reset_index()


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
