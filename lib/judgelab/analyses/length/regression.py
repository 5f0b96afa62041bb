"""Regressions on length: the judge's choice (logistic) and a pointwise score (OLS).

Both use statsmodels with item-clustered errors and report one row per group × term through
`judgelab.core.stats.glm_rows`.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from judgelab.analyses.length.verdicts import KEYS, group_label, item_key, length_unit
from judgelab.core import stats
from judgelab.core.schema import require_columns as _require
from judgelab.errors import check_choice

#: Length terms: the difference per SD (`linear`) or tanh of it (AlpacaEval).
TRANSFORMS = ("linear", "tanh")

_REGRESSION_COLUMNS = [
    "term",
    "coef",
    "ci_low",
    "ci_high",
    "p_value",
    "odds_ratio",
    "n",
    "n_items",
    "x",
    "sd_length",
    "coef_per_100",
    "len_unit",
    "note",
]
_SCORE_COLUMNS = [
    "term",
    "coef",
    "ci_low",
    "ci_high",
    "p_value",
    "n",
    "n_items",
    "sd_length",
    "coef_per_100",
    "len_unit",
    "note",
]


def design_length(diff: np.ndarray, transform: str) -> tuple[np.ndarray, float]:
    """Return the length term of a design matrix and the SD it was standardized by.

    The term is `diff` / SD(`diff`) (`linear`; all zeros when the SD is 0) or tanh of that
    (`tanh`, AlpacaEval's choice).

    >>> z, sd = design_length(np.array([-1.0, 1.0]), "linear")
    >>> z.round(3).tolist(), round(sd, 3)
    ([-0.707, 0.707], 1.414)
    """
    check_choice("transform", transform, TRANSFORMS)
    sd = float(np.std(diff, ddof=1)) if diff.size > 1 else float("nan")
    z = diff / sd if sd > 0 else np.zeros_like(diff)
    return (np.tanh(z) if transform == "tanh" else z), sd


def _fit_glm(y: np.ndarray, X: pd.DataFrame, groups: np.ndarray) -> tuple[Any, str]:
    """Fit a binomial GLM with item-clustered errors; return (result or None, note)."""
    import statsmodels.api as sm

    note = ""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            model = sm.GLM(y, X, family=sm.families.Binomial())
            res = model.fit(cov_type="cluster", cov_kwds={"groups": groups})
        except Exception as exc:  # singular design, separation in old statsmodels, ...
            return None, f"fit failed: {type(exc).__name__}: {exc}"
    if (
        any("separation" in str(w.message).lower() for w in caught)
        or (np.abs(res.params.to_numpy()) > 15).any()
    ):
        note = "(quasi-)separation: estimates unreliable"
    return res, note


def length_regression(
    verdicts: pd.DataFrame,
    *,
    by: Sequence[str] = ("judge",),
    transform: str = "linear",
    level: float = 0.95,
) -> pd.DataFrame:
    """Logistic regression of "the judge chose response X" on length, position and gold.

    Per group, over verdicts that pick pos or neg:

    - when the judge saw both orders, X = the response shown first (A): the intercept is
      the position-A preference (log-odds), `length` the effect of A being longer, and, with
      gold, `gold` = +½ when A is the gold positive and −½ otherwise (the judge's skill);
    - otherwise (one presentation order, e.g. AlpacaEval) X = the `pos` slot: the intercept
      absorbs position and gold, and only `length` is separated.

    The length term is the difference len_X − len_Y divided by its standard deviation in
    the group (`linear`), or tanh of that (`tanh`, AlpacaEval's choice). Standard errors are
    clustered by item (the two orders of an item are not independent). `coef_per_100`
    converts the linear length coefficient to log-odds per 100 length units.

    Args:
        verdicts: `pairwise_verdicts` output.
        by: Group columns.
        transform: `linear` or `tanh`.
        level: Confidence level of the Wald intervals.

    Returns:
        One row per group × term (`intercept`, `length`, `gold`): the `by` columns, `group`
        (the `by` values as one label), `term`,
        `coef`, `ci_low`, `ci_high`, `p_value`, `odds_ratio`, `n` (verdicts), `n_items`,
        `x` (what X is), `sd_length`, `coef_per_100`, `len_unit`, `note`.
    """
    by = list(by)
    _require(
        verdicts,
        [*by, "chosen", "order", "len_pos", "len_neg", "correct", *KEYS],
        "length_regression",
    )
    data = verdicts[verdicts["chosen"].isin(["pos", "neg"])]
    unit = length_unit(verdicts)
    rows = []
    groups = data.groupby(by, sort=True, observed=True, dropna=True).indices if len(data) else {}
    for key, idx in groups.items():
        key = key if isinstance(key, tuple) else (key,)
        base = {**dict(zip(by, key, strict=True))}
        for row in _choice_regression(data.iloc[idx], transform=transform, level=level):
            rows.append({**base, **row, "len_unit": unit})
    out = pd.DataFrame(rows, columns=[*by, *_REGRESSION_COLUMNS])
    out.insert(len(by), "group", group_label(out, by))
    return out


def _choice_design(g: pd.DataFrame, transform: str) -> tuple[np.ndarray, pd.DataFrame, str, float]:
    """Return y (chose X), the design (intercept, length[, gold]), what X is, and SD(length)."""
    order = g["order"].to_numpy(dtype=int)
    chosen = g["chosen"].astype(str).to_numpy()
    lp, ln = g["len_pos"].to_numpy(float), g["len_neg"].to_numpy(float)
    both = len(np.unique(order)) == 2
    gold_known = bool(g["correct"].notna().all())
    first_pos = order == 0
    if both:
        y = np.where(first_pos, chosen == "pos", chosen == "neg").astype(float)
        diff = np.where(first_pos, lp - ln, ln - lp)
        x_name = "response shown first (A)"
    else:
        y = (chosen == "pos").astype(float)
        diff = lp - ln
        x_name = "pos slot (single presentation order)"
    length, sd = design_length(diff, transform)
    X = pd.DataFrame({"intercept": 1.0, "length": length})
    if both and gold_known:
        X["gold"] = np.where(first_pos, 0.5, -0.5)
    return y, X, x_name, sd


def _choice_regression(g: pd.DataFrame, *, transform: str, level: float) -> list[dict[str, Any]]:
    """Fit `length_regression` on one group; return one row per term (no `by`, no unit)."""
    y, X, x_name, sd = _choice_design(g, transform)
    items = item_key(g)
    res, note = _fit_glm(y, X, pd.factorize(items)[0])
    terms = stats.glm_rows(res, terms=list(X.columns), level=level, odds_ratio=True, n=len(g))
    rows = []
    for row in terms.to_dict("records"):
        coef = row["coef"]
        per100 = coef / sd * 100 if row["term"] == "length" and transform == "linear" else np.nan
        rows.append(
            {
                **row,
                "n_items": len(np.unique(items)),
                "x": x_name,
                "sd_length": sd,
                "coef_per_100": per100,
                "note": note,
            }
        )
    return rows


def score_length_regression(
    table: pd.DataFrame,
    *,
    by: Sequence[str] = ("judge",),
    value: str = "score",
    column: str = "len_response",
    fixed: str | None = "split",
    level: float = 0.95,
) -> pd.DataFrame:
    """OLS of a pointwise score on standardized response length (± fixed effects).

    With `fixed="split"` (arena-bench: split = the answering model) the length effect is
    estimated *within* each model, so "better models write longer answers" is not counted
    as length bias. Errors are clustered by `item_id` (the question).

    Returns:
        Per group: the `by` columns, `term` (`length`), `coef` (score points per SD of
        length), `ci_low`, `ci_high`, `p_value`, `n`, `n_items`, `sd_length`,
        `coef_per_100` (points per 100 length units), `len_unit`, `note`.
    """
    import statsmodels.api as sm

    by = list(by)
    _require(table, [*by, value, column, "item_id"], "score_length_regression")
    data = table[table[value].notna() & table[column].notna()]
    rows = []
    groups = data.groupby(by, sort=True, observed=True).indices if len(data) else {}
    for key, idx in groups.items():
        key = key if isinstance(key, tuple) else (key,)
        g = data.iloc[idx]
        length, sd = design_length(g[column].to_numpy(float) - g[column].mean(), "linear")
        X = pd.DataFrame({"const": 1.0, "length": length}, index=g.index)
        if fixed is not None and g[fixed].nunique() > 1:
            X = X.join(pd.get_dummies(g[fixed], prefix="fe", drop_first=True, dtype=float))
        note = ""
        try:
            res = sm.OLS(g[value].to_numpy(float), X).fit(
                cov_type="cluster", cov_kwds={"groups": pd.factorize(g["item_id"])[0]}
            )
            term = stats.glm_rows(res, terms=["length"], level=level, n=len(g)).iloc[0]
        except Exception as exc:
            term = stats.glm_rows(None, terms=["length"], level=level, n=len(g)).iloc[0]
            note = f"fit failed: {exc}"
        coef = float(term["coef"])
        rows.append(
            {
                **dict(zip(by, key, strict=True)),
                **term.to_dict(),
                "n_items": g["item_id"].nunique(),
                "sd_length": sd,
                "coef_per_100": coef / sd * 100 if sd > 0 else np.nan,
                "len_unit": length_unit(table),
                "note": note,
            }
        )
    return pd.DataFrame(rows, columns=[*by, *_SCORE_COLUMNS])
