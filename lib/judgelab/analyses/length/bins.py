"""Length bins and length-difference buckets, and accuracy per bin (ContextualJudgeBench Fig. 10).

Definitions follow ContextualJudgeBench §5.3 (spec 000 §4.10, Fig. 10): percentile bins of
the items' lengths ("percentile of the entire benchmark"), and N(x+) / d = 0 / P(x+) buckets
of the length difference of a pair. Inputs are `verdicts.item_table` output.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import polars as pl

from judgelab.analyses.length import lazy
from judgelab.analyses.length.rates import RATE_COLUMNS, SUPPORT_COLUMNS, rate_by_group, rates_of
from judgelab.analyses.length.verdicts import KEYS, length_unit
from judgelab.core import clusters
from judgelab.core.schema import require_columns as _require
from judgelab.errors import check_choice

#: The bucket of pairs of equal lengths.
EQUAL = "d = 0"
#: `diff_buckets` modes: nested buckets or each row in one bucket.
DIFF_MODES = ("cumulative", "disjoint")
#: `bin_lengths` kinds: edges are percentiles or lengths.
BIN_KINDS = ("percentile", "value")
#: Display names of the value columns in `accuracy_by_length`.
METRIC_NAMES = {"correct": "accuracy", "consistent": "consistency", "score": "mean score"}


def percentile_edges(values: pd.Series | np.ndarray, *, edges: Sequence[float]) -> np.ndarray:
    """Return the length values at percentile `edges` (0–100) of `values` (NaN ignored).

    >>> percentile_edges([1, 2, 3, 4, 5], edges=[0, 50, 100]).tolist()
    [1.0, 3.0, 5.0]
    """
    edges = [float(e) for e in edges]
    if edges != sorted(edges) or edges[0] < 0 or edges[-1] > 100 or len(edges) < 2:
        raise ValueError(f"percentile edges must increase within [0, 100], got {edges}")
    values = np.asarray(values, dtype=float)
    values = values[~np.isnan(values)]
    if values.size == 0:
        return np.full(len(edges), np.nan)
    return np.percentile(values, edges)


def bin_lengths(
    values: pd.Series,
    *,
    edges: Sequence[float],
    by: str = "percentile",
    reference: pd.Series | np.ndarray | None = None,
) -> pd.Series:
    """Assign each length to a bin; return an ordered categorical (NaN only for NaN lengths).

    With `by="percentile"`, `edges` are percentiles (e.g. [0, 20, 40, 60, 80, 100]) of
    `reference` (default: `values` itself; pass item-level lengths so that judges with more
    rows do not move the edges). Bins are closed on the right, the first also on the left,
    so with edges 0 and 100 every length falls in exactly one bin; percentiles that land on
    the same length (ties) merge into one bin. Labels read `P0–20 (≤57)`: the percentile
    range and the largest length in the bin.

    With `by="value"`, `edges` are lengths; bins are closed on the left, `[16, 64)`, a
    first edge above the minimum is lowered to it and the last bin is open (`≥256`).
    """
    check_choice("by", by, BIN_KINDS)
    x = pd.Series(values, dtype=float)
    if by == "percentile":
        ref = x if reference is None else pd.Series(reference, dtype=float)
        return _percentile_bins(x, ref, edges)
    return _value_bins(x, edges)


def _percentile_bins(x: pd.Series, ref: pd.Series, edges: Sequence[float]) -> pd.Series:
    """`bin_lengths(by="percentile")`: cuts at percentiles of `ref`, stretched to cover `x`."""
    cuts = percentile_edges(ref, edges=edges)
    pct = [float(e) for e in edges]
    if np.isnan(cuts).all():
        return pd.Series(pd.Categorical([np.nan] * len(x)), index=x.index)
    lo, hi = min(cuts[0], np.nanmin(x)) if x.notna().any() else cuts[0], cuts[-1]
    cuts = cuts.copy()
    cuts[0] = lo
    if x.notna().any():
        cuts[-1] = max(hi, np.nanmax(x))
    keep = [0] + [i for i in range(1, len(cuts)) if cuts[i] > cuts[i - 1]]
    if len(keep) == 1:  # every length equal: one bin
        keep = [0, len(cuts) - 1]
        cuts[-1] = cuts[0] + 1e-9
    starts = [pct[keep[i - 1]] for i in range(1, len(keep))]
    tops = _bin_tops(x, cuts, keep)
    labels = [
        f"P{a:g}–{pct[keep[i]]:g} (≤{_length_text(top)})"
        for i, a, top in zip(range(1, len(keep)), starts, tops, strict=True)
    ]
    binned = pd.cut(x, bins=cuts[keep], labels=labels, include_lowest=True, right=True)
    return pd.Series(binned, index=x.index)


def _bin_tops(x: pd.Series, cuts: np.ndarray, keep: list[int]) -> list[float]:
    """Return the largest length in each bin (the cut itself when the bin is empty).

    Rounding the cut could name a length of the next bin (cut 5.5 shown as "≤6").
    """
    tops = []
    for i in range(1, len(keep)):
        lo_i, hi_i = cuts[keep[i - 1]], cuts[keep[i]]
        inside = x[(x <= hi_i) & ((x > lo_i) | ((x >= lo_i) if i == 1 else False))]
        tops.append(float(inside.max()) if len(inside) else float(hi_i))
    return tops


def _value_bins(x: pd.Series, edges: Sequence[float]) -> pd.Series:
    """`bin_lengths(by="value")`: left-closed bins at the lengths `edges`, the last open."""
    bins, labels = value_cuts(edges, float(x.min()) if x.notna().any() else float("nan"))
    return cut_values(x, bins, labels)


def value_cuts(edges: Sequence[float], floor: float) -> tuple[list[float], list[str]]:
    """Return the bins and labels of `bin_lengths(by="value")` for lengths from `floor` up.

    A first edge above `floor` (the smallest length binned; NaN: none) is lowered to it.

    >>> value_cuts([16, 64], 3.0)
    ([3.0, 64.0, inf], ['[3, 64)', '≥64'])
    """
    cuts = sorted(float(e) for e in edges)
    if floor < cuts[0]:
        cuts[0] = floor
    labels = [f"[{a:,.0f}, {b:,.0f})" for a, b in zip(cuts[:-1], cuts[1:], strict=False)]
    labels.append(f"≥{cuts[-1]:,.0f}")
    return [*cuts, np.inf], labels


def cut_values(x: pd.Series, bins: Sequence[float], labels: Sequence[str]) -> pd.Series:
    """Assign lengths to the left-closed `bins` (`value_cuts`); an ordered categorical."""
    binned = pd.cut(x, bins=list(bins), labels=list(labels), right=False)
    return pd.Series(binned, index=x.index)


def _length_text(value: float) -> str:
    """Return a length for a bin label: an integer as is, anything else to one decimal."""
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.1f}"


def diff_buckets(
    table: pd.DataFrame,
    *,
    thresholds: Sequence[float] = (1, 16, 32, 64, 128),
    mode: str = "cumulative",
    column: str = "len_diff",
) -> pd.DataFrame:
    """Return the rows of `table` in length-difference buckets N(x+) / d = 0 / P(x+).

    `d` = `column` (len_pos − len_neg). **N(x+)**: the negative response is longer by x or
    more (d ≤ −x); **P(x+)**: the positive is longer by x or more (d ≥ x); the boundary
    d = ±x is included (spec 000 §4.10). In `cumulative` mode the buckets nest (N(128+) ⊆
    N(32+)) and a row appears in every bucket it satisfies; in `disjoint` mode each row with
    |d| ≥ min(thresholds) is in one bucket: N(x+) holds −x' < d ≤ −x for the next threshold
    x'. Equal lengths form their own bucket `d = 0`. Thresholds must be > 0 (with integer
    units, 1 means "longer at all").

    Returns:
        The selected rows (repeated across nested buckets) with a `bucket` column, an
        ordered categorical N(max+) … N(min+), d = 0, P(min+) … P(max+).
    """
    _require(table, [column], "diff_buckets")
    check_choice("mode", mode, DIFF_MODES)
    ts = sorted(float(t) for t in thresholds)
    if not ts or ts[0] <= 0:
        raise ValueError(
            f"thresholds must be > 0, got {list(thresholds)}; d = 0 is its own bucket"
        )
    d = table[column].to_numpy(dtype=float)
    names_n = [f"N({t:g}+)" for t in reversed(ts)]
    names_p = [f"P({t:g}+)" for t in ts]
    order = [*names_n, EQUAL, *names_p]
    rows: dict[str, np.ndarray] = {EQUAL: np.flatnonzero(d == 0)}
    for i, t in enumerate(ts):
        upper = ts[i + 1] if (mode == "disjoint" and i + 1 < len(ts)) else np.inf
        rows[f"N({t:g}+)"] = np.flatnonzero((d <= -t) & (d > -upper))
        rows[f"P({t:g}+)"] = np.flatnonzero((d >= t) & (d < upper))
    # the buckets in their order, each's rows in the table's: one take, the codes given
    at = np.concatenate([rows[name] for name in order])
    codes = np.repeat(np.arange(len(order)), [len(rows[name]) for name in order])
    out = table.iloc[at].reset_index(drop=True)
    out["bucket"] = pd.Categorical.from_codes(codes, categories=order, ordered=True)
    return out


def accuracy_by_length(
    table: pd.DataFrame,
    *,
    edges: Sequence[float] = (0, 20, 40, 60, 80, 100),
    by: str = "percentile",
    column: str = "len_response",
    metrics_: Sequence[str] = ("correct", "consistent"),
    n_boot: int = 1000,
    seed: int = 0,
    level: float = 0.95,
    cluster: str | None = clusters.COLUMN,
    inference: str = "wild",
) -> pd.DataFrame:
    """Return accuracy (and consistency) per judge × length bin — Fig. 10 left / Fig. 8.

    Bins come from `bin_lengths` on `column`; percentile edges are computed over the
    items (each item once, whichever judges saw it), as in "percentile of entire benchmark".
    For pairwise items `correct` is consistent accuracy; for pointwise items it is accuracy.

    Args:
        table: `item_table` output.
        edges: Bin edges (percentiles or lengths, per `by`).
        by: `percentile` or `value` (see `bin_lengths`).
        column: The length column binned (`len_response`, `len_context`).
        metrics_: Value columns reported (each where defined).
        n_boot: Bootstrap resamples B.
        seed: Seed of the bootstrap.
        level: Confidence level.
        cluster: Units of the interval (default: the `cluster` column, e.g. the source
            document; None: items, the issue-20 legacy).
        inference: `rates.INFERENCE`: `wild` (default: `core.estimates.ratio`, the inverted
            wild cluster bootstrap) or `bootstrap` (the earlier percentile bootstrap).

    Returns:
        `judge`, `bin`, `metric`, then the `rate_by_group` columns (with `n_eff_clusters`,
        `few_clusters`, `method`), and `len_unit`.
    """
    if lazy.is_lazy(table) and inference != "wild":  # the percentile bootstrap: pandas
        table = lazy.collect(table)
    kw = dict(n_boot=n_boot, seed=seed, level=level, inference=inference)
    parts = []
    if lazy.is_lazy(table):
        item_bins = _lazy_item_bins(table, column, edges, by, cluster)
        for m in metrics_:
            frames = [
                f.assign(bin=item_bins[f["item"].to_numpy()])
                for f in lazy.chunks(
                    table, ["judge"], {"value": pl.col(m)}, where=pl.col(m).is_not_null(),
                    cluster=cluster,
                )
            ]  # fmt: skip
            if frames:
                r = rates_of(frames, by=["judge", "bin"], value=m, **kw)
                r.insert(2, "metric", METRIC_NAMES.get(m, m))
                parts.append(r)
    else:
        _require(table, ["judge", column, *KEYS, *metrics_], "accuracy_by_length")
        ref = table.drop_duplicates(list(KEYS))[column]
        data = table.assign(bin=bin_lengths(table[column], edges=edges, by=by, reference=ref))
        for m in metrics_:
            sub = data[data[m].notna()]
            if sub.empty:
                continue
            r = rate_by_group(sub, value=m, by=("judge", "bin"), cluster=cluster, **kw)
            r.insert(2, "metric", METRIC_NAMES.get(m, m))
            parts.append(r)
    cols = ["judge", "bin", "metric", *RATE_COLUMNS, *SUPPORT_COLUMNS, "len_unit"]
    if not parts:
        return pd.DataFrame(columns=cols)
    out = pd.concat(parts, ignore_index=True)
    out["len_unit"] = length_unit(table)
    return out[cols]


def _lazy_item_bins(
    table: lazy.LazyItems, column: str, edges: Sequence[float], by: str, cluster: str | None
) -> pd.Categorical:
    """The bin of every item code of a lazy table: `bin_lengths` over the items it holds.

    Percentile cuts, their stretch to the extremes and the bins' largest lengths depend on
    the set of lengths only, and each item's length is one value; so binning each item once
    gives every row the bin the pandas path gives it (indexed by the item's code).
    """
    held = lazy.item_codes(table, cluster)
    x = pd.Series(table.per_item[column].to_numpy()[held], dtype=float)
    binned = bin_lengths(x, edges=edges, by=by, reference=x).values
    codes = np.full(len(table.per_item), -1, dtype=np.int64)
    codes[held] = binned.codes
    return pd.Categorical.from_codes(codes, categories=binned.categories, ordered=True)


def accuracy_by_diff_bucket(
    table: pd.DataFrame,
    *,
    thresholds: Sequence[float] = (1, 16, 32, 64, 128),
    mode: str = "cumulative",
    n_boot: int = 1000,
    seed: int = 0,
    level: float = 0.95,
    cluster: str | None = clusters.COLUMN,
    inference: str = "wild",
) -> pd.DataFrame:
    """Return consistent accuracy per judge × length-difference bucket — Fig. 10 right.

    Pairwise rows of `item_table` only (those with `len_diff`), bucketed by `diff_buckets`;
    intervals over `cluster` units (None: items) as in `rate_by_group` (`inference`).

    Returns:
        `judge`, `bucket`, the `rate_by_group` columns and `len_unit`.
    """
    cols = ["judge", "bucket", *RATE_COLUMNS, *SUPPORT_COLUMNS, "len_unit"]
    kw = dict(n_boot=n_boot, seed=seed, level=level, inference=inference)
    if lazy.is_lazy(table) and inference != "wild":  # the percentile bootstrap: pandas
        table = lazy.collect(table)
    if lazy.is_lazy(table):
        where = pl.col("len_diff").is_not_null() & pl.col("correct").is_not_null()
        columns = {"value": pl.col("correct"), "len_diff": pl.col("len_diff")}
        frames = [
            diff_buckets(f, thresholds=thresholds, mode=mode)
            for f in lazy.chunks(table, ["judge"], columns, where=where, cluster=cluster)
        ]
        if not frames:
            return pd.DataFrame(columns=cols)
        out = rates_of(frames, by=["judge", "bucket"], value="correct", **kw)
        out["len_unit"] = length_unit(table)
        return out[cols]
    _require(table, ["judge", "len_diff", "correct", *KEYS], "accuracy_by_diff_bucket")
    data = table[table["len_diff"].notna() & table["correct"].notna()]
    if data.empty:
        return pd.DataFrame(columns=cols)
    buckets = diff_buckets(data, thresholds=thresholds, mode=mode)
    out = rate_by_group(buckets, value="correct", by=("judge", "bucket"), cluster=cluster, **kw)
    out["len_unit"] = length_unit(table)
    return out[cols]
