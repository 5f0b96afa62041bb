"""The delete-one-cluster jackknife: SE, bias and t interval from leave-one-out values.

Shared by the families whose statistic is not a ratio of sums (kappa of a pair of raters,
a kappa difference between two groups): each is recomputed from the column sums without one
cluster (`leave_one_out`) and `jackknife` turns the G values into a bias estimate, an SE and
a t(G − 1) interval.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np


class Jackknife(NamedTuple):
    """A cluster jackknife: bias-corrected estimate, bias, SE and the t interval."""

    value: float  # the plug-in estimate
    bias: float  # jackknife estimate of the plug-in's bias ((G − 1)(mean θ₋g − θ))
    se: float
    ci_low: float
    ci_high: float
    n_clusters: int
    df: float  # degrees of freedom of the t reference


def jackknife(
    value: float,
    leave_out: np.ndarray,
    *,
    level: float = 0.95,
    df: float | None = None,
    bounds: tuple[float, float] = (-np.inf, np.inf),
    bias_corrected: bool = True,
) -> Jackknife:
    """Return the delete-one-cluster jackknife of a statistic from its G leave-one-out values.

    The interval is (θ − bias) ± t_df · SE with SE² = (G − 1)/G · Σ (θ₋g − mean θ₋g)²
    (Efron & Tibshirani 1993, §10–11), cut to `bounds`; df defaults to G − 1;
    `bias_corrected=False` centres it on θ itself (the bias is still reported). Leave-out
    values that are NaN (the statistic undefined without that cluster) are left out; fewer
    than two give NaN bounds.

    >>> jk = jackknife(0.5, np.array([0.4, 0.5, 0.6]))
    >>> round(jk.bias, 6), round(jk.se, 4), jk.n_clusters, jk.df
    (0.0, 0.1155, 3, 2.0)
    >>> up = jackknife(0.7, np.array([0.4, 0.5, 0.6]), bias_corrected=False)
    >>> round(up.bias, 6), round((up.ci_low + up.ci_high) / 2, 6)  # centred on θ, not θ − bias
    (-0.4, 0.7)
    """
    from scipy import stats as sps

    theta = np.asarray(leave_out, dtype=np.float64)
    theta = theta[np.isfinite(theta)]
    G = len(theta)
    nan = float("nan")
    if G < 2 or not np.isfinite(value):
        return Jackknife(float(value), nan, nan, nan, nan, G, nan)
    mean = float(theta.mean())
    bias = (G - 1) * (mean - float(value))
    se = float(np.sqrt((G - 1) / G * np.sum((theta - mean) ** 2)))
    dof = float(G - 1) if df is None else float(df)
    q = float(sps.t.ppf(0.5 + level / 2.0, dof))
    centre = float(value) - bias if bias_corrected else float(value)
    low = float(np.clip(centre - q * se, *bounds))
    high = float(np.clip(centre + q * se, *bounds))
    return Jackknife(float(value), float(bias), se, low, high, G, dof)


def leave_one_out(per_cluster: np.ndarray, statistic: Callable[[np.ndarray], np.ndarray]):
    """Return `statistic` of the column sums without each cluster (G values).

    `per_cluster` (G × …) holds each cluster's sums; `statistic` maps sums (…) to the
    statistic, vectorised over leading axes (e.g. `stats.kappa_from_confusion`).
    """
    per = np.asarray(per_cluster, dtype=np.float64)
    return np.asarray(statistic(per.sum(axis=0)[None, ...] - per), dtype=np.float64)


__all__ = ["Jackknife", "jackknife", "leave_one_out"]
