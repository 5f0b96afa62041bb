"""Pairwise rates per (judge, group, sample) with their intervals and tests (spec 000 §4).

`pairwise_rates` turns `item_outcomes` into every rate of `METRICS`, each a ratio of sums over
the complete items of a group, plus the two averages across splits: `pooled` over items and
`mean_of_splits`. By default (`inference="wild"`) every row is one `core.estimates` row: the
interval that inverts the restricted wild cluster bootstrap test over the `cluster` units
(`units`), the effective number of clusters and the `few_clusters` flag; the position-A
preference among decisive verdicts carries the test of "A as often as B" (p = 1/2), which
therefore always agrees with its interval. `inference="bootstrap"` is the earlier default
(a percentile cluster bootstrap, t-expanded, with an adaptive bootstrap p-value:
`rates_bootstrap`, `resample`). `METRICS` and the per-item values live in `rate_metrics`.
`rates_for` and `rates_wide` filter and reshape the long result. Rates are fractions in
[0, 1]; notebooks show them in percent.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from judgelab.analyses.pairwise import resample, units
from judgelab.analyses.pairwise.outcomes import CLUSTER, group_columns
from judgelab.analyses.pairwise.rate_metrics import (
    AGGREGATIONS,
    MEAN_OF_SPLITS,
    METRICS,
    POOLED,
    POSITION_RATES,
    POSITION_TEST,
    SIGNED,
    TESTED,
    _Boot,
    _Layout,
    _layout,
    _value_matrix,
    reasons,
)
from judgelab.analyses.pairwise.rates_bootstrap import (
    _aggregate_frames,
    _ratio_frame,
    _split_cells,
)
from judgelab.core import estimates, stats, wild
from judgelab.core.schema import require_columns as _require
from judgelab.errors import check_choice

#: Inference of the rows: the wild cluster bootstrap (default) or the earlier percentile
#: cluster bootstrap with its adaptive p-value.
INFERENCE = ("wild", "bootstrap")
#: `method` of the rows of `inference="bootstrap"`.
BOOTSTRAP_METHOD = "cluster bootstrap, percentile ({interval}); adaptive bootstrap p"


def pairwise_rates(
    outcomes: pd.DataFrame,
    *,
    across: str | None = "split",
    n_boot: int = 1000,
    seed: int = 0,
    level: float = 0.95,
    cluster: str | None = CLUSTER,
    interval: str = "expanded",
    inference: str = "wild",
    metrics: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Return every pairwise rate per (group, sample) with its interval, test and clusters.

    Rates (fractions; numerator / denominator summed over the complete items of a group):
    `a1`, `a2` (accuracy in order 0 / order 1), `ca` (consistent accuracy), `oa` (optimistic
    accuracy) — over items with gold, NaN when there is none; `cons` (consistency, per the
    invalid policy of `item_outcomes`) over complete items; `run_gap` = a2 − a1 (> 0: the
    judge favours the second position, spec §4.7); the **position-A preference** in two
    denominators: `pos_a_rate` (the default, spec 000 §4.7: A-verdicts over *all valid*
    verdicts of both orders, ties included) and `pos_a_rate_decisive` (over valid non-tie
    verdicts only, the rate earlier versions reported as `pos_a_rate`; 0.5 = no preference);
    they agree when the judge never ties; `flip_rate` (the verdict changes with the order,
    over items with two valid verdicts); `share_<category>` for the `CATEGORIES` of
    `item_outcomes` (they sum to 1); `both_invalid`; `invalid_0`, `invalid_1` (invalid rate
    per order). Items lacking an order are excluded and counted in `n_incomplete`.

    Intervals and tests (`inference`):

    - `"wild"` (default): every row is a `core.estimates` row over the resampling units —
      the clusters of the `cluster` column (`item_outcomes` carries it from the judgments;
      an item without one is its own unit), or items when the column is absent or `cluster`
      is None. `ci_low`/`ci_high` invert the restricted wild cluster bootstrap test (Webb
      weights below 12 clusters; B = `n_boot`), so the `pos_a_rate_decisive` row's
      `p_value` (of "A as often as B": the decisive share is 1/2, `POSITION_TEST`) is below
      1 − `level` exactly when 1/2 lies outside its interval. `n_eff_clusters` is the
      effective number of clusters, `few_clusters` flags fewer than 20, `method` names
      the interval (a Wilson interval with one trial per cluster when every cluster sits at
      0 or 1; the CR1 t(G − 1) Wald interval for cells whose B × G exceeds
      `core.wild.MAX_CELLS`). Each row's generator is seeded by `seed`, its aggregation,
      group key and metric (a row does not change when other rows are added).
    - `"bootstrap"` (the earlier default): a percentile bootstrap over the same units, one
      resample per group shared by its rates (`interval`: the t_{G−S}-expanded percentile
      interval, `resample.interval`, or the plain "percentile" one), and an adaptive
      bootstrap p-value on the decisive row (`p_bound` True: p is an upper bound).

    `wilson_low`/`wilson_high` treat k of n as independent binomial trials (optimistic with
    clusters, and for the position rates whose trials are verdicts, two per item;
    `run_gap` has none).

    Averages across `across` (default the split) are added per remaining group key:
    `pooled` (Σ numerators / Σ denominators over all items, ContextualJudgeBench "Average")
    and `mean_of_splits` (unweighted mean of the per-split rates that are defined). With the
    wild bootstrap their units are the clusters of all splits (one source in two splits is
    one unit); the earlier bootstrap resampled each split on its own. Wilson applies to
    `pooled` only. In those rows the `across` column holds `pooled` / `mean_of_splits` and
    `aggregation` says the same; per-split rows have `aggregation` = `split`.

    Args:
        outcomes: Output of `item_outcomes`.
        across: The group column to average over, or None for no averages.
        n_boot: Bootstrap replicates B.
        seed: Seed of the bootstrap.
        level: Confidence level of every interval.
        cluster: Column of `outcomes` with the resampling unit, or None for items.
        interval: With `inference="bootstrap"`: "expanded" (t_{G−S} percentile levels;
            default) or "percentile" (legacy).
        inference: "wild" (default) or "bootstrap" (the earlier default).
        metrics: Compute only these metrics (default: all of `METRICS`, in that order).

    Returns:
        Long table: the group columns, `sample`, `aggregation`, `metric`, `value`, `k`
        (numerator sum; NaN for `mean_of_splits`), `n` (denominator sum), `n_clusters`
        (units behind the row), `ci_low`, `ci_high`, `wilson_low`, `wilson_high`, `n_items`
        (complete items), `n_gold`, `n_incomplete`, `p_value`, `p_bound`, `n_boot_p`,
        `n_eff_clusters`, `few_clusters`, `method`, `reason` (why a row has no value, e.g.
        items judged in one presentation order only; "" when it has one).
    """
    groups = group_columns(outcomes)
    _check_across(outcomes, groups, across)
    keys = [*groups, "sample"]
    check_choice("interval", interval, resample.INTERVALS)
    check_choice("inference", inference, INFERENCE)
    wanted = _wanted(metrics)
    values, names = _value_matrix(outcomes)
    lay = _layout(names)
    boot = _Boot(n_boot, seed, level, cluster, interval)
    if inference == "wild":
        cells = _unit_cells(outcomes, values, keys, lay, cluster, n_boot)
        return wild_rates(cells, keys, across, lay, boot, wanted)
    cells = _split_cells(outcomes, values, keys, lay, boot)
    rows = [
        _ratio_frame(dict(zip(keys, c.key, strict=True)), "split", c, lay, boot) for c in cells
    ]
    if across is not None:
        for base, members in cells_across(cells, keys, across):
            rows.extend(_aggregate_frames(base, across, members, lay, boot))
    return _finish(pd.concat(rows, ignore_index=True), wanted, interval)


def _wanted(metrics: Sequence[str] | None) -> list[str]:
    if metrics is None:
        return list(METRICS)
    unknown = [m for m in metrics if m not in METRICS]
    if unknown:
        raise ValueError(f"unknown metric(s) {unknown}; known: {list(METRICS)}")
    return [m for m in METRICS if m in set(metrics)]


def _finish(out: pd.DataFrame, wanted: list[str], interval: str | None) -> pd.DataFrame:
    """Cast the count columns; for the bootstrap path add the engine's columns and filter."""
    if interval is not None:
        out["n_eff_clusters"] = np.nan
        out["few_clusters"] = False
        out["method"] = BOOTSTRAP_METHOD.format(interval=interval)
        if len(wanted) < len(METRICS):
            out = out[out["metric"].isin(wanted)].reset_index(drop=True)
    for c in ("n_items", "n_gold", "n_incomplete", "n_clusters", "n_boot_p"):
        out[c] = out[c].astype(int)
    out["few_clusters"] = out["few_clusters"].astype(bool)
    out["reason"] = reasons(out)
    return out


class UnitCell(NamedTuple):
    """One (group, sample) cell for the wild path: its units and its incomplete items."""

    key: tuple
    units: units.CellUnits
    incomplete: float


def _unit_cells(
    outcomes: pd.DataFrame,
    values: np.ndarray,
    keys: list[str],
    lay: _Layout,
    cluster: str | None,
    n_boot: int,
) -> list[UnitCell]:
    """Return every (group, sample) cell's units (moment sums by unit label), first-seen order.

    Items without clusters too many for the wild bootstrap (`core.wild.beyond_limit`) are held as
    their distinct rows with counts, as the scan holds them (`scan._wild_cells`).
    """
    complete = outcomes["complete"].to_numpy(dtype=bool)
    moments = units.moment_columns(values, lay.num, lay.den)
    item_keys = [k for k in keys if k not in ("judge", "sample")]
    labels = units.unit_labels(outcomes, cluster, item_keys)
    items = cluster is None or cluster not in outcomes.columns
    cells = []
    grouped = outcomes.groupby(keys, sort=False, observed=True, dropna=False)
    for key, idx in grouped.indices.items():
        key = key if isinstance(key, tuple) else (key,)
        idx = np.asarray(idx)
        keep = idx[complete[idx]]
        if items and wild.beyond_limit(len(keep), n_boot):
            cell = units.patterns(moments[keep])
        else:
            cell = units.cell_units(moments[keep], labels[keep])
        cells.append(UnitCell(key, cell, float(len(idx) - len(keep))))
    return cells


def wild_rates(
    cells: list[UnitCell],
    keys: list[str],
    across: str | None,
    lay: _Layout,
    boot: _Boot,
    wanted: list[str],
) -> pd.DataFrame:
    """Return the rates table of the wild path from its cells (`pairwise_rates`, `scan_rates`)."""
    split, aggregated = wild_rows(cells, keys, across, lay, boot, wanted)
    return wild_table([c.key for c in cells], split, aggregated, keys, across, wanted)


def wild_rows(
    cells: list[UnitCell],
    keys: list[str],
    across: str | None,
    lay: _Layout,
    boot: _Boot,
    wanted: list[str],
) -> tuple[dict[tuple, dict], dict[tuple, list[dict]]]:
    """Return each cell's split row (by key) and each group's aggregates over `across`.

    Aggregates are keyed by the group's other keys. A group's cells must all be in `cells`:
    a caller may pass them a group at a time (the scan, judge by judge, holds one batch's
    unit arrays at once) and `wild_table` orders them.
    """
    mlay = units.layout(lay.num, lay.den, lay.n_values)
    which = [list(METRICS).index(m) for m in wanted]
    split = {
        c.key: _wild_frame(
            dict(zip(keys, c.key, strict=True)), "split", [c], mlay, lay, boot, which
        )  # fmt: skip
        for c in cells
    }
    aggregated: dict[tuple, list[dict]] = {}
    if across is not None:
        for base, members in cells_across(cells, keys, across):
            aggregated[tuple(base.values())] = [
                _wild_frame({**base, across: agg}, agg, members, mlay, lay, boot, which)
                for agg in AGGREGATIONS
            ]
    return split, aggregated


def wild_table(
    order: list[tuple],
    split: dict[tuple, dict],
    aggregated: dict[tuple, list[dict]],
    keys: list[str],
    across: str | None,
    wanted: list[str],
) -> pd.DataFrame:
    """Lay out `wild_rows`' rows: splits in `order` (cell keys), then the groups' aggregates.

    Groups come in the first-seen order of their cells, as `cells_across` gives them.
    """
    rows = [split[key] for key in order]
    if across is not None:
        for base, _ in cells_across([(key,) for key in order], keys, across):
            rows.extend(aggregated[tuple(base.values())])
    merged = {c: [v for r in rows for v in r[c]] for c in rows[0]}  # dtypes inferred once
    return _finish(pd.DataFrame(merged), wanted, None)


def _totals(cell: units.CellUnits) -> np.ndarray:
    """Return the moment sums over all units of a cell."""
    tot = cell.rows.sum(axis=0) if cell.counts is None else cell.counts @ cell.rows
    return tot if cell.cols is None else tot[cell.cols]


def _replicates(e: estimates.Estimate) -> int:
    """Return B of a tested wild row (from its `method`), 0 for an untested one."""
    if not np.isfinite(e.p_value):
        return 0
    found = re.search(r"B=(\d+)", e.method)
    return int(found.group(1)) if found else 0


def _wild_frame(
    key: dict,
    aggregation: str,
    members: list[UnitCell],
    mlay: units.Moments,
    lay: _Layout,
    boot: _Boot,
    which: list[int],
) -> dict[str, Any]:
    """Return the `estimates` rows (columns) of one split cell, or of an average over `members`.

    `pooled` is the ratio Σ num / Σ den over the union of the splits' units (a source in two
    splits is one unit): residuals about the pooled value, so differences between splits
    count as variation — conservative when split sizes are fixed by design, and what keeps
    the interval covering when a split has only a few clusters (the stratified contrast,
    residuals within each split, covered 0.88–0.90 with a 3-cluster split; issue 33).
    `mean_of_splits` is the contrast of the per-split ratios with equal weights over the
    splits where the rate is defined (residuals within each split).
    """
    names = list(METRICS)
    mean = aggregation == MEAN_OF_SPLITS
    parts = [m.units for m in members]
    totals = [_totals(c) for c in parts]
    tot = np.sum(totals, axis=0)
    if not mean and len(parts) > 1:  # the pooled row: one ratio over the union of units
        parts = [units.union(parts)]
        totals = [tot]
    aligned = units.align(parts)
    ests = []
    for i in which:
        metric = names[i]
        dens = np.array([t[mlay.den[i]] for t in totals])
        defined = np.flatnonzero(dens > 0) if dens.any() else np.arange(len(dens))
        weights = np.full(len(defined), 1.0 / len(defined))
        s, mult = units.rate_sums(aligned, mlay, i, defined)
        null = POSITION_TEST[1] if metric in TESTED else float("nan")
        rng = estimates.seeded(boot.seed, aggregation, *map(str, key.values()), metric)
        ests.append(
            units.estimate(
                s,
                mult,
                weights,
                null=null,
                level=boot.level,
                n_boot=boot.n_boot,
                rng=rng,
                bounds=(-1.0, 1.0) if metric in SIGNED else (0.0, 1.0),
            )
        )
    k, n = tot[mlay.num[which]], tot[mlay.den[which]]
    binomial = lay.binomial[which] & (not mean)
    w_low, w_high = stats.wilson_interval(k, n, level=boot.level)
    nan = np.full(len(which), np.nan)
    m = len(which)
    return {
        **{c: [v] * m for c, v in key.items()},
        "aggregation": [aggregation] * m,
        "metric": [names[i] for i in which],
        "value": [e.value for e in ests],
        "k": nan if mean else k,
        "n": n,
        "n_clusters": [e.n_clusters for e in ests],
        "ci_low": [e.ci_low for e in ests],
        "ci_high": [e.ci_high for e in ests],
        "wilson_low": np.where(binomial, w_low, np.nan),
        "wilson_high": np.where(binomial, w_high, np.nan),
        "n_items": [tot[mlay.values + lay.complete]] * m,
        "n_gold": [tot[mlay.values + lay.has_gold]] * m,
        "n_incomplete": [float(sum(x.incomplete for x in members))] * m,
        "p_value": [e.p_value for e in ests],
        "p_bound": [False] * m,
        "n_boot_p": [_replicates(e) for e in ests],
        "n_eff_clusters": [e.n_eff_clusters for e in ests],
        "few_clusters": [e.few_clusters for e in ests],
        "method": [e.method for e in ests],
    }


def _check_across(outcomes: pd.DataFrame, groups: list[str], across: str | None) -> None:
    if across is not None and across not in groups:
        raise KeyError(f"across={across!r} is not a group column of the outcomes ({groups})")
    if across is not None:
        clash = set(outcomes[across].astype(str).unique()) & set(AGGREGATIONS)
        if clash:
            raise ValueError(f"{across} value(s) {sorted(clash)} clash with aggregate labels")


def rate_keys(rates: pd.DataFrame) -> list[str]:
    """Return the key columns of a `pairwise_rates` table (everything before `aggregation`)."""
    _require(rates, ["aggregation", "metric", "value"], "expected pairwise_rates(...) output;")
    cols = list(rates.columns)
    return cols[: cols.index("aggregation")]


def cells_across(
    cells: list[tuple], keys: list[str], across: str
) -> list[tuple[dict[str, Any], list]]:
    """Group cells (whose first element is their key tuple over `keys`) over `across`.

    Returns (the other keys as a dict, the member cells) per combination of the other keys,
    in first-seen order: the cells an aggregate over `across` (pooled, mean of splits) uses.
    """
    pos = keys.index(across)
    outer: dict[tuple, list[tuple]] = {}
    for cell in cells:
        outer.setdefault(cell[0][:pos] + cell[0][pos + 1 :], []).append(cell)
    rest = [k for k in keys if k != across]
    return [(dict(zip(rest, okey, strict=True)), members) for okey, members in outer.items()]


def rates_for(
    table: pd.DataFrame,
    *,
    metric: str | Sequence[str] | None = None,
    aggregation: str | Sequence[str] | None = None,
    sample: int | None = None,
) -> pd.DataFrame:
    """Return the rows of a rates-like table for some metrics, aggregations and one sample.

    Works on `pairwise_rates`, `position_preference` and `consistency_categories` output;
    a None filter keeps every value. Metrics keep the order given.
    """
    out = table
    if metric is not None:
        wanted = [metric] if isinstance(metric, str) else list(metric)
        unknown = [m for m in wanted if m not in METRICS]
        if unknown:
            raise ValueError(f"unknown metric(s) {unknown}; known: {list(METRICS)}")
        _require(out, ["metric"], "rates_for")
        out = out[out["metric"].isin(wanted)]
        rank = {m: i for i, m in enumerate(wanted)}
        out = out.iloc[np.argsort(out["metric"].map(rank).to_numpy(), kind="stable")]
    if aggregation is not None:
        wanted = [aggregation] if isinstance(aggregation, str) else list(aggregation)
        bad = [a for a in wanted if a not in ("split", *AGGREGATIONS)]
        if bad:
            raise ValueError(f"unknown aggregation(s) {bad}; known: split, {AGGREGATIONS}")
        _require(out, ["aggregation"], "rates_for")
        out = out[out["aggregation"].isin(wanted)]
    if sample is not None:
        _require(out, ["sample"], "rates_for")
        out = out[out["sample"] == sample]
    return out.reset_index(drop=True)


def rates_wide(
    rates: pd.DataFrame, *, metrics: Sequence[str] = ("a1", "a2", "ca", "oa", "cons")
) -> pd.DataFrame:
    """Return one row per rate key with `<metric>`, `<metric>_low`, `<metric>_high` columns.

    The interval is the bootstrap percentile interval; `n_items`, `n_gold` and
    `n_incomplete` close the row.
    """
    keys = [*rate_keys(rates), "aggregation"]
    data = rates_for(rates, metric=list(metrics))
    idx = data[keys].drop_duplicates()
    out = idx.copy()
    for m in metrics:
        part = data[data["metric"] == m].set_index(keys)
        cols = part[["value", "ci_low", "ci_high"]]
        cols.columns = [m, f"{m}_low", f"{m}_high"]
        out = out.join(cols, on=keys)
    counts = data.drop_duplicates(keys).set_index(keys)[["n_items", "n_gold", "n_incomplete"]]
    return out.join(counts, on=keys).reset_index(drop=True)


__all__ = [
    "AGGREGATIONS",
    "BOOTSTRAP_METHOD",
    "INFERENCE",
    "MEAN_OF_SPLITS",
    "METRICS",
    "POOLED",
    "POSITION_RATES",
    "POSITION_TEST",
    "SIGNED",
    "TESTED",
    "UnitCell",
    "cells_across",
    "pairwise_rates",
    "rate_keys",
    "rates_for",
    "rates_wide",
    "wild_rates",
    "wild_rows",
    "wild_table",
]
