"""What a pilot table says about a study's variance: rates, ICC, order and repeat correlation.

Each function takes the user's own judgments (with `cluster` attached, as loaders do) and
returns the inputs the planner's formulas need, each with the n it rests on. Position bias
(`position`, `moments`) decomposes the residual cross products of its decisive verdicts:
within an item (the orders), between items of a cluster (the ICC), and the decisive share.
For rates the ICC is the one-way ANOVA estimator (Donner 1986), clipped at 0,

    ICC = (MSB − MSW) / (MSB + (m₀ − 1)·MSW),  m₀ = (N − Σ n_g² / N) / (G − 1),

computed on the items' mean outcomes grouped by cluster, then put on the scale of one
judgment (what `sizes.design_effect` takes): ICC₁ = ICC_item · Var(item mean) / Var(judgment),
since the between-item covariance is the same on both scales.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from judgelab.core import clusters, estimates, wild
from judgelab.core.schema import require_columns

_ITEM = ["benchmark", "split", "item_id"]


def anova_icc(values: np.ndarray, groups: np.ndarray) -> float:
    """Return the one-way ANOVA intra-class correlation of `values` grouped by `groups`.

    NaN when there are fewer than two groups or no group has two values.

    >>> round(anova_icc(np.array([1., 1, 0, 0, 1, 0]), np.array([0, 0, 1, 1, 2, 2])), 3)
    0.5
    """
    df = pd.DataFrame({"y": np.asarray(values, float), "g": np.asarray(groups)}).dropna()
    g = df.groupby("g")["y"]
    sizes, means = g.size().to_numpy(float), g.mean().to_numpy()
    n, k = sizes.sum(), len(sizes)
    if k < 2 or n <= k:
        return float("nan")
    grand = df["y"].mean()
    msb = float((sizes * (means - grand) ** 2).sum() / (k - 1))
    msw = float(((df["y"] - g.transform("mean")) ** 2).sum() / (n - k))
    m0 = (n - (sizes**2).sum() / n) / (k - 1)
    denom = msb + (m0 - 1) * msw
    return float(max(0.0, (msb - msw) / denom)) if denom > 0 else 0.0


def _icc_one(per_item: pd.DataFrame, y: pd.Series) -> float:
    """ICC of items' mean outcome `per_item.y` by `per_item.unit`, on one judgment's scale."""
    icc = anova_icc(per_item["y"].to_numpy(), per_item["unit"].to_numpy())
    var1 = float(y.var())
    if np.isnan(icc) or not var1 > 0:
        return icc
    return float(min(1.0, icc * float(per_item["y"].var()) / var1))


def _clusters(df: pd.DataFrame) -> pd.Series:
    if "cluster" in df.columns:
        return df["cluster"].astype(object).where(df["cluster"].notna(), df["item_id"])
    return df["item_id"].astype(object)


def cluster_shape(items: pd.DataFrame) -> dict[str, float]:
    """Return n_items, n_clusters and the mean cluster size of an items (or per-item) table."""
    cl = _clusters(items)
    n, g = len(items), int(cl.nunique())
    return {"n_items": n, "n_clusters": g, "cluster_size": n / g if g else float("nan")}


def position_counts(judgments: pd.DataFrame) -> pd.DataFrame:
    """Return one row per judged (item, order): what a position test and a replay need.

    Columns: `unit` (cluster code), `item` (item code), `order`, `a` (decisive verdicts that
    picked the response shown as A: `chosen == pos` in order 0, `neg` in order 1), `d`
    (decisive verdicts: valid, pos or neg) and `judged` (every verdict asked for, invalid
    outputs and ties included). Rows are ordered by unit, item, order. When the table holds
    several judges, an "item" is a (judge, item) pair, still in its item's cluster: the
    units a plan then counts.
    """
    require_columns(judgments, ["order", "chosen", "valid", *_ITEM], "position pilot")
    j = judgments
    chosen = j["chosen"].astype("string").fillna("").to_numpy(dtype=object)
    order = j["order"].to_numpy()
    valid = j["valid"].astype("boolean").fillna(False).to_numpy(dtype=bool)
    decisive = valid & ((chosen == "pos") | (chosen == "neg"))
    picked_a = decisive & (((order == 0) & (chosen == "pos")) | ((order == 1) & (chosen == "neg")))
    key = np.zeros(len(j), dtype=np.int64)
    several = "judge" in j.columns and j["judge"].nunique() > 1
    for col in (["judge"] if several else []) + _ITEM:  # one integer per (judge,) item
        codes, uniq = pd.factorize(j[col].to_numpy(), sort=False)
        key = key * (len(uniq) + 1) + codes
    item = np.unique(key, return_inverse=True)[1].ravel()
    unit_of = pd.factorize(_clusters(j).astype(str).to_numpy(), sort=True)[0]
    orders, ocode = np.unique(order, return_inverse=True)
    cell, first, inv = np.unique(
        item * len(orders) + ocode.ravel(), return_index=True, return_inverse=True
    )
    inv = inv.ravel()
    out = pd.DataFrame(
        {
            "unit": unit_of[first],
            "item": item[first],
            "order": order[first],
            "a": np.bincount(inv, weights=picked_a.astype(float), minlength=len(cell)),
            "d": np.bincount(inv, weights=decisive.astype(float), minlength=len(cell)),
            "judged": np.bincount(inv, minlength=len(cell)).astype(float),
        }
    )
    return out.sort_values(["unit", "item", "order"], kind="stable", ignore_index=True)


def position_test(
    judgments: pd.DataFrame,
    *,
    level: float = 0.95,
    n_boot: int = wild.N_BOOT,
    seed: int = 0,
) -> estimates.Estimate:
    """Return the test a position-bias study runs: P(A | decisive) = ½, clustered.

    `core.estimates.ratio` of the per-item A counts over the decisive counts
    (`position_counts`), the clusters the units: the restricted wild cluster bootstrap test
    and the interval that inverts it, with the effective clusters behind them.
    """
    counts = position_counts(judgments)
    item = counts["item"].to_numpy()
    n_items = int(item.max()) + 1 if len(item) else 0
    unit = np.zeros(n_items, dtype=np.int64)
    unit[item] = counts["unit"].to_numpy()
    a = np.bincount(item, weights=counts["a"].to_numpy(), minlength=n_items)
    d = np.bincount(item, weights=counts["d"].to_numpy(), minlength=n_items)
    rng = estimates.seeded(seed, "design.position_test")
    return estimates.ratio(a, d, unit, null=0.5, level=level, n_boot=n_boot, rng=rng)


class Moments(NamedTuple):
    """Residual cross-product sums of "picked A" among decisive verdicts (see `moments`)."""

    p_a: float
    sigma2: float  # Σ e² / D: one decisive verdict's variance around p_a
    order_corr: float  # within-item pairs (the other order, repeats)
    icc: float  # pairs of different items of one cluster (leverage-corrected)
    deff: float  # the pilot's own design effect: Σ_g E_g² / (1 − h_g) / (σ² D)
    n_eff_clusters: float  # effective clusters behind the pilot's P(A) (`core.clusters`)
    decisive: float  # D
    judged: float
    n_items: int
    n_clusters: int
    cluster_size: float  # items per cluster
    size_cv: float  # coefficient of variation of items per cluster


def moments(counts: pd.DataFrame) -> Moments:
    """Return the pilot's variance components from `position_counts` rows.

    With e = (picked A) − p̂ for every decisive verdict and E the sums of e over an item
    (E_i) or a cluster (E_g): σ² = Σ e² / D; the within-item correlation
    Σ_i (E_i² − Σ e²) / (σ² Σ_i d_i(d_i − 1)); the between-item correlation within clusters
    (Σ_g E_g² / (1 − h_g) − Σ_i E_i²) / (σ² (Σ_g D_g² − Σ_i d_i²)), h_g = D_g / D the
    cluster's leverage: dividing by 1 − h_g undoes the shrinkage of a cluster's residuals
    around the p̂ it helped estimate (as CR2 does; G/(G − 1) for equal clusters), which
    matters when one cluster holds half the verdicts. They reproduce the pilot's own design
    effect and extrapolate it to other cluster sizes (`sizes.position_bias`).
    """
    a, d = counts["a"].to_numpy(float), counts["d"].to_numpy(float)
    unit, item = counts["unit"].to_numpy(), counts["item"].to_numpy()
    D = float(d.sum())
    nan = float("nan")
    n_items = int(np.unique(item).size)
    per_unit = np.bincount(np.unique(np.column_stack([unit, item]), axis=0)[:, 0])
    per_unit = per_unit[per_unit > 0].astype(float)
    G = len(per_unit)
    m = float(per_unit.mean()) if G else nan
    cv = float(per_unit.std() / m) if G else nan
    if D == 0:
        return Moments(nan, nan, nan, nan, nan, nan, 0.0, float(counts["judged"].sum()),
                       n_items, G, m, cv)  # fmt: skip
    p = float(a.sum() / D)
    s1 = float(np.sum(a * (1 - p) ** 2 + (d - a) * p**2))
    sigma2 = s1 / D
    e_row = a - p * d
    e_item = np.bincount(item, weights=e_row)
    d_item = np.bincount(item, weights=d)
    e_unit = np.bincount(unit, weights=e_row)
    d_unit = np.bincount(unit, weights=d)
    pairs_item = float(np.sum(d_item * (d_item - 1)))
    s_item = float(np.sum(e_item**2)) - s1
    order_corr = s_item / (sigma2 * pairs_item) if pairs_item > 0 and sigma2 > 0 else nan
    lev = d_unit / D
    ok = (d_unit > 0) & (lev < 1)
    s_tot = float(np.sum(e_unit[ok] ** 2 / (1 - lev[ok]))) if G > 1 else nan
    pairs_clu = float(np.sum(d_unit**2) - np.sum(d_item**2))
    s_clu = s_tot - float(np.sum(e_item**2))
    icc = s_clu / (sigma2 * pairs_clu) if pairs_clu > 0 and sigma2 > 0 else nan
    deff = s_tot / (sigma2 * D) if sigma2 > 0 else nan
    rho = float(np.clip(icc, 0.0, 1.0)) if np.isfinite(icc) else 1.0
    n_eff = clusters.effective(d, unit, icc=rho)
    return Moments(p, sigma2, order_corr, icc, deff, n_eff, D, float(counts["judged"].sum()),
                   n_items, G, m, cv)  # fmt: skip


def position(judgments: pd.DataFrame) -> dict[str, Any]:
    """Pilot figures for position bias: P(A), decisive share, order correlation, ICC, sizes.

    Uses `position_counts` and `moments`: `p_a` among decisive verdicts (`n_verdicts`),
    `decisive_share` (decisive / every verdict asked for: ties and invalid outputs cost
    verdicts), `order_corr` (the *effective* within-item correlation of the two orders
    around the pooled p_a — what both orders buy; `order_corr_raw` is the Pearson
    correlation of the two orders' picked-A over items judged decisively in both), `icc`
    (between decisive verdicts of different items of a cluster, one verdict's scale),
    `cluster_size` and `size_cv` (items per cluster: mean and coefficient of variation),
    `deff` (the pilot's own design effect, relative to independent decisive verdicts) and
    `n_eff_clusters` (the effective clusters behind it: how well the pilot knows it).
    """
    counts = position_counts(judgments)
    mom = moments(counts)
    dec = counts[(counts["d"] > 0) & counts["order"].isin([0, 1])]
    y = np.full((int(counts["item"].max()) + 1 if len(counts) else 0, 2), np.nan)
    y[dec["item"].to_numpy(), dec["order"].to_numpy()] = (dec["a"] / dec["d"]).to_numpy()
    both = y[~np.isnan(y).any(axis=1)]
    varies = len(both) > 2 and both[:, 0].std() > 0 and both[:, 1].std() > 0
    corr = float(np.corrcoef(both[:, 0], both[:, 1])[0, 1]) if varies else float("nan")
    return {
        "p_a": mom.p_a,
        "n_verdicts": int(mom.decisive),
        "n_judged": int(mom.judged),
        "decisive_share": mom.decisive / mom.judged if mom.judged else float("nan"),
        "order_corr": mom.order_corr,
        "order_corr_raw": corr,
        "n_both_orders": len(both),
        "orders": int(counts["order"].nunique()),
        "icc": mom.icc,
        "deff": mom.deff,
        "n_eff_clusters": mom.n_eff_clusters,
        "n_items": mom.n_items,
        "n_clusters": mom.n_clusters,
        "cluster_size": mom.cluster_size,
        "size_cv": mom.size_cv,
    }


def rate(judgments: pd.DataFrame, column: str = "correct") -> dict[str, Any]:
    """Pilot figures for a rate (`correct` by default): p, ICC over clusters, repeats' corr."""
    require_columns(judgments, [column, *_ITEM], "rate pilot")
    j = judgments[judgments[column].notna()]
    j = j.assign(y=j[column].astype(float), unit=_clusters(j))
    per_item = j.groupby(_ITEM, sort=False).agg(y=("y", "mean"), unit=("unit", "first"))
    item_key = j[_ITEM].astype(str).agg("|".join, axis=1).to_numpy()
    repeats = (
        anova_icc(j["y"].to_numpy(), item_key)
        if "sample" in j.columns and j["sample"].nunique() > 1
        else float("nan")
    )
    return {
        "p": float(j["y"].mean()) if len(j) else float("nan"),
        "n_judgments": len(j),
        "icc": _icc_one(per_item, j["y"]),
        "repeat_corr": repeats,
        **cluster_shape(per_item.reset_index().rename(columns={"unit": "cluster"})),
    }


def paired(judgments: pd.DataFrame, judge_a: str, judge_b: str) -> dict[str, Any]:
    """Pilot figures for two judges on the same items: accuracy difference, discordant share."""
    require_columns(judgments, ["judge", "correct", *_ITEM], "paired pilot")
    j = judgments[judgments["judge"].isin([judge_a, judge_b]) & judgments["correct"].notna()]
    keys = [*_ITEM, *[c for c in ("order", "sample", "condition") if c in j.columns]]
    wide = j.pivot_table(index=keys, columns="judge", values="correct", aggfunc="first")
    if judge_a not in wide.columns or judge_b not in wide.columns:
        raise ValueError(f"no shared judgments of {judge_a!r} and {judge_b!r}")
    w = wide[[judge_a, judge_b]].dropna().astype(float)
    return {
        "diff": float((w[judge_a] - w[judge_b]).mean()),
        "discordant": float((w[judge_a] != w[judge_b]).mean()),
        "n_pairs": len(w),
    }


def agreement(judge: np.ndarray, human: np.ndarray) -> dict[str, Any]:
    """Observed and chance agreement of two label vectors (for a κ plan)."""
    m = pd.notna(judge) & pd.notna(human)
    a, b = np.asarray(judge)[m], np.asarray(human)[m]
    labels = np.union1d(a, b)
    p_o = float(np.mean(a == b)) if len(a) else float("nan")
    p_e = float(sum(np.mean(a == c) * np.mean(b == c) for c in labels)) if len(a) else np.nan
    return {"p_o": p_o, "p_e": p_e, "n": int(m.sum())}


def labels(judgments: pd.DataFrame, items: pd.DataFrame, positive: str) -> pd.DataFrame:
    """Per judge, what its labels say about a human-label study (gold = the human label).

    Returns judge, n, human_rate (share of `positive` gold), judge_rate, p_o, p_e, corr (the
    φ coefficient of judge and human `positive`), var_y (human_rate·(1 − human_rate)), fpr
    (judge positive on human negatives) and fnr, over valid verdicts on items with gold.
    """
    require_columns(judgments, ["judge", "verdict", "valid", *_ITEM], "labels pilot")
    gold = items[[*_ITEM, "gold"]].dropna(subset=["gold"])
    j = judgments[judgments["valid"].astype(bool)].merge(gold, on=_ITEM, how="inner")
    rows = []
    for judge, g in j.groupby("judge", sort=True):
        f = (g["verdict"].astype(str) == positive).to_numpy(float)
        y = (g["gold"].astype(str) == positive).to_numpy(float)
        both = f.std() > 0 and y.std() > 0
        agree = agreement(f, y)
        rows.append(
            {
                "judge": judge,
                "n": len(g),
                "human_rate": y.mean(),
                "judge_rate": f.mean(),
                "p_o": agree["p_o"],
                "p_e": agree["p_e"],
                "corr": float(np.corrcoef(f, y)[0, 1]) if both else float("nan"),
                "var_y": y.mean() * (1 - y.mean()),
                "fpr": float(f[y == 0].mean()) if (y == 0).any() else float("nan"),
                "fnr": float(1 - f[y == 1].mean()) if (y == 1).any() else float("nan"),
            }
        )
    return pd.DataFrame(rows)


__all__ = [
    "Moments",
    "agreement",
    "anova_icc",
    "cluster_shape",
    "labels",
    "moments",
    "paired",
    "position",
    "position_counts",
    "position_test",
    "rate",
]
