"""WEIRD gaps with their tests, multiplicity control and missing-rating sensitivity (§2.7).

For each mapped attribute (and each rater) the gap is the mean over (query, rater) of
mean(rating of the WEIRD values) − mean(rating of the other values) on the same response.
Rows of one query (its raters; its other attributes) share the response, and queries of one
cluster (a source, a topic: the `cluster` column when the ratings carry one, else the query)
hang together, so they are not independent: the default test is the restricted wild cluster
bootstrap over clusters with the interval that inverts it (`resampling.wild_estimate`), each
row with its effective clusters and `few_clusters`; `test="cluster_bootstrap"` is the
earlier default (pairs cluster bootstrap, `reference`). The sign and Wilcoxon tests (which
assume independent gaps) stay as columns and as the `test="sign"` / `"wilcoxon"` legacy
choices (intervals then as `cluster_bootstrap`).

Every test shown in one table is one family: the per-attribute tests (raters pooled) and the
per-rater tests shown with them are adjusted together, Holm by default (family-wise error),
BH as an option (false discovery rate); `p_value` (raw) and `p_adj` sit side by side and
`adjust` / `family_size` state the correction.

Missing ratings (unparsed outputs) are dropped. Where the share of missing ratings differs
between the WEIRD and the other values of an attribute, a sensitivity row (`missing` =
"as_error") counts each missing rating as the lowest rating (1), in its own family.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats as sps

from judgelab.analyses.contexteval.resampling import (
    boot_stat,
    effective_clusters,
    ratio,
    units,
    wild_estimate,
    wild_fields,
)
from judgelab.analyses.contexteval.weird import WEIRD_MAP, group_values
from judgelab.core import estimates, inference, stats
from judgelab.core.schema import require_columns as _require
from judgelab.errors import check_choice

GAP_TESTS = ("wild", "cluster_bootstrap", "sign", "wilcoxon")
#: The bounds of a gap on the 1–5 scale.
GAP_BOUNDS = (-4.0, 4.0)
#: Rating given to a missing rating by the "as_error" sensitivity rows (the scale's lowest).
ERROR_RATING = 1.0


def _per_query_gaps(g: pd.DataFrame) -> pd.DataFrame:
    """Return per (query, rater) the WEIRD and other means, the gap and the unit.

    Counted with integer codes (`np.bincount`), not a pandas group-by: this runs per
    attribute in every calibration replicate.
    """
    keys = ["query_id", "rater"]
    q, qs = pd.factorize(g["query_id"])
    r, rs = pd.factorize(g["rater"])
    size = len(qs) * len(rs)
    key = q * len(rs) + r
    x = g["rating"].to_numpy(dtype=float)
    weird = (g["group"] == "WEIRD").to_numpy()

    def add(w: np.ndarray) -> np.ndarray:
        return np.bincount(key, weights=w, minlength=size)

    n_w, n_o = add(weird.astype(float)), add((~weird).astype(float))
    s_w, s_o = add(np.where(weird, x, 0.0)), add(np.where(weird, 0.0, x))
    idx = np.flatnonzero((n_w > 0) & (n_o > 0))
    per = pd.DataFrame(
        {
            "query_id": np.asarray(qs, dtype=object)[idx // len(rs)],
            "rater": np.asarray(rs, dtype=object)[idx % len(rs)],
            "WEIRD": s_w[idx] / n_w[idx],
            "non-WEIRD": s_o[idx] / n_o[idx],
        },
        columns=[*keys, "WEIRD", "non-WEIRD"],
    )
    per["d"] = per["WEIRD"] - per["non-WEIRD"]
    if "cluster" in g.columns:
        first = np.empty(size, dtype=object)
        first[key[::-1]] = g["cluster"].to_numpy(dtype=object)[::-1]  # first row's unit
        per["cluster"] = first[idx]
    return per


def _unit_codes(per: pd.DataFrame, cluster: str | None) -> np.ndarray:
    """`units(per, cluster, ("query_id",))`, factorizing a complete cluster column directly.

    (`core.clusters.codes` casts every value to text, the bulk of a calibration replicate.)
    """
    if cluster is not None and cluster in per.columns:
        col = per[cluster]
        codes = pd.factorize(col, sort=True)[0]
        if (codes >= 0).all() and not (col.astype(str) == "").any():
            return codes
    return units(per, cluster, ("query_id",))


def _gap_row(
    per: pd.DataFrame, *, test: str, cluster: str | None, boot: dict[str, Any], key: tuple
) -> dict[str, Any]:
    """Return a gap's estimate, interval, the chosen test's p and the legacy tests' p."""
    d = per["d"].to_numpy(dtype=float)
    unit = _unit_codes(per, cluster)
    ones = np.ones_like(d)
    if test == "wild":
        rng = estimates.seeded(boot["seed"], "weird_gap", *key)
        e = wild_estimate(
            d,
            ones,
            unit,
            null=0.0,
            bounds=GAP_BOUNDS,
            level=boot["level"],
            n_boot=boot["n_boot"],
            rng=rng,
        )
        b = wild_fields(e)
    else:
        opts = {k: v for k, v in boot.items() if k != "seed"}
        b = boot_stat(np.column_stack([d, ones]), unit, ratio(0, 1), null=0.0, **opts)
        b.update(effective_clusters(d, ones, unit))
        b["method"] = f"pairs cluster bootstrap ({boot['reference']}, B={boot['n_boot']})"
    nz = d[d != 0]
    wil = float(sps.wilcoxon(nz).pvalue) if len(nz) > 0 else np.nan
    sign = stats.sign_test(int((d > 0).sum()), int((d != 0).sum())).p_value
    p = {"sign": sign, "wilcoxon": wil}.get(test, b["p_value"])
    by_boot = test in ("wild", "cluster_bootstrap")
    return {
        "n_queries": int(per["query_id"].nunique()),
        "n_gaps": len(d),
        "n_units": int(unit.max()) + 1 if len(unit) else 0,
        "mean_weird": float(per["WEIRD"].mean()),
        "mean_other": float(per["non-WEIRD"].mean()),
        "gap": b["estimate"],
        "ci_low": b["low"],
        "ci_high": b["high"],
        "share_weird_higher": float(np.mean(d > 0)) if len(d) else np.nan,
        "test": f"{_TEST_NAMES[test]} ({cluster})" if by_boot else test,
        "p_value": p,
        "p_bound": bool(b["p_bound"]) if by_boot else False,
        "n_boot_p": int(b["n_boot_p"]) if by_boot else 0,
        "n": len(d),
        "n_clusters": b["n_clusters"],
        "n_eff_clusters": b["n_eff_clusters"],
        "few_clusters": b["few_clusters"],
        "method": b["method"],
        "wilcoxon_p": wil,
        "sign_p": sign,
    }


_TEST_NAMES = {"wild": "wild cluster bootstrap", "cluster_bootstrap": "cluster_bootstrap"}


def _differs(g: pd.DataFrame) -> bool:
    """True when the share of missing ratings differs between WEIRD and other values."""
    share = g["rating"].isna().groupby(g["group"]).mean()
    return len(share) == 2 and not np.isclose(share.iloc[0], share.iloc[1])


def _attribute_rows(
    g: pd.DataFrame, attr: str, *, per_rater: bool, opts: dict[str, Any], tag: str
) -> list[dict[str, Any]]:
    """Return the pooled row of one attribute, then one row per rater (several raters)."""
    per = _per_query_gaps(g[g["rating"].notna()])
    if per.empty:
        return []
    blocks = [("all", per)]
    if per_rater and per["rater"].nunique() > 1:
        blocks += [(str(r), x) for r, x in per.groupby("rater", sort=True)]
    return [
        {"attribute": attr, "rater": r, **_gap_row(x, key=(attr, r, tag), **opts)}
        for r, x in blocks
    ]


def weird_gap(
    ratings: pd.DataFrame,
    *,
    weird_map: Mapping[str, Sequence[str]] = WEIRD_MAP,
    kind: str = "default",
    test: str = "wild",
    adjust: str = "holm",
    per_rater: bool = True,
    missing_as_error: bool = True,
    cluster: str | None = "cluster",
    n_boot: int = 1999,
    p_max_boot: int = 40_000,
    seed: int = 0,
    level: float = 0.95,
    reference: str = "t",
) -> pd.DataFrame:
    """Return the WEIRD gap per mapped attribute (and rater) with adjusted tests ([X] §2.7).

    Args:
        ratings: The output of `ratings_table`.
        weird_map: Attribute -> the values counted as WEIRD-aligned.
        kind: Which ratings (`default`, §2.7).
        test: The test behind `p_value`: `wild` (default: restricted wild cluster
            bootstrap, the interval inverts it), `cluster_bootstrap` (the earlier default),
            or the legacy independence-assuming `sign` (exact sign test) or `wilcoxon`.
        adjust: Multiplicity correction over the rows shown: `holm` (default), `bh`, `none`.
        per_rater: Also show (and adjust together with) one row per rater when several rated.
        missing_as_error: Add "as_error" sensitivity rows where missingness differs.
        cluster: The unit column (absent: `query_id`); None: every (query, rater) gap
            independent (the legacy interval).
        n_boot: Bootstrap replicates (wild: B; pairs: resamples, p-values add more).
        p_max_boot: Most pairs-bootstrap resamples behind a p-value (beyond: a bound).
        seed: Bootstrap seed (each estimate's generator is keyed by it and the row).
        level: Confidence level.
        reference: Pairs-bootstrap interval and p-value from `t` (t_{G−1} with the
            bootstrap SE) or `percentile` (legacy; `resampling` module docstring).

    Returns:
        `attribute, rater` ("all": raters pooled), `missing` ("dropped" / "as_error"),
        `weird_values, n_queries, n_gaps, n_units, mean_weird, mean_other, gap, ci_low,
        ci_high, share_weird_higher, test, p_value` (raw), `p_bound, n_boot_p, n` (gaps),
        `n_clusters, n_eff_clusters, few_clusters, method, p_adj, adjust, family_size,
        wilcoxon_p, sign_p`.
    """
    _require(ratings, ["kind", "attribute", "query_id", "rater", "value", "rating"], "ratings")
    check_choice("test", test, GAP_TESTS)
    check_choice("adjust", adjust, tuple(inference.ADJUSTMENTS))
    g = group_values(ratings[ratings["kind"] == kind], weird_map=weird_map)
    g = g[g["group"] != ""]
    rows = []
    for attr in weird_map:
        a = g[g["attribute"] == attr]
        if a.empty:
            continue
        boot = {"n_boot": n_boot, "rng": stats.rng_for(seed, "weird_gap", attr), "level": level}
        boot.update(max_boot=p_max_boot, reference=reference, seed=seed)
        opts = {"test": test, "cluster": cluster, "boot": boot}
        extra = {"weird_values": ", ".join(weird_map[attr])}
        for r in _attribute_rows(a, attr, per_rater=per_rater, opts=opts, tag="dropped"):
            rows.append({**r, **extra, "missing": "dropped"})
        if missing_as_error and _differs(a):
            filled = a.assign(rating=a["rating"].fillna(ERROR_RATING))
            for r in _attribute_rows(filled, attr, per_rater=per_rater, opts=opts, tag="error"):
                rows.append({**r, **extra, "missing": "as_error"})
    return _adjusted(pd.DataFrame(rows), adjust)


def adjust_p(p_values: np.ndarray, method: str = "holm") -> np.ndarray:
    """Return Holm / BH / unadjusted p-values, NaNs outside the family (`inference.adjust`).

    The same numbers as `core.inference.adjust` without statsmodels' per-call garbage
    collection (which dominates a calibration replicate).

    >>> adjust_p(np.array([0.01, 0.04, np.nan])).round(3).tolist()
    [0.02, 0.04, nan]
    """
    check_choice("adjust", method, tuple(inference.ADJUSTMENTS))
    p = np.asarray(p_values, dtype=np.float64)
    out = p.copy()
    ok = np.flatnonzero(~np.isnan(p))
    if method == "none" or ok.size == 0:
        return out
    x = p[ok]
    m = x.size
    order = np.argsort(x, kind="stable")
    ranked = x[order]
    if method == "holm":
        adj = np.minimum(1.0, np.maximum.accumulate((m - np.arange(m)) * ranked))
    else:
        adj = np.minimum(
            1.0, np.minimum.accumulate((ranked * m / np.arange(1, m + 1))[::-1])[::-1]
        )
    res = np.empty(m)
    res[order] = adj
    out[ok] = res
    return out


def _adjusted(out: pd.DataFrame, adjust: str) -> pd.DataFrame:
    """Return the rows with `p_adj` adjusted within each `missing` family, stated per row."""
    if out.empty:
        return out
    out["p_adj"] = np.nan
    out["family_size"] = 0
    for _, idx in out.groupby("missing", sort=False).groups.items():
        p = out.loc[idx, "p_value"].to_numpy(dtype=float)
        out.loc[idx, "p_adj"] = adjust_p(p, adjust)
        out.loc[idx, "family_size"] = int(np.sum(~np.isnan(p)))
    out["adjust"] = adjust
    first = ["attribute", "rater", "missing", "weird_values"]
    return out[first + [c for c in out.columns if c not in first]].reset_index(drop=True)
