"""`units.CellUnits` with shared moment columns (`cols`): the sums of the expanded rows."""

from __future__ import annotations

import numpy as np
import pytest

from judgelab.analyses.pairwise import units


def _cells(rng, cols):
    """Two cells of labelled units, stored once (`cols`) and expanded (every moment)."""
    stored, full = [], []
    for labels in (np.array([0, 2, 3, 5]), np.array([1, 2, 5])):
        rows = rng.integers(0, 4, size=(len(labels), int(cols.max()) + 1)).astype(float)
        stored.append(units.CellUnits(labels, rows, None, cols))
        full.append(units.CellUnits(labels, rows[:, cols]))
    return stored, full


def test_stored_moment_columns_give_the_expanded_sums():
    rng = np.random.default_rng(0)
    lay = units.layout([0, 1, 2], [3, 3, 4], 5)
    cols = rng.integers(0, 7, size=lay.width)  # several moments share a stored sum
    stored, full = _cells(rng, cols)
    for s_cells, f_cells in (([units.union(stored)], [units.union(full)]), (stored, full)):
        s_al, f_al = units.align(s_cells), units.align(f_cells)
        assert s_al.rows.shape[1] == cols.max() + 1 and f_al.rows.shape[1] == lay.width
        for metric in range(3):
            got, _ = units.rate_sums(s_al, lay, metric)
            want, _ = units.rate_sums(f_al, lay, metric)
            for g, w in zip(got, want, strict=True):
                np.testing.assert_array_equal(g, w)
    np.testing.assert_array_equal(stored[0].full(), full[0].rows)


def test_cells_stored_differently_are_refused():
    rng = np.random.default_rng(1)
    cols = np.array([0, 1, 1, 2])
    stored, full = _cells(rng, cols)
    with pytest.raises(ValueError, match="differently"):
        units.union([stored[0], full[1]])
    empty = units.CellUnits(np.array([], dtype=np.int64), np.zeros((0, 4)))
    assert units.align([stored[0], empty]).rows.shape[1] == 3  # a cell without units: any
