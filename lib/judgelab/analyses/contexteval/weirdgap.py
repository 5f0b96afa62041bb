"""WEIRD gaps with their tests, multiplicity control and missing-rating sensitivity (§2.7).

For each mapped attribute (and each rater) the gap is the mean over (query, rater) of
mean(rating of the WEIRD values) − mean(rating of the other values) on the same response.
Rows of one query (its raters; its other attributes) share the response, so they are not
independent: the interval and the default test are a *cluster bootstrap* over queries (the
`cluster` column when the ratings carry one, else `query_id`). The sign and Wilcoxon tests
(which assume independent gaps) stay as columns and as the `test="sign"` legacy choice.

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

from judgelab.analyses.contexteval.resampling import boot_stat, ratio, units
from judgelab.analyses.contexteval.weird import WEIRD_MAP, group_values
from judgelab.core import inference, stats
from judgelab.core.schema import require_columns as _require
from judgelab.errors import check_choice

GAP_TESTS = ("cluster_bootstrap", "sign", "wilcoxon")
#: Rating given to a missing rating by the "as_error" sensitivity rows (the scale's lowest).
ERROR_RATING = 1.0


def _per_query_gaps(g: pd.DataFrame) -> pd.DataFrame:
    """Return per (query, rater) the WEIRD and other means, the gap and the unit."""
    keys = ["query_id", "rater"]
    per = g.groupby([*keys, "group"])["rating"].mean().unstack("group")
    if "WEIRD" not in per or "non-WEIRD" not in per:
        return pd.DataFrame(columns=[*keys, "WEIRD", "non-WEIRD", "d", "cluster"])
    per = per.dropna(subset=["WEIRD", "non-WEIRD"]).reset_index()
    per["d"] = per["WEIRD"] - per["non-WEIRD"]
    if "cluster" in g.columns:
        unit = g.groupby(keys)["cluster"].first()
        per["cluster"] = unit.reindex(pd.MultiIndex.from_frame(per[keys])).to_numpy()
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
    per: pd.DataFrame, *, test: str, cluster: str | None, boot: dict[str, Any]
) -> dict[str, Any]:
    """Return a gap's estimate, interval, the chosen test's p and the legacy tests' p."""
    d = per["d"].to_numpy(dtype=float)
    unit = _unit_codes(per, cluster)
    values = np.column_stack([d, np.ones_like(d)])
    b = boot_stat(values, unit, ratio(0, 1), null=0.0, **boot)
    nz = d[d != 0]
    wil = float(sps.wilcoxon(nz).pvalue) if len(nz) > 0 else np.nan
    sign = stats.sign_test(int((d > 0).sum()), int((d != 0).sum())).p_value
    p = {"cluster_bootstrap": b["p_value"], "sign": sign, "wilcoxon": wil}[test]
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
        "test": test if test != "cluster_bootstrap" else f"cluster_bootstrap ({cluster})",
        "p_value": p,
        "p_bound": bool(b["p_bound"]) if test == "cluster_bootstrap" else False,
        "n_boot_p": int(b["n_boot_p"]) if test == "cluster_bootstrap" else 0,
        "wilcoxon_p": wil,
        "sign_p": sign,
    }


def _differs(g: pd.DataFrame) -> bool:
    """True when the share of missing ratings differs between WEIRD and other values."""
    share = g["rating"].isna().groupby(g["group"]).mean()
    return len(share) == 2 and not np.isclose(share.iloc[0], share.iloc[1])


def _attribute_rows(
    g: pd.DataFrame, attr: str, *, per_rater: bool, opts: dict[str, Any]
) -> list[dict[str, Any]]:
    """Return the pooled row of one attribute, then one row per rater (several raters)."""
    per = _per_query_gaps(g[g["rating"].notna()])
    if per.empty:
        return []
    blocks = [("all", per)]
    if per_rater and per["rater"].nunique() > 1:
        blocks += [(str(r), x) for r, x in per.groupby("rater", sort=True)]
    return [{"attribute": attr, "rater": r, **_gap_row(x, **opts)} for r, x in blocks]


def weird_gap(
    ratings: pd.DataFrame,
    *,
    weird_map: Mapping[str, Sequence[str]] = WEIRD_MAP,
    kind: str = "default",
    test: str = "cluster_bootstrap",
    adjust: str = "holm",
    per_rater: bool = True,
    missing_as_error: bool = True,
    cluster: str | None = "cluster",
    n_boot: int = 1000,
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
        test: The test behind `p_value`: `cluster_bootstrap` (default), or the legacy
            independence-assuming `sign` (exact sign test) or `wilcoxon` (signed rank).
        adjust: Multiplicity correction over the rows shown: `holm` (default), `bh`, `none`.
        per_rater: Also show (and adjust together with) one row per rater when several rated.
        missing_as_error: Add "as_error" sensitivity rows where missingness differs.
        cluster: The unit column (absent: `query_id`); None: every (query, rater) gap
            independent (the legacy interval).
        n_boot: Bootstrap resamples of the interval (the p-value adds more as needed).
        p_max_boot: Most resamples behind a p-value (beyond: reported as a bound).
        seed: Bootstrap seed.
        level: Confidence level.
        reference: Cluster-bootstrap interval and p-value from `t` (t_{G−1} with the
            bootstrap SE, default) or `percentile` (legacy; `resampling` module docstring).

    Returns:
        `attribute, rater` ("all": raters pooled), `missing` ("dropped" / "as_error"),
        `weird_values, n_queries, n_gaps, n_units, mean_weird, mean_other, gap, ci_low,
        ci_high, share_weird_higher, test, p_value` (raw), `p_bound, n_boot_p, p_adj,
        adjust, family_size, wilcoxon_p, sign_p`.
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
        boot.update(max_boot=p_max_boot, reference=reference)
        opts = {"test": test, "cluster": cluster, "boot": boot}
        extra = {"weird_values": ", ".join(weird_map[attr])}
        for r in _attribute_rows(a, attr, per_rater=per_rater, opts=opts):
            rows.append({**r, **extra, "missing": "dropped"})
        if missing_as_error and _differs(a):
            filled = a.assign(rating=a["rating"].fillna(ERROR_RATING))
            for r in _attribute_rows(filled, attr, per_rater=per_rater, opts=opts):
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
