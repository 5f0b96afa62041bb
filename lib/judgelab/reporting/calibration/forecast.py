"""Calibration of a probability forecast: does P(event) match how often the event happens?

Some estimators report a probability, not an interval — P(the leader changes) under a
resampling of the items. Such a check (`Check(forecast=True)`) has as its truth the event's
indicator in each draw (1: the sample leader is not the population leader). Over the
replicates the forecast is calibrated in the large when its mean equals the event's frequency;
`forecast_fields` reports that gap (mean forecast − mean outcome) with a Monte-Carlo 95 %
interval from the paired differences, the Brier score, and a verdict read like the others:
**pass** when the whole interval lies within ± `FORECAST_TOLERANCE`, **fail** when it lies
wholly outside, **inconclusive** otherwise. Calibration in the large does not make every
forecast right (a constant equal to the base rate passes); the Brier score beside it shows
how sharp the forecasts are.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from judgelab.analyses.grounding import transport

#: Largest |mean forecast − event frequency| a calibrated forecast may show.
FORECAST_TOLERANCE = 0.05
#: Columns `forecast_fields` adds to a summary row.
FORECAST_COLUMNS = ("forecast_gap", "forecast_gap_low", "forecast_gap_high", "brier")


def forecast_fields(estimate: pd.Series, outcome: pd.Series) -> dict[str, float]:
    """Return the mean gap forecast − outcome, its MC 95 % interval and the Brier score."""
    diff = (estimate.astype(float) - outcome.astype(float)).to_numpy()
    n = len(diff)
    if n == 0:
        return dict.fromkeys(FORECAST_COLUMNS, float("nan"))
    gap = float(diff.mean())
    half = 1.96 * float(diff.std(ddof=1)) / np.sqrt(n) if n > 1 else float("inf")
    return {"forecast_gap": gap, "forecast_gap_low": gap - half,
            "forecast_gap_high": gap + half, "brier": float(np.mean(diff**2))}  # fmt: skip


def forecast_verdict(low: float, high: float) -> str:
    """Pass / fail / inconclusive: the gap's MC interval inside, outside or across ± tolerance.

    The equivalence reading of the transport audit (`grounding.transport.grade`).

    >>> forecast_verdict(-0.02, 0.03), forecast_verdict(0.06, 0.1), forecast_verdict(0.0, 0.08)
    ('pass', 'fail', 'inconclusive')
    """
    return transport.grade(low, high, FORECAST_TOLERANCE).lower()


__all__ = ["FORECAST_COLUMNS", "FORECAST_TOLERANCE", "forecast_fields", "forecast_verdict"]
