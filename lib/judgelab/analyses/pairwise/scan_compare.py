"""Judge comparisons and single-order rates of a lazy judgments scan (notebook 01 at scale).

`compare_judges` pairs judges item by item, so it needs each item's outcome per judge, not
the per-unit sums `scan_rates` resamples. `item_table` reduces the scan, judge by judge
(`lazy.passes`), to one row per judge × group keys × item × sample with the outcome
columns of `COMPARE_METRICS` (polars, a few bytes a row), kept while the scan lives
(`lazy.remembered`); `judge_columns` lays it out as the item × judge table that
`compare._judge_columns` builds from pandas outcomes (same rows, order and unit labels), so
the pandas code does the rest. `single_rows` takes the units judged in one order from the
same table and reads only their judgment rows.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
import polars as pl

from judgelab.analyses.pairwise import units
from judgelab.analyses.pairwise.lazy import (
    ROWS_PER_PASS,
    LazyOutcomes,
    cached,
    passes,
    remembered,
)
from judgelab.analyses.pairwise.outcomes import CLUSTER
from judgelab.analyses.pairwise.rate_metrics import METRICS
from judgelab.analyses.pairwise.scan_values import (
    carries,
    gold_bit,
    order_codes,
    unit_values,
)
from judgelab.analyses.pairwise.scan_wild import _duplicate_message
from judgelab.core.scan import with_rows

#: The outcome columns a comparison reads (the numerators of `COMPARE_METRICS`), per unit.
ITEM_COLUMNS = (
    "complete",
    "correct_0",
    "correct_1",
    "consistently_correct",
    "optimistically_correct",
    "consistent",
)
_MEMO = "compare_items"


def item_table(lazy: LazyOutcomes) -> pl.DataFrame:
    """Return per unit (judge × group keys × item × sample) the comparison columns.

    Columns: the groups, `item_id`, `sample`, `_first` (the unit's first row in the scan:
    `item_outcomes`' row order), `ITEM_COLUMNS` (Int8; 0 where incomplete, as the pandas
    path's nulls count), `gold` (`item_outcomes`' `has_gold`), `orders` (1: only order 0
    judged, 2: only order 1, 3: both) and `cluster` when carried. Read once per scan and
    options, kept while the scan lives (`single_order_rates` of the same scan reuses it).

    Raises:
        ValueError: a (unit, order) occurs twice (`item_outcomes`' message).
    """
    lf, groups = lazy.judgments, list(lazy.groups)
    options = (lazy.invalid_policy, lazy.cluster)
    return remembered(lf, groups, options, lambda: _read_units(lf, groups, *options))


def _read_units(
    lf: pl.LazyFrame, groups: list[str], invalid_policy: str, cluster: str | None
) -> pl.DataFrame:
    """`item_table` of a scan, judge by judge (`lazy.passes`)."""
    names = lf.collect_schema().names()
    carry = carries(names, groups, cluster)
    scan = with_rows(lf)  # before the passes' filters: positions in the whole scan
    state = pl.col("_state")  # a repeated (unit, order) has -1 and raises below
    gold = gold_bit(state).cast(pl.Int8).alias("gold")
    c0, c1 = order_codes(state)
    orders = (c0 > 0).cast(pl.Int8) + 2 * (c1 > 0).cast(pl.Int8)
    keep = [*groups, "item_id", "sample", "_first", *ITEM_COLUMNS, *([CLUSTER] if carry else [])]
    parts = []
    for where in passes(scan, carry, ROWS_PER_PASS):
        per = unit_values(
            scan if where is None else scan.filter(where),
            groups=groups,
            invalid_policy=invalid_policy,
            cluster=cluster,
        )
        part = per.select(*keep, gold, orders.alias("orders"), (state < 0).alias("_dup"))
        part = part.collect(engine="streaming")
        if part["_dup"].any():
            raise ValueError(_duplicate_message(lf, groups))
        parts.append(part.drop("_dup"))
    return pl.concat(parts) if parts else pl.DataFrame()


def judge_columns(
    lazy: LazyOutcomes, metric: str, other: list[str], cluster: str | None
) -> tuple[pd.DataFrame, pd.DataFrame, pd.Series]:
    """`compare._judge_columns` of lazy outcomes: per item × judge value and completeness.

    Rows are the items (with gold for accuracies) in sorted key order, columns the judges;
    the unit labels (the cluster, else the item) are a Series on the same index.
    """
    num_col, den_col, _ = METRICS[metric]
    memo = lazy.reduced if lazy.reduced is not None else {}
    key = (_MEMO, num_col, den_col, tuple(other), cluster)
    if key not in memo:  # a notebook compares with and without missing verdicts, two ways
        memo[key] = _judge_columns(item_table(lazy), num_col, den_col, other, cluster)
    return memo[key]


def _judge_columns(
    table: pl.DataFrame, num_col: str, den_col: str, other: list[str], cluster: str | None
) -> tuple[pd.DataFrame, pd.DataFrame, pd.Series]:
    """`judge_columns` of the item table."""
    if den_col == "has_gold":
        table = table.filter(pl.col("gold") == 1)
    idx = [*other, "sample", "item_id"]
    carry = cluster is not None and cluster in table.columns
    table = table.with_columns(pl.col("judge").cast(pl.String))
    value = table.pivot(on="judge", index=idx, values=num_col, sort_columns=True)
    done = table.pivot(on="judge", index=idx, values="complete", sort_columns=True)
    wide = _indexed(value, idx).astype(float)
    complete = _indexed(done, idx).reindex(wide.index).fillna(0).astype(bool)
    unit = pl.col(cluster).drop_nulls().first() if carry else pl.lit(None)
    first = (
        table.sort("_first")
        .group_by(idx, maintain_order=True)
        .agg(unit.alias("_unit"))
        .to_pandas()
        .set_index(idx)["_unit"]
        .reindex(wide.index)
    )
    keys = wide.index.to_frame(index=False).assign(_unit=first.to_numpy(dtype=object))
    labels = units.unit_labels(keys, "_unit" if carry else None, other)
    wide.columns.name = complete.columns.name = "judge"
    return wide, complete, pd.Series(labels, index=wide.index)


def _indexed(frame: pl.DataFrame, idx: list[str]) -> pd.DataFrame:
    """A pivot as pandas, indexed by `idx` in sorted order (as `unstack` lays it out)."""
    out = frame.to_pandas().set_index(idx).sort_index()
    out.columns = pd.Index([str(c) for c in out.columns], dtype=object)
    return out


def compare_reason_inputs(lazy: LazyOutcomes) -> tuple[list[str], bool]:
    """Return the sorted judges and whether two of them judged some item in both orders."""
    table = item_table(lazy)
    if table.is_empty():
        return [], False
    judges = sorted(map(str, table["judge"].drop_nulls().unique()))
    keys = [c for c in ("benchmark", "split", "item_id", "sample") if c in table.columns]
    shared = (
        table.filter(pl.col("complete") == 1)
        .group_by(keys)
        .agg(pl.col("judge").n_unique().alias("_n"))
        .filter(pl.col("_n") >= 2)
    )
    return judges, not shared.is_empty()


def single_rows(lf: pl.LazyFrame, groups: Sequence[str], columns: Sequence[str]) -> pd.DataFrame:
    """Return the `columns` of the judgment rows whose unit has one order, in scan order.

    A unit is judge × group keys × item × sample. Its orders come from the scan's unit
    table (`item_table`'s, reused when a comparison already read it); only the single-order
    units' rows are then read.

    Raises:
        ValueError: a (unit, order) occurs twice or an order is not 0/1 (`item_outcomes`'
            message; the pandas path counts such a unit by its distinct orders).
    """
    groups = list(groups)
    units_ = cached(lf, groups)
    if units_ is None:
        units_ = item_table(LazyOutcomes(lf, tuple(groups), "repo", None))
    firsts = units_.filter(pl.col("orders").is_in([1, 2]))["_first"]
    scan = with_rows(lf)
    rows = (
        scan.filter(pl.col("_row").is_in(firsts.implode()))
        .select("_row", *columns)
        .collect(engine="streaming")
        .sort("_row")
        .drop("_row")
    )
    return rows.to_pandas()


__all__ = [
    "ITEM_COLUMNS",
    "compare_reason_inputs",
    "item_table",
    "judge_columns",
    "single_rows",
]
