"""OLS of a pointwise score on response length (arena-bench 1–10 grades), within model.

Clusters are the question (`item_id`: every model's answer to it). By default the interval
and p-value are CR2 with Bell–McCaffrey degrees of freedom, with the restricted wild
cluster bootstrap (`core.wild`) beside them (`inference="cluster"`: statsmodels' CR1).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
import polars as pl

from judgelab.analyses.length import lazy
from judgelab.analyses.length.glm import BEYOND, INFERENCE, INFERENCE_COLUMNS
from judgelab.analyses.length.regression import design_length
from judgelab.analyses.length.verdicts import group_rows, length_unit
from judgelab.core import clusters, cr2, estimates, stats, wild
from judgelab.core.schema import require_columns as _require
from judgelab.errors import check_choice

_SCORE_COLUMNS = [
    "term",
    "coef",
    "ci_low",
    "ci_high",
    "p_value",
    "n",
    "n_items",
    "n_clusters",
    *INFERENCE_COLUMNS,
    "sd_length",
    "coef_per_100",
    "len_unit",
    "note",
]


def score_reason(table: pd.DataFrame, *, value: str = "score") -> str | None:
    """Return why the pointwise-score sections cannot apply, None when some item has a score.

    `table` is `verdicts.item_table` output: `score` holds a numeric pointwise verdict
    (e.g. a 1–10 grade) and is NaN for pairwise choices and labels, so without one there is
    no score to set against length (empty tables and an empty plot).
    """
    if lazy.is_lazy(table):
        if lazy.any_value(table, value):
            return None
    elif value in table.columns and table[value].notna().any():
        return None
    return (
        "the judgments hold no pointwise scores (every verdict is a pairwise choice or a "
        "label), so there is no score to set against length; a pointwise grader "
        "(e.g. arena-bench's 1–10 grades) shows it"
    )


def score_length_regression(
    table: pd.DataFrame,
    *,
    by: Sequence[str] = ("judge",),
    value: str = "score",
    column: str = "len_response",
    fixed: str | None = "split",
    level: float = 0.95,
    inference: str = "cr2",
    n_boot: int = wild.N_BOOT,
    seed: int = 0,
) -> pd.DataFrame:
    """OLS of a pointwise score on standardized response length (± fixed effects).

    With `fixed="split"` (arena-bench: split = the answering model) the length effect is
    estimated *within* each model, so "better models write longer answers" is not counted
    as length bias. Clusters are the `item_id` (the question: every model's answer to it).
    By default (`inference="cr2"`) the interval and p-value are CR2 with Bell–McCaffrey
    degrees of freedom, with the restricted wild cluster bootstrap (`core.wild`, the
    interval inverting the test) beside them; `inference="wild"` reports the bootstrap,
    `inference="cluster"` statsmodels' CR1 errors (the earlier default).

    Returns:
        Per group: the `by` columns, `term` (`length`), `coef` (score points per SD of
        length), `ci_low`, `ci_high`, `p_value`, `n`, `n_items`, `n_clusters`, `std_error`, `dof`,
        `cr2_low`, `cr2_high`, `cr2_p`, `wild_low`, `wild_high`, `wild_p`,
        `n_eff_clusters`, `few_clusters`, `method`, `sd_length`, `coef_per_100` (points per
        100 length units), `len_unit`, `note`.
    """
    by = list(by)
    check_choice("inference", inference, INFERENCE)
    if lazy.is_lazy(table):  # pointwise scores of a large source: its scored rows in pandas
        table = lazy.collect(table, where=pl.col(value).is_not_null())
    _require(table, [*by, value, column, "item_id"], "score_length_regression")
    data = table[table[value].notna() & table[column].notna()]
    rows = []
    groups = data.groupby(by, sort=True, observed=True).indices if len(data) else {}
    for key, idx in groups.items():
        key = key if isinstance(key, tuple) else (key,)
        g = group_rows(data, idx)
        length, sd = design_length(g[column].to_numpy(float) - g[column].mean(), "linear")
        X = pd.DataFrame({"const": 1.0, "length": length}, index=g.index)
        if fixed is not None and g[fixed].nunique() > 1:
            X = X.join(pd.get_dummies(g[fixed], prefix="fe", drop_first=True, dtype=float))
        rng = estimates.seeded(seed, "score_length_regression", *key)
        term, note = _score_term(
            g[value].to_numpy(float),
            X,
            pd.factorize(g["item_id"], sort=True)[0],  # any row order alike
            inference=inference,
            level=level,
            n_boot=n_boot,
            rng=rng,
        )
        coef = float(term["coef"])
        rows.append(
            {
                **dict(zip(by, key, strict=True)),
                **term,
                "n": len(g),
                "n_items": g["item_id"].nunique(),
                "sd_length": sd,
                "coef_per_100": coef / sd * 100 if sd > 0 else np.nan,
                "len_unit": length_unit(table),
                "note": note,
            }
        )
    return pd.DataFrame(rows, columns=[*by, *_SCORE_COLUMNS])


def _score_term(
    y: np.ndarray,
    X: pd.DataFrame,
    codes: np.ndarray,
    *,
    inference: str,
    level: float,
    n_boot: int,
    rng: np.random.Generator,
) -> tuple[dict[str, Any], str]:
    """The `length` term of the score OLS: CR2 and wild side by side, `inference` chosen."""
    import statsmodels.api as sm

    nan = float("nan")
    G = int(codes.max()) + 1 if codes.size else 0
    out: dict[str, Any] = {"term": "length", "n_clusters": G}
    Xv = X.to_numpy(dtype=np.float64)
    k = list(X.columns).index("length")
    a = np.zeros(Xv.shape[1])
    a[k] = 1.0
    try:
        beta, *_ = np.linalg.lstsq(Xv, y, rcond=None)
        resid = y - Xv @ beta
        c = cr2.cr2_test(Xv, resid, codes, a, estimate=float(beta[k]), level=level)
        beyond = wild.beyond_limit(G, n_boot)
        w = None
        if not beyond:
            problem = wild.wls_problem(Xv, y, codes)
            w = wild.wild_test(problem, a, level=level, n_boot=n_boot, rng=rng)
        influence = Xv @ np.linalg.pinv(Xv.T @ Xv)[:, k]
        n_eff = clusters.effective(influence, codes, resid=resid)
        legacy = None
        if inference == "cluster":
            legacy = sm.OLS(y, X).fit(cov_type="cluster", cov_kwds={"groups": codes})
    except Exception as exc:  # noqa: BLE001 - a failed fit is a row with a note
        out.update(dict.fromkeys(["coef", "ci_low", "ci_high", "p_value"], nan))
        out.update(dict.fromkeys(INFERENCE_COLUMNS, nan), few_clusters=True, method="no fit")
        return out, f"fit failed: {exc}"
    out.update(
        coef=float(beta[k]),
        std_error=c.se,
        dof=c.dof,
        cr2_low=c.ci_low,
        cr2_high=c.ci_high,
        cr2_p=c.p_value,
        wild_low=w.ci_low if w else nan,
        wild_high=w.ci_high if w else nan,
        wild_p=w.p_value if w else nan,
        n_eff_clusters=n_eff,
        few_clusters=bool(not n_eff >= clusters.FEW_EFFECTIVE),
    )
    if inference == "cr2" or (inference == "wild" and w is None):
        out.update(ci_low=c.ci_low, ci_high=c.ci_high, p_value=c.p_value)
        out["method"] = f"CR2, Bell-McCaffrey t({c.dof:.1f})" + ("" if w else BEYOND)
    elif inference == "wild":
        out.update(ci_low=w.ci_low, ci_high=w.ci_high, p_value=w.p_value)
        out["method"] = f"wild cluster bootstrap, restricted ({w.weights}, B={w.n_boot})"
    else:
        term = stats.glm_rows(legacy, terms=["length"], level=level).iloc[0]
        out.update(ci_low=term["ci_low"], ci_high=term["ci_high"], p_value=term["p_value"])
        out["method"] = "CR1, normal reference"
    return out, ""
