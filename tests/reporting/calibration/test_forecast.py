"""A probability forecast's calibration in the large (issue 35 item 7: P(leader changes))."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from judgelab.reporting.calibration import forecast, summarise
from judgelab.reporting.calibration.checks import stability as checks


def _reps(estimate: np.ndarray, outcome: np.ndarray) -> pd.DataFrame:
    n = len(estimate)
    return pd.DataFrame({
        "check": "stability.p_leader_changes", "scenario": "s", "variant": "after",
        "hypothesis": np.where(np.arange(n) % 2, "null", "alternative"), "r": np.arange(n),
        "estimate": estimate, "low": np.nan, "high": np.nan, "p_value": np.nan,
        "truth": outcome, "declined": "", "error": "", "n_eff": np.nan, "seconds": 0.0,
    })  # fmt: skip


def test_i35_7_a_calibrated_forecast_passes_and_a_biased_one_fails():
    rng = np.random.default_rng(0)
    p = rng.uniform(0, 0.6, 4000)
    outcome = (rng.random(4000) < p).astype(float)
    check = [c for c in checks.CHECKS if c.forecast]
    good = summarise(_reps(p, outcome), check).iloc[0]
    assert good["forecast_verdict"] == "pass" and good["verdict"] == "pass"
    assert abs(good["forecast_gap"]) < 0.02
    assert good["brier"] < np.mean((0.3 - outcome) ** 2)  # sharper than the base rate
    bad = summarise(_reps(np.clip(p + 0.15, 0, 1), outcome), check).iloc[0]
    assert bad["forecast_verdict"] == "fail" and bad["verdict"] == "fail"
    few = summarise(_reps(p[:20], outcome[:20]), check).iloc[0]
    assert few["forecast_verdict"] == "inconclusive"  # 20 replicates cannot tell


def test_i35_7_failed_replicates_fail_the_forecast():
    reps = _reps(np.full(50, 0.2), np.zeros(50))
    reps.loc[3, "error"] = "ValueError: boom"
    check = [replace(c, name="stability.p_leader_changes") for c in checks.CHECKS if c.forecast]
    row = summarise(reps, check).iloc[0]
    assert row["failed"] == 1 and row["forecast_verdict"] == "fail"


def test_i35_7_forecast_fields_read_the_paired_gap():
    f = forecast.forecast_fields(pd.Series([0.5, 0.5, 0.5, 0.5]), pd.Series([1, 0, 1, 0]))
    assert f["forecast_gap"] == 0.0 and f["brier"] == 0.25
    assert f["forecast_gap_low"] < 0 < f["forecast_gap_high"]
    empty = forecast.forecast_fields(pd.Series([], dtype=float), pd.Series([], dtype=float))
    assert np.isnan(empty["forecast_gap"])
