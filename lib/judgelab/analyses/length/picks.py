"""P(the judge picks the longer response), overall and conditioned on the gold label.

Inputs are `verdicts.pairwise_verdicts` output, or `score_pairs` output for pointwise graders
(two answers to the same question: did the longer one score higher?).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import pandas as pd
import polars as pl

from judgelab.analyses.length import lazy
from judgelab.analyses.length.bins import bin_lengths, cut_values, value_cuts
from judgelab.analyses.length.rates import (
    INFERENCE,
    RATE_COLUMNS,
    SUPPORT_COLUMNS,
    stratified_sums,
    unit_sums,
)
from judgelab.analyses.length.verdicts import KEYS, group_label, groups_of, item_key
from judgelab.core import clusters, estimates, inference, stats, threads
from judgelab.core.schema import require_columns as _require
from judgelab.errors import check_choice

#: `picks_longer` conditions: every verdict, by gold label, and the mean of the two.
CONDITIONS = ("all", "longer is better", "longer is worse", "balanced")


#: Columns of the test of "no length preference" (P = 0.5) on the `all` / `balanced` rows.
TEST_COLUMNS = ["p_value", "p_bound", "n_boot_p"]
_TESTED = ("all", "balanced")


def picks_longer(
    verdicts: pd.DataFrame,
    *,
    by: Sequence[str] = ("judge",),
    abs_diff_edges: Sequence[float] | None = None,
    conditions: Sequence[str] = CONDITIONS,
    n_boot: int = 1000,
    seed: int = 0,
    level: float = 0.95,
    cluster: str | None = clusters.COLUMN,
    inference: str = "wild",
) -> pd.DataFrame:
    """Return P(judge picks the longer response), overall and conditioned on the gold label.

    Verdicts count when they pick pos or neg on a pair of unequal lengths (ties and invalid
    outputs are left out). Conditions: `all`; `longer is better` (the longer response is the
    gold positive: P = accuracy there) and `longer is worse` (the longer one is the gold
    negative: P = error rate there); `balanced` = the mean of the two, which weighs both
    cases equally and so removes the confound that longer answers may simply be better more
    often: 0.5 = no length preference (the headline; non-parametric). When the judge saw
    both orders, each item contributes the longer response shown first and shown second,
    so position preference cancels within every condition. The conditional rows need gold.

    Units are `cluster` values (items sharing a question/source stay together; both orders
    of an item always do). Intervals by default (`inference="wild"`) are those of every
    ratio of sums (`core.estimates`: `ratio` for a condition, `contrast` with weights ½, ½
    for `balanced`): they invert the restricted wild cluster bootstrap test, so `p_value`
    (of P = 0.5, on the `all` and `balanced` rows) is below 1 − `level` exactly when 0.5 lies
    outside the interval; they hold with few, unequal clusters. `inference="bootstrap"` is
    the earlier percentile bootstrap resampling clusters within each benchmark split, with
    an adaptive bootstrap p-value (`core.inference.adaptive_p`; `p_bound` True: p is an
    upper bound).

    Args:
        verdicts: `pairwise_verdicts` output.
        by: Group columns.
        abs_diff_edges: If given, also group by bins of |len_diff| (`bin_lengths` with
            `by="value"`), in a column `abs_diff_bin`.
        conditions: The conditions returned (a subset of `CONDITIONS`).
        n_boot: Bootstrap replicates B (percentile bootstrap: its p-value may draw more).
        seed: Seed of the bootstrap.
        level: Confidence level.
        cluster: Column of units (None: items, the issue-20 legacy).
        inference: `rates.INFERENCE`: `wild` (default) or `bootstrap` (earlier default).

    Returns:
        The `by` columns (and `abs_diff_bin`), `group` (the `by` values as one label),
        `condition`, `value`, `k`, `n` (verdicts), `n_items`, `n_clusters`, `ci_low`,
        `ci_high`, `wilson_low`, `wilson_high` (verdicts as trials; optimistic when each
        item is judged twice; NaN for `balanced`), `p_value`, `p_bound`, `n_boot_p` (the
        test of P = 0.5; NaN for the gold-conditioned rows), `n_eff_clusters`,
        `few_clusters` (below `core.clusters.FEW_EFFECTIVE` effective clusters), `method`.
    """
    by = list(by)
    check_choice("inference", inference, INFERENCE)
    for c in conditions:
        check_choice("condition", c, CONDITIONS)
    if lazy.is_lazy(verdicts) and inference != "wild":  # the percentile bootstrap: pandas
        verdicts = lazy.collect(verdicts)
    if lazy.is_lazy(verdicts):
        frames, categories = _lazy_frames(verdicts, by, abs_diff_edges, cluster)
    else:
        _require(verdicts, [*by, "picked_longer", "longer", "correct", *KEYS], "picks_longer")
        frame = _frame(verdicts, by, abs_diff_edges, cluster)
        frames = iter([frame])
        categories = frame["abs_diff_bin"].cat.categories if abs_diff_edges is not None else None
    if abs_diff_edges is not None:
        by = [*by, "abs_diff_bin"]

    def rates_of(piece: tuple[tuple, pd.DataFrame]) -> list[dict[str, Any]]:
        key, g = piece
        if inference == "wild":
            wild = dict(n_boot=n_boot, seed=seed, key=key, level=level, wanted=conditions)
            rates = _wild_rates(g, **wild)
        else:
            rng = stats.rng_for(seed, "picks_longer", *key)
            rates = _condition_rates(g, n_boot=n_boot, rng=rng, level=level, tested=conditions)
        base = dict(zip(by, key, strict=True))
        return [{**base, "condition": c, **r} for c, r in rates.items()]

    # the groups at once on the machine's cores (each its own seeded generator)
    rows = [row for got in threads.ordered_map(rates_of, groups_of(frames, by)) for row in got]
    columns = [*by, "condition", *RATE_COLUMNS, *TEST_COLUMNS, *SUPPORT_COLUMNS]
    out = pd.DataFrame(rows, columns=columns)
    out = out[out["condition"].isin(list(conditions))].reset_index(drop=True)
    out.insert(len(by), "group", group_label(out, [b for b in by if b != "abs_diff_bin"]))
    for c in ("n", "n_items", "n_clusters"):
        out[c] = out[c].astype(int)
    if "abs_diff_bin" in by and len(out):
        out["abs_diff_bin"] = pd.Categorical(
            out["abs_diff_bin"], categories=categories, ordered=True
        )
    return out


def _frame(
    verdicts: pd.DataFrame,
    by: list[str],
    abs_diff_edges: Sequence[float] | None,
    cluster: str | None,
) -> pd.DataFrame:
    """The `by` columns and what every condition needs, per decisive verdict (pandas path)."""
    data = verdicts[verdicts["picked_longer"].notna()]
    gold = data["correct"].notna().to_numpy()
    longer_better = data["longer"].to_numpy() == "pos"
    frame = pd.DataFrame(
        {
            "value": data["picked_longer"].to_numpy(dtype=float),
            "better": gold & longer_better,
            "worse": gold & ~longer_better,
            "unit": clusters.codes(data, cluster),
            "item": item_key(data),
            "stratum": _strata(data),
        }
    )
    for b in by:  # each group column with its dtype (a categorical keeps its categories)
        frame[b] = data[b].values
    if abs_diff_edges is not None:
        frame["abs_diff_bin"] = bin_lengths(
            pd.Series(np.abs(data["len_diff"].to_numpy(dtype=float))),
            edges=abs_diff_edges,
            by="value",
        ).values
    return frame


def _lazy_frames(
    verdicts: lazy.LazyVerdicts,
    by: list[str],
    abs_diff_edges: Sequence[float] | None,
    cluster: str | None,
) -> tuple[Iterator[pd.DataFrame], Any]:
    """`_frame`'s columns judge by judge from a lazy table, and the |Δlength| bins' labels."""
    decisive = pl.col("picked_longer").is_not_null()
    gold = pl.col("correct").is_not_null()
    longer_better = pl.col("longer") == "pos"
    columns = {
        "value": pl.col("picked_longer"),
        "better": gold & longer_better,
        "worse": gold & ~longer_better,
        "abs_diff": pl.col("len_diff").abs(),
    }
    frames = lazy.chunks(verdicts, by, columns, where=decisive, cluster=cluster)
    if abs_diff_edges is None:
        return frames, None
    floor = lazy.minimum(verdicts, pl.col("len_diff").abs(), decisive, cluster)
    cuts, labels = value_cuts(abs_diff_edges, floor)

    def binned() -> Iterator[pd.DataFrame]:
        for f in frames:
            yield f.assign(abs_diff_bin=cut_values(f["abs_diff"], cuts, labels).values)

    return binned(), pd.Index(labels)


def _strata(data: pd.DataFrame) -> np.ndarray:
    """The stratum (benchmark split) of every row."""
    return (data["benchmark"].astype(str) + "|" + data["split"].astype(str)).to_numpy()


def _statistics(sums: np.ndarray) -> dict[str, np.ndarray]:
    """P(picks longer) per condition from (resampled) sums k, n of all / better / worse."""
    all_, better, worse = (stats.ratio_replicates(sums[:, i], sums[:, i + 1]) for i in (0, 2, 4))
    return {
        "all": all_,
        "longer is better": better,
        "longer is worse": worse,
        "balanced": (better + worse) / 2,
    }


def _condition_rates(
    g: pd.DataFrame,
    *,
    n_boot: int,
    rng: np.random.Generator,
    level: float,
    tested: Sequence[str],
) -> dict[str, dict[str, Any]]:
    """Return the rate, interval and test columns of one group under each condition."""
    v = g["value"].to_numpy()
    better, worse = g["better"].to_numpy(), g["worse"].to_numpy()
    cols = np.column_stack([v, np.ones_like(v), v * better, better, v * worse, worse])
    per, strata = unit_sums(cols, g["unit"].to_numpy(), g["stratum"].to_numpy())
    point = _statistics(cols.sum(axis=0)[None, :])
    reps = _statistics(stratified_sums(per, strata, n_boot=n_boot, rng=rng))
    sel = {"all": np.ones(len(v), bool), "longer is better": better, "longer is worse": worse}
    sel["balanced"] = better | worse
    out = {}
    for c in CONDITIONS:
        m = sel[c]
        n, k = int(m.sum()), float(v[m].sum())
        low, high = stats.percentile_interval(reps[c], level=level) if n else (np.nan, np.nan)
        if c == "balanced" and not (better.any() and worse.any()):
            low = high = np.nan
        binary = c != "balanced" and n > 0
        w_low, w_high = stats.wilson_interval(k, n, level=level) if binary else (np.nan, np.nan)
        wanted = c in _TESTED and c in tested and n
        test = _test(c, reps[c], per, strata, rng) if wanted else {}
        out[c] = {
            "value": float(point[c][0]),
            "k": k if c != "balanced" else np.nan,
            "n": n,
            "n_items": clusters.n_distinct(g["item"].to_numpy()[m]),
            "n_clusters": clusters.n_distinct(g["unit"].to_numpy()[m]),
            "ci_low": float(low),
            "ci_high": float(high),
            "wilson_low": float(w_low),
            "wilson_high": float(w_high),
            "p_value": test.get("p_value", np.nan),
            "p_bound": test.get("p_bound", pd.NA),
            "n_boot_p": test.get("n_boot_p", 0),
            "n_eff_clusters": np.nan,
            "few_clusters": pd.NA,
            "method": f"percentile cluster bootstrap (B={n_boot})",
        }
    return out


def _wild_rates(
    g: pd.DataFrame,
    *,
    n_boot: int,
    seed: int,
    key: tuple,
    level: float,
    wanted: Sequence[str],
) -> dict[str, dict[str, Any]]:
    """The rows of `wanted` conditions of one group through `core.estimates` (the default)."""
    v = g["value"].to_numpy()
    better, worse = g["better"].to_numpy(), g["worse"].to_numpy()
    unit, items = g["unit"].to_numpy(), g["item"].to_numpy()
    sel = {"all": np.ones(len(v), bool), "longer is better": better, "longer is worse": worse}
    sel["balanced"] = better | worse
    out = {}
    for c in CONDITIONS:
        if c not in wanted:
            continue
        m = sel[c]
        null = 0.5 if c in _TESTED else np.nan
        rng = estimates.seeded(seed, "picks_longer", c, *key)
        kw = dict(null=null, level=level, n_boot=n_boot, rng=rng, bounds=(0.0, 1.0))
        if c == "balanced":
            group = better[m].astype(np.int64)  # 0: longer is worse, 1: longer is better
            if better.any() and worse.any():
                est = estimates.contrast(v[m], np.ones(m.sum()), group, unit[m], [0.5, 0.5], **kw)
            else:
                est = estimates.contrast(v[:0], v[:0], group[:0], unit[:0], [0.5, 0.5], **kw)
        else:
            est = estimates.ratio(v[m], np.ones(m.sum()), unit[m], **kw)
        n, k = int(m.sum()), float(v[m].sum())
        binary = c != "balanced" and n > 0
        w_low, w_high = stats.wilson_interval(k, n, level=level) if binary else (np.nan, np.nan)
        out[c] = {
            **est.fields(),
            "k": k if c != "balanced" else np.nan,
            "n": n,
            "n_items": clusters.n_distinct(items[m]),
            "n_clusters": clusters.n_distinct(unit[m]),
            "wilson_low": float(w_low),
            "wilson_high": float(w_high),
            "p_bound": False if c in _TESTED and n else pd.NA,
            "n_boot_p": n_boot if c in _TESTED and n else 0,
        }
    return out


def _test(
    condition: str,
    first: np.ndarray,
    per: np.ndarray,
    strata: np.ndarray,
    rng: np.random.Generator,
) -> dict[str, Any]:
    """The adaptive bootstrap p-value of P(picks longer) = 0.5 under `condition`."""
    if np.isnan(first).all():
        return {}

    def draw(k: int) -> np.ndarray:
        return _statistics(stratified_sums(per, strata, n_boot=k, rng=rng))[condition]

    res = inference.adaptive_p(draw, null=0.5, first=first, n_boot=len(first))
    return {"p_value": res.p, "p_bound": bool(res.bound), "n_boot_p": res.n_boot}


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
    if lazy.is_lazy(table):  # pointwise scores of a large source: its scored rows in pandas
        table = lazy.collect(table, where=pl.col(value).is_not_null())
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
