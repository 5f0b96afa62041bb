"""The earlier percentile cluster bootstrap of the pairwise family (`inference="bootstrap"`).

The default inference is `core.estimates` (`units`, `rates.wild_rates`); this module keeps the
issue-20 default reachable — the calibration's "before" variant runs it.

The pairwise bootstrap resamples *clusters* (`core.clusters`: the source, question or
document an item belongs to) by default. A group's per-item value columns are summed per
cluster (`unit_rows`), and `stats.bootstrap_sums` resamples those per-cluster rows, so a
ratio of sums stays a ratio of per-cluster sums (the standard cluster bootstrap). When every
item is its own cluster (no `cluster` column, or `cluster=None`: the legacy behaviour) the
per-item rows are resampled unchanged, so results equal the item bootstrap exactly.

Rows pooled over splits are resampled within each split (`Strata`: each stratum's own
resample, summed), as the per-split rows are. `ratio_p` is the adaptive bootstrap p-value
(`core.inference.adaptive_p`) of "Σ num / Σ den equals `null`" over such strata.

Intervals (`interval`): by default the *expanded* percentile interval (Hesterberg 2015): the
percentiles are read at the level whose normal quantile is the t quantile with G − S degrees
of freedom (G resampling units in S strata), i.e. a t_{G−S} reference carried onto the
bootstrap distribution, which keeps the percentile interval's asymmetry and its range
(a rate's bounds stay in [0, 1]). With 50 clusters the 95 % interval is read at the
2.2 / 97.8 percentiles; with hundreds of units it is the plain percentile interval, which
`method="percentile"` gives always (the legacy interval).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from judgelab.core import clusters, inference, stats
from judgelab.core.lazy import scipy_stats as _sps
from judgelab.errors import check_choice

#: Interval methods: t-expanded percentile (default) and plain percentile (legacy).
INTERVALS = ("expanded", "percentile")


def expanded_level(level: float, df: float) -> float:
    """Return the percentile level whose normal quantile is the t_df quantile at `level`.

    Capped just below 1 (with one or two units the interval is the replicates' range).

    >>> round(expanded_level(0.95, 49), 4), expanded_level(0.95, 0)
    (0.9555, 0.95)
    """
    if not np.isfinite(df) or df < 1:
        return level
    q = _sps.t.ppf((1.0 + level) / 2.0, df)
    # very few units: the range of the replicates (a level of 1 is not a percentile level)
    return float(min(1.0 - 2.0 * _sps.norm.sf(q), 1.0 - 1e-9))


def interval(
    replicates: np.ndarray, *, level: float, df: float, method: str = "expanded"
) -> tuple[np.ndarray, np.ndarray]:
    """Return the bootstrap interval of `replicates` (axis 0) by `method` (see `INTERVALS`).

    Args:
        replicates: Bootstrap replicates (B × statistics).
        level: Confidence level.
        df: Degrees of freedom of the t reference (units − strata); ignored by "percentile".
        method: "expanded" (default) or "percentile" (legacy).
    """
    check_choice("interval", method, INTERVALS)
    lvl = expanded_level(level, df) if method == "expanded" else level
    return stats.percentile_interval(replicates, level=lvl)


def unit_codes(frame: pd.DataFrame, cluster: str | None) -> np.ndarray | None:
    """Return the cluster code of every row of `frame`, or None when each row is its own unit.

    Rows without a cluster value fall back to their item (`clusters.codes`). None (rows are
    units) when `cluster` is None, absent from `frame`, or every row has its own cluster.
    """
    if cluster is None or cluster not in frame.columns or frame.empty:
        return None
    codes = clusters.codes(frame, cluster)
    if int(codes.max()) + 1 == len(codes):
        return None
    return codes


def unit_rows(values: np.ndarray, codes: np.ndarray | None) -> np.ndarray:
    """Return the rows the bootstrap draws: per-cluster sums of `values` (or `values` as is)."""
    if codes is None:
        return np.asarray(values, dtype=np.float64)
    return clusters.sum_by(values, codes)


class Strata:
    """Independent strata (splits) of unit rows: a resample draws each stratum on its own."""

    def __init__(self, members: Sequence[np.ndarray]) -> None:
        self.members = [np.asarray(m, dtype=np.float64) for m in members]

    @property
    def n_units(self) -> int:
        """Resampling units over all strata."""
        return int(sum(len(m) for m in self.members))

    @property
    def df(self) -> int:
        """Degrees of freedom of the t reference: units − non-empty strata."""
        return int(sum(len(m) - 1 for m in self.members if len(m)))

    def draw(self, columns: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
        """Return k resampled column sums (k × len(columns)), stratum by stratum, summed."""
        cols = np.asarray(columns)
        out = np.zeros((k, len(cols)))
        for m in self.members:
            if len(m):
                out += stats.bootstrap_sums(m[:, cols], n_boot=k, rng=rng)
        return out


def ratio_p(
    strata: Strata,
    num: int,
    den: int,
    *,
    first: np.ndarray,
    rng: np.random.Generator,
    null: float,
    n_boot: int,
) -> inference.PValue:
    """Return the adaptive bootstrap p-value of Σ num / Σ den == `null` over `strata`.

    Args:
        strata: The unit rows of every stratum.
        num: Column of the numerator.
        den: Column of the denominator.
        first: Replicates of the ratio already drawn (those behind the interval).
        rng: Generator of the further replicates.
        null: The value under the null hypothesis.
        n_boot: Replicates in `first` (the starting B).
    """
    cols = np.array([num, den])

    def draw(k: int) -> np.ndarray:
        sums = strata.draw(cols, k, rng)
        return stats.ratio_replicates(sums[:, 0], sums[:, 1])

    return inference.adaptive_p(draw, null=null, first=first, n_boot=max(1, min(n_boot, 40_000)))
