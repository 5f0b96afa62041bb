"""Resampling units held as distinct value rows with counts: the bootstrap of `scan_rates`.

`stats.bootstrap_sums` draws a resample as multinomial counts over the *distinct* unit rows
whenever they are few (at most one in eight units); `PatternUnits` keeps only those rows and
their counts, so a cell of 10^7 items costs a few hundred rows, and draws with the very same
random numbers — its replicates equal `bootstrap_sums` on the full unit rows given the same
generator. A cell whose distinct rows are many holds its unit rows themselves (in the order
`pairwise_rates` resamples them) and calls `bootstrap_sums` on them. `UnitStrata` is the
`resample.Strata` of such cells (one stratum per split).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from judgelab.core import stats


def _sorted_patterns(patterns: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Merge equal rows of `patterns` (adding counts), ordered as `np.unique` orders rows."""
    p = np.ascontiguousarray(patterns, dtype=np.float64)
    view = p.view(np.dtype((np.void, 8 * p.shape[1]))).ravel()
    _, first, inverse = np.unique(view, return_index=True, return_inverse=True)
    merged = np.bincount(inverse.ravel(), weights=counts, minlength=len(first))
    return p[first], merged.astype(np.int64)


class PatternUnits:
    """The unit rows of one cell: distinct rows with counts, or the rows themselves."""

    def __init__(
        self,
        patterns: np.ndarray | None = None,
        counts: np.ndarray | None = None,
        rows: np.ndarray | None = None,
    ) -> None:
        """Hold `rows` (n × m, in resampling order) or `patterns` (K × m) with `counts`."""
        self.rows = None if rows is None else np.asarray(rows, dtype=np.float64)
        if self.rows is not None:
            self.n = len(self.rows)
            return
        if patterns is None or counts is None:
            raise ValueError("PatternUnits needs rows, or patterns with counts")
        self.patterns, self.counts = _sorted_patterns(patterns, np.asarray(counts))
        self.n = int(self.counts.sum())
        if len(self.patterns) * 8 > self.n:
            raise ValueError(
                f"{len(self.patterns)} distinct rows for {self.n} units: pass the rows instead"
            )

    @staticmethod
    def fits(patterns: np.ndarray, counts: np.ndarray) -> bool:
        """Return whether these rows are few enough to be held as patterns (≤ 1 in 8 units)."""
        if len(patterns) == 0:
            return False
        distinct, merged = _sorted_patterns(patterns, np.asarray(counts))
        return len(distinct) * 8 <= int(merged.sum())

    def sums(self) -> np.ndarray:
        """Return the column sums over all units."""
        if self.rows is not None:
            return self.rows.sum(axis=0)
        return self.counts.astype(np.float64) @ self.patterns

    def draw(
        self, n_boot: int, rng: np.random.Generator, columns: Sequence[int] | None = None
    ) -> np.ndarray:
        """Return `stats.bootstrap_sums` of the unit rows (their `columns`), same draws."""
        cols = None if columns is None else np.asarray(columns)
        if self.rows is not None:
            values = self.rows if cols is None else self.rows[:, cols]
            return stats.bootstrap_sums(values, n_boot=n_boot, rng=rng)
        patterns, counts = self.patterns, self.counts
        if cols is not None:
            patterns, counts = _sorted_patterns(patterns[:, cols], counts)
        if n_boot < 1:
            raise ValueError(f"n_boot must be >= 1, got {n_boot}")
        n = self.n
        if n == 0:
            return np.zeros((n_boot, patterns.shape[1]))
        draws_per = n - 1 if n > 1 else n
        draws = rng.multinomial(draws_per, counts / n, size=n_boot)
        return (draws.astype(np.float64) @ patterns) * (n / draws_per)


class UnitStrata:
    """Independent strata of `PatternUnits`: the `resample.Strata` of the scan path."""

    def __init__(self, members: Sequence[PatternUnits]) -> None:
        """Hold the strata (one per split)."""
        self.members = list(members)

    @property
    def n_units(self) -> int:
        """Resampling units over all strata."""
        return int(sum(m.n for m in self.members))

    @property
    def df(self) -> int:
        """Degrees of freedom of the t reference: units − non-empty strata."""
        return int(sum(m.n - 1 for m in self.members if m.n))

    def draw(self, columns: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
        """Return k resampled column sums (k × len(columns)), stratum by stratum, summed."""
        cols = np.asarray(columns)
        out = np.zeros((k, len(cols)))
        for m in self.members:
            if m.n:
                out += m.draw(k, rng, cols)
        return out
