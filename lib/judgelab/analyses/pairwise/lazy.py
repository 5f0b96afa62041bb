"""Pairwise analyses of a lazy (polars) judgments table: the notebook path at 10^7 rows.

`catalog.load_source` hands a large source's judgments over as a `polars.LazyFrame`
(`catalog.LAZY_ROWS`); the pairwise functions a notebook calls then take the lazy path
themselves, so the notebook's code is the same for either size:

- `item_outcomes(lazy)` returns a `LazyOutcomes` (the scan and the options; nothing is read);
- `pairwise_rates(LazyOutcomes)` (the face's, `scan.pairwise_rates`) reduces the scan to
  per-unit sums in polars and resamples those (`scan.scan_rates`: the same estimates,
  intervals and p-values as the pandas path for the same seed, in passes of at most
  `ROWS_PER_PASS` rows);
- `coverage(LazyOutcomes, items)` counts complete, incomplete and unknown items per judge ×
  keys × sample in polars and lays them out as the pandas `coverage` does.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import pandas as pd
import polars as pl

from judgelab.analyses.pairwise.coverage_layout import coverage_frame
from judgelab.core.scan import bare

#: Judgment rows one polars group-by pass reduces at most on the notebook path: with clusters
#: every unit row carries its labels, so a 10^7-row scan is reduced judge by judge
#: (`scan.scan_rates(rows_per_pass=...)`; ~0.5 GB a pass of 2·10^6 rows instead of ~3 GB).
ROWS_PER_PASS = 2_000_000


class LazyOutcomes(NamedTuple):
    """`item_outcomes` of a lazy judgments table: the scan and its options, not yet read."""

    judgments: pl.LazyFrame
    groups: tuple[str, ...]
    invalid_policy: str
    cluster: str | None
    #: The scan's reduction to per-unit patterns, kept for the next `pairwise_rates` call
    #: on these outcomes (a notebook's wild and bootstrap rates read the table once).
    reduced: dict | None = None


#: The unit tables read so far (`scan_compare.item_table`): by the scan (its `id`, dropped
#: with it), the groups and the options.
_UNITS: dict[tuple, Any] = {}


def remembered(
    lf: pl.LazyFrame, groups: Sequence[str], options: tuple, read: Callable[[], Any]
) -> Any:
    """Return the unit table of `lf` by `groups` and `options`: `read()` once per live scan."""
    key = (id(lf), tuple(groups), options)
    if key not in _UNITS:
        _UNITS[key] = read()
        weakref.finalize(lf, _UNITS.pop, key, None)
    return _UNITS[key]


def cached(lf: pl.LazyFrame, groups: Sequence[str]) -> Any:
    """The unit table of `lf` by `groups` if one was read (any options), else None."""
    known = [k for k in _UNITS if k[0] == id(lf) and k[1] == tuple(groups)]
    return _UNITS[known[0]] if known else None


def require_columns(lf: pl.LazyFrame, columns: Sequence[str], what: str) -> list[str]:
    """Raise `KeyError` naming `what` and the columns a lazy table lacks; return its columns."""
    names = lf.collect_schema().names()
    missing = [c for c in columns if c not in names]
    if missing:
        raise KeyError(f"{what}: judgments lack column(s) {missing}")
    return names


def passes(lf: pl.LazyFrame, carry: bool, rows_per_pass: int) -> list[pl.Expr | None]:
    """Return the row filters of the passes that keep each group-by within `rows_per_pass`.

    One pass (None) when the scan is small enough; else one pass per judge (pushed into the
    scan: a judge's files or row groups only), each split by a hash of `item_id` when the
    judge alone is too large (not with clusters: a cluster must stay in one pass).
    """
    return [where for judge in judge_passes(lf, carry, rows_per_pass) for where in judge]


def judge_passes(lf: pl.LazyFrame, carry: bool, rows_per_pass: int) -> list[list[pl.Expr | None]]:
    """`passes`, grouped by judge (in judge order): a judge's parts together."""
    lf = bare(lf)  # counts need no clusters
    n = lf.select(pl.len()).collect(engine="streaming").item()
    if n <= rows_per_pass:
        return [[None]]
    judge = pl.col("judge").cast(pl.String)
    counts = lf.group_by(judge).agg(pl.len()).collect(engine="streaming").sort("judge")
    out: list[list[pl.Expr | None]] = []
    for name, rows in counts.iter_rows():
        this = judge.is_null() if name is None else judge == name
        parts = 1 if carry else -(-rows // rows_per_pass)
        if parts == 1:
            out.append([this])
            continue
        slot = pl.col("item_id").cast(pl.String).hash(24) % parts
        out.append([this & (slot == part) for part in range(parts)])
    return out


def is_lazy(table: Any) -> bool:
    """True for a polars LazyFrame (a large source's judgments) or `LazyOutcomes`."""
    return isinstance(table, pl.LazyFrame | LazyOutcomes)


def coverage(lazy: LazyOutcomes, items: pd.DataFrame, keys: Sequence[str]) -> pd.DataFrame:
    """`coverage` of `LazyOutcomes`: per-item order counts in polars, then the same layout."""
    keys = list(keys)
    table = items[[*keys, "item_id"]].drop_duplicates()
    expected = table.groupby(keys, sort=True).size().rename("n_items_table")
    counts = ["n_items_table", "n_complete", "n_incomplete", "n_missing", "n_unknown"]
    cols = ["judge", *keys, "sample", *counts]
    known = pl.from_pandas(table.astype(str)).lazy().with_columns(pl.lit(True).alias("_known"))
    unit = ["judge", *keys, "item_id", "sample"]
    cast = [pl.col(c).cast(pl.String) for c in [*keys, "item_id"]]
    read = cached(lazy.judgments, lazy.groups)
    if read is not None and set(unit) <= set(read.columns):  # a comparison read the units
        units = read.lazy().select(*unit, pl.col("complete") == 1).with_columns(cast)
        per = _coverage_counts(units, known, keys)
    else:  # a judge at a time, a large judge in parts by item (an item's orders in one):
        # at 10^8 rows a judge's group-by held +2.3 GB, a part of 2·10^6 rows +0.45 GB
        scan = bare(lazy.judgments)  # counts need no clusters
        parts = [
            _coverage_counts(
                (scan if only is None else scan.filter(only))
                .select(*unit, "order")
                .with_columns(cast)
                .group_by(unit)
                .agg((pl.col("order").n_unique() == 2).alias("complete")),
                known,
                keys,
            )
            for only in passes(scan, False, ROWS_PER_PASS)
        ]
        per = pd.concat(parts, ignore_index=True)
    rows = []
    for (judge, sample), block in per.groupby(["judge", "sample"], sort=True):
        rows.append(_counted_block(block, expected, keys, judge, sample))
    if not rows:
        return pd.DataFrame(columns=cols)
    out = pd.concat(rows, ignore_index=True)[cols]
    for c in counts:
        out[c] = out[c].astype(int)
    return out


def _coverage_counts(units: pl.LazyFrame, known: pl.LazyFrame, keys: list[str]) -> pd.DataFrame:
    """Units per judge × sample × group keys × complete × known item (`coverage`)."""
    return (
        units.join(known, on=[*keys, "item_id"], how="left")
        .with_columns(pl.col("_known").fill_null(False))
        .group_by(["judge", "sample", *keys, "complete", "_known"])
        .agg(pl.len().alias("_n"))
        .collect(engine="streaming")
        .to_pandas()
    )


def _counted_block(
    block: pd.DataFrame, expected: pd.Series, keys: list[str], judge: object, sample: object
) -> pd.DataFrame:
    """One judge × sample of `coverage` from group counts (laid out by `coverage_frame`)."""
    per = block.assign(
        complete=block["complete"] & block["_known"],
        incomplete=~block["complete"] & block["_known"],
        unknown=~block["_known"],
    )
    sums = {
        c: (per[c] * per["_n"]).groupby([per[k] for k in keys], sort=True).sum()
        for c in ("complete", "incomplete", "unknown")
    }
    return coverage_frame(pd.DataFrame(sums), expected, judge, sample, keys)


__all__ = [
    "ROWS_PER_PASS",
    "LazyOutcomes",
    "cached",
    "coverage",
    "is_lazy",
    "judge_passes",
    "passes",
    "remembered",
    "require_columns",
]
