"""P(the judge picks the longer response), overall and conditioned on the gold label.

Inputs are `verdicts.pairwise_verdicts` output, or `score_pairs` output for pointwise graders
(two answers to the same question: did the longer one score higher?).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from judgelab.analyses.length.bins import bin_lengths
from judgelab.analyses.length.rates import RATE_COLUMNS, cluster_rate
from judgelab.analyses.length.verdicts import KEYS, group_label, item_key
from judgelab.core import stats
from judgelab.core.schema import require_columns as _require
from judgelab.errors import check_choice

#: `picks_longer` conditions: every verdict, by gold label, and the mean of the two.
CONDITIONS = ("all", "longer is better", "longer is worse", "balanced")


def picks_longer(
    verdicts: pd.DataFrame,
    *,
    by: Sequence[str] = ("judge",),
    abs_diff_edges: Sequence[float] | None = None,
    conditions: Sequence[str] = CONDITIONS,
    n_boot: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> pd.DataFrame:
    """Return P(judge picks the longer response), overall and conditioned on the gold label.

    Verdicts count when they pick pos or neg on a pair of unequal lengths (ties and invalid
    outputs are left out). Conditions: `all`; `longer is better` (the longer response is the
    gold positive: P = accuracy there) and `longer is worse` (the longer one is the gold
    negative: P = error rate there); `balanced` = the mean of the two, which weighs both
    cases equally and so removes the confound that longer answers may simply be better more
    often: 0.5 = no length preference. The conditional rows need gold (`correct` not null).

    Args:
        verdicts: `pairwise_verdicts` output.
        by: Group columns.
        abs_diff_edges: If given, also group by bins of |len_diff| (`bin_lengths` with
            `by="value"`), in a column `abs_diff_bin`.
        conditions: The conditions returned (a subset of `CONDITIONS`).
        n_boot: Bootstrap resamples B (over items; both orders of an item stay together).
        seed: Seed of the bootstrap.
        level: Confidence level.

    Returns:
        The `by` columns (and `abs_diff_bin`), `group` (the `by` values as one label),
        `condition`, `value`, `k`, `n` (verdicts),
        `n_items`, `ci_low`, `ci_high` (bootstrap), `wilson_low`, `wilson_high` (verdicts as
        trials; optimistic when each item is judged twice; NaN for `balanced`).
    """
    by = list(by)
    _require(verdicts, [*by, "picked_longer", "longer", "correct", *KEYS], "picks_longer")
    for c in conditions:
        check_choice("condition", c, CONDITIONS)
    data = verdicts[verdicts["picked_longer"].notna()].copy()
    if abs_diff_edges is not None:
        data["abs_diff_bin"] = bin_lengths(
            data["len_diff"].abs(), edges=abs_diff_edges, by="value"
        )
        by = [*by, "abs_diff_bin"]
    gold = data["correct"].notna().to_numpy()
    longer_better = data["longer"].to_numpy() == "pos"
    cond = np.where(~gold, "", np.where(longer_better, "longer is better", "longer is worse"))
    value = data["picked_longer"].to_numpy(dtype=float)
    items = item_key(data)
    rows = []
    groups = data.groupby(by, sort=True, observed=True, dropna=True).indices if len(data) else {}
    for key, idx in groups.items():
        key = key if isinstance(key, tuple) else (key,)
        base = dict(zip(by, key, strict=True))
        rates = _condition_rates(
            value, items, cond, idx, key, n_boot=n_boot, seed=seed, level=level
        )
        rows.extend({**base, "condition": c, **r} for c, r in rates.items())
    out = pd.DataFrame(rows, columns=[*by, "condition", *RATE_COLUMNS])
    out = out[out["condition"].isin(list(conditions))].reset_index(drop=True)
    out.insert(len(by), "group", group_label(out, [b for b in by if b != "abs_diff_bin"]))
    out["n"] = out["n"].astype(int)
    out["n_items"] = out["n_items"].astype(int)
    if "abs_diff_bin" in by and len(out):
        out["abs_diff_bin"] = pd.Categorical(
            out["abs_diff_bin"], categories=data["abs_diff_bin"].cat.categories, ordered=True
        )
    return out


def _condition_rates(
    value: np.ndarray,
    items: np.ndarray,
    cond: np.ndarray,
    idx: np.ndarray,
    key: tuple,
    *,
    n_boot: int,
    seed: int,
    level: float,
) -> dict[str, dict[str, Any]]:
    """Return the `RATE_COLUMNS` of one group (rows `idx`) under each of the `CONDITIONS`."""
    r = cluster_rate(
        value[idx], items[idx], n_boot=n_boot, rng=stats.rng_for(seed, "all", *key), level=level
    )
    out = {"all": {c: r[c] for c in RATE_COLUMNS}}
    gold = {}
    for c in CONDITIONS[1:3]:
        sel = idx[cond[idx] == c]
        gold[c] = cluster_rate(
            value[sel], items[sel], n_boot=n_boot, rng=stats.rng_for(seed, c, *key), level=level
        )
        out[c] = {k: gold[c][k] for k in RATE_COLUMNS}
    out["balanced"] = _balanced(gold["longer is better"], gold["longer is worse"], level=level)
    return out


def _balanced(better: dict[str, Any], worse: dict[str, Any], *, level: float) -> dict[str, Any]:
    """The mean of the two gold conditions; its interval from the paired bootstrap replicates."""
    nb, nw = better["n"], worse["n"]
    n, n_items = nb + nw, better["n_items"] + worse["n_items"]
    nan = dict(k=np.nan, wilson_low=np.nan, wilson_high=np.nan)
    if not (nb and nw):
        return dict(value=np.nan, n=n, n_items=n_items, ci_low=np.nan, ci_high=np.nan, **nan)
    low, high = stats.percentile_interval(
        (better["replicates"] + worse["replicates"]) / 2, level=level
    )
    return dict(
        value=(better["value"] + worse["value"]) / 2,
        n=n,
        n_items=n_items,
        ci_low=float(low),
        ci_high=float(high),
        **nan,
    )


def score_pairs(table: pd.DataFrame, *, value: str = "score") -> pd.DataFrame:
    """Turn pointwise scores into pairs: the answers of two splits to the same `item_id`.

    For arena-bench (split = answering model, item_id = question) each question yields one
    pair per two models. A pair counts when both lengths and both scores differ; then
    `picked_longer` is 1 when the longer answer got the higher score. Pairs take the
    benchmark/split/item_id key of the question so `picks_longer` bootstraps questions.

    Returns:
        `judge`, `benchmark`, `split` ("pairs"), `item_id`, `picked_longer`, `longer`
        (`pos` = the higher-scored answer is longer), `correct` (null: no gold), `len_diff`.
    """
    _require(table, ["judge", *KEYS, value, "len_response"], "score_pairs")
    data = table[table[value].notna() & table["len_response"].notna()]
    cols = [
        "judge",
        "benchmark",
        "split",
        "item_id",
        "picked_longer",
        "longer",
        "correct",
        "len_diff",
    ]
    if data.empty:
        return pd.DataFrame(columns=cols)
    a = data[["judge", "benchmark", "item_id", "split", value, "len_response"]]
    m = a.merge(a, on=["judge", "benchmark", "item_id"], suffixes=("_a", "_b"))
    m = m[m["split_a"] < m["split_b"]]
    ds, dl = m[f"{value}_a"] - m[f"{value}_b"], m["len_response_a"] - m["len_response_b"]
    keep = (ds != 0) & (dl != 0)
    m, ds, dl = m[keep], ds[keep], dl[keep]
    out = pd.DataFrame(
        {
            "judge": m["judge"],
            "benchmark": m["benchmark"],
            "split": "pairs",
            "item_id": m["item_id"],
            "picked_longer": (np.sign(ds) == np.sign(dl)).astype(float),
            "longer": "neg",
            "correct": pd.array([pd.NA] * len(m), dtype="boolean"),
            "len_diff": dl.abs(),
        }
    )
    return out[cols].reset_index(drop=True)
