"""Length analyses of a lazy (polars) judgments table: notebook 03 at 10^7 rows.

`catalog.load_source(allow_lazy=True)` hands a large source's judgments over as a
`polars.LazyFrame` (`catalog.LAZY_ROWS`); the length functions a notebook calls then take
this path themselves, so the notebook's code is the same for either size:

- `pairwise_verdicts(items, lazy)` returns `LazyVerdicts` and `item_table(items, lazy)`
  `LazyItems`: the joins and derived columns as polars expressions (nothing is read);
- `picks_longer`, `length_regression` (and `length_sensitivity`), `accuracy_by_length`,
  `accuracy_by_diff_bucket` read them judge by judge (`chunks`: one judge's rows, a few
  numeric columns, the unit as its code in sorted-label order and the item as a code) and
  hand each group the very arrays the pandas path builds, to the very same code — the same
  estimates, intervals and p-values for the same seed.

Options the lazy path does not reduce this way (the earlier percentile bootstrap, the
pointwise-score sections) read the table into pandas (`collect`) and take the pandas path:
correct at any size, light only where the table is.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
import polars as pl

from judgelab.analyses.pairwise.scan_values import unit_values
from judgelab.core import clusters
from judgelab.core.scan import bare, filtered, values, with_item_clusters
from judgelab.core.schema import meta_field

KEYS = ("benchmark", "split", "item_id")
#: The columns of `pairwise_verdicts`, in its order.
VERDICT_COLUMNS = [
    "judge", *KEYS, "order", "sample", "verdict", "chosen", "correct", "len_pos", "len_neg",
    "len_context", "len_unit", "model_pos", "model_neg", "len_mean", "len_diff", "longer",
    "picked_longer", "first_shown", "both_orders", "cluster",
]  # fmt: skip


class LazyVerdicts(NamedTuple):
    """`pairwise_verdicts` of a lazy judgments table (`_item`: the item's code)."""

    frame: pl.LazyFrame
    len_unit: str
    per_item: pl.DataFrame  # the item-level columns, row `_item` for item code `_item`
    memo: dict  # per judge and unit rule: the compact row-level columns (`_core`)


class LazyItems(NamedTuple):
    """`item_table` of a lazy judgments table (`_item`: the item's code)."""

    frame: pl.LazyFrame
    len_unit: str
    per_item: pl.DataFrame
    memo: dict


#: Row-level columns `chunks` keeps per judge (compact), by table kind; the item-level ones
#: (`per_item`: the item's keys, task and lengths) are gathered by item code when a chunk is
#: built, so a judge's rows do not repeat them (10^7 rows, with `_SPARSE`: 357 -> 186 MB).
_CORE = {
    "verdicts": {
        "order": pl.Int8, "chosen": pl.Categorical, "correct": pl.Boolean,
        "picked_longer": pl.Int8,
    },
    "items": {"correct": pl.Int8, "consistent": pl.Int8, "score": pl.Float64},
}  # fmt: skip
_FLOATS = ("picked_longer", "correct", "consistent")  # stored as Int8 (0/1/null), exact
#: Kept columns a judge may hold no value of: then kept as a column of type Null (no buffer;
#: 8 bytes a row otherwise) and read back as their `_CORE` type.
_SPARSE = ("score",)


def _item_columns(frame: pd.DataFrame, names: Sequence[str]) -> dict[str, pl.Series]:
    """The item-level text columns `names` of `frame`, as categoricals (one code a row)."""
    text = pl.from_pandas(frame[list(names)].astype(str))  # as they are: no object arrays
    return {c: text[c].cast(pl.Categorical) for c in names}


def is_lazy(table: Any) -> bool:
    """True for `LazyVerdicts` / `LazyItems`."""
    return isinstance(table, LazyVerdicts | LazyItems)


def _keys_str() -> list[pl.Expr]:
    return [pl.col(k).cast(pl.String) for k in KEYS]


def _side(items: pd.DataFrame, columns: Mapping[str, Any]) -> pl.LazyFrame:
    """The items' keys (as text), `columns` and `_item` (the row's position) as a LazyFrame."""
    n = len(items)
    keys = pl.from_pandas(items[list(KEYS)].astype(str))  # text columns as they are: no objects
    rest = pd.DataFrame({k: np.asarray(v) for k, v in columns.items()}, index=range(n))
    row = pl.DataFrame({"_item": np.arange(n, dtype=np.int64)})
    return pl.concat([keys, pl.from_pandas(rest), row], how="horizontal").lazy()


def _joinable(
    selected: pl.LazyFrame, side: pl.LazyFrame
) -> tuple[pl.LazyFrame, pl.LazyFrame, list[pl.Expr]]:
    """The judgments (text keys) to join to the items' `side`, that side, the rows' cluster.

    A catalog scan's items carry the clusters the scan would join to every row
    (`core.scan.with_item_clusters`): its rows skip that join, so each judge's read joins
    once, not twice. Otherwise the rows keep their own `cluster` column (the last list).
    """
    keyed = with_item_clusters(side.collect(), selected)
    if keyed is None:
        return selected.with_columns(_keys_str()), side, [pl.col("cluster")]
    return bare(selected).with_columns(_keys_str()), keyed.lazy(), []


def _selected(judgments: pl.LazyFrame, judges: Sequence[str], sample: int | None) -> pl.LazyFrame:
    """The rows of `judges` (all when empty; an unknown one is an error) and of `sample`."""
    lf = judgments
    if judges:
        known = set(values(lf, "judge"))
        unknown = [j for j in judges if j not in known]
        if unknown:
            raise ValueError(f"unknown judge(s) {unknown}; known: {sorted(known)}")
        lf = filtered(lf, pl.col("judge").is_in(list(judges)))
    if sample is not None:
        lf = filtered(lf, pl.col("sample") == sample)
    return lf


def verdicts(
    items: pd.DataFrame,
    judgments: pl.LazyFrame,
    *,
    judges: Sequence[str],
    sample: int | None,
    unit: str,
) -> LazyVerdicts:
    """`pairwise_verdicts` as polars expressions over the scan (the same columns, lazily)."""
    pair = items[items["task"] == "pairwise"]
    lens: dict[str, Any] = {
        c: pair[c].astype(float).to_numpy() for c in ("len_pos", "len_neg", "len_context")
    }
    models = {}  # the models' names; a column no item names a model in stays out of the side
    for m in ("model_pos", "model_neg"):
        got = meta_field(pair["meta"], m)
        if got.notna().any():
            lens[m] = got.to_numpy()
        else:
            models[m] = pl.lit(None, pl.String)
    cols = ["judge", *KEYS, "order", "sample", "verdict", "chosen", "correct"]
    selected = _selected(judgments, judges, sample)
    rows, side, cluster = _joinable(selected, _side(pair, lens))
    lf = rows.select(*cols, *cluster).join(side, on=list(KEYS), how="inner")
    d = pl.col("len_pos") - pl.col("len_neg")
    longer = pl.when(d > 0).then(pl.lit("pos")).when(d < 0).then(pl.lit("neg"))
    chosen = pl.col("chosen").cast(pl.String).fill_null("")
    decisive = chosen.is_in(["pos", "neg"]) & (pl.col("longer") != "equal")
    lf = lf.with_columns(
        ((pl.col("len_pos") + pl.col("len_neg")) / 2).alias("len_mean"),
        d.alias("len_diff"),
        longer.otherwise(pl.lit("equal")).alias("longer"),
        pl.col("order").cast(pl.Int64),
        pl.lit(unit).alias("len_unit"),
        *[models.get(m, pl.col(m)).cast(pl.String).alias(m) for m in ("model_pos", "model_neg")],
    ).with_columns(
        pl.when(decisive)
        .then((chosen == pl.col("longer")).cast(pl.Float64))
        .alias("picked_longer"),
        pl.when(pl.col("order") == 0)
        .then(pl.lit("pos"))
        .otherwise(pl.lit("neg"))
        .alias("first_shown"),
        (pl.col("order").n_unique().over("judge") == 2).alias("both_orders"),
    )
    lp, ln = lens["len_pos"], lens["len_neg"]
    per_item = pl.DataFrame(
        {
            "len_pos": lp, "len_neg": ln, "len_context": lens["len_context"],
            "len_mean": (lp + ln) / 2, "len_diff": lp - ln,
            "longer": np.select([lp - ln > 0, lp - ln < 0], ["pos", "neg"], "equal"),
            **_item_columns(pair, KEYS[:2]),
        }
    )  # fmt: skip
    memo = {"source": selected, **({} if cluster else {"side": side})}
    return LazyVerdicts(lf.select(*VERDICT_COLUMNS, "_item"), unit, per_item, memo)


def item_rows(
    items: pd.DataFrame,
    judgments: pl.LazyFrame,
    *,
    judges: Sequence[str],
    sample: int | None,
    invalid_policy: str,
    lens: pd.DataFrame,
) -> LazyItems:
    """`item_table` lazily: pairwise items paired over both orders (`pairwise` scan values).

    `lens` is `verdicts._item_lengths(items)` (per item: task, lengths, unit).
    """
    selected = _selected(judgments, judges, sample)
    side = _side(
        lens,
        {
            "task": lens["task"].astype(str).to_numpy(),
            **{c: lens[c].to_numpy(dtype=float) for c in ("len_context", "len_response")},
            "len_diff": lens["len_diff"].to_numpy(dtype=float),
        },
    )
    lf, side, cluster = _joinable(selected, side)
    task = pl.col("task")
    # pairwise items: every judgment paired over both orders (items of other tasks and
    # unknown ones are paired too, then left out by the inner join: cheaper than a join
    # on the text keys before the group-by)
    pw = unit_values(lf, groups=("judge", *KEYS[:2]), invalid_policy=invalid_policy)
    gold = pl.col("has_gold") == 1
    pw = pw.filter(pl.col("complete") == 1).select(
        "judge", *KEYS, pl.col("sample").cast(pl.Int64),
        pl.when(gold).then(pl.col("consistently_correct").cast(pl.Float64)).alias("correct"),
        pl.col("consistent").cast(pl.Float64),
        pl.lit(None, pl.Float64).alias("score"),
        *cluster,
    ).join(side.filter(task == "pairwise"), on=list(KEYS), how="inner")  # fmt: skip
    parts = [pw]
    if lens["task"].isin(["pointwise", "qa"]).any():
        point = side.filter(task.is_in(["pointwise", "qa"]))
        pt = lf.select(
            "judge", *KEYS, pl.col("sample").cast(pl.Int64),
            pl.col("correct").cast(pl.Float64),
            pl.lit(None, pl.Float64).alias("consistent"),
            pl.col("verdict").cast(pl.String).str.strip_chars().cast(pl.Float64, strict=False)
            .alias("score"),
            *cluster,
        ).join(point, on=list(KEYS), how="inner")  # fmt: skip
        parts.append(pt)
    unit = str(lens["len_unit"].iloc[0]) if len(lens) else ""
    out = pl.concat(parts, how="vertical_relaxed").with_columns(pl.lit(unit).alias("len_unit"))
    cols = ["judge", *KEYS, "sample", "task", "correct", "consistent", "score"]
    cols += ["len_context", "len_response", "len_diff", "len_unit", "cluster", "_item"]
    per_item = pl.DataFrame(
        {
            **{
                c: lens[c].to_numpy(dtype=float)
                for c in ("len_context", "len_response", "len_diff")
            },
            **_item_columns(lens, [*KEYS[:2], "task"]),
        }
    )
    memo = {"source": selected, **({} if cluster else {"side": side})}
    return LazyItems(out.select(cols), unit, per_item, memo)


def _unit_label(names: Sequence[str], cluster: str | None) -> pl.Expr:
    """The resampling unit's label, as `core.clusters.codes` labels a pandas frame's rows."""
    if cluster is not None and cluster in names:
        given = pl.col(cluster).cast(pl.String)
        own = pl.lit("item|") + pl.col("item_id").cast(pl.String)
        return pl.when(given.is_not_null() & (given != "")).then(given).otherwise(own)
    return pl.concat_str([pl.col(k).cast(pl.String) for k in clusters.KEYS], separator="|")


def chunks(
    table: LazyVerdicts | LazyItems,
    by: Sequence[str],
    columns: Mapping[str, pl.Expr],
    *,
    where: pl.Expr | None = None,
    cluster: str | None = clusters.COLUMN,
) -> Iterator[pd.DataFrame]:
    """Yield the rows of `table` (those `where` keeps) judge by judge as compact frames.

    Each frame holds the `by` columns, `columns`, `unit` (the unit's code: the rank of its
    label among the frame's, i.e. sorted-label order as `clusters.codes` gives) and `item`
    (the item's code). Judge by judge when `judge` is among `by` (a group never spans two
    judges), else one frame. Read from the kept columns (`_core_chunks`), `judge` is a
    categorical (one value a frame: 2 MB, not 29 MB of text at 2·10^6 rows) and the codes
    are Int32; other text columns are text.
    """
    if _from_core(table, by, columns, where):
        yield from _core_chunks(table, by, columns, where, cluster)
        return
    lf = table.frame if where is None else table.frame.filter(where)
    names = lf.collect_schema().names()
    label = _unit_label(names, cluster)
    select = [pl.col(b) for b in by] + [e.alias(k) for k, e in columns.items()]
    select += [label.alias("unit"), pl.col("_item").alias("item")]
    parts: list[pl.Expr | None] = [None]
    if "judge" in by:
        judges = lf.select(pl.col("judge").unique()).collect(engine="streaming")["judge"]
        parts = [pl.col("judge") == j for j in sorted(judges.drop_nulls().to_list())]
    for part in parts:
        rows = lf if part is None else lf.filter(part)
        got = rows.select(select).collect(engine="streaming")
        if got.is_empty():
            continue
        got = got.with_columns(pl.col("unit").rank("dense").cast(pl.Int64) - 1)
        yield got.to_pandas()


def _kind(table: LazyVerdicts | LazyItems) -> str:
    return "verdicts" if isinstance(table, LazyVerdicts) else "items"


def _from_core(
    table: LazyVerdicts | LazyItems,
    by: Sequence[str],
    columns: Mapping[str, pl.Expr],
    where: pl.Expr | None,
) -> bool:
    """Whether a request reads only the kept columns (`_CORE`, `per_item`), judge by judge."""
    known = {"judge", *_CORE[_kind(table)], *table.per_item.columns}
    exprs = [*columns.values(), *([where] if where is not None else [])]
    roots = {r for e in exprs for r in e.meta.root_names()}
    return "judge" in by and set(by) <= known and roots <= known


def judges_of(table: LazyVerdicts | LazyItems) -> list[str]:
    """The judges of the table's judgments, sorted (read once; one may have no row here).

    They are read from the judgments the table was built from, without the clusters' join
    (`core.scan.bare`): the table's own plan would pair and join every row (2.9 s at 10^7).
    """
    if "judges" not in table.memo:
        table.memo["judges"] = values(table.memo.get("source", table.frame), "judge")
    return table.memo["judges"]


def _item_units(table: LazyVerdicts | LazyItems, cluster: str | None) -> pl.Series | None:
    """Each item's unit as a code in sorted-label order, by `_item` (labelled once).

    None where the rows carry their own `cluster` (the unit is then a row's, not an item's).
    A judge's rows then take their units' codes by item instead of labelling and ranking
    2·10^6 texts (0.14 s a judge and table at 10^7 rows).
    """
    if "side" not in table.memo:
        return None
    key = ("units", cluster)
    if key not in table.memo:
        side = table.memo["side"].collect()  # the keys as text and the items' `cluster`
        names = table.frame.collect_schema().names()  # the label the rows would get
        label = _unit_label(names, cluster).rank("dense").cast(pl.UInt32)
        coded = side.select(pl.col("_item"), label.alias("unit"))
        units = np.zeros(int(coded["_item"].max()) + 1 if len(coded) else 0, dtype=np.uint32)
        units[coded["_item"].to_numpy()] = coded["unit"].to_numpy()
        table.memo[key] = pl.Series("unit", units)
    return table.memo[key]


def _core(table: LazyVerdicts | LazyItems, judge: str, cluster: str | None) -> pl.DataFrame:
    """One judge's rows: the compact `_CORE` columns, `_item` and `unit` (read once)."""
    key = (judge, cluster)
    if key not in table.memo:
        lf = table.frame.filter(pl.col("judge") == judge)
        cast = [pl.col(c).cast(t) for c, t in _CORE[_kind(table)].items()]
        units = _item_units(table, cluster)
        if units is None:
            label = _unit_label(lf.collect_schema().names(), cluster)
            got = lf.select(*cast, pl.col("_item").cast(pl.Int32), label.alias("unit"))
            got = got.collect(engine="streaming")
        else:
            got = lf.select(*cast, pl.col("_item").cast(pl.Int32)).collect(engine="streaming")
            got = got.with_columns(units.gather(got["_item"]))
        empty = [c for c in _SPARSE if c in got.columns and got[c].null_count() == len(got)]
        table.memo[key] = got.with_columns(
            pl.col("unit").rank("dense").cast(pl.Int32) - 1,
            *[pl.lit(None).alias(c) for c in empty],  # type Null: no buffer
        )
    return table.memo[key]


def _core_chunks(
    table: LazyVerdicts | LazyItems,
    by: Sequence[str],
    columns: Mapping[str, pl.Expr],
    where: pl.Expr | None,
    cluster: str | None,
) -> Iterator[pd.DataFrame]:
    """`chunks` from the kept columns: each judge's rows read once for every request.

    One lazy query a judge over its kept rows: the item-level columns the request reads are
    gathered by item code (`per_item`), and only the columns it selects are built (10^7
    rows: 0.07 s and one frame's memory a judge, not 0.3 s and three frames eagerly).
    """
    exprs = [*columns.values(), *([where] if where is not None else [])]
    read = {*by, *(r for e in exprs for r in e.meta.root_names())}
    for judge in judges_of(table):
        core = _core(table, judge, cluster)
        rows = core.lazy().with_columns(
            pl.lit(judge).cast(pl.Categorical).alias("judge"),
            *[pl.col(c).cast(pl.Float64) for c in (*_FLOATS, *_SPARSE) if c in core.columns],
            *[
                pl.lit(table.per_item[c]).gather(pl.col("_item")).alias(c)
                for c in table.per_item.columns
                if c in read
            ],
        )
        if where is not None:
            rows = rows.filter(where)
        got = rows.select(
            *[pl.col(b) for b in by],
            *[e.alias(k) for k, e in columns.items()],
            pl.col("unit"),
            pl.col("_item").alias("item"),
        ).collect()
        if got.is_empty():
            continue
        yield got.with_columns(pl.col(pl.Categorical).exclude("judge").cast(pl.String)).to_pandas()


def minimum(
    table: LazyVerdicts | LazyItems,
    expr: pl.Expr,
    where: pl.Expr,
    cluster: str | None = clusters.COLUMN,
) -> float:
    """The smallest value of `expr` over the rows `where` keeps (NaN when there are none)."""
    if _from_core(table, ["judge"], {"x": expr}, where):
        parts = [f["x"].min() for f in _core_chunks(table, ["judge"], {"x": expr}, where, cluster)]
        got = min(parts) if parts else None
    else:
        got = table.frame.filter(where).select(expr.min()).collect(engine="streaming").item()
    return float("nan") if got is None or pd.isna(got) else float(got)


def task_counts(table: LazyItems) -> pd.DataFrame:
    """The rows per judge × task (`judge`, `task`, `n_items`), from the kept columns."""
    task = table.per_item["task"]
    parts = [
        pl.DataFrame({"task": task.gather(_core(table, j, clusters.COLUMN)["_item"])})
        .group_by("task")
        .agg(pl.len().alias("n_items"))
        .with_columns(pl.col("task").cast(pl.String), pl.lit(j).alias("judge"))
        for j in judges_of(table)
    ]
    if not parts:
        return pd.DataFrame({"judge": [], "task": [], "n_items": []})
    out = pl.concat(parts).select("judge", "task", "n_items").sort("judge", "task")
    return out.to_pandas().astype({"n_items": int})


def any_value(table: LazyItems, column: str) -> bool:
    """Whether any row holds a `column` value (a kept column: `_CORE`)."""
    cores = (_core(table, j, clusters.COLUMN) for j in judges_of(table))
    return any(core[column].is_not_null().any() for core in cores)


def item_codes(table: LazyVerdicts | LazyItems, cluster: str | None) -> np.ndarray:
    """The codes of the items the table holds (any judge), sorted."""
    held = np.zeros(len(table.per_item), dtype=bool)  # codes are the rows of `per_item`
    for j in judges_of(table):
        held[_core(table, j, cluster)["_item"].to_numpy()] = True
    return np.flatnonzero(held)


def collect(table: LazyVerdicts | LazyItems, where: pl.Expr | None = None) -> pd.DataFrame:
    """The table (its rows `where` keeps) in pandas: for the options without a lazy path."""
    lf = table.frame if where is None else table.frame.filter(where)
    return lf.drop("_item").collect(engine="streaming").to_pandas()


__all__ = [
    "LazyItems",
    "LazyVerdicts",
    "any_value",
    "VERDICT_COLUMNS",
    "chunks",
    "collect",
    "is_lazy",
    "item_codes",
    "item_rows",
    "judges_of",
    "minimum",
    "task_counts",
    "verdicts",
]
