"""The binomial GLM every length regression fits, with its robust standard errors.

Standard errors are cluster-robust by default (statsmodels `cov_type="cluster"`, groups =
the resampling units of `core.clusters`), with statsmodels' small-sample correction and a
t reference distribution with G − 1 degrees of freedom (G clusters): with 40–60 clusters a
normal reference under-covers. Without groups the legacy heteroskedasticity-robust HC0
errors treat every row as independent.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd

#: |coefficient| beyond which a fit is flagged as (quasi-)separated.
SEPARATION_COEF = 15.0


def fit_binomial(y: np.ndarray, X: pd.DataFrame, groups: np.ndarray | None) -> tuple[Any, str]:
    """Fit a binomial GLM of `y` (0/1, or fractions in [0, 1]: quasi-likelihood) on `X`.

    Args:
        y: The outcome per row.
        X: The design (with its intercept column).
        groups: Integer cluster codes per row (cluster-robust errors, t with G − 1 df), or
            None (HC0, rows independent).

    Returns:
        (the statsmodels result, or None when the fit fails; a note: "" or why the fit is
        unreliable).
    """
    import statsmodels.api as sm

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            model = sm.GLM(y, X, family=sm.families.Binomial())
            if groups is None:
                res = model.fit(cov_type="HC0")
            else:
                res = model.fit(cov_type="cluster", cov_kwds={"groups": groups}, use_t=True)
        except Exception as exc:  # singular design, perfect separation, ...
            return None, f"fit failed: {type(exc).__name__}: {exc}"
    separated = any("separation" in str(w.message).lower() for w in caught)
    if separated or (np.abs(res.params.to_numpy()) > SEPARATION_COEF).any():
        return res, "(quasi-)separation: estimates unreliable"
    return res, ""
