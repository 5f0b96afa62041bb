"""The cluster bootstrap of the juries family: per-item values summed per resampling unit.

Items that share a cluster (a source, a question: `core.clusters`) are drawn together: the
per-item values are summed per cluster (`clusters.sum_by`) and the clusters are resampled
(`stats.bootstrap_sums`); a rate stays a ratio of resampled sums. `cluster=None` resamples
items on their own (the legacy bootstrap). A `Sums` keeps a `draw` function that draws more
replicates of the same bootstrap, so p-values can be resolved adaptively
(`core.inference.adaptive_p`); pooled rows add the strata's sums, replicates and draws
(each stratum resampled on its own: a stratified bootstrap).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple

import numpy as np

from judgelab.core import clusters, stats

#: `draw(k, cols=None)`: k more replicates (k × columns, or only the columns `cols`).
Draw = Callable[..., np.ndarray]


class Sums(NamedTuple):
    """Column sums of per-item values, their bootstrap replicates (B × columns) and items.

    `draw(k, cols=None)`, when given, returns k more replicates (k × columns, or k × the
    columns `cols`) of the same bootstrap.
    """

    sums: np.ndarray
    reps: np.ndarray
    n: int
    draw: Draw | None = None
    n_units: int = 0  # resampling units (clusters) behind the sums


def cluster_sums(
    values: np.ndarray, codes: np.ndarray, *, n_boot: int, rng: np.random.Generator
) -> Sums:
    """Return the `Sums` of per-item `values` (n × m) under a bootstrap of `codes`' units."""
    values = np.asarray(values, dtype=np.float64)
    if values.ndim == 1:
        values = values[:, None]
    per_unit = clusters.sum_by(values, codes)

    def draw(k: int, cols: Sequence[int] | None = None) -> np.ndarray:
        part = per_unit if cols is None else per_unit[:, list(cols)]
        return stats.bootstrap_sums(part, n_boot=k, rng=rng)

    return Sums(values.sum(axis=0), draw(n_boot), len(values), draw, len(per_unit))


def pool_sums(cells: Sequence[Sums]) -> Sums:
    """Return the pooled `Sums` of strata bootstrapped on their own (stratified bootstrap).

    >>> one = Sums(np.array([1.0]), np.array([[1.0], [2.0]]), 2)
    >>> pool_sums([one, one]).n, pool_sums([one, one]).reps[:, 0].tolist()
    (4, [2.0, 4.0])
    """
    draws = [c.draw for c in cells]
    draw = None
    if draws and all(d is not None for d in draws):

        def draw(k: int, cols: Sequence[int] | None = None) -> np.ndarray:
            return np.sum([d(k, cols) for d in draws], axis=0)

    return Sums(
        np.sum([c.sums for c in cells], axis=0),
        np.sum([c.reps for c in cells], axis=0),
        sum(c.n for c in cells),
        draw,
        sum(c.n_units for c in cells),
    )


def select(cell: Sums, columns: Sequence[int]) -> Sums:
    """Return the `Sums` of some columns of a cell (its draw restricted to them)."""
    cols = list(columns)
    base = cell.draw
    draw = None
    if base is not None:

        def draw(k: int, sub: Sequence[int] | None = None) -> np.ndarray:
            return base(k, cols if sub is None else [cols[i] for i in sub])

    return Sums(cell.sums[cols], cell.reps[:, cols], cell.n, draw, cell.n_units)
