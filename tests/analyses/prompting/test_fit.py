"""Every reading of the paper's "line of best fit coefficient" on a hand example."""

from __future__ import annotations

import pandas as pd
import pytest

from judgelab.analyses import prompting


def test_fit_coefficients_hand_example():
    # x = 1 2 3, y = 1 3 2: slope Σdxdy/Σdx² = 1/2, intercept 2 − 2·½ = 1,
    # origin slope Σxy/Σx² = 13/14, r = 1/√(2·2) = ½, R² = ¼
    fit = prompting.fit_coefficients(pd.DataFrame({"x": [1, 2, 3], "y": [1, 3, 2]}), x="x", y="y")
    got = fit.iloc[0]
    assert got["ols_slope"] == pytest.approx(0.5) and got["ols_intercept"] == pytest.approx(1.0)
    assert got["origin_slope"] == pytest.approx(13 / 14)
    assert got["pearson_r"] == pytest.approx(0.5) and got["r2"] == pytest.approx(0.25)
