"""The report card's declared finding (issue 34): the headline of one of its measures."""

from __future__ import annotations

from typing import Any

import pandas as pd

from judgelab.reporting import findings
from judgelab.reporting.card.measures import MEASURES


def from_card(measures: pd.DataFrame, *, source: Any, prefer: str = "ca") -> findings.Finding:
    """Return a report card's finding: the headline of `prefer` (else its first ok measure).

    The card's judges are those of `measures` (`key` column); with several, the best one on
    the measure is named, with how many were compared.
    """
    ok = measures[measures["headline"].astype(bool) & (measures["status"] == "ok")]
    ok = ok.assign(_v=pd.to_numeric(ok["value"], errors="coerce")).dropna(subset=["_v"])
    if ok.empty:
        raise findings.FindingError("finding of the card: no headline measure has a value")
    name = prefer if (ok["measure"] == prefer).any() else str(ok["measure"].iloc[0])
    label = MEASURES.get(name, (name, ""))[0]
    return findings.from_table(
        ok, measure=label, source=source, where={"measure": name}, subject="key", clusters=None
    )
