"""Pairwise rates straight from a lazy judgments scan: 10^7–10^8 rows in bounded memory.

The same numbers as `item_outcomes` → `pairwise_rates`, without a pandas frame of the rows:

1. `unit_values` (`scan_values`) reduces the judgments (a polars LazyFrame: projection and
   predicate pushdown, streaming) to one row per judge × group keys × item × sample holding
   the per-item numerator/denominator columns `pairwise_rates` sums (`VALUE_COLUMNS`);
2. by default (`inference="wild"`) the scan aggregates, per (group, sample) cell and unit
   label (the cluster, or the item), the moment sums of `units.moment_columns` — Σ 1[den >
   0], Σ value, Σ value², Σ num·den per metric — and hands them to `rates.wild_rows`, the
   very code `pairwise_rates` runs on its own per-unit sums: `core.estimates.from_sums`
   gets identical arrays, so estimates, intervals, p-values and effective clusters are the
   same given the seed. Cells of items without clusters too large for the wild bootstrap
   (`core.wild.MAX_CELLS`) are held as their distinct item rows with counts (a few
   hundred rows whatever the size) and get the CR1 t(G − 1) Wald row, as in pandas;
3. with `inference="bootstrap"` (the earlier default) it reduces each cell to the distinct
   value rows of its resampling units and their counts and bootstraps them with
   multinomial weights (`stats.bootstrap_sums` draws exactly so whenever the distinct rows
   are few: then the intervals equal the pandas path given the same seed; small cells fall
   back to the unit rows themselves, in the order that path resamples them, so they do too).

Per-split cells, the `pooled` and `mean_of_splits` rows, the position test and every column
of the result are those of `pairwise_rates`.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import pandas as pd
import polars as pl

from judgelab.analyses.pairwise import lazy as _lazy
from judgelab.analyses.pairwise import rates as rates_module
from judgelab.analyses.pairwise import resample
from judgelab.analyses.pairwise import units as _units
from judgelab.analyses.pairwise.outcomes import CLUSTER, GROUPS, INVALID_POLICIES
from judgelab.analyses.pairwise.rate_metrics import _Boot, _layout
from judgelab.analyses.pairwise.rates import (
    INFERENCE,
    UnitCell,
    _finish,
    _wanted,
    cells_across,
    wild_rows,
    wild_table,
)
from judgelab.analyses.pairwise.rates_bootstrap import _aggregate_frames, _Cell, _ratio_frame
from judgelab.analyses.pairwise.scan_units import PatternUnits, UnitStrata
from judgelab.analyses.pairwise.scan_values import (
    _UNIT,
    VALUE_COLUMNS,
    _reduce,
    carries,
    unit_moments,
    unit_values,
)
from judgelab.analyses.pairwise.scan_wild import (
    _check_across,
    _check_found,
    _duplicate_message,
    _first_seen,
    _moment_exprs,
    _wild_fused,
    cell_units,
    coded,
)
from judgelab.core import stats, wild
from judgelab.core.scan import filtered, scan_judgments
from judgelab.errors import check_choice

#: Rows one group-by pass reduces at most (`scan_rates(rows_per_pass=...)`).
ROWS_PER_PASS = 10_000_000


def _as_lazy(judgments: pl.LazyFrame | pl.DataFrame | str | os.PathLike[str] | Sequence) -> Any:
    if isinstance(judgments, pl.LazyFrame):
        return judgments
    if isinstance(judgments, pl.DataFrame):
        return judgments.lazy()
    return scan_judgments(judgments)


def _filtered(lf: pl.LazyFrame, filters: dict[str, Sequence[str]]) -> pl.LazyFrame:
    for col, wanted in filters.items():
        if wanted:
            lf = filtered(lf, pl.col(col).cast(pl.String).is_in(list(wanted)))
    return lf


def scan_rates(
    judgments: pl.LazyFrame | pl.DataFrame | str | os.PathLike[str] | Sequence,
    *,
    judges: Sequence[str] = (),
    benchmarks: Sequence[str] = (),
    splits: Sequence[str] = (),
    groups: Sequence[str] = GROUPS,
    invalid_policy: str = "repo",
    cluster: str | None = CLUSTER,
    across: str | None = "split",
    n_boot: int = 1000,
    seed: int = 0,
    level: float = 0.95,
    interval: str = "expanded",
    inference: str = "wild",
    metrics: Sequence[str] | None = None,
    rows_per_pass: int = ROWS_PER_PASS,
    memo: dict | None = None,
) -> pd.DataFrame:
    """Return `pairwise_rates(item_outcomes(judgments))` computed from a lazy scan.

    Args:
        judgments: A polars LazyFrame (or DataFrame) of judgments, or parquet files (a file,
            a folder, a glob or a list: `core.scan.scan_judgments`). Only the key and
            verdict columns are read; the filters below are pushed into the scan.
        judges: Keep these judges (all when empty; an unknown one raises ValueError).
        benchmarks: Keep these benchmarks (all when empty).
        splits: Keep these splits (all when empty).
        groups: As `item_outcomes`.
        invalid_policy: As `item_outcomes`.
        cluster: The resampling-unit column (used when the scan has it), or None for items.
            Judgments parquet does not store it: join it from the items table first
            (`core.scan.attach_clusters`), as the catalog's loaders do.
        across: As `pairwise_rates`.
        n_boot: As `pairwise_rates`.
        seed: As `pairwise_rates`.
        level: As `pairwise_rates`.
        interval: As `pairwise_rates`.
        inference: As `pairwise_rates` ("wild": the per-cluster sums of the scan go to
            `core.estimates`, the very arrays `pairwise_rates` builds from item rows).
        metrics: As `pairwise_rates`.
        rows_per_pass: Most rows one group-by pass reduces (bounds memory: ~150 bytes per
            item); larger scans are reduced judge by judge (`passes`).
        memo: A dict to keep the scan's reduction in (by filters and options) and to take
            it from on a later call with the same ones: the same `judgments` only.

    Returns:
        The table of `pairwise_rates`, same rows, order and numbers (module docstring).
    """
    check_choice("interval", interval, resample.INTERVALS)
    check_choice("inference", inference, INFERENCE)
    wanted = _wanted(metrics)
    source = _as_lazy(judgments)
    lf = _filtered(source, {"judge": judges, "benchmark": benchmarks, "split": splits})
    groups = list(groups)
    keys = [*groups, "sample"]
    if across is not None and across not in groups:
        raise KeyError(f"across={across!r} is not a group column of the outcomes ({groups})")
    check_choice("invalid_policy", invalid_policy, INVALID_POLICIES)
    if "judge" not in groups:
        raise ValueError(f"groups must include 'judge', got {groups}")
    key = (tuple(groups), invalid_policy, cluster, rows_per_pass,
           tuple(judges), tuple(benchmarks), tuple(splits))  # fmt: skip
    reduced = None if memo is None else memo.get(key)
    if inference == "wild" and carries(lf.collect_schema().names(), groups, cluster):
        boot = _Boot(n_boot, seed, level, cluster, interval)
        reduced, out = _wild_fused(lf, source, judges, groups, invalid_policy, cluster,
                                   rows_per_pass, across, boot, wanted)  # fmt: skip
        if memo is not None:
            memo[key] = reduced
        return out
    if reduced is None:
        reduced = _reduce(lf, groups, invalid_policy, cluster, rows_per_pass)
        if memo is not None:
            memo[key] = reduced
    pats, units, items, carry = reduced
    if pats["_dup"].any():
        raise ValueError(_duplicate_message(lf, groups))
    _check_found(pats, source, judges)
    if pats.is_empty():
        raise ValueError("scan_rates: no judgments (after the judge/benchmark/split filters)")
    _check_across(pats, across)
    boot = _Boot(n_boot, seed, level, cluster, interval)
    lay = _layout(list(VALUE_COLUMNS))
    if inference == "wild":
        split, aggregated = {}, {}
        for cells in _wild_cells(pats, items, keys, lay, boot, rows_per_pass, across):
            rows, aggregates = wild_rows(cells, keys, across, lay, boot, wanted)
            split.update(rows)  # the batch's unit arrays go with `cells`
            aggregated.update(aggregates)
        order = _first_seen(pats, keys)[1]
        return wild_table(order, split, aggregated, keys, across, wanted)
    cells = _cells(pats, units, keys, carry, boot, rows_per_pass)
    rows = [
        _ratio_frame(dict(zip(keys, c.key, strict=True)), "split", c, lay, boot) for c in cells
    ]
    if across is not None:
        for base, members in cells_across(cells, keys, across):
            rows.extend(_aggregate_frames(base, across, members, lay, boot))
    return _finish(pd.concat(rows, ignore_index=True), wanted, interval)


@functools.wraps(rates_module.pairwise_rates)
def pairwise_rates(outcomes: Any, **kw: Any) -> pd.DataFrame:  # noqa: D103 (wraps)
    if not isinstance(outcomes, _lazy.LazyOutcomes):
        return rates_module.pairwise_rates(outcomes, **kw)
    # a large source (`lazy.LazyOutcomes`): per-unit sums in polars, the same resampling
    cluster = kw.pop("cluster", CLUSTER)
    unit = cluster if cluster is not None and outcomes.cluster is not None else None
    return scan_rates(
        outcomes.judgments,
        groups=list(outcomes.groups),
        invalid_policy=outcomes.invalid_policy,
        cluster=unit,
        rows_per_pass=_lazy.ROWS_PER_PASS,
        memo=outcomes.reduced,
        **kw,
    )


def _batches(pats: pl.DataFrame, keys: list[str], need: list[tuple], rows: int) -> list[list]:
    """Split `need` into batches of whole judges holding at most ~`rows` judgment rows each.

    Each batch is collected on its own (its judges' rows only: the filter reaches the scan),
    so the per-unit group-by of a large scan stays bounded, as `passes` bounds the patterns.
    """
    at = keys.index("judge")
    per_judge: dict[Any, int] = {}
    size = pats.group_by(keys).agg(pl.col("_items").sum())
    sizes = {tuple(r[:-1]): int(r[-1]) for r in size.iter_rows()}
    for key in need:
        per_judge[key[at]] = per_judge.get(key[at], 0) + 2 * sizes.get(tuple(key), 0)
    out: list[list] = []
    held, total = [], 0
    for judge, n in per_judge.items():
        if held and total + n > rows:
            out.append(held)
            held, total = [], 0
        held.append(judge)
        total += n
    if held:
        out.append(held)
    return [[k for k in need if k[at] in batch] for batch in out]


def _cells(
    pats: pl.DataFrame,
    units: pl.LazyFrame,
    keys: list[str],
    carry: bool,
    boot: Any,
    rows_per_pass: int = ROWS_PER_PASS,
) -> list:
    """Return the `pairwise_rates` cells (sums, replicates, strata) in first-seen order."""
    parts, order = _first_seen(pats, keys)
    held: dict[tuple, PatternUnits] = {}
    need_rows = []
    for key in order:
        part = parts[key].filter(pl.col("complete") > 0)
        values = part.select(VALUE_COLUMNS).to_numpy().astype(np.float64)
        counts = part["_count"].to_numpy().astype(np.int64)
        if PatternUnits.fits(values, counts):
            held[key] = PatternUnits(values, counts)
        else:
            need_rows.append(key)
    for batch in _batches(pats, keys, need_rows, rows_per_pass):
        held.update(_rows_units(units, keys, batch, carry))
    cells = []
    for key in order:
        part = parts[key]
        incomplete = float(part.filter(pl.col("complete") == 0)["_items"].sum())
        unit = held[key]
        reps = unit.draw(boot.n_boot, stats.rng_for(boot.seed, *key))
        cells.append(_Cell(key, unit.sums(), reps, incomplete, UnitStrata([unit])))
    return cells


def _wild_cells(
    pats: pl.DataFrame,
    items: pl.LazyFrame,
    keys: list[str],
    lay: Any,
    boot: Any,
    rows_per_pass: int = ROWS_PER_PASS,
    across: str | None = None,
) -> Iterator[list[UnitCell]]:
    """Yield the cells of the wild path of items without clusters, a batch of judges at a time.

    A cell's units are its items' moment sums with their labels, collected from the item
    rows (`unit_moments`) — what `pairwise_rates` sums from its rows; a cell too large for
    the wild bootstrap is held as its distinct item rows with counts (the Wald fallback
    needs no labels): a few hundred rows. Batches hold at most ~`rows_per_pass` judgment
    rows; one batch when `across` is `judge` (an aggregate over judges needs all of them).
    Clustered scans take `scan_wild._wild_fused`.
    """
    parts, order = _first_seen(pats, keys)
    batches = [order] if across == "judge" else _batches(pats, keys, order, rows_per_pass)
    for batch in batches:
        held: dict[tuple, _units.CellUnits] = {}
        need = []
        for key in batch:
            part = parts[key].filter(pl.col("complete") > 0)
            if wild.beyond_limit(int(part["_count"].sum()), boot.n_boot):
                vals = part.select(VALUE_COLUMNS).to_numpy().astype(np.float64)
                rows = _units.moment_columns(vals, lay.num, lay.den)
                held[key] = _units.patterns(rows, part["_count"].to_numpy())
            else:
                need.append(key)
        held.update(_moment_units(items, keys, need, lay))
        cells = []
        for key in batch:
            incomplete = float(parts[key].filter(pl.col("complete") == 0)["_items"].sum())
            cells.append(UnitCell(key, held[key], incomplete))
        yield cells


def _of_judges(lf: pl.LazyFrame, need: list[tuple], keys: list[str]) -> pl.LazyFrame:
    """Keep the rows of the judges of `need` (pushed down to the scan's row groups)."""
    judges = sorted({str(k[keys.index("judge")]) for k in need})
    return lf.filter(pl.col("judge").cast(pl.String).is_in(judges))


def _moment_units(
    items: pl.LazyFrame, keys: list[str], need: list[tuple], lay: Any
) -> dict[tuple, _units.CellUnits]:
    """Collect the per-item moment sums (`units.moment_columns`) of the cells in `need`."""
    width = _units.layout(lay.num, lay.den, len(VALUE_COLUMNS)).width
    out = {key: _units.cell_units(np.zeros((0, width)), np.array([])) for key in need}
    if not need:
        return out
    exprs, spread = _moment_exprs(lay)
    moments = [e.alias(f"_m{i}") for i, e in enumerate(exprs)]
    schema = items.collect_schema()
    wanted = pl.DataFrame(
        [list(k) for k in need], schema=[(k, schema[k]) for k in keys], orient="row"
    )
    cells = _of_judges(items, need, keys).join(wanted.lazy(), on=keys, how="semi",
                                              nulls_equal=True)  # fmt: skip
    got = coded(unit_moments(cells, keys, moments, carry=False))
    for key, part in got.partition_by(keys, as_dict=True).items():
        out[key] = cell_units(part, spread)
    return out


def _rows_units(
    units: pl.LazyFrame, keys: list[str], need: list[tuple], carry: bool
) -> dict[tuple, PatternUnits]:
    """Collect the unit rows of the cells in `need` (small ones), in resampling order.

    Items are resampled in order of first appearance; clusters in sorted order of their
    names — unless every cluster holds one item (then as items), as `resample.unit_codes`.
    """
    if not need:
        return {}
    schema = units.collect_schema()
    wanted = pl.DataFrame(
        [list(k) for k in need], schema=[(k, schema[k]) for k in keys], orient="row"
    )
    got = (
        _of_judges(units, need, keys)
        .filter(pl.col("complete") > 0)
        .join(wanted.lazy(), on=keys, how="semi", nulls_equal=True)
        .collect(engine="streaming")
    )
    out = {}
    for key, part in got.partition_by(keys, as_dict=True).items():
        own = not carry or len(part) == int(part["_items"].sum())
        part = part.sort("_first" if own else _UNIT)
        out[key] = PatternUnits(rows=part.select(VALUE_COLUMNS).to_numpy().astype(np.float64))
    for key in need:
        if key not in out:  # a cell of incomplete items only
            out[key] = PatternUnits(rows=np.zeros((0, len(VALUE_COLUMNS))))
    return out


__all__ = ["ROWS_PER_PASS", "VALUE_COLUMNS", "pairwise_rates", "scan_rates", "unit_values"]
