"""Per-unit sufficient statistics of pairwise rates, and the one estimate every row gets.

The default inference of the pairwise family (DESIGN §9) is `core.estimates`: a ratio of
sums (or a contrast of per-split ratios) with the interval that inverts the restricted wild
cluster bootstrap test. What it needs of the data are per-cluster sums (`estimates.Sums`);
this module builds them once per cell, from which every metric's `Sums` is a column
selection, so the eager path (`pairwise_rates`, from item rows) and the lazy path
(`scan_rates`, from per-cluster aggregates of a polars scan) hand the engine the very same
arrays and get the very same rows.

- `moment_columns` lays out, per item, what the sums of every metric need: for each
  metric's denominator column an indicator (den > 0: the item counts as a row), each value
  column, its square, and each metric's numerator × denominator (`Moments`);
- `CellUnits` holds one cell's units: sorted unit labels and their summed moment rows
  (`cell_units`), or — for very many units without labels — distinct rows with counts
  (`patterns`); `union` merges cells (the pooled row: units matched by label);
- `align` puts cells side by side once (units matched by label), `rate_sums` slices one
  metric's `Sums` (G units × J cells) out of it;
- `estimate` runs `estimates.from_sums` (which, where the wild bootstrap's B × G arrays
  would not fit, `core.wild.MAX_CELLS`, gives the CR1 t(G − 1) Wald row and says so), or
  `estimates.wald` on distinct unit patterns with counts.

Unit labels (`unit_labels`): the `cluster` value, or for an item without one (or with
`cluster=None`) "item|<other group values>|<item_id>" — so two splits' items of one id stay
two units, and a source shared by two splits is one unit of the pooled row.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
import pandas as pd

from judgelab.core import clusters, estimates


class Moments(NamedTuple):
    """Where each metric's sums sit among the moment columns (`moment_columns`)."""

    count: np.ndarray  # per metric: column of Σ 1[den > 0]
    num: np.ndarray  # Σ num
    den: np.ndarray  # Σ den
    num2: np.ndarray  # Σ num²
    den2: np.ndarray  # Σ den²
    numden: np.ndarray  # Σ num · den
    width: int
    values: int  # column of the first value column's Σ (value column c sits at values + c)


def layout(num_cols: Sequence[int], den_cols: Sequence[int], n_values: int) -> Moments:
    """Return the moment layout of metrics with these value columns (of `n_values`)."""
    num_cols, den_cols = np.asarray(num_cols), np.asarray(den_cols)
    dens = list(dict.fromkeys(int(d) for d in den_cols))
    m, k = n_values, len(num_cols)
    count = np.array([dens.index(int(d)) for d in den_cols])
    return Moments(
        count=count,
        num=len(dens) + num_cols,
        den=len(dens) + den_cols,
        num2=len(dens) + m + num_cols,
        den2=len(dens) + m + den_cols,
        numden=len(dens) + 2 * m + np.arange(k),
        width=len(dens) + 2 * m + k,
        values=len(dens),
    )


def moment_columns(
    values: np.ndarray, num_cols: Sequence[int], den_cols: Sequence[int]
) -> np.ndarray:
    """Return per item the moment columns of `layout` (n × width).

    Every metric's numerator is 0 where its denominator is (an item outside a rate adds
    nothing), so Σ num over all items equals Σ num over the items the rate counts.
    """
    v = np.asarray(values, dtype=np.float64)
    num_cols, den_cols = np.asarray(num_cols), np.asarray(den_cols)
    dens = list(dict.fromkeys(int(d) for d in den_cols))
    ind = (v[:, dens] > 0).astype(np.float64)
    return np.hstack([ind, v, v * v, v[:, num_cols] * v[:, den_cols]])


def unit_labels(frame: pd.DataFrame, cluster: str | None, item_keys: Sequence[str]) -> np.ndarray:
    """Return each row's unit label: its cluster, else "item|<item_keys values>|<item_id>"."""
    n = len(frame)
    out = np.empty(n, dtype=object)
    own_rows = np.ones(n, dtype=bool)
    if cluster is not None and cluster in frame.columns:
        given = frame[cluster].to_numpy(dtype=object)
        ok = pd.notna(given)
        ok[ok] = given[ok].astype(str) != ""
        out[ok] = given[ok].astype(str)
        own_rows = ~ok
    if own_rows.any():
        cols = [frame[c].to_numpy(dtype=object)[own_rows].astype(str) for c in item_keys]
        parts = [*cols, frame["item_id"].to_numpy(dtype=object)[own_rows].astype(str)]
        own = np.full(int(own_rows.sum()), "item", dtype=object)
        for part in parts:
            own = own + "|" + part.astype(object)
        out[own_rows] = own
    return out


class CellUnits(NamedTuple):
    """One cell's units: sorted labels and their moment sums, or distinct rows with counts.

    `cols` (optional): the stored column of each moment column, where several moments are
    one sum (a 0/1 value is its own square: `scan_wild._moment_exprs`); the scan's cells
    keep 29 columns, not 64 (10^8 rows: 2.4 -> 1.1 GB a judge's cells).
    """

    labels: np.ndarray | None  # (G,) sorted unit labels; None for patterns
    rows: np.ndarray  # (G, width) per-unit moment sums (or distinct rows); (G, stored) with cols
    counts: np.ndarray | None = None  # (G,) units per distinct row; None: one each
    cols: np.ndarray | None = None  # (width,) column of `rows` holding each moment; None: same

    @property
    def n_units(self) -> int:
        """Units held (with any complete item)."""
        return int(len(self.rows) if self.counts is None else self.counts.sum())

    def full(self) -> np.ndarray:
        """The rows with every moment column (a copy where `cols` maps them)."""
        return self.rows if self.cols is None else self.rows[:, self.cols]


def cell_units(moments: np.ndarray, labels: np.ndarray) -> CellUnits:
    """Sum the per-item `moments` by unit label (labels sorted, as `estimates.sums` codes)."""
    if len(labels) == 0:
        return CellUnits(np.array([], dtype=object), np.zeros((0, moments.shape[1])))
    uniq, inverse = _distinct([labels])
    return CellUnits(uniq, clusters.sum_by(moments, inverse))


def _distinct(labels: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """The distinct unit labels of the arrays `labels`, sorted, and each label's position.

    Labels are text (compared as text; returned as objects) or integer codes in the labels'
    sorted order (`scan_wild.coded`: compared as they are, far faster); an empty array
    counts as either. Positions follow the arrays' labels one after another.
    """
    given = [np.asarray(x) for x in labels if len(x)]
    if not given:
        return np.array([], dtype=object), np.zeros(0, dtype=np.int64)
    coded = all(x.dtype.kind in "iu" for x in given)
    joined = np.concatenate(given if coded else [x.astype(str) for x in given])
    uniq, inverse = np.unique(joined, return_inverse=True)
    return (uniq if coded else uniq.astype(object)), inverse.ravel()


def patterns(rows: np.ndarray, counts: np.ndarray | None = None) -> CellUnits:
    """Return units as their distinct rows with counts, in `np.unique` row order."""
    rows = np.ascontiguousarray(rows, dtype=np.float64) + 0.0  # -0.0 and 0.0: one row
    counts = np.ones(len(rows)) if counts is None else np.asarray(counts, dtype=np.float64)
    if len(rows) == 0:
        return CellUnits(None, rows.reshape(0, rows.shape[1]), np.zeros(0))
    view = rows.view(np.dtype((np.void, 8 * rows.shape[1]))).ravel()
    _, first, inverse = np.unique(view, return_index=True, return_inverse=True)
    merged = np.bincount(inverse.ravel(), weights=counts, minlength=len(first))
    return CellUnits(None, rows[first], merged)


def union(cells: Sequence[CellUnits]) -> CellUnits:
    """Merge cells into one (a unit in several cells: its sums added; patterns stay patterns).

    Summed a moment column at a time, each unit's rows in cell order (the sums `cell_units`
    gives the stacked rows, bit for bit), into column-major sums whose columns
    `estimates.wald` reads without a copy; no stacked copy of the cells (10^5 units × 5
    splits × ~70 moments: 0.4 s and 0.3 GB a judge).
    """
    if any(c.labels is None for c in cells):
        return patterns(
            np.vstack([c.full() for c in cells]),
            np.concatenate(
                [np.ones(len(c.rows)) if c.counts is None else c.counts for c in cells]
            ),
        )
    cols, width = _stored(cells)
    uniq, inverse = _distinct([c.labels for c in cells])
    out = np.empty((len(uniq), width), order="F")
    for i in range(out.shape[1]):
        out[:, i] = clusters.sum_by(np.concatenate([c.rows[:, i] for c in cells]), inverse)
    return CellUnits(uniq, out, None, cols)


def _stored(cells: Sequence[CellUnits]) -> tuple[np.ndarray | None, int]:
    """The column map and stored width the cells share (a cell without units: any)."""
    held = [c for c in cells if len(c.rows)] or list(cells[:1])
    cols, width = held[0].cols, held[0].rows.shape[1]
    for c in held:
        same = (
            c.cols is None if cols is None else c.cols is not None and np.array_equal(c.cols, cols)
        )
        if not same or c.rows.shape[1] != width:
            raise ValueError("cells store their moment columns differently")
    return cols, width


class Aligned(NamedTuple):
    """Cells' units side by side: (G units × width × J cells), matched by label.

    Cells held as patterns are stacked instead (their units are distinct), with the count
    of every row in `mult`.
    """

    rows: np.ndarray
    mult: np.ndarray | None
    cols: np.ndarray | None = None  # as `CellUnits.cols`


def align(cells: Sequence[CellUnits]) -> Aligned:
    """Return `cells` side by side (built once per row group; `rate_sums` slices it)."""
    J = len(cells)
    if any(c.labels is None for c in cells):
        width = cells[0].full().shape[1]
        blocks, counts = [], []
        for j, c in enumerate(cells):
            part = np.zeros((len(c.rows), width, J))
            part[:, :, j] = c.full()
            blocks.append(part)
            counts.append(np.ones(len(c.rows)) if c.counts is None else c.counts)
        return Aligned(np.concatenate(blocks), np.concatenate(counts))
    cols, width = _stored(cells)
    if J == 1:
        return Aligned(cells[0].rows[:, :, None], None, cols)
    uniq, inverse = _distinct([c.labels for c in cells])
    # laid out moment by moment (unit fastest): a moment's (units × cells) slice, what
    # `rate_sums` hands `estimates` per column, is one contiguous block (no copy there);
    # filled a moment at a time (10^5 units × 5 splits × ~70 moments: 0.2 s, not 0.3-1.3)
    base = np.zeros((width, J, len(uniq)))
    start = 0
    for j, c in enumerate(cells):
        at = inverse[start : start + len(c.labels)]
        start += len(c.labels)
        for w in range(width):
            base[w, j, at] = c.rows[:, w]
    return Aligned(base.transpose(2, 0, 1), None, cols)


def rate_sums(
    aligned: Aligned, lay: Moments, metric: int, cells: Sequence[int] | None = None
) -> tuple[estimates.Sums, np.ndarray | None]:
    """Return metric `metric`'s `Sums` (G units × J cells; `cells`: a subset) and counts.

    G counts every unit of the aligned cells (those the metric does not count have zero
    rows, which `estimates.from_sums` leaves out).
    """
    cols = [lay.count[metric], lay.num[metric], lay.den[metric]]
    cols += [lay.num2[metric], lay.den2[metric], lay.numden[metric]]
    if aligned.cols is not None:
        cols = [aligned.cols[c] for c in cols]
    J = aligned.rows.shape[2]
    pick = slice(None) if cells is None or list(cells) == list(range(J)) else list(cells)
    # one column at a time: views of the aligned rows where every cell is kept (no copy)
    return estimates.Sums(*(aligned.rows[:, c, pick] for c in cols)), aligned.mult


def row_sums(
    num: np.ndarray, den: np.ndarray, group: np.ndarray, labels: np.ndarray, n_groups: int
) -> estimates.Sums:
    """Return `estimates.sums` of per-row data, or empty `Sums` when no row has den > 0.

    `labels` are text (compared as text) or integer codes in the labels' sorted order.
    (`estimates.sums` cannot code an empty selection of string labels.)
    """
    den = np.asarray(den, dtype=np.float64)
    if not np.any(den > 0):
        return estimates.Sums(*(np.zeros((0, n_groups)) for _ in range(6)))
    labels = np.asarray(labels)
    if labels.dtype.kind not in "iu":
        labels = labels.astype(str)
    return estimates.sums(num, den, group, labels, n_groups)


def estimate(
    s: estimates.Sums,
    mult: np.ndarray | None,
    weights: Sequence[float],
    *,
    null: float,
    level: float,
    n_boot: int,
    rng: np.random.Generator,
    bounds: tuple[float, float],
) -> estimates.Estimate:
    """Return the `estimates.from_sums` row, or the Wald row where B × G is too large.

    The limit is on the units of the cell(s) (rows of `s`: every unit with a complete
    item), not on those the metric counts, so the eager and the lazy path decide alike.
    `mult` (units per row of `s`, patterns) is only given for cells beyond the limit.
    """
    if mult is None:  # labelled units in label order, whichever path built them: the same sums
        return estimates.from_sums(
            s, weights, null=null, level=level, n_boot=n_boot, rng=rng, bounds=bounds
        )
    # this metric's distinct unit rows with counts, in one canonical order whichever path
    # (item rows, or the scan's distinct rows) they came from: the same arithmetic follows
    pat = patterns(np.hstack(list(s)), mult)
    J = s.count.shape[1]
    s = estimates.Sums(*(pat.rows[:, i * J : (i + 1) * J] for i in range(6)))
    return estimates.wald(s, pat.counts, weights, null=null, level=level, bounds=bounds)


__all__ = [
    "CellUnits",
    "Aligned",
    "Moments",
    "align",
    "cell_units",
    "estimate",
    "layout",
    "moment_columns",
    "patterns",
    "rate_sums",
    "row_sums",
    "union",
    "unit_labels",
]
