"""Lazy polars scans of judgments parquet: projection and predicate pushdown, bounded memory.

`scan_judgments` opens one file, a folder (every ``**/*.parquet`` under it), a glob, or a
list of them as one `polars.LazyFrame` without reading anything; the analyses that reduce
10^7–10^8 judgment rows (`analyses.pairwise.scan`) then read only the columns and row groups
they need and collect with the streaming engine. Judgments files do not store the resampling
unit: `attach_clusters` joins it from the items table, lazily.
"""

from __future__ import annotations

import glob as _glob
import os
import weakref
from collections.abc import Sequence
from pathlib import Path

import polars as pl

from judgelab.core import clusters
from judgelab.errors import TableError

#: The judgments columns the pairwise reduction reads (plus `cluster` when present).
PAIRWISE_COLUMNS = (
    "judge",
    "benchmark",
    "split",
    "item_id",
    "sample",
    "order",
    "valid",
    "chosen",
    "correct",
)

Source = str | os.PathLike[str] | Sequence[str | os.PathLike[str]]


def judgment_files(source: Source) -> list[Path]:
    """Return the parquet files of `source` (a file, a folder, a glob, or a list), sorted.

    A folder means every ``*.parquet`` below it (recursively); hidden and temporary files
    (a leading ``.``, as `tables.atomic_path` writes them) are skipped.

    Raises:
        TableError: nothing matches (the message names what was looked for).
    """
    parts = [source] if isinstance(source, str | os.PathLike) else list(source)
    files: list[Path] = []
    for part in parts:
        p = Path(part)
        if p.is_dir():
            found = sorted(p.rglob("*.parquet"))
        elif p.is_file():
            found = [p]
        else:
            found = sorted(Path(f) for f in _glob.glob(str(p), recursive=True))
        files.extend(f for f in found if f.is_file() and not f.name.startswith("."))
    if not files:
        raise TableError(f"no judgments parquet files match {[str(p) for p in parts]}")
    return files


#: The row index a large source's scan carries (`with_rows`): each row's position in the
#: source's files, taken before any join or filter so that filters still reach the files.
ROW = "_row"


def scan_judgments(source: Source, *, rows: bool = False) -> pl.LazyFrame:
    """Return a lazy scan of the judgments parquet files of `source` (see `judgment_files`).

    Files are concatenated in sorted path order (the order `catalog.load_judgments` reads a
    benchmark's tables); a column missing from some file reads as null there. Nothing is read
    until the frame is collected. `rows` adds the row index `ROW` in the scan itself (a
    filter still reaches the files, and joins keep their memory: `with_rows`).
    """
    files = judgment_files(source)
    return pl.scan_parquet(
        [str(f) for f in files],
        missing_columns="insert",
        extra_columns="ignore",
        row_index_name=ROW if rows else None,
    )


def with_rows(lf: pl.LazyFrame) -> pl.LazyFrame:
    """Return `lf` with the row index `ROW` (kept when it has one: the source's positions).

    A row index taken after a join (the clusters') stops a later filter (a judge's pass)
    from reaching the parquet files, so each pass would read every row; the catalog's scan
    takes it in the parquet scan (`scan_judgments(rows=True)`), and the analyses take that
    one's order.
    """
    return lf if ROW in lf.collect_schema().names() else lf.with_row_index(ROW)


def attach_clusters(judgments: pl.LazyFrame, items: pl.LazyFrame) -> pl.LazyFrame:
    """Return `judgments` with the `cluster` of its item, lazily (`clusters.attach`).

    Judgments parquet does not store the resampling unit; the items table does. Items
    without a cluster value, and judgments whose item is absent from `items`, get their
    item as unit (``benchmark|split|item|item_id``), as `clusters.attach` gives them. Row
    order is kept. The items' clusters are read here, once (a query of the scan joins that
    table; as a plan, every query also re-derived it: 02's rates 17 -> 13.5 s at 10^7 rows).
    """
    keys = list(clusters.KEYS)
    names = items.collect_schema().names()
    key_exprs = [pl.col(k).cast(pl.String) for k in keys]
    it = items.select(key_exprs)
    if clusters.COLUMN in names:
        given = pl.col(clusters.COLUMN).cast(pl.String)
        it = items.select(*key_exprs, given)
        own = _own_unit(key_exprs)
        fixed = pl.when(given.is_not_null() & (given != "")).then(given).otherwise(own)
        it = it.with_columns(fixed.alias(clusters.COLUMN))
    else:
        it = it.with_columns(_own_unit(key_exprs).alias(clusters.COLUMN))
    # read once (an item table: no bigger than the judgments), not again in every query
    it = _by_key_hashes(it.unique(keys, keep="first", maintain_order=True).collect()).lazy()
    base = judgments.drop(clusters.COLUMN, strict=False).with_columns(key_exprs)
    out = _joined_units(base, it)
    _remember_bare(out, base, it)
    return out


#: Two independent 64-bit hashes of an item's keys stand for its three text keys in the
#: clusters' join, where they tell the items apart (`_by_key_hashes`): a judge's 2·10^7 rows
#: joined to 10^7 items took 4.5 s and +1.3 GB on the text keys, 2.0 s and +0.2 GB on these.
#: A row whose keys no item has matches none, but with probability ~n_items / 2^128.
KEY_HASHES = ("_key_h1", "_key_h2")
_SEEDS = (7, 11)


def _key_hashes() -> list[pl.Expr]:
    """The two hashes of the item keys (text), null where a key is null (it matches none)."""
    keys = list(clusters.KEYS)
    whole = pl.all_horizontal([pl.col(k).is_not_null() for k in keys])
    both = zip(_SEEDS, KEY_HASHES, strict=True)
    return [pl.when(whole).then(pl.struct(keys).hash(seed)).alias(n) for seed, n in both]


def _by_key_hashes(units: pl.DataFrame) -> pl.DataFrame:
    """`units` (distinct text keys, `cluster`) keyed by `KEY_HASHES` instead of the keys.

    Only where the hashes tell the items apart; else `units` as they are (the join then
    takes the text keys).
    """
    hashed = units.with_columns(_key_hashes()).select(*KEY_HASHES, clusters.COLUMN)
    first = hashed.get_column(KEY_HASHES[0]).drop_nulls()
    if first.n_unique() == len(first):
        return hashed
    pairs = hashed.select(KEY_HASHES).drop_nulls()
    return hashed if pairs.n_unique() == len(pairs) else units


def _joined_units(frame: pl.LazyFrame, units: pl.LazyFrame) -> pl.LazyFrame:
    """`frame` (text item keys) with its items' `cluster` from `units`; an absent item: own."""
    keys = list(clusters.KEYS)
    if KEY_HASHES[0] in units.collect_schema().names():
        hashes = list(KEY_HASHES)
        joined = frame.with_columns(_key_hashes()).join(
            units, on=hashes, how="left", maintain_order="left"
        )
        joined = joined.drop(hashes)
    else:
        joined = frame.join(units, on=keys, how="left", maintain_order="left")
    own = _own_unit([pl.col(k) for k in keys])
    return joined.with_columns(pl.col(clusters.COLUMN).fill_null(own))


def _own_unit(frame_keys: list[pl.Expr]) -> pl.Expr:
    """An item's own unit label (``benchmark|split|item|item_id``), as `clusters.attach`'s."""
    b, s, i = frame_keys
    return pl.concat_str([b, pl.lit("|"), s, pl.lit("|item|"), i])


#: The scan under each frame of `attach_clusters` (and of `filtered`), by that frame's id,
#: with the items' clusters it joins (keys as text, `cluster`).
_BARE: dict[int, tuple[pl.LazyFrame, pl.LazyFrame]] = {}


def _remember_bare(lf: pl.LazyFrame, base: pl.LazyFrame, units: pl.LazyFrame) -> None:
    _BARE[id(lf)] = (base, units)
    weakref.finalize(lf, _BARE.pop, id(lf), None)


def with_item_clusters(keyed: pl.DataFrame, lf: pl.LazyFrame) -> pl.DataFrame | None:
    """Return `keyed` (text keys) with the `cluster` `attach_clusters` gives its items in `lf`.

    None when `lf` is not a frame of `attach_clusters`. A table joined to `bare(lf)` on the
    item keys with these clusters has the clusters `lf`'s rows have, with one join fewer.
    """
    if id(lf) not in _BARE:
        return None
    return _joined_units(keyed.lazy(), _BARE[id(lf)][1]).collect()


def bare(lf: pl.LazyFrame) -> pl.LazyFrame:
    """Return `lf` without its clusters' join (`attach_clusters`), else `lf` itself.

    The same rows in the same order, all columns but `cluster`. Polars keeps a join in every
    plan, also one that reads no column of it: at 10^7 rows the clusters' join costs a
    query 0.8 s, so a query that needs no `cluster` (counts, judges, pairing the orders)
    reads this one.
    """
    return _BARE[id(lf)][0] if id(lf) in _BARE else lf


def values(lf: pl.LazyFrame, column: str) -> list[str]:
    """Return the sorted distinct values of a column of a lazy table, as text (no null).

    Read from `bare(lf)`: a column of the judgments needs no clusters.
    """
    got = bare(lf).select(pl.col(column).cast(pl.String).unique()).collect(engine="streaming")
    return sorted(v for v in got[column].to_list() if v is not None)


def filtered(lf: pl.LazyFrame, predicate: pl.Expr) -> pl.LazyFrame:
    """Return `lf.filter(predicate)`, whose `bare` scan is `bare(lf)` filtered alike.

    `predicate` must not read `cluster` where `lf` has a bare scan.
    """
    out = lf.filter(predicate)
    if id(lf) in _BARE:
        base, units = _BARE[id(lf)]
        _remember_bare(out, base.filter(predicate), units)
    return out
