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
    needed = [*POSITION_RATES, "run_gap", "share_biased_first", "share_biased_second"]
    data = data[data["metric"].isin(needed)]
    keyed = data.set_index(idx)
    metric = data["metric"].to_numpy()
    by_metric = {m: keyed[metric == m] for m in needed}
    pref = by_metric["pos_a_rate"]
    out = pref[["value", "ci_low", "ci_high", "wilson_low", "wilson_high", "n"]].rename(
        columns={"value": "pos_a_rate", "n": "n_valid"}
    )
    dec = by_metric["pos_a_rate_decisive"]
    out["pos_a_rate_decisive"] = dec["value"]
    out["decisive_low"] = dec["ci_low"]
    out["decisive_high"] = dec["ci_high"]
    out["n_verdicts"] = dec["n"].astype(int)
    out["n_valid"] = out["n_valid"].astype(int)
    out["n_clusters"] = pref["n_clusters"].astype(int)
    out["run_gap"] = by_metric["run_gap"]["value"]
    out["n_biased_first"] = by_metric["share_biased_first"]["k"].astype(int)
    out["n_biased_second"] = by_metric["share_biased_second"]["k"].astype(int)
    out["p_bootstrap"] = dec["p_value"]
    out["p_bound"] = dec["p_bound"].astype(bool)
    out["n_boot_p"] = dec["n_boot_p"].astype(int)
    out["p_sign"] = [
        stats.sign_test(a, a + b).p_value
        for a, b in zip(out["n_biased_first"], out["n_biased_second"], strict=True)
    ]
    out["p_value"] = out["p_bootstrap"] if test == "bootstrap" else out["p_sign"]
    out["test"] = dec["method"] if test == "bootstrap" else "sign (legacy)"
    for col in ("n_eff_clusters", "few_clusters", "method"):
        out[col] = dec[col] if col in dec.columns else np.nan
    cols = [c for c in out.columns if c not in ("p_value", "p_bootstrap")]
    cols.insert(cols.index("p_bound"), "p_value")
    cols.insert(cols.index("p_bound"), "p_bootstrap")
    return out[cols].reset_index()


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
