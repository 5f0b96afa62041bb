"""Position bias from pairwise rates: position-A preference, consistency categories, stability.

Each function reshapes `pairwise_rates` output (spec 000 §4.7, the MT-Bench consistency
categories): no new resampling, the intervals and the position test are those of the rates
(the restricted wild cluster bootstrap by default, whose p-value inverts the interval
beside it).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from judgelab.analyses.pairwise.outcomes import CATEGORIES
from judgelab.analyses.pairwise.rates import MEAN_OF_SPLITS, POSITION_RATES, rate_keys
from judgelab.core import stats
from judgelab.errors import check_choice

#: Tests `position_preference` can report as `p_value`.
POSITION_TESTS = ("bootstrap", "sign")
_PREF_INTERVALS = ("ci_low", "ci_high", "wilson_low", "wilson_high")
#: The rates `position_preference` reads (`pairwise_rates(metrics=...)` must include them).
NEEDED = (*POSITION_RATES, "run_gap", "share_biased_first", "share_biased_second")


def position_preference(rates: pd.DataFrame, *, test: str = "bootstrap") -> pd.DataFrame:
    """Return the position-A preference per group in both denominators, with its tests.

    `pos_a_rate` (the headline; spec 000 §4.7) is the share of *all valid* verdicts of both
    orders that pick the response shown first — ties count in the denominator, so a judge
    without position preference that ties 20 % of the time scores 0.4; `pos_a_rate_decisive`
    divides by the valid non-tie verdicts only (the earlier headline; 0.5 = no preference).
    Both are equal for a judge that never ties.

    Tests of "the judge picks A as often as B": `p_bootstrap`, the cluster test of the
    decisive share = 1/2 carried by the rates — by default the restricted wild cluster
    bootstrap, whose p is below 1 − level exactly when 1/2 lies outside
    [`decisive_low`, `decisive_high`] (with `pairwise_rates(inference="bootstrap")`, the
    earlier adaptive percentile-bootstrap p; `p_bound` marks an upper bound) — and
    `p_sign`, the legacy exact sign test of the items judged position A both times
    (`biased_first`) against position B both times (`biased_second`), which assumes
    independent items. `n_eff_clusters`, `few_clusters` and `method` are those of the
    decisive share's row. Per-split and pooled rows only (counts are not defined for a mean
    of splits).

    Args:
        rates: Output of `pairwise_rates`.
        test: Which test is `p_value`: `bootstrap` (default) or `sign` (legacy).

    Returns:
        The rate keys and `aggregation`, `pos_a_rate`, `ci_low`, `ci_high`, `wilson_low`,
        `wilson_high`, `n_valid` (valid verdicts), `pos_a_rate_decisive`, `decisive_low`,
        `decisive_high`, `n_verdicts` (valid non-tie verdicts), `n_clusters`, `run_gap`
        (a2 − a1), `n_biased_first`, `n_biased_second`, `p_value`, `p_bootstrap`,
        `p_bound`, `n_boot_p`, `p_sign`, `test`, `n_eff_clusters`, `few_clusters`, `method`.
    """
    check_choice("position test", test, POSITION_TESTS)
    keys = rate_keys(rates)
    data = rates[rates["aggregation"] != MEAN_OF_SPLITS]
    idx = [*keys, "aggregation"]
    needed = list(NEEDED)
    absent = sorted(set(needed) - set(data["metric"]))
    if absent:
        raise ValueError(f"position_preference: the rates lack metric(s) {absent}")
    data = data[data["metric"].isin(needed)].reset_index(drop=True)
    # one row per group, in order of first appearance; each metric's row scattered to it
    group = data.groupby(idx, sort=False, dropna=False, observed=True).ngroup().to_numpy()
    first = data.drop_duplicates(idx)
    n_groups = len(first)
    metric = data["metric"].to_numpy()

    def col(m: str, name: str, fill: object = np.nan) -> np.ndarray:
        values = np.full(n_groups, fill, dtype=object)
        if name in data.columns:
            sel = metric == m
            values[group[sel]] = data[name].to_numpy(dtype=object)[sel]
        return values

    dec = "pos_a_rate_decisive"
    first_k = col("share_biased_first", "k").astype(float).astype(int)
    second_k = col("share_biased_second", "k").astype(float).astype(int)
    p_bootstrap = col(dec, "p_value").astype(float)
    p_sign = np.array(
        [stats.sign_test(a, a + b).p_value for a, b in zip(first_k, second_k, strict=True)]
    )
    method = col(dec, "method")
    fields = {
        "pos_a_rate": col("pos_a_rate", "value").astype(float),
        **{name: col("pos_a_rate", name).astype(float) for name in _PREF_INTERVALS},
        "n_valid": col("pos_a_rate", "n").astype(float).astype(int),
        "pos_a_rate_decisive": col(dec, "value").astype(float),
        "decisive_low": col(dec, "ci_low").astype(float),
        "decisive_high": col(dec, "ci_high").astype(float),
        "n_verdicts": col(dec, "n").astype(float).astype(int),
        "n_clusters": col("pos_a_rate", "n_clusters").astype(float).astype(int),
        "run_gap": col("run_gap", "value").astype(float),
        "n_biased_first": first_k,
        "n_biased_second": second_k,
        "p_value": p_bootstrap if test == "bootstrap" else p_sign,
        "p_bootstrap": p_bootstrap,
        "p_bound": col(dec, "p_bound", False).astype(bool),
        "n_boot_p": col(dec, "n_boot_p", 0).astype(float).astype(int),
        "p_sign": p_sign,
        "test": method if test == "bootstrap" else np.full(n_groups, "sign (legacy)"),
        "n_eff_clusters": col(dec, "n_eff_clusters").astype(float),
        "few_clusters": col(dec, "few_clusters", False).astype(bool),
        "method": method,
    }
    keys_frame = first[idx].reset_index(drop=True)
    return pd.concat([keys_frame, pd.DataFrame(fields)], axis=1)


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


def stability_reason(rates: pd.DataFrame, *, metric: str = "cons") -> str | None:
    """Return why run-to-run stability cannot be shown, None when some judge ran twice.

    Stability needs a judge run at least twice on the same items (`sample` 0..n-1): with one
    run per judge the SD is undefined (NaN) and the plot would be single dots.
    """
    stability = run_stability(rates, metric=metric)
    if (stability["n_samples"] >= 2).any():
        return None
    return (
        "each judge was run once per item (one sample), so there is no run-to-run spread; "
        "a judge run with several samples shows it"
    )
