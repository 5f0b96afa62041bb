"""The paper's "line of best fit coefficient", every reading of it (spec 000 §4.4, Fig. 4)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import statsmodels.api as sm

from judgelab.core import stats
from judgelab.core.schema import require_columns as _require

FIT_COLUMNS: tuple[str, ...] = (
    "x",
    "y",
    "ols_slope",
    "ols_intercept",
    "origin_slope",
    "pearson_r",
    "r2",
    "n",
)


def fit_coefficients(data: pd.DataFrame, *, x: str, y: str) -> pd.DataFrame:
    """Return every reading of the paper's "line of best fit coefficient" for y against x.

    Spec §4.4 leaves it open, so all four are given: the OLS slope (with intercept), the
    slope through the origin, Pearson r and R² (statsmodels OLS, read by `stats.glm_rows`).

    Returns:
        One row: `x`, `y`, `ols_slope`, `ols_intercept`, `origin_slope`, `pearson_r`, `r2`,
        `n` (points).

    >>> fit = fit_coefficients(pd.DataFrame({"a": [0, 1, 2], "b": [1, 3, 5]}), x="a", y="b")
    >>> fit[["ols_slope", "ols_intercept", "r2"]].round(6).iloc[0].tolist()
    [2.0, 1.0, 1.0]
    """
    _require(data, [x, y], "fit_coefficients")
    pts = data[[x, y]].dropna().to_numpy(dtype=float)
    row = dict.fromkeys(FIT_COLUMNS, np.nan) | {"x": x, "y": y, "n": len(pts)}
    if len(pts) >= 2 and np.ptp(pts[:, 0]) > 0:
        design = pd.DataFrame({"x": pts[:, 0]})
        fit = _coefs(sm.OLS(pts[:, 1], sm.add_constant(design)).fit(), ["const", "x"])
        origin = _coefs(sm.OLS(pts[:, 1], design).fit(), ["x"])
        r = float(np.corrcoef(pts[:, 0], pts[:, 1])[0, 1]) if np.ptp(pts[:, 1]) > 0 else np.nan
        row |= {
            "ols_slope": fit["x"],
            "ols_intercept": fit["const"],
            "origin_slope": origin["x"],
            "pearson_r": r,
            "r2": r * r,
        }
    return pd.DataFrame([row])


def _coefs(result: object, terms: list[str]) -> dict[str, float]:
    """Return {term: coefficient} of a fitted model (two points leave no residual variance)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        rows = stats.glm_rows(result, terms=terms)
    return dict(zip(rows["term"], rows["coef"].astype(float), strict=True))
