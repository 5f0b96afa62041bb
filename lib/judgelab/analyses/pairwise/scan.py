"""Pairwise rates straight from a lazy judgments scan: 10^7–10^8 rows in bounded memory.

The same numbers as `item_outcomes` → `pairwise_rates`, without a pandas frame of the rows:

1. `unit_values` reduces the judgments (a polars LazyFrame: projection and predicate
   pushdown, streaming) to one row per judge × group keys × item × sample holding the
   per-item numerator/denominator columns `pairwise_rates` sums (`VALUE_COLUMNS`);
2. by default (`inference="wild"`) the scan aggregates, per (group, sample) cell and unit
   label (the cluster, or the item), the moment sums of `units.moment_columns` — Σ 1[den >
   0], Σ value, Σ value², Σ num·den per metric — and hands them to `rates.wild_rates`, the
   very code `pairwise_rates` runs on its own per-unit sums: `core.estimates.from_sums`
   gets identical arrays, so estimates, intervals, p-values and effective clusters are the
   same given the seed. Cells of items without clusters too large for the wild bootstrap
   (`units.WILD_MAX_CELLS`) are held as their distinct item rows with counts (a few
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

import os
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
import polars as pl

from judgelab.analyses.pairwise import rates as _rates
from judgelab.analyses.pairwise import resample
from judgelab.analyses.pairwise import units as _units
from judgelab.analyses.pairwise.outcomes import CLUSTER, GROUPS, INVALID_POLICIES
from judgelab.analyses.pairwise.scan_units import PatternUnits, UnitStrata
from judgelab.core import stats
from judgelab.core.scan import scan_judgments
from judgelab.errors import check_choice

#: The per-unit value columns, in the order of `pairwise_rates`' value matrix.
VALUE_COLUMNS = (
    "complete",
    "has_gold",
    "correct_0",
    "correct_1",
    "consistent",
    "consistently_correct",
    "optimistically_correct",
    "both_invalid",
    "run_gap",
    "picks_a",
    "decisive",
    "valid_verdicts",
    "both_valid",
    "flipped",
    "is_consistent",
    "is_biased_first",
    "is_biased_second",
    "is_inconsistent_tie",
    "is_invalid",
    "invalid_0",
    "invalid_1",
)
_UNIT = "_unit"
#: Rows one group-by pass reduces at most (`scan_rates(rows_per_pass=...)`).
ROWS_PER_PASS = 10_000_000
_POS, _NEG, _TIE, _INVALID = 1, 2, 3, 4


def _as_lazy(judgments: pl.LazyFrame | pl.DataFrame | str | os.PathLike[str] | Sequence) -> Any:
    if isinstance(judgments, pl.LazyFrame):
        return judgments
    if isinstance(judgments, pl.DataFrame):
        return judgments.lazy()
    return scan_judgments(judgments)


def _filtered(lf: pl.LazyFrame, filters: dict[str, Sequence[str]]) -> pl.LazyFrame:
    for col, wanted in filters.items():
        if wanted:
            lf = lf.filter(pl.col(col).cast(pl.String).is_in(list(wanted)))
    return lf


def _unit_states(
    judgments: pl.LazyFrame, groups: list[str], cluster: str | None
) -> tuple[pl.LazyFrame, bool]:
    """Return one row per unit: `_first` (first row), `_state` (packed verdicts), cluster.

    `_state` packs the verdict code of each order (0 missing, 1-4: pos, neg, tie, invalid),
    whether each order's verdict is correct and whether the unit has gold in one integer
    (a few hundred values); -1 when an order occurs twice (the caller raises).
    Returns the frame and whether it carries the cluster column.
    """
    units = [*groups, "item_id", "sample"]
    names = judgments.collect_schema().names()
    missing = [c for c in [*units, "order", "valid", "chosen", "correct"] if c not in names]
    if missing:
        raise KeyError(f"scan_rates: judgments lack column(s) {missing}")
    carry = cluster is not None and cluster in names and cluster not in units
    o0, o1 = pl.col("order") == 0, pl.col("order") == 1
    code = (
        pl.col("chosen")
        .cast(pl.String)
        .replace_strict({"pos": _POS, "neg": _NEG, "tie": _TIE}, default=_INVALID)
        .fill_null(_INVALID)
        .cast(pl.Int32)
    )
    verdict = pl.when(pl.col("valid").fill_null(False)).then(code).otherwise(_INVALID)
    right = pl.col("correct").fill_null(False).cast(pl.Int32)
    i64 = pl.Int64
    if "_row" not in names:
        judgments = judgments.with_row_index("_row")
    rows = judgments.select(
        *units,
        "_row",
        (verdict * o0 + 8 * verdict * o1 + 64 * right * o0 + 128 * right * o1).alias("_p"),
        (
            o0.cast(i64)
            + o1.cast(i64) * 2**20
            + (~o0 & ~o1).cast(i64) * 2**40
            + pl.col("correct").is_not_null().cast(i64) * 2**50
        ).alias("_n"),
        *([pl.col(cluster).cast(pl.String).replace("", None).alias(CLUSTER)] if carry else []),
    )
    aggs = [pl.col("_row").min().alias("_first"), pl.col("_p").sum(), pl.col("_n").sum()]
    if carry:
        aggs.append(pl.col(CLUSTER).drop_nulls().first())
    n, mask = pl.col("_n"), 2**20 - 1
    n0, n1, other = n.and_(mask), (n // 2**20).and_(mask), (n // 2**40).and_(2**10 - 1)
    dup = (n0 > 1) | (n1 > 1) | (other > 0)
    gold = n >= 2**50
    state = pl.when(dup).then(-1).otherwise(pl.col("_p") + gold.cast(pl.Int32) * 256)
    per = rows.group_by(units).agg(aggs)
    return per.with_columns(state.alias("_state")).drop(["_p", "_n"]), carry


def unit_values(
    judgments: pl.LazyFrame,
    *,
    groups: Sequence[str] = GROUPS,
    invalid_policy: str = "repo",
    cluster: str | None = CLUSTER,
) -> pl.LazyFrame:
    """Return one row per group keys × item × sample with the per-item value columns.

    The lazy counterpart of `item_outcomes` followed by the value matrix of
    `pairwise_rates`: `VALUE_COLUMNS` (0/1 or counts; 0 for an incomplete item), `_first`
    (the unit's first row in the scan), `_state` (the packed verdicts: `_unit_states`), and
    `cluster` (the first non-empty cluster value of its rows, when `cluster` is a column).
    """
    check_choice("invalid_policy", invalid_policy, INVALID_POLICIES)
    groups = list(groups)
    if "judge" not in groups:
        raise ValueError(f"groups must include 'judge', got {groups}")
    per, _ = _unit_states(judgments, groups, cluster)
    return per.with_columns(_value_exprs(invalid_policy))


def _value_exprs(invalid_policy: str) -> list[pl.Expr]:
    """Expressions of `VALUE_COLUMNS` from the packed verdicts `_state` of a unit."""
    st = pl.col("_state")
    c0, c1 = st.and_(7), (st // 8).and_(7)
    complete = (c0 != 0) & (c1 != 0)
    gold = complete & (st.and_(256) > 0)
    r0, r1 = gold & (st.and_(64) > 0), gold & (st.and_(128) > 0)
    inv0, inv1 = complete & (c0 == _INVALID), complete & (c1 == _INVALID)
    any_inv = inv0 | inv1
    same_valid = complete & ~any_inv & (c0 == c1)
    consistent = same_valid | (inv0 & inv1) if invalid_policy == "repo" else same_valid
    valid0 = complete & c0.is_in([_POS, _NEG, _TIE])
    valid1 = complete & c1.is_in([_POS, _NEG, _TIE])
    first = complete & (c0 == _POS) & (c1 == _NEG)
    second = complete & (c0 == _NEG) & (c1 == _POS)
    i8 = pl.Int8

    def dec(c: pl.Expr) -> pl.Expr:
        return (complete & c.is_in([_POS, _NEG])).cast(i8)

    values = {
        "complete": complete,
        "has_gold": gold,
        "correct_0": r0,
        "correct_1": r1,
        "consistent": consistent,
        "consistently_correct": r0 & r1,
        "optimistically_correct": r0 | r1,
        "both_invalid": inv0 & inv1,
        "run_gap": r1.cast(i8) - r0.cast(i8),
        "picks_a": (complete & (c0 == _POS)).cast(i8) + (complete & (c1 == _NEG)).cast(i8),
        "decisive": dec(c0) + dec(c1),
        "valid_verdicts": valid0.cast(i8) + valid1.cast(i8),
        "both_valid": valid0 & valid1,
        "flipped": valid0 & valid1 & (c0 != c1),
        "is_consistent": same_valid,
        "is_biased_first": first,
        "is_biased_second": second,
        "is_inconsistent_tie": complete & ~any_inv & (c0 != c1) & ~first & ~second,
        "is_invalid": any_inv,
        "invalid_0": inv0,
        "invalid_1": inv1,
    }
    assert tuple(values) == VALUE_COLUMNS
    return [e.cast(i8).alias(k) for k, e in values.items()]


def _passes(lf: pl.LazyFrame, carry: bool, rows_per_pass: int) -> list[pl.Expr | None]:
    """Return the row filters of the passes that keep each group-by within `rows_per_pass`.

    One pass (None) when the scan is small enough; else one pass per judge (pushed into the
    scan: a judge's files or row groups only), each split by a hash of `item_id` when the
    judge alone is too large (not with clusters: a cluster must stay in one pass).
    """
    n = lf.select(pl.len()).collect(engine="streaming").item()
    if n <= rows_per_pass:
        return [None]
    judge = pl.col("judge").cast(pl.String)
    counts = lf.group_by(judge).agg(pl.len()).collect(engine="streaming").sort("judge")
    out: list[pl.Expr | None] = []
    for name, rows in counts.iter_rows():
        this = judge.is_null() if name is None else judge == name
        parts = 1 if carry else -(-rows // rows_per_pass)
        if parts == 1:
            out.append(this)
            continue
        slot = pl.col("item_id").cast(pl.String).hash(24) % parts
        out.extend(this & (slot == part) for part in range(parts))
    return out


def _reduce(
    lf: pl.LazyFrame,
    groups: list[str],
    invalid_policy: str,
    cluster: str | None,
    rows_per_pass: int,
) -> tuple[pl.DataFrame, pl.LazyFrame, pl.LazyFrame, bool]:
    """Return the patterns of every cell, the lazy unit and item rows behind them, `carry`.

    Patterns: per cell (group keys × sample), the distinct value rows of its resampling units
    with `_count` (units), `_items` (items), `_first` (first row), `_dup`. Without clusters
    every item is a unit and the scan is grouped by packed state (cheap); with them the unit
    is the cluster (the item when it has none) and its row the sums over its complete items;
    incomplete items are gathered into one null unit per cell (all values 0). Large scans are
    reduced in several passes (`_passes`) whose patterns are added up.
    """
    keys = [*groups, "sample"]
    lf = lf.with_row_index("_row")
    per, carry = _unit_states(lf, groups, cluster)
    values = _value_exprs(invalid_policy)
    dup = (pl.col("_state") < 0).alias("_dup")
    own = pl.lit("item|") + pl.col("item_id").cast(pl.String)
    unit = pl.when(pl.col(CLUSTER).is_not_null()).then(pl.col(CLUSTER)).otherwise(own)

    def units_of(per: pl.LazyFrame) -> pl.LazyFrame:
        if not carry:
            return per.with_columns(
                *values, dup, pl.lit(None, pl.String).alias(_UNIT), pl.lit(1).alias("_items")
            )
        items = per.with_columns(*values, dup)
        items = items.with_columns(pl.when(pl.col("complete") == 1).then(unit).alias(_UNIT))
        return items.group_by([*keys, _UNIT]).agg(
            *[pl.col(c).cast(pl.Int64).sum() for c in VALUE_COLUMNS],
            pl.len().alias("_items"),
            pl.col("_first").min(),
            pl.col("_dup").any(),
        )

    by = [*keys, *(VALUE_COLUMNS if carry else ["_state"])]
    flags = [pl.col("_dup").any()] if carry else []
    parts = []
    for where in _passes(lf, carry, rows_per_pass):
        one, _ = _unit_states(lf if where is None else lf.filter(where), groups, cluster)
        src = units_of(one) if carry else one.with_columns(pl.lit(1).alias("_items"))
        parts.append(
            src.group_by(by)
            .agg(pl.len().alias("_count"), pl.col("_items").sum(), pl.col("_first").min(), *flags)
            .collect(engine="streaming")
        )
    pats = parts[0]
    if len(parts) > 1:
        merged = [pl.col("_count").sum(), pl.col("_items").sum(), pl.col("_first").min()]
        pats = pl.concat(parts).group_by(by).agg(*merged, *flags)
    if not carry:
        pats = pats.with_columns(*values, dup)
    return pats, units_of(per), per.with_columns(*values, dup), carry


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
            item); larger scans are reduced judge by judge (`_passes`).

    Returns:
        The table of `pairwise_rates`, same rows, order and numbers (module docstring).
    """
    check_choice("interval", interval, resample.INTERVALS)
    check_choice("inference", inference, _rates.INFERENCE)
    wanted = _rates._wanted(metrics)
    source = _as_lazy(judgments)
    lf = _filtered(source, {"judge": judges, "benchmark": benchmarks, "split": splits})
    groups = list(groups)
    keys = [*groups, "sample"]
    if across is not None and across not in groups:
        raise KeyError(f"across={across!r} is not a group column of the outcomes ({groups})")
    check_choice("invalid_policy", invalid_policy, INVALID_POLICIES)
    if "judge" not in groups:
        raise ValueError(f"groups must include 'judge', got {groups}")
    pats, units, items, carry = _reduce(lf, groups, invalid_policy, cluster, rows_per_pass)
    if pats["_dup"].any():
        raise ValueError(_duplicate_message(lf, groups))
    _check_found(pats, source, judges)
    if pats.is_empty():
        raise ValueError("scan_rates: no judgments (after the judge/benchmark/split filters)")
    if across is not None:
        clash = set(pats[across].cast(pl.String).unique().to_list()) & set(_rates.AGGREGATIONS)
        if clash:
            raise ValueError(f"{across} value(s) {sorted(clash)} clash with aggregate labels")
    boot = _rates._Boot(n_boot, seed, level, cluster, interval)
    lay = _rates._layout(list(VALUE_COLUMNS))
    if inference == "wild":
        cells = _wild_cells(pats, items, keys, carry, lay, boot)
        return _rates.wild_rates(cells, keys, across, lay, boot, wanted)
    cells = _cells(pats, units, keys, carry, boot)
    rows = [
        _rates._ratio_frame(dict(zip(keys, c.key, strict=True)), "split", c, lay, boot)
        for c in cells
    ]
    if across is not None:
        for base, members in _rates.cells_across(cells, keys, across):
            rows.extend(_aggregate(base, across, members, lay, boot))
    return _rates._finish(pd.concat(rows, ignore_index=True), wanted, interval)


def _check_found(pats: pl.DataFrame, source: pl.LazyFrame, judges: Sequence[str]) -> None:
    """Raise ValueError when a requested judge has no rows (listing the known judges)."""
    found = set(pats["judge"].cast(pl.String).unique().to_list())
    unknown = [j for j in judges if j not in found]
    if unknown:
        known = source.select(pl.col("judge").cast(pl.String).unique()).collect()
        raise ValueError(f"unknown judge(s) {unknown}; known: {sorted(known['judge'])}")


def _duplicate_message(lf: pl.LazyFrame, groups: list[str]) -> str:
    """Return `item_outcomes`' message for the first repeated (unit, order) of the scan."""
    cols = [*groups, "item_id", "sample", "order"]
    dup = (
        lf.with_row_index("_row")
        .group_by(cols)
        .agg(pl.len().alias("_n"), pl.col("_row").bottom_k(2).max().alias("_second"))
        .filter(pl.col("_n") > 1)
        .sort("_second")
        .head(1)
        .collect(engine="streaming")
    )
    if dup.is_empty():
        bad = lf.filter(~pl.col("order").is_in([0, 1])).select("order").head(1).collect()
        return f"scan_rates: order must be 0 or 1, found {bad.item() if len(bad) else None!r}"
    row = dup.row(0, named=True)
    key = ", ".join(f"{c}={row[c]!r}" for c in cols)
    return (
        f"item_outcomes: several judgments for {key}; add the distinguishing column "
        f"(e.g. 'condition') to groups {groups} or filter the table first"
    )


def _cells(
    pats: pl.DataFrame, units: pl.LazyFrame, keys: list[str], carry: bool, boot: Any
) -> list:
    """Return the `pairwise_rates` cells (sums, replicates, strata) in first-seen order."""
    parts = pats.partition_by(keys, maintain_order=True, as_dict=True)
    order = sorted(parts, key=lambda k: parts[k]["_first"].min())
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
    held.update(_rows_units(units, keys, need_rows, carry))
    cells = []
    for key in order:
        part = parts[key]
        incomplete = float(part.filter(pl.col("complete") == 0)["_items"].sum())
        unit = held[key]
        reps = unit.draw(boot.n_boot, stats.rng_for(boot.seed, *key))
        cells.append(_rates._Cell(key, unit.sums(), reps, incomplete, UnitStrata([unit])))
    return cells


def _wild_cells(
    pats: pl.DataFrame, items: pl.LazyFrame, keys: list[str], carry: bool, lay: Any, boot: Any
) -> list[_rates.UnitCell]:
    """Return the cells of the wild path (`rates.wild_rates`), in first-seen order.

    A cell's units are its clusters' (or items') moment sums with their labels, collected
    from the item rows grouped by unit label — what `pairwise_rates` sums from its rows.
    A cell of items (no cluster column) too large for the wild bootstrap is held as its
    distinct item rows with counts (the Wald fallback needs no labels): a few hundred rows.
    """
    parts = pats.partition_by(keys, maintain_order=True, as_dict=True)
    order = sorted(parts, key=lambda k: parts[k]["_first"].min())
    held: dict[tuple, _units.CellUnits] = {}
    need = []
    for key in order:
        part = parts[key].filter(pl.col("complete") > 0)
        n_units = int(part["_count"].sum())
        if not carry and n_units * boot.n_boot > _units.WILD_MAX_CELLS:
            vals = part.select(VALUE_COLUMNS).to_numpy().astype(np.float64)
            rows = _units.moment_columns(vals, lay.num, lay.den)
            held[key] = _units.patterns(rows, part["_count"].to_numpy())
        else:
            need.append(key)
    held.update(_moment_units(items, keys, need, carry, lay))
    cells = []
    for key in order:
        incomplete = float(parts[key].filter(pl.col("complete") == 0)["_items"].sum())
        cells.append(_rates.UnitCell(key, held[key], incomplete))
    return cells


def _moment_units(
    items: pl.LazyFrame, keys: list[str], need: list[tuple], carry: bool, lay: Any
) -> dict[tuple, _units.CellUnits]:
    """Collect the per-unit moment sums (`units.moment_columns`) of the cells in `need`."""
    width = _units.layout(lay.num, lay.den, len(VALUE_COLUMNS)).width
    out = {key: _units.cell_units(np.zeros((0, width)), np.array([])) for key in need}
    if not need:
        return out
    names = list(VALUE_COLUMNS)
    dens = list(dict.fromkeys(int(d) for d in lay.den))
    v = [pl.col(c).cast(pl.Int64) for c in names]
    exprs = [(pl.col(names[d]) > 0).cast(pl.Int64) for d in dens]
    exprs += v + [x * x for x in v]
    exprs += [v[int(a)] * v[int(b)] for a, b in zip(lay.num, lay.den, strict=True)]
    moments = [e.alias(f"_m{i}") for i, e in enumerate(exprs)]
    item_keys = [k for k in keys if k not in ("judge", "sample")]
    own = pl.concat_str(
        [pl.lit("item"), *[pl.col(k).cast(pl.String) for k in item_keys], pl.col("item_id")],
        separator="|",
    )
    label = pl.when(pl.col(CLUSTER).is_not_null()).then(pl.col(CLUSTER)).otherwise(own)
    label = label if carry else own
    schema = items.collect_schema()
    wanted = pl.DataFrame(
        [list(k) for k in need], schema=[(k, schema[k]) for k in keys], orient="row"
    )
    got = (
        items.filter(pl.col("complete") > 0)
        .join(wanted.lazy(), on=keys, how="semi", nulls_equal=True)
        .select(*keys, label.alias(_UNIT), *moments)
        .group_by([*keys, _UNIT])
        .agg(pl.col(f"_m{i}").sum() for i in range(len(exprs)))
        .collect(engine="streaming")
    )
    cols = [f"_m{i}" for i in range(len(exprs))]
    for key, part in got.partition_by(keys, as_dict=True).items():
        rows = part.select(cols).to_numpy().astype(np.float64)
        out[key] = _units.cell_units(rows, part[_UNIT].to_numpy().astype(object))
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
        units.filter(pl.col("complete") > 0)
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


def _aggregate(base: dict, across: str, members: list, lay: Any, boot: Any) -> list[pd.DataFrame]:
    """The `pooled` and `mean_of_splits` rows of `pairwise_rates` over the member cells."""
    sums = np.sum([m.sums for m in members], axis=0)
    reps = np.sum([m.reps for m in members], axis=0)
    inc = float(sum(m.incomplete for m in members))
    strata = UnitStrata([u for m in members for u in m.strata.members])
    cell = _rates._Cell((), sums, reps, inc, strata)
    pooled = _rates._ratio_frame({**base, across: _rates.POOLED}, _rates.POOLED, cell, lay, boot)
    split_rates = np.stack(
        [stats.ratio_replicates(m.sums[lay.num], m.sums[lay.den]) for m in members]
    )
    split_reps = np.stack(
        [stats.ratio_replicates(m.reps[:, lay.num], m.reps[:, lay.den]) for m in members]
    )
    nan = np.full(len(lay.num), np.nan)
    mean = _rates._rates_frame(
        {**base, across: _rates.MEAN_OF_SPLITS},
        _rates.MEAN_OF_SPLITS,
        value=_rates._nanmean0(split_rates),
        k=nan,
        n=sums[lay.den],
        ci=resample.interval(
            _rates._nanmean0(split_reps), level=boot.level, df=strata.df, method=boot.interval
        ),
        wilson=(nan, nan),
        counts=(sums[lay.complete], sums[lay.has_gold], inc, strata.n_units),
        test=(nan, np.zeros(len(nan), dtype=bool), np.zeros(len(nan), dtype=int)),
    )
    return [pooled, mean]
