"""Pairwise correctness: one final choice per pair and the symmetrized kappa (spec 001 §3.4, §4.1).

A pairwise judge is "correct" on a pair when its final choice, over both presentation orders,
is the better (`pos`) response; an order disagreement is a tie, which never agrees.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from judgelab.analyses.correctness.rates import INFERENCE, cluster_matrix, groups_of
from judgelab.core import clusters, estimates, stats
from judgelab.core.schema import require_columns as _require
from judgelab.errors import check_choice


def pairwise_final(judgments: pd.DataFrame, *, groups: Sequence[str] = ("judge",)) -> pd.DataFrame:
    """Reduce the presentation orders of each pairwise item to one final choice (spec 001 §3.4).

    The final choice is `pos` or `neg` when every valid verdict of the item agrees on it, `tie`
    when they disagree (order inconsistency) or a verdict is a tie, and `invalid` when no
    verdict is valid. Works for single-order data too (the one verdict is final).

    Args:
        judgments: A judgments table; needs `groups`, `item_id`, `valid`, `chosen`.
        groups: Columns that identify a judge run (add `condition`, `benchmark`, `split`).

    Returns:
        The `groups` columns, `item_id`, `final`, `n_orders`.
    """
    groups = list(groups)
    _require(judgments, [*groups, "item_id", "valid", "chosen"], "pairwise_final")
    valid = judgments["valid"].astype("boolean").fillna(False).to_numpy(dtype=bool)
    chosen = judgments["chosen"].astype(object).where(valid & judgments["chosen"].notna(), None)
    df = judgments[[*groups, "item_id"]].copy()
    df["pos"] = (chosen == "pos").to_numpy(dtype=int)
    df["neg"] = (chosen == "neg").to_numpy(dtype=int)
    df["tie"] = (chosen == "tie").to_numpy(dtype=int)
    df["n_orders"] = 1
    agg = df.groupby([*groups, "item_id"], sort=False, dropna=False, observed=True).sum()
    n_valid = agg["pos"] + agg["neg"] + agg["tie"]
    agg["final"] = np.select(
        [n_valid == 0, agg["pos"] == n_valid, agg["neg"] == n_valid],
        ["invalid", "pos", "neg"],
        default="tie",
    )
    return agg.reset_index()[[*groups, "item_id", "final", "n_orders"]]


def pairwise_kappa(
    final: pd.DataFrame,
    *,
    by: Sequence[str] = ("judge",),
    cluster: str | None = None,
    inference: str = "wild",
    n_boot: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> pd.DataFrame:
    """Return the symmetrized pairwise kappa per group with its interval (spec 001 §4.1).

    Every pair counts in both orientations, so the human marginals are 50/50 and
    κ = (acc − (1 − t)/2) / (1 − (1 − t)/2) = (acc − wrong) / (2 − acc − wrong), with acc the
    share of items whose final choice is the better response, wrong the share choosing the
    worse one, and t = 1 − acc − wrong the share of ties (order disagreements) and invalid
    items, which never agree.

    The interval is `core.estimates.ratio`'s over the units (items, or `cluster`) of the
    kappa's linearization — each item's pseudo-value κ̂ + IF_i averages to κ̂ — inverting the
    restricted wild cluster bootstrap test (`inference="bootstrap"`: the earlier percentile
    bootstrap).

    Args:
        final: Output of `pairwise_final` (gold = the `pos` response).
        by: Group columns.
        cluster: Column whose values are resampled (None = rows, i.e. items; pass a
            question column when several items share a question).
        inference: `wild` (default) or `bootstrap` (the earlier default).
        n_boot: Bootstrap resamples B.
        seed: Seed of the bootstrap.
        level: Confidence level.

    Returns:
        One row per group: the `by` columns, `metric` ("kappa"), `value`, `ci_low`,
        `ci_high`, `half_width`, `n`, `acc`, `tie_rate`, `n_eff_clusters`, `few_clusters`,
        `method`.
    """
    by = list(by)
    check_choice("inference", inference, INFERENCE)
    _require(final, [*by, "final", *([cluster] if cluster else [])], "pairwise_kappa")
    rows = []
    for key, block in groups_of(final, by):
        f = block["final"].to_numpy()
        cells = np.column_stack([f == "pos", f == "neg", np.ones(len(f))]).astype(float)
        total = cells.sum(axis=0)
        n = total[2]
        value = float(_sym_kappa(total))
        if inference == "wild":
            fields = _wild_kappa(cells, value, clusters.codes(block, cluster), n_boot,
                                 estimates.seeded(seed, "pkappa", *key), level)  # fmt: skip
        else:
            mat = cluster_matrix(block, cells, cluster)
            rng = stats.rng_for(seed, "pkappa", *key)
            reps = stats.bootstrap_sums(mat, n_boot=n_boot, rng=rng)
            fields = {
                **stats.interval_fields(value, _sym_kappa(reps), level=level, half_width=True),
                "n_eff_clusters": float("nan"),
                "few_clusters": True,
                "method": f"bootstrap, percentile (B={n_boot})",
            }
        rows.append(
            {
                **dict(zip(by, key, strict=True)),
                "metric": "kappa",
                **fields,
                "n": int(n),
                "acc": float(total[0] / n) if n else float("nan"),
                "tie_rate": float(1 - (total[0] + total[1]) / n) if n else float("nan"),
            }
        )
    cols = [*by, "metric", "value", "ci_low", "ci_high", "half_width", "n", "acc", "tie_rate",
            "n_eff_clusters", "few_clusters", "method"]  # fmt: skip
    return pd.DataFrame(rows, columns=cols)


def _wild_kappa(
    cells: np.ndarray,
    value: float,
    unit: np.ndarray,
    n_boot: int,
    rng: np.random.Generator,
    level: float,
) -> dict:
    """Return the interval fields of the symmetrized kappa from its linearization.

    κ(T) with T = Σ [pos, neg, 1] is homogeneous of degree 0, so IF_i = n · ∂κ/∂T · c_i and
    the pseudo-values κ̂ + IF_i average to κ̂ exactly.
    """
    nan = float("nan")
    total = cells.sum(axis=0)
    n = float(total[2])
    if n == 0 or not np.isfinite(value):
        return {"value": value, "ci_low": nan, "ci_high": nan, "half_width": nan,
                "n_eff_clusters": nan, "few_clusters": True, "method": "no estimate"}  # fmt: skip
    h = 1e-6 * n
    step = np.eye(3) * h
    grad = (_sym_kappa(total + step) - _sym_kappa(total - step)) / (2.0 * h)
    pseudo = value + n * (cells @ grad)
    est = estimates.ratio(
        pseudo, np.ones(len(pseudo)), unit, level=level, n_boot=n_boot, rng=rng,
        bounds=(-1.0, 1.0),
    )  # fmt: skip
    return {
        "value": value,
        "ci_low": est.ci_low,
        "ci_high": est.ci_high,
        "half_width": float(max(value - est.ci_low, est.ci_high - value)),
        "n_eff_clusters": est.n_eff_clusters,
        "few_clusters": est.few_clusters,
        "method": est.method + " of the linearized kappa",
    }


def _sym_kappa(counts: np.ndarray) -> np.ndarray:
    c = np.asarray(counts, dtype=np.float64)
    acc = stats.ratio_replicates(c[..., 0], c[..., 2])
    wrong = stats.ratio_replicates(c[..., 1], c[..., 2])
    return stats.ratio_replicates(acc - wrong, 2.0 - acc - wrong)
