"""Position bias from pairwise rates: position-A preference, consistency categories, stability.

Each function reshapes `pairwise_rates` output (spec 000 §4.7, the MT-Bench consistency
categories): no new resampling, the intervals are those of the rates.
"""

from __future__ import annotations

import pandas as pd

from judgelab.analyses.pairwise.outcomes import CATEGORIES
from judgelab.analyses.pairwise.rates import MEAN_OF_SPLITS, METRICS, rate_keys
from judgelab.core import stats


def position_preference(rates: pd.DataFrame) -> pd.DataFrame:
    """Return the position-A preference per group with its intervals and a sign test.

    The sign test compares the items judged *position A both times* (`biased_first`) with the
    items judged *position B both times* (`biased_second`): exact two-sided binomial test of
    n_biased_first out of n_biased_first + n_biased_second against 1/2. Per-split and pooled
    rows only (counts are not defined for a mean of splits).

    Returns:
        The rate keys and `aggregation`, `pos_a_rate`, `ci_low`, `ci_high`, `wilson_low`,
        `wilson_high`, `n_verdicts` (valid non-tie verdicts), `run_gap` (a2 − a1),
        `n_biased_first`, `n_biased_second`, `p_value`.
    """
    keys = rate_keys(rates)
    data = rates[rates["aggregation"] != MEAN_OF_SPLITS]
    idx = [*keys, "aggregation"]
    pref = data[data["metric"] == "pos_a_rate"].set_index(idx)
    out = pref[["value", "ci_low", "ci_high", "wilson_low", "wilson_high", "n"]].rename(
        columns={"value": "pos_a_rate", "n": "n_verdicts"}
    )
    by_metric = {m: data[data["metric"] == m].set_index(idx) for m in METRICS}
    out["run_gap"] = by_metric["run_gap"]["value"]
    out["n_biased_first"] = by_metric["share_biased_first"]["k"].astype(int)
    out["n_biased_second"] = by_metric["share_biased_second"]["k"].astype(int)
    out["n_verdicts"] = out["n_verdicts"].astype(int)
    out["p_value"] = [
        stats.sign_test(a, a + b).p_value
        for a, b in zip(out["n_biased_first"], out["n_biased_second"], strict=True)
    ]
    return out.reset_index()


def consistency_categories(rates: pd.DataFrame) -> pd.DataFrame:
    """Return the consistency-category shares in long form (one row per group × category).

    Columns: the rate keys, `aggregation`, `category` (in `CATEGORIES` order), `value`, `k`,
    `n`, `ci_low`, `ci_high`. The shares of a group sum to 1.
    """
    keys = rate_keys(rates)
    names = {f"share_{c}": c for c in CATEGORIES}
    data = rates[rates["metric"].isin(names)].copy()
    data["category"] = pd.Categorical(data["metric"].map(names), categories=list(CATEGORIES))
    data["_group"] = data.groupby([*keys, "aggregation"], sort=False, dropna=False).ngroup()
    data = data.sort_values(["_group", "category"], kind="stable")
    cols = [*keys, "aggregation", "category", "value", "k", "n", "ci_low", "ci_high"]
    return data[cols].reset_index(drop=True)


def run_stability(rates: pd.DataFrame, *, metric: str = "cons") -> pd.DataFrame:
    """Summarise a metric over repeated runs (`sample`): n_samples, mean, sd, min, max, range.

    One row per rate key other than `sample` (and per aggregation); `sd` is the sample
    standard deviation (ddof = 1; NaN for a single run).
    """
    keys = [k for k in rate_keys(rates) if k != "sample"]
    data = rates[(rates["metric"] == metric) & rates["value"].notna()]
    grouped = data.groupby([*keys, "aggregation"], sort=False, observed=True)["value"]
    out = grouped.agg(n_samples="count", mean="mean", sd="std", min="min", max="max")
    out["range"] = out["max"] - out["min"]
    out.insert(0, "metric", metric)
    return out.reset_index()
