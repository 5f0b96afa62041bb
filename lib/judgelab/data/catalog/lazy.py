"""Large sources as lazy polars scans (`core.LAZY_ROWS`): open, filter, attach clusters.

A source whose judgment tables hold many rows is not read into pandas: `scan` opens its files
as one `polars.LazyFrame` (nothing read), keeps the requested judges, and joins each item's
`cluster` from the items table lazily (`core.scan.attach_clusters`), as `with_clusters` does
for a pandas frame. Each analysis then reads only the columns and row groups it needs
(projection and predicate pushdown) and collects with the streaming engine.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd


def is_lazy(table: Any) -> bool:
    """True for a polars LazyFrame (without importing polars when it is not loaded)."""
    import sys

    pl = sys.modules.get("polars")
    return pl is not None and isinstance(table, pl.LazyFrame)


def is_empty(judgments: Any) -> bool:
    """True when `judgments` is None or holds no rows (a lazy scan reads one row to know)."""
    if judgments is None:
        return True
    if is_lazy(judgments):
        from judgelab.core.scan import bare

        return bare(judgments).select("judge").head(1).collect().is_empty()
    return bool(judgments.empty)


def rows_of(files: Sequence[Path]) -> int:
    """Return the rows of parquet `files` from their footers (nothing else is read)."""
    import pyarrow.parquet as pq

    return sum(pq.ParquetFile(f).metadata.num_rows for f in files)


def scan(files: Sequence[Path], items: pd.DataFrame, judges: Collection[str] | None) -> Any:
    """Return the judgments of `files` as a LazyFrame with clusters (only `judges` if given).

    It carries `core.scan.ROW`, each row's position in `files` (the analyses' row order).
    """
    import polars as pl

    from judgelab.core import clusters
    from judgelab.core.scan import attach_clusters, scan_judgments

    lf = scan_judgments([str(f) for f in files], rows=True)  # the row index: in the scan
    if judges is not None:
        lf = lf.filter(pl.col("judge").is_in(list(judges)))
    cols = [c for c in [*clusters.KEYS, clusters.COLUMN] if c in items.columns]
    keyed = pl.from_pandas(items[cols].astype({c: str for c in clusters.KEYS})).lazy()
    return attach_clusters(lf, keyed)


def select(lf: Any, source: str, filters: Mapping[str, Sequence[str]]) -> Any:
    """Return `lf` restricted to `filters` (column → wanted values; empty = all), lazily.

    Raises:
        ValueError: a wanted value matches nothing (the message lists the known ones).
    """
    import polars as pl

    from judgelab.core.scan import filtered, values

    for column, wanted in filters.items():
        if not wanted:
            continue
        known = set(values(lf, column))
        unknown = [w for w in wanted if w not in known]
        if unknown:
            raise ValueError(
                f"source {source!r}: unknown {column}(s) {unknown}; known: {sorted(known)}"
            )
        lf = filtered(lf, pl.col(column).is_in(list(wanted)))
    return lf


__all__ = ["is_empty", "is_lazy", "rows_of", "scan", "select"]
