"""`explore.cases` of a lazy (polars) judgments table: a large source's Examples section.

The two orders are paired and the category's cases picked in polars (only the key, verdict
and output columns are read); the cases (`Cases`) become pandas, joined to their items, a
part at a time or as a drawn few. Rows come in the order `explore.cases` gives them on the
same table (sorted by key, as its outer merge sorts), so `explore.examples` draws the same
seeded handful.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pandas as pd
import polars as pl

from judgelab.analyses.pairwise import lazy
from judgelab.core.scan import ROW, bare, filtered

KEY = ["benchmark", "split", "item_id"]
UNIT = ["judge", *KEY, "condition", "sample"]
COLS = ["verdict", "chosen", "valid", "output"]
#: A decisive pick: the better or the worse response (not a tie, not invalid).
DECISIVE = ["pos", "neg"]
#: Categories whose pairs picked a response in both orders (`_keep`): both sides are needed,
#: so each order's decisive rows are joined inner (at 10^7 rows: 2.8 s and 2.6 GB peak, not
#: 4.6 s and 3.2 GB for the full join).
BOTH_DECISIVE = ("flipped", "consistently_wrong", "consistently_right")


def _order(
    lf: pl.LazyFrame, order: int, cols: list[str] = COLS, unit: list[str] = UNIT
) -> pl.LazyFrame:
    return lf.filter(pl.col("order") == order).select(
        *unit, *(pl.col(c).alias(f"{c}_{order}") for c in cols), pl.lit(True).alias(_HAS[order])
    )


#: Marks a unit's row of each order, so that an order it lacks reads NaN as pandas' merge has it.
_HAS = ("_has_0", "_has_1")


def _as_merged(found: pd.DataFrame, cols: list[str]) -> pd.DataFrame:
    """Return the paired cases with a missing order's columns NaN (not None), as `_wide`'s."""
    for order, has in enumerate(_HAS):
        if has in found.columns:
            lacking = found[has].isna().to_numpy()
            if lacking.any():
                for c in cols:
                    found.loc[lacking, f"{c}_{order}"] = np.nan
    return found.drop(columns=[h for h in _HAS if h in found.columns])


def _keep(category: str) -> pl.Expr:
    c0, c1 = pl.col("chosen_0"), pl.col("chosen_1")
    both = c0.is_in(DECISIVE) & c1.is_in(DECISIVE)
    if category == "flipped":
        return both & (c0 != c1)
    if category == "consistently_wrong":
        return both & (c0 == "neg") & (c1 == "neg")
    if category == "consistently_right":
        return both & (c0 == "pos") & (c1 == "pos")
    if category == "longer_worse":
        return (c0 == "neg") | (c1 == "neg")  # the length test needs the items (pandas)
    valid = pl.col("valid_0").fill_null(True) & pl.col("valid_1").fill_null(True)
    return ~valid  # invalid


_VERDICTS = ("verdict_0", "verdict_1")
#: The columns of a case's summary line before its question excerpt (those a case has).
SUMMARY = ("judge", "split", "item_id", *_VERDICTS, "gold")
#: A column's distinct excerpts and each row's position among them (`explore.question_excerpts`).
Excerpts = Callable[[pd.Series], tuple[list[str], np.ndarray]]
#: Cases per part of their summary in polars (`Cases.summaries`; ~0.1 GB a part).
SUMMARY_ROWS = 1_000_000


class Cases:
    """A lazy table's cases of one category: polars rows, a few taken to pandas.

    `rows(at)` gives the cases at positions `at` as `explore.cases` gives them (item columns
    and `category` included); `summaries()` the summary of all of them, in polars parts: a
    large source's cases are summarised and written without a pandas frame of them all
    (10^7 judgment rows: 1.6 million cases, ~180 MB in pandas).
    """

    def __init__(
        self, frame: pl.DataFrame, items: pd.DataFrame, cols: list[str], category: str
    ) -> None:
        self.frame, self.cols, self.category = frame, cols, category
        self.keys = items[KEY].astype(str).reset_index(drop=True)
        self.items = items.drop(columns=KEY)

    def __len__(self) -> int:
        return self.frame.height

    def rows(self, at: np.ndarray | slice) -> pd.DataFrame:
        """The cases at positions `at` (a slice or sorted positions), with their items."""
        part = self.frame[at] if isinstance(at, slice) else self.frame[np.asarray(at)]
        part = part.with_columns(pl.col(pl.Categorical).cast(pl.String))  # text, as it was
        at = part[_AT].to_numpy()
        found = part.drop(_AT).to_pandas()
        keys = self.keys.iloc[at]
        for i, c in enumerate(KEY):  # the unit's columns in `UNIT` order
            found.insert(1 + i, c, keys[c].array)
        found = _as_merged(found, self.cols)
        rest = self.items.iloc[at]
        for c in rest.columns:  # added as they are (no item column is named as a case's)
            found[c] = rest[c].array
        return found.assign(category=self.category)

    def summaries(self, excerpts: Excerpts, size: int | None = None) -> Iterator[pl.DataFrame]:
        """`explore.summary` of every case, built in polars `size` cases at a time (in order).

        The same columns (`SUMMARY`, then `question`) and values as `explore.summary` of
        `rows(...)`: a verdict is null where the unit lacks that order, and the question is
        its excerpt (`excerpts`: `explore.summary`'s, each distinct question cut once), for
        polars' CSV writer (`notebook.save_table`). 10^7 rows: 1.6 million cases in 0.3 s,
        where pandas took 1.7 s to take and write them; a part at a time, as many cases as
        10^8 rows give (16 million) are never laid out at once.
        """
        keys = pl.from_pandas(self.keys[["split", "item_id"]])
        gold = None
        if "gold" in self.items.columns:
            gold = pl.from_pandas(self.items["gold"].astype("string")).alias("gold")
        texts, codes = excerpts(self.items.get("question", pd.Series("", index=self.items.index)))
        clipped, asked = pl.Series("question", texts, dtype=pl.String), pl.Series(codes)
        size = size or SUMMARY_ROWS
        for start in range(0, max(len(self), 1), size):
            part = self.frame.slice(start, size)
            at = part[_AT]
            columns = {
                "judge": part["judge"].cast(pl.String),
                **{c: keys[c].gather(at) for c in ("split", "item_id")},
                # an order a unit lacks has null verdicts already (the orders' outer join)
                **{c: part[c].cast(pl.String) for c in _VERDICTS if c in part},
                **({"gold": gold.gather(at)} if gold is not None else {}),
            }
            yield pl.DataFrame(
                [*(columns[c] for c in SUMMARY if c in columns), clipped.gather(asked.gather(at))]
            )


def pairwise_cases(
    lf: pl.LazyFrame,
    items: pd.DataFrame,
    category: str,
    *,
    outputs: bool = True,
    only_items: bool = False,
) -> Cases:
    """Return the pairwise cases of `category` of a lazy table, as `explore._pairwise` does.

    `outputs=False` leaves out the raw outputs (`output_0`, `output_1`: the heaviest
    columns; at 10^7 rows the join held 2.7 GB with them), which `outputs_of` adds to a few.
    `only_items`: `items` are a few of the table's (a category decided by the items); only
    their judgments are paired either way (the items' join comes first).
    """
    lf = bare(lf)  # pairing reads no cluster
    # a judge at a time at scale, a large judge in parts by item (10^8 rows: 2·10^7 a judge)
    judges = lazy.judge_passes(lf, False, lazy.ROWS_PER_PASS)
    casts = [pl.col(c).cast(pl.String) for c in KEY]
    lf = lf.with_columns(casts)
    # the inner join keeps only known items, as `explore._pairwise`'s merge: each row gets
    # its item's row number (whose columns pandas then takes; at 10^7 rows: 1.6 million
    # cases, the pandas merge on text keys took 2.9 s) and its rank in key order, and the
    # orders are paired on these numbers, not the text keys (0.49 -> 0.37 s a judge)
    keys = pl.from_pandas(items[KEY].astype(str)).with_row_index(_AT)
    at = keys.sort(KEY, maintain_order=True).with_row_index(_RANK).lazy()
    cols = COLS if outputs else [c for c in COLS if c != "output"]
    parts = [
        _compact(_judge_cases(lf, at, category, cols, wheres)) for wheres in judges
    ]  # sorted by judge first: in order; a judge at a time, 10^7 rows: 2.4 -> 1.6 GB
    return Cases(pl.concat(parts), items, cols, category)


def _judge_cases(
    lf: pl.LazyFrame, at: pl.LazyFrame, category: str, cols: list[str], wheres: list
) -> pl.DataFrame:
    """One judge's cases (`_paired`), read in the parts `wheres`, merged into unit order."""
    got = [
        _paired(lf if only is None else lf.filter(only), at, category, cols).collect(
            engine="streaming"
        )
        for only in wheres
    ]
    if len(got) == 1:
        return got[0].drop(_RANK)
    return pl.concat(got).sort([_RANK, _AT, *UNIT[4:]]).drop(_RANK)


def _compact(found: pl.DataFrame) -> pl.DataFrame:
    """`found` with its few-valued text columns as categoricals (`Cases.rows`: text again).

    A query's text columns hold on to the buffers of every string it read (a string
    column's values are views into them): 1.6 million flipped cases at 10^7 rows kept
    266 MB, 28 MB with the judge, condition, verdicts and picks as categoricals and the item
    keys left to the items. Raw outputs (as many values as rows) stay text: categories are
    kept for the whole process.
    """
    few = [c for c in found.columns if found.schema[c] == pl.String and not c.startswith("output")]
    return found.with_columns(pl.col(few).cast(pl.Categorical))


def _paired(lf: pl.LazyFrame, at: pl.LazyFrame, category: str, cols: list[str]) -> pl.LazyFrame:
    """The two orders of each unit side by side, kept if a case of `category`, in order.

    `at`: the items' keys, row numbers (`_AT`) and ranks in key order (`_RANK`); the rows
    of other items are left out. Sorted as by `UNIT` (the key's rank stands for the key);
    the unit's columns but the key, the orders' columns, then `_AT` (`Cases.rows` puts the
    key back from the items) and `_RANK` (parts of a judge are merged on it).
    """
    coded = lf.join(at, on=KEY, how="inner").drop(KEY)
    unit = ["judge", _RANK, _AT, *UNIT[4:]]
    if category in BOTH_DECISIVE:  # only pairs decisive in both orders qualify: an inner join
        decisive = coded.filter(pl.col("chosen").is_in(DECISIVE))
        wide = _order(decisive, 0, cols, unit).join(
            _order(decisive, 1, cols, unit), on=unit, nulls_equal=True
        )
    else:
        wide = _order(coded, 0, cols, unit).join(
            _order(coded, 1, cols, unit), on=unit, how="full", coalesce=True, nulls_equal=True
        )
    wide = wide.filter(_keep(category).fill_null(False)).sort(unit)
    rest = [c for c in wide.collect_schema().names() if c not in unit]
    return wide.select("judge", *UNIT[4:], *rest, _AT, _RANK)


_AT = "_item_row"
_RANK = "_key_rank"


def outputs_of(lf: pl.LazyFrame, cases: pd.DataFrame) -> pd.DataFrame:
    """Return `output_0` and `output_1` of these cases (by `UNIT`) from a lazy table."""
    ids = cases["item_id"].dropna().astype(str).unique().tolist()
    # the few cases' items first, a filter the scan applies as it reads (then the exact keys)
    lf = bare(lf).filter(pl.col("item_id").cast(pl.String).is_in(ids))
    lf = lf.with_columns(pl.col(c).cast(pl.String) for c in KEY)
    schema = lf.collect_schema()
    wanted = pl.from_pandas(cases[UNIT]).cast({c: schema[c] for c in UNIT}).lazy()
    rows = lf.join(wanted, on=UNIT, how="semi", nulls_equal=True)
    wide = _order(rows, 0, ["output"]).join(
        _order(rows, 1, ["output"]), on=UNIT, how="full", coalesce=True, nulls_equal=True
    )
    return _as_merged(wide.collect(engine="streaming").to_pandas(), ["output"])


def pointwise_cases(lf: pl.LazyFrame, items: pd.DataFrame) -> pd.DataFrame:
    """Return the rows of a lazy table whose item is known (pointwise categories filter them)."""
    known = pl.from_pandas(items[KEY].drop_duplicates().astype(str)).lazy()
    rows = lf.with_columns(pl.col(c).cast(pl.String) for c in KEY).join(known, on=KEY, how="semi")
    return rows.drop(ROW, strict=False).collect(engine="streaming").to_pandas()


def narrowed(lf: pl.LazyFrame, filters: dict[str, Any]) -> pl.LazyFrame:
    """Return `lf` keeping rows whose column equals each given value (None: any)."""
    for col, want in filters.items():
        if want is not None:
            lf = filtered(lf, pl.col(col) == want)
    return lf


__all__ = ["narrowed", "outputs_of", "pairwise_cases", "pointwise_cases"]
