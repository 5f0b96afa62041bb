"""Which judge should I use on my data? Several judges ranked on one human-labelled sample.

Every judge is scored on the items that all of them judged and a human labelled (the same
sample, so the comparison is paired), by two measures of agreement with the humans:

- `kappa`: Cohen's κ of the judge's verdict with the human label, both read as below ½,
  ½ (a tie) or above ½ (a 0/1 label is itself; a win-rate score of a pairwise verdict is
  A, tie or B; a probability is its thresholded verdict);
- `ppi_se`: the standard error of the PPI++ estimate of the human mean with `budget` human
  labels and the judge on the other items (λ tuned: σ² = Var(Y − λf) / n + λ² Var(f) / N,
  λ = Cov(Y, f) / ((1 + n / N) Var(f)) cut to [0, 1]), the *error of the corrected
  estimate* this judge buys; `worth_labels` is how many human labels alone give the same
  standard error (n · Var(Y) / (n σ²)).

Ranks come with their uncertainty from one cluster bootstrap (`core.stats.bootstrap_weights`,
Rao–Wu rescaled: G − 1 clusters drawn), the same resamples for every judge: per measure the
percentile interval of each judge's rank (`rank_low`, `rank_high`; 1 is best) and the share
of resamples in which it is best (`p_best`, ties shared). κ's interval is the percentile
interval of the same resamples. Cost per 1,000 items comes from the judgments' cost records
(`cost_usd`, mean over the judge's rows × 1,000) where every row has one, else from stated
prices (a mapping judge or model → $ per 1,000 items), else it is left blank and
`cost_source` says why. `frontier` marks the judges no other judge beats on both cost and κ.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from judgelab.core import stats
from judgelab.core.schema import require_columns

#: Measures a ranking is by: the larger κ, the smaller standard error is better.
MEASURES = ("kappa", "ppi_se")
#: Columns of a ranking row.
COLUMNS = (
    "judge", "kappa", "kappa_low", "kappa_high", "kappa_rank", "kappa_rank_low",
    "kappa_rank_high", "kappa_p_best", "ppi_se", "ppi_se_low", "ppi_se_high", "ppi_se_rank",
    "ppi_se_rank_low", "ppi_se_rank_high", "ppi_se_p_best", "worth_labels", "budget",
    "agreement", "n", "n_clusters", "cost_per_1000", "cost_source", "frontier", "method",
)  # fmt: skip
_NO_COST = "no cost records in the judgments and no stated price for this judge"


def _verdict(x: np.ndarray) -> np.ndarray:
    """0, 1, 2 for a value below ½, at ½, above ½."""
    return np.where(x < 0.5, 0, np.where(x > 0.5, 2, 1))


def _cluster_sums(f: np.ndarray, y: np.ndarray, units: np.ndarray, G: int) -> np.ndarray:
    """Per cluster × judge: the 9 confusion cells and the 6 moments (G × J × 15)."""
    n, J = f.shape
    vh, vf = _verdict(y)[:, None], _verdict(f)
    cells = np.zeros((n, J, 9))
    np.put_along_axis(cells, (3 * vh + vf)[:, :, None], 1.0, axis=2)
    yy = np.broadcast_to(y[:, None], f.shape)
    moments = np.stack([np.ones_like(f), yy, f, yy * yy, f * f, yy * f], axis=2)
    rows = np.concatenate([cells, moments], axis=2).reshape(n, J * 15)
    out = np.zeros((G, J * 15))
    np.add.at(out, units, rows)
    return out.reshape(G, J, 15)


def _measures(s: np.ndarray, budget: int) -> dict[str, np.ndarray]:
    """κ, agreement, PPI++ standard error and its worth in labels from summed cells (…, J, 15)."""
    conf = s[..., :9].reshape(*s.shape[:-1], 3, 3)
    kappa = stats.kappa_from_confusion(conf)
    agree = np.trace(conf, axis1=-2, axis2=-1) / conf.sum(axis=(-2, -1))
    cnt, sy, sf, syy, sff, syf = (s[..., 9 + i] for i in range(6))
    with np.errstate(divide="ignore", invalid="ignore"):
        vy, vf = syy / cnt - (sy / cnt) ** 2, sff / cnt - (sf / cnt) ** 2
        cov = syf / cnt - sy * sf / cnt**2
        n = float(budget)
        rest = np.maximum(cnt - n, 1.0)
        lam = np.clip(np.where(vf > 0, cov / ((1.0 + n / rest) * vf), 0.0), 0.0, 1.0)
        var = (vy - 2 * lam * cov + lam**2 * vf) / n + lam**2 * vf / rest
        se = np.sqrt(np.maximum(var, 0.0))
        worth = np.where(var > 0, vy / var, np.inf)
    return {"kappa": kappa, "agreement": agree, "ppi_se": se, "worth_labels": worth}


def _ranks(values: np.ndarray, *, larger_is_better: bool) -> np.ndarray:
    """Ranks (1 best, ties averaged) along the last axis; NaN ranks last."""
    v = np.where(np.isfinite(values), values, -np.inf if larger_is_better else np.inf)
    key = -v if larger_is_better else v
    return pd.DataFrame(key.reshape(-1, key.shape[-1])).rank(axis=1, method="average").to_numpy()


def _costs(
    judgments: pd.DataFrame | None, judges: Sequence[str], prices: Mapping[str, float]
) -> tuple[list[float], list[str]]:
    """Cost per 1,000 items and where it came from, per judge."""
    costs, sources = [], []
    for j in judges:
        rows = None if judgments is None else judgments[judgments["judge"].astype(str) == j]
        recorded = None
        if rows is not None and "cost_usd" in rows.columns and len(rows):
            c = pd.to_numeric(rows["cost_usd"], errors="coerce")
            if c.notna().all():
                recorded = float(c.mean() * 1000.0)
        model = None
        if rows is not None and "model" in rows.columns and len(rows):
            model = str(rows["model"].iloc[0])
        if recorded is not None:
            costs.append(recorded)
            sources.append(f"cost records ({len(rows)} judgments)")
        elif j in prices:
            costs.append(float(prices[j]))
            sources.append("stated price (judge)")
        elif model is not None and model in prices:
            costs.append(float(prices[model]))
            sources.append(f"stated price (model {model})")
        else:
            costs.append(float("nan"))
            sources.append(_NO_COST)
    return costs, sources


def _frontier(cost: np.ndarray, kappa: np.ndarray) -> np.ndarray:
    """True where no other judge costs no more and agrees at least as well (one strictly)."""
    out = np.zeros(len(cost), dtype=bool)
    for i in range(len(cost)):
        if not (np.isfinite(cost[i]) and np.isfinite(kappa[i])):
            continue
        better = (cost <= cost[i]) & (kappa >= kappa[i]) & ((cost < cost[i]) | (kappa > kappa[i]))
        out[i] = not better.any()
    return out


def paired_sample(
    table: pd.DataFrame,
    *,
    judge: str = "judge",
    judge_col: str = "judge_label",
    human_col: str = "human_label",
    item: Sequence[str] = ("benchmark", "split", "item_id"),
    cluster_col: str = "cluster",
) -> pd.DataFrame:
    """Return the items every judge judged and a human labelled (one row per item).

    A column per judge (its label), `human_label` and `cluster`.
    """
    require_columns(table, [judge, judge_col, human_col, cluster_col, *item], "choice")
    t = table[table[human_col].notna()]
    wide = t.pivot_table(index=list(item), columns=judge, values=judge_col, aggfunc="first")
    wide = wide.dropna(axis=0, how="any")
    keys = t.drop_duplicates(subset=list(item)).set_index(list(item))
    return wide.assign(human_label=keys[human_col], cluster=keys[cluster_col]).reset_index()


def rank_judges(
    table: pd.DataFrame,
    *,
    judge: str = "judge",
    judge_col: str = "judge_label",
    human_col: str = "human_label",
    cluster_col: str = "cluster",
    item: Sequence[str] = ("benchmark", "split", "item_id"),
    judgments: pd.DataFrame | None = None,
    prices: Mapping[str, float] | None = None,
    budget: int = 100,
    level: float = 0.95,
    n_boot: int = 999,
    seed: int = 0,
) -> pd.DataFrame:
    """Return the judges ranked by agreement with the humans on their common labelled items.

    Args:
        table: A grounding table (`tables.pointwise_table` / `pairwise_table`): one row per
            judge × item with the judge's label, the human label and the item's cluster.
        judge: Column naming the judge.
        judge_col: The judge's label or score (0/1, a win score, a probability).
        human_col: The human label.
        cluster_col: Resampling unit of the bootstrap.
        item: Columns identifying an item across judges.
        judgments: The judgments behind `table` (their `cost_usd` records), or None.
        prices: Stated $ per 1,000 items by judge or model name (used without records).
        budget: Human labels the PPI++ standard error is computed for.
        level: Level of the κ and rank intervals.
        n_boot: Cluster-bootstrap resamples.
        seed: Seed of the resamples.

    Returns:
        One row per judge (`COLUMNS`), best κ first.

    Raises:
        ValueError: Fewer than 2 judges, or no item every judge judged.
    """
    wide = paired_sample(table, judge=judge, judge_col=judge_col, human_col=human_col,
                         item=item, cluster_col=cluster_col)  # fmt: skip
    judges = [c for c in wide.columns if c not in (*item, "human_label", "cluster")]
    if len(judges) < 2:
        raise ValueError(f"rank_judges needs at least 2 judges, got {judges}")
    if wide.empty:
        raise ValueError(f"no item was judged by all of {judges} and labelled by a human")
    f = wide[judges].to_numpy(np.float64)
    y = wide["human_label"].to_numpy(np.float64)
    units = pd.factorize(wide["cluster"].astype(str))[0]
    G = int(units.max()) + 1
    per = _cluster_sums(f, y, units, G)
    point = _measures(per.sum(axis=0), budget)
    rng = stats.rng_for(seed, "grounding.choice", *judges)
    w = stats.bootstrap_weights(G, n_boot=n_boot, rng=rng, draws=max(G - 1, 1))
    reps = _measures(np.einsum("bg,gjk->bjk", w, per), budget)
    alpha = (1.0 - level) / 2.0
    out = pd.DataFrame({"judge": judges})
    for m, larger in (("kappa", True), ("ppi_se", False)):
        rk = _ranks(reps[m], larger_is_better=larger)
        out[m] = point[m]
        lo, hi = stats.percentile_interval(reps[m], level=level)
        out[f"{m}_low"], out[f"{m}_high"] = lo, hi
        out[f"{m}_rank"] = _ranks(point[m][None], larger_is_better=larger)[0]
        out[f"{m}_rank_low"] = np.floor(np.quantile(rk, alpha, axis=0))
        out[f"{m}_rank_high"] = np.ceil(np.quantile(rk, 1.0 - alpha, axis=0))
        best = rk == rk.min(axis=1, keepdims=True)
        out[f"{m}_p_best"] = (best / best.sum(axis=1, keepdims=True)).mean(axis=0)
    out["worth_labels"] = point["worth_labels"]
    out["budget"] = budget
    out["agreement"] = point["agreement"]
    out["n"], out["n_clusters"] = len(wide), G
    costs, sources = _costs(judgments, judges, prices or {})
    out["cost_per_1000"], out["cost_source"] = costs, sources
    out["frontier"] = _frontier(np.asarray(costs), out["kappa"].to_numpy())
    out["method"] = (
        f"cluster bootstrap (Rao–Wu, B={n_boot}, {G} clusters): percentile κ and rank "
        f"intervals, P(best); PPI++ standard error with {budget} labels of {len(wide)} items"
    )
    return out.sort_values("kappa", ascending=False, ignore_index=True)[list(COLUMNS)]


def frontier_reason(ranking: pd.DataFrame) -> str | None:
    """Return why the cost–agreement frontier cannot be drawn, None when it can."""
    if ranking.empty:
        return "no judges were ranked"
    have = ranking["cost_per_1000"].notna()
    if have.sum() >= 2:
        return None
    return (
        f"{int(have.sum())} of {len(ranking)} judges have a cost (records or stated prices); "
        "a frontier needs two — give `prices` ($ per 1,000 items by judge or model)"
    )


__all__ = ["COLUMNS", "MEASURES", "frontier_reason", "paired_sample", "rank_judges"]
