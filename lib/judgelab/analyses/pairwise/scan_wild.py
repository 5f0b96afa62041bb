"""The wild path of a clustered lazy scan in one group-by per batch of judges (`scan`).

`_wild_fused` groups each batch of whole judges once into cell × unit moment sums
(`scan_values.unit_moments`): the cells' units for `rates.wild_rows` and the patterns
(`scan_values.patterns_of`) of the reduction the outcomes' memo keeps for a later bootstrap
call. Also the checks and the first-seen order `scan_rates` shares with it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
import polars as pl

from judgelab.analyses.pairwise import units as _units
from judgelab.analyses.pairwise.rate_metrics import AGGREGATIONS, _layout
from judgelab.analyses.pairwise.rates import UnitCell, wild_rows, wild_table
from judgelab.analyses.pairwise.scan_values import (
    _UNIT,
    COUNT_COLUMNS,
    VALUE_COLUMNS,
    lazy_rows,
    patterns_of,
    unit_moments,
)
from judgelab.core.scan import bare, values, with_rows


def _wild_fused(
    lf: pl.LazyFrame,
    source: pl.LazyFrame,
    judges: Sequence[str],
    groups: list[str],
    invalid_policy: str,
    cluster: str | None,
    rows_per_pass: int,
    across: str | None,
    boot: Any,
    wanted: list[str],
) -> tuple[tuple, pd.DataFrame]:
    """The wild path of a clustered scan in one group-by per batch of whole judges.

    Each batch's rows are grouped once into cell × unit moment sums (`unit_moments`): its
    cells' units for `wild_rows` and its patterns (`patterns_of`) for the reduction that a
    later call on the same outcomes (the bootstrap path) takes from the memo. Returns that
    reduction and the table; the checks and the order are `scan_rates`'.
    """
    keys = [*groups, "sample"]
    raw, lf = lf, with_rows(lf)
    units, items, carry = lazy_rows(lf, groups, invalid_policy, cluster)
    lay = _layout(list(VALUE_COLUMNS))
    exprs, spread = _moment_exprs(lay)
    moments = [e.alias(f"_m{i}") for i, e in enumerate(exprs)]
    judge = pl.col("judge").cast(pl.String)
    parts, split, aggregated = [], {}, {}
    for batch in _judge_batches(raw, rows_per_pass, across):
        names = [b for b in batch if b is not None]
        this = judge.is_in(names) | (judge.is_null() if None in batch else pl.lit(False))
        got = unit_moments(items.filter(this), keys, moments)
        pats = patterns_of(got, keys)
        parts.append(pats)
        if pats["_dup"].any():
            raise ValueError(_duplicate_message(raw, groups))
        _check_across(pats, across)
        cells = _fused_cells(got, keys, spread)
        rows_b, aggregates = wild_rows(cells, keys, across, lay, boot, wanted)
        split.update(rows_b)
        aggregated.update(aggregates)
    pats = pl.concat(parts) if parts else pl.DataFrame()
    _check_found(pats if parts else pl.DataFrame({"judge": []}), source, judges)
    if not parts or pats.is_empty():
        raise ValueError("scan_rates: no judgments (after the judge/benchmark/split filters)")
    order = _first_seen(pats, keys)[1]
    return (pats, units, items, carry), wild_table(order, split, aggregated, keys, across, wanted)


def _judge_batches(lf: pl.LazyFrame, rows: int, across: str | None) -> list[list]:
    """Split the scan's judges into batches of whole judges of at most ~`rows` rows each.

    One batch when `across` is `judge` (an aggregate over judges needs all of them).
    """
    judge = pl.col("judge").cast(pl.String)
    sizes = bare(lf).group_by(judge).agg(pl.len()).collect(engine="streaming").sort("judge")
    out: list[list] = []
    held = 0
    for name, n in sizes.iter_rows():
        if not out or (held + n > rows and across != "judge"):
            out.append([])
            held = 0
        out[-1].append(name)
        held += n
    return out


def _fused_cells(got: pl.DataFrame, keys: list[str], spread: np.ndarray) -> list[UnitCell]:
    """The `UnitCell`s of `unit_moments` rows, first seen first: units in label order."""
    parts, order = _first_seen(coded(got), keys)  # aggregates: their cells first-seen first
    return [UnitCell(k, cell_units(parts[k], spread),
                     float(parts[k].filter(pl.col(_UNIT).is_null())["_items"].sum()))
            for k in order]  # fmt: skip


_CODE = "_code"  # `coded`'s column


def coded(got: pl.DataFrame) -> pl.DataFrame:
    """`unit_moments` rows with `_code`: the unit label's rank among all of `got`'s labels.

    Sorted label order (UTF-8 byte order is code-point order, `np.unique`'s) as integers:
    the cells of one `got` are merged and aligned (`units.union`, `units.align`) on these,
    not on text (10^5 clusters × 5 splits a judge: a sort of 5·10^5 strings each time).
    """
    return got.with_columns((pl.col(_UNIT).rank("dense") - 1).cast(pl.Int64).alias(_CODE))


def cell_units(part: pl.DataFrame, spread: np.ndarray) -> _units.CellUnits:
    """One cell's `unit_moments` rows as `units.CellUnits`: complete units in label order.

    `part` comes from `coded` rows. Sorted by label, these are `units.cell_units`' rows
    without its sort and sums, labelled by their codes; `spread` lays the distinct moment
    sums out as `units.moment_columns` (`_moment_exprs`).
    """
    done = part.filter(pl.col(_UNIT).is_not_null()).sort(_CODE)
    cols = [f"_m{i}" for i in range(int(spread.max()) + 1)]
    rows = done.select(pl.col(cols).cast(pl.Float64)).to_numpy()  # column-major
    return _units.CellUnits(done[_CODE].to_numpy(), rows, None, np.asarray(spread))


def _check_across(pats: pl.DataFrame, across: str | None) -> None:
    """Raise ValueError when a value of `across` clashes with an aggregate's label."""
    if across is not None:
        clash = set(pats[across].cast(pl.String).unique().to_list()) & set(AGGREGATIONS)
        if clash:
            raise ValueError(f"{across} value(s) {sorted(clash)} clash with aggregate labels")


def _check_found(pats: pl.DataFrame, source: pl.LazyFrame, judges: Sequence[str]) -> None:
    """Raise ValueError when a requested judge has no rows (listing the known judges)."""
    found = set(pats["judge"].cast(pl.String).unique().to_list())
    unknown = [j for j in judges if j not in found]
    if unknown:
        raise ValueError(f"unknown judge(s) {unknown}; known: {values(source, 'judge')}")


def _duplicate_message(lf: pl.LazyFrame, groups: list[str]) -> str:
    """Return `item_outcomes`' message for the first repeated (unit, order) of the scan."""
    cols = [*groups, "item_id", "sample", "order"]
    dup = (
        with_rows(lf)
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


def _first_seen(pats: pl.DataFrame, keys: list[str]) -> tuple[dict[tuple, Any], list[tuple]]:
    """Return each cell's patterns and the cells' keys in first-seen (`pairwise_rates`) order."""
    parts = pats.partition_by(keys, maintain_order=True, as_dict=True)
    return parts, sorted(parts, key=lambda k: parts[k]["_first"].min())


def _moment_exprs(lay: Any) -> tuple[list[pl.Expr], np.ndarray]:
    """Return the distinct per-item moment expressions and where each moment column sits.

    `units.moment_columns` lays out 1[den > 0] per denominator, v, v² and num·den per
    metric; for a 0/1 column v² = v and 1[v > 0] = v, and with a 0/1 denominator num·den =
    num (a numerator is 0 where its denominator is): only the count columns
    (`COUNT_COLUMNS`) need their own sums. Int8 per item (values in [-1, 2]), summed as
    Int64 by polars. Returns the expressions and, per moment column, its expression's index.
    """
    names = list(VALUE_COLUMNS)
    v = [pl.col(c).cast(pl.Int8) for c in names]
    exprs = list(v)

    def own(expr: pl.Expr) -> int:
        exprs.append(expr)
        return len(exprs) - 1

    def counts(c: int) -> bool:
        return names[c] in COUNT_COLUMNS

    dens = list(dict.fromkeys(int(d) for d in lay.den))
    spread = [own((v[d] > 0).cast(pl.Int8)) if counts(d) else d for d in dens]
    spread += list(range(len(names)))
    spread += [own(v[c] * v[c]) if counts(c) else c for c in range(len(names))]
    spread += [own(v[int(a)] * v[int(b)]) if counts(int(b)) else int(a)
               for a, b in zip(lay.num, lay.den, strict=True)]  # fmt: skip
    return exprs, np.asarray(spread)
