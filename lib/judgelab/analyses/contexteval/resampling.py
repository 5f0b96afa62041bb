"""Tests and intervals of the ContextEval statistics: units, the wild and the pairs bootstrap.

Every statistic of this family is a ratio of sums or a difference of two (a mean is a ratio
of sums, a win rate a ratio of counts, a margin Σ (C1 − C2) / Σ majority, a difference of
two settings a difference of two ratios over the *same* units — a paired comparison).
`units` says which rows are one cluster.

Default (`METHODS[0]`, issue 33): `wild_estimate` — the restricted wild cluster bootstrap
test of `core.estimates` (`contrast`: Webb weights below 12 clusters, else Rademacher) and
the interval that inverts it, so the p-value beside an interval always agrees with it; the
row also carries n, the clusters, the *effective* clusters and `few_clusters` (fewer than
`core.clusters.FEW_EFFECTIVE`). On data shaped like real corpora (8–15 conversations of
very unequal size, context effects varying by conversation) the pairs cluster bootstrap
below rejected true nulls up to twice too often (see the calibration checks).

The earlier default (`"cluster_bootstrap"`): `boot_stat` / `boot_table` draw the pairs
cluster bootstrap of such a statistic (`core.clusters.sum_by` then
`core.stats.bootstrap_sums`) and return its interval and, for a test, its p-value;
`effective_clusters` gives its rows the same effective-cluster columns.

Reference (`reference`, issue 20 wave 2): by default (`"t"`) the interval is
estimate ± t_{G−s, 1−α/2} · SE and the p-value 2 · P(T_{G−s} > |estimate − null| / SE), SE the
cluster-bootstrap standard deviation, G the number of units and s of strata: with 40–50
clusters the percentile interval of these near-normal statistics covered 0.92–0.93 (its
quantiles ignore that the SE itself is estimated from G clusters). The t interval is clipped
to the range of the replicates, so it never leaves the statistic's support (a rate near 0).
`"percentile"` is the legacy percentile interval with the bootstrap p-value of
`statistic == null` resolved by `core.inference.adaptive_p`.

Units (`units`): the `cluster` column when the table has one (the data layer copies it from
the items; queries or conversations with several rows are one unit), else the fallback
columns given (e.g. the query text, so the same query in two settings is one unit and the
comparison stays paired), else each row. `cluster=None` makes every row its own unit: the
legacy independent-rows bootstrap.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats as sps

from judgelab.core import clusters, estimates, inference, stats
from judgelab.errors import check_choice

#: Cluster-robust tests and intervals: the restricted wild cluster bootstrap (default) and
#: the pairs cluster bootstrap (the earlier default, `reference` t or percentile).
METHODS = ("wild", "cluster_bootstrap")
#: A statistic of per-unit column sums, vectorised over rows of sums.
Stat = Callable[[np.ndarray], np.ndarray]
#: Interval / p-value references: t_{G−s} with the bootstrap SE (default), or percentile.
REFERENCES = ("t", "percentile")


def t_reference(
    estimate: float, reps: np.ndarray, *, df: int, level: float, null: float | None
) -> dict[str, Any]:
    """Return `low, high, p_value` from the t_{df} reference with the bootstrap SE of `reps`.

    The interval is clipped to [min, max] of the finite replicates; the p-value (NaN without
    a `null`) is 2 · P(T_df > |estimate − null| / SE) — the test the interval inverts.
    """
    r = np.asarray(reps, dtype=np.float64)
    r = r[np.isfinite(r)]
    out: dict[str, Any] = {"low": np.nan, "high": np.nan, "p_value": np.nan}
    if r.size < 2 or not np.isfinite(estimate):
        return out
    se = float(np.std(r, ddof=1))
    q = float(sps.t.ppf(0.5 + level / 2, max(df, 1)))
    out["low"] = float(np.clip(estimate - q * se, r.min(), r.max()))
    out["high"] = float(np.clip(estimate + q * se, r.min(), r.max()))
    if null is not None:
        if se > 0:
            out["p_value"] = float(2 * sps.t.sf(abs(estimate - null) / se, max(df, 1)))
        else:
            out["p_value"] = 1.0 if estimate == null else 0.0
    return out


def units(
    frame: pd.DataFrame, cluster: str | None = "cluster", fallback: Sequence[str] = ()
) -> np.ndarray:
    """Return integer resampling units per row of `frame` (see the module docstring).

    Args:
        frame: The rows.
        cluster: The cluster column (None: every row its own unit, the legacy bootstrap).
        fallback: Columns whose first non-empty value names the unit when `cluster` is absent.
    """
    n = len(frame)
    if cluster is None:
        return np.arange(n)
    if cluster in frame.columns:
        return clusters.codes(frame, cluster)
    key = pd.Series([""] * n, index=frame.index, dtype=object)
    for col in fallback:
        if col in frame.columns:
            v = frame[col].fillna("").astype(str)
            key = key.where(key != "", np.where(v != "", col + "|" + v, ""))
    key = key.where(key != "", pd.Series([f"row|{i}" for i in range(n)], index=frame.index))
    return pd.factorize(key.astype(str), sort=True)[0]


def boot_stat(
    values: np.ndarray,
    unit: np.ndarray,
    stat: Stat,
    *,
    n_boot: int,
    rng: np.random.Generator,
    level: float = 0.95,
    null: float | None = None,
    max_boot: int = 40_000,
    reference: str = "t",
) -> dict[str, Any]:
    """Return a statistic of per-unit sums with its cluster-bootstrap interval and p-value.

    Args:
        values: Per-row columns (n × m); `stat` maps sums (k × m) to k statistics.
        unit: Resampling unit of each row (`units`).
        stat: The statistic of column sums (vectorised over rows of sums).
        n_boot: Resamples behind the interval (the p-value adds more when needed).
        rng: Random generator.
        level: Confidence level.
        null: The tested value (None: no test).
        max_boot: Most resamples the adaptive p-value may draw (`inference.adaptive_p`).
        reference: `t` (default) or `percentile` (legacy; see the module docstring).

    Returns:
        `estimate, low, high, p_value, p_bound, n_boot_p` (NaN / False / 0 without a test).
    """
    check_choice("reference", reference, REFERENCES)
    values = np.asarray(values, dtype=np.float64)
    if values.ndim == 1:
        values = values[:, None]
    out: dict[str, Any] = {
        "estimate": np.nan,
        "low": np.nan,
        "high": np.nan,
        "p_value": np.nan,
        "p_bound": False,
        "n_boot_p": 0,
    }
    if len(values) == 0:
        return out
    per = clusters.sum_by(values, np.asarray(unit))
    with np.errstate(divide="ignore", invalid="ignore"):
        out["estimate"] = float(stat(per.sum(axis=0)[None, :])[0])

        def draw(k: int) -> np.ndarray:
            return stat(stats.bootstrap_sums(per, n_boot=k, rng=rng))

        reps = draw(n_boot)
    if reference == "t":
        t = t_reference(out["estimate"], reps, df=len(per) - 1, level=level, null=null)
        out.update(t, n_boot_p=n_boot if null is not None else 0)
        return out
    low, high = stats.percentile_interval(reps, level=level)
    out["low"], out["high"] = float(low), float(high)
    if null is not None and np.isfinite(out["estimate"]):
        pv = inference.adaptive_p(
            draw, null=null, first=reps, n_boot=n_boot, max_boot=max(n_boot, max_boot)
        )
        out.update(p_value=pv.p, p_bound=bool(pv.bound), n_boot_p=int(pv.n_boot))
    return out


def ratio(num: int, den: int, scale: float = 1.0) -> Stat:
    """Return the statistic scale · sums[num] / sums[den] (NaN where the denominator is 0)."""

    def f(s: np.ndarray) -> np.ndarray:
        return scale * stats.ratio_replicates(s[:, num], s[:, den])

    return f


def ratio_difference(a: tuple[int, int], b: tuple[int, int], scale: float = 1.0) -> Stat:
    """Return the statistic scale · (sums[a0]/sums[a1] − sums[b0]/sums[b1])."""

    def f(s: np.ndarray) -> np.ndarray:
        ra = stats.ratio_replicates(s[:, a[0]], s[:, a[1]])
        rb = stats.ratio_replicates(s[:, b[0]], s[:, b[1]])
        return scale * (ra - rb)

    return f


def margin(c1: int, c2: int, den: int, scale: float = 1.0) -> Stat:
    """Return the statistic scale · (sums[c1] − sums[c2]) / sums[den]."""

    def f(s: np.ndarray) -> np.ndarray:
        return scale * stats.ratio_replicates(s[:, c1] - s[:, c2], s[:, den])

    return f


def strata_sums(
    per: np.ndarray, strata: np.ndarray | None, *, n_boot: int, rng: np.random.Generator
) -> np.ndarray:
    """Return bootstrap column sums of per-unit rows, resampling within each stratum."""
    if strata is None:
        return stats.bootstrap_sums(per, n_boot=n_boot, rng=rng)
    out = np.zeros((n_boot, per.shape[1]))
    for s in np.unique(strata):
        out += stats.bootstrap_sums(per[strata == s], n_boot=n_boot, rng=rng)
    return out


def boot_table(
    values: np.ndarray,
    unit: np.ndarray,
    statistics: dict[str, tuple[Stat, float | None]],
    *,
    n_boot: int,
    rng: np.random.Generator,
    level: float = 0.95,
    strata: np.ndarray | None = None,
    max_boot: int = 40_000,
    reference: str = "t",
) -> dict[str, dict[str, Any]]:
    """Return `boot_stat`'s fields for several statistics of the same resamples.

    Args:
        values: Per-row columns (n × m).
        unit: Resampling unit per row.
        statistics: name -> (statistic of sums, tested null or None).
        n_boot: Resamples behind the intervals (p-values add more as needed).
        rng: Random generator.
        level: Confidence level.
        strata: Optional stratum per *unit* (units resampled within their stratum).
        max_boot: Most resamples an adaptive p-value may draw.
        reference: `t` (default: t_{G−s} with G units and s strata) or `percentile`.
    """
    check_choice("reference", reference, REFERENCES)
    values = np.asarray(values, dtype=np.float64)
    per = clusters.sum_by(values, np.asarray(unit))
    df = len(per) - (len(np.unique(strata)) if strata is not None else 1)
    total = per.sum(axis=0)[None, :]
    first = strata_sums(per, strata, n_boot=n_boot, rng=rng)
    out = {}
    for name, (stat, null) in statistics.items():
        with np.errstate(divide="ignore", invalid="ignore"):
            est = float(stat(total)[0])
            reps = stat(first)
        row = {"estimate": est, "low": np.nan, "high": np.nan}
        row["boot_mean"] = float(np.nanmean(reps)) if np.isfinite(reps).any() else np.nan
        row.update(p_value=np.nan, p_bound=False, n_boot_p=0)
        if reference == "t":
            row.update(t_reference(est, reps, df=df, level=level, null=null))
            row["n_boot_p"] = n_boot if null is not None else 0
            out[name] = row
            continue
        low, high = stats.percentile_interval(reps, level=level)
        row.update(low=float(low), high=float(high))
        if null is not None and np.isfinite(est):

            def draw(k: int, stat: Stat = stat) -> np.ndarray:
                with np.errstate(divide="ignore", invalid="ignore"):
                    return stat(strata_sums(per, strata, n_boot=k, rng=rng))

            pv = inference.adaptive_p(
                draw, null=null, first=reps, n_boot=n_boot, max_boot=max(n_boot, max_boot)
            )
            row.update(p_value=pv.p, p_bound=bool(pv.bound), n_boot_p=int(pv.n_boot))
        out[name] = row
    return out


def setting_strata(unit: np.ndarray, setting: pd.Series) -> np.ndarray:
    """Return per unit the code of the set of settings its rows are in (its stratum)."""
    pattern = pd.Series(setting.to_numpy()).groupby(unit).agg(lambda x: "|".join(sorted(set(x))))
    return pd.factorize(pattern.sort_index())[0]


def wild_estimate(
    num: np.ndarray,
    den: np.ndarray,
    unit: np.ndarray,
    *,
    group: np.ndarray | None = None,
    weights: Sequence[float] = (1.0,),
    null: float = float("nan"),
    scale: float = 1.0,
    bounds: tuple[float, float] | None = None,
    level: float = 0.95,
    n_boot: int = 1999,
    rng: np.random.Generator,
) -> estimates.Estimate:
    """Return Σ_j weights_j · (Σ num / Σ den over group j) · `scale` (`estimates.contrast`).

    The value, interval and null are on the `scale` (100: percent or points); `bounds` and
    `null` are given on the scale too. Rows with den 0 carry nothing.
    """
    num = np.asarray(num, dtype=np.float64)
    group = np.zeros(len(num), dtype=np.int64) if group is None else np.asarray(group)
    est = estimates.contrast(
        num,
        den,
        group,
        unit,
        weights,
        null=null / scale,
        level=level,
        n_boot=n_boot,
        rng=rng,
        bounds=None if bounds is None else (bounds[0] / scale, bounds[1] / scale),
    )
    return est._replace(
        value=est.value * scale,
        ci_low=est.ci_low * scale,
        ci_high=est.ci_high * scale,
        null=est.null * scale,
    )


_B = re.compile(r"B=(\d+)")


def wild_fields(est: estimates.Estimate) -> dict[str, Any]:
    """Return an `Estimate` as this family's statistic fields (those of `boot_table` + more).

    `estimate, low, high, p_value, p_bound` (True when p is 0: below the bootstrap's
    resolution 1/B), `n_boot_p` (the replicates B behind it), `n, n_clusters,
    n_eff_clusters, few_clusters, method`.
    """
    b = _B.search(est.method)
    return {
        "estimate": est.value,
        "low": est.ci_low,
        "high": est.ci_high,
        "p_value": est.p_value,
        "p_bound": bool(est.p_value == 0.0),
        "n_boot_p": int(b.group(1)) if b and np.isfinite(est.p_value) else 0,
        "n": est.n,
        "n_clusters": est.n_clusters,
        "n_eff_clusters": est.n_eff_clusters,
        "few_clusters": est.few_clusters,
        "method": est.method,
    }


def effective_clusters(
    num: np.ndarray,
    den: np.ndarray,
    unit: np.ndarray,
    *,
    group: np.ndarray | None = None,
    weights: Sequence[float] = (1.0,),
) -> dict[str, Any]:
    """Return `n, n_clusters, n_eff_clusters, few_clusters` of a contrast of ratios.

    For the rows of the earlier methods: `core.clusters.effective` with each row's weight in
    the contrast (weight_j · den / Σ den of its group) and the ICC of the residuals.
    """
    num = np.asarray(num, dtype=np.float64)
    den = np.asarray(den, dtype=np.float64)
    group = np.zeros(len(num), dtype=np.int64) if group is None else np.asarray(group)
    keep = den > 0
    num, den, group = num[keep], den[keep], group[keep]
    unit = np.unique(np.asarray(unit)[keep], return_inverse=True)[1]
    w = np.asarray(weights, dtype=np.float64)
    tot_den = np.bincount(group, weights=den, minlength=len(w))
    tot_num = np.bincount(group, weights=num, minlength=len(w))
    if len(num) == 0 or np.any(tot_den[w != 0] <= 0):
        return {
            "n": float(den.sum()),
            "n_clusters": 0,
            "n_eff_clusters": np.nan,
            "few_clusters": True,
        }
    r = tot_num / np.where(tot_den > 0, tot_den, 1.0)
    influence = w[group] * den / tot_den[group]
    g_eff = clusters.effective(influence, unit, resid=num - r[group] * den)
    return {
        "n": float(den.sum()),
        "n_clusters": int(unit.max()) + 1,
        "n_eff_clusters": g_eff,
        "few_clusters": bool(g_eff < clusters.FEW_EFFECTIVE),
    }
