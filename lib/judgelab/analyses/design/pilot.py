"""What a pilot table says about a study's variance: rates, ICC, order and repeat correlation.

Each function takes the user's own judgments (with `cluster` attached, as loaders do) and
returns the inputs the planner's formulas need, each with the n it rests on. The ICC is the
one-way ANOVA estimator (Donner 1986), clipped at 0,

    ICC = (MSB − MSW) / (MSB + (m₀ − 1)·MSW),  m₀ = (N − Σ n_g² / N) / (G − 1),

computed on the items' mean outcomes grouped by cluster, then put on the scale of one
judgment (what `sizes.design_effect` takes): ICC₁ = ICC_item · Var(item mean) / Var(judgment),
since the between-item covariance is the same on both scales.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

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


def position(judgments: pd.DataFrame) -> dict[str, Any]:
    """Pilot figures for position bias: P(A), order correlation, ICC of the per-item A-share.

    Uses valid, decisive verdicts (`chosen` pos/neg) of pairwise judgments; "picked A" is
    `chosen == pos` in order 0 and `chosen == neg` in order 1. `order_corr` is the
    *effective* correlation of the two orders, 2·Var(item mean)/(p(1−p)) − 1 over items
    judged in both: what `sizes.design_effect` needs, since "picked A" has different means
    in the two orders (it is mostly "picked the better one" in order 0) and the pooled
    p(1−p) counts that difference as variance; `order_corr_raw` is the Pearson correlation.
    """
    require_columns(judgments, ["order", "chosen", "valid", *_ITEM], "position pilot")
    j = judgments[judgments["valid"].astype(bool) & judgments["chosen"].isin(["pos", "neg"])]
    picked_a = ((j["order"] == 0) & (j["chosen"] == "pos")) | (
        (j["order"] == 1) & (j["chosen"] == "neg")
    )
    j = j.assign(y=picked_a.astype(float), unit=_clusters(j))
    per_item = j.groupby(_ITEM, sort=False).agg(y=("y", "mean"), unit=("unit", "first"))
    wide = j.pivot_table(index=_ITEM, columns="order", values="y", aggfunc="mean")
    both = wide.dropna() if {0, 1} <= set(wide.columns) else pd.DataFrame()
    varies = len(both) > 2 and both[0].std() > 0 and both[1].std() > 0
    corr = float(np.corrcoef(both[0], both[1])[0, 1]) if varies else float("nan")
    p_a = float(j["y"].mean()) if len(j) else float("nan")
    effective = float("nan")
    if len(both) > 2 and 0 < p_a < 1:
        mean2 = (both[0] + both[1]) / 2
        effective = float(np.clip(2 * mean2.var() / (p_a * (1 - p_a)) - 1, -1.0, 1.0))
    shape = cluster_shape(per_item.reset_index().rename(columns={"unit": "cluster"}))
    return {
        "p_a": p_a,
        "n_verdicts": len(j),
        "order_corr": 0.0 if np.isnan(effective) else effective,
        "order_corr_raw": corr,
        "n_both_orders": len(both),
        "icc": _icc_one(per_item, j["y"]),
        **shape,
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


__all__ = ["agreement", "anova_icc", "cluster_shape", "labels", "paired", "position", "rate"]
