"""Uncertainty for rates: seeded bootstrap over items, Wilson intervals, exact sign tests.

The bootstrap here resamples *items* (the unit of a benchmark), never individual judgments,
and is vectorised: `bootstrap_sums` draws every resample of a group at once as a matrix of
multiplicities (over the distinct per-item value rows, or over items) and turns per-item value
columns into resampled column sums with one matrix product, so every rate of a group shares
the same resamples and no Python loop runs over resamples or items. A rate that is a ratio of
sums (Σ num / Σ den) is then one division per replicate (`ratio_replicates`), and a
percentile interval one `nanquantile`.

Random numbers come from `rng_for(seed, *key)`: a generator seeded by the user's seed *and*
the group's key, so a group's interval does not change when other groups are added or removed.
"""

from __future__ import annotations

import zlib
from typing import NamedTuple

import numpy as np
from scipy import stats as _sps

#: Largest (resamples × items) block materialised at once by `bootstrap_sums`.
BLOCK_CELLS = 4_000_000


class Interval(NamedTuple):
    """A point estimate with the bounds of its confidence interval."""

    estimate: float
    low: float
    high: float


class SignTest(NamedTuple):
    """An exact two-sided binomial (sign) test of k successes in n trials against p."""

    k: int
    n: int
    p_value: float


def rng_for(seed: int, *key: object) -> np.random.Generator:
    """Return a generator seeded by `seed` and a stable hash of `key` (order-independent runs).

    >>> int(rng_for(0, "a").integers(100)) == int(rng_for(0, "a").integers(100))
    True
    """
    words = [zlib.crc32(repr(k).encode("utf-8")) for k in key]
    return np.random.default_rng([int(seed), *words])


def bootstrap_weights(n: int, *, n_boot: int, rng: np.random.Generator) -> np.ndarray:
    """Return a (n_boot × n) matrix: how often each of n items is drawn in each resample.

    Each row is one bootstrap resample of n items drawn with replacement (rows sum to n).
    """
    if n <= 0:
        return np.zeros((n_boot, 0))
    idx = rng.integers(0, n, size=(n_boot, n), dtype=np.int64 if n > 2**31 - 1 else np.int32)
    offsets = (np.arange(n_boot, dtype=np.int64) * n)[:, None]
    counts = np.bincount((idx + offsets).ravel(), minlength=n_boot * n)
    return counts.reshape(n_boot, n).astype(np.float64)


def bootstrap_sums(values: np.ndarray, *, n_boot: int, rng: np.random.Generator) -> np.ndarray:
    """Return the column sums of `values` (n items × m columns) in each of n_boot resamples.

    Items are resampled with replacement, the same resample for every column. Items with
    identical rows are interchangeable, so when the rows take few distinct values (0/1
    outcome columns do) the resample is drawn as a multinomial over the K distinct rows — the
    same distribution as drawing items, at a cost of n_boot × K instead of n_boot × n.
    Otherwise item multiplicities are drawn in blocks of at most `BLOCK_CELLS` cells.

    Returns:
        An (n_boot × m) array; row b holds Σ_i w_bi · values[i, :].
    """
    values = np.asarray(values, dtype=np.float64)
    if values.ndim == 1:
        values = values[:, None]
    n, m = values.shape
    if n_boot < 1:
        raise ValueError(f"n_boot must be >= 1, got {n_boot}")
    if n == 0:
        return np.zeros((n_boot, m))
    rows = np.ascontiguousarray(values).view(np.dtype((np.void, 8 * m))).ravel()
    _, first, counts = np.unique(rows, return_index=True, return_counts=True)
    patterns = values[first]
    if len(patterns) * 8 <= n:
        draws = rng.multinomial(n, counts / n, size=n_boot)
        return draws.astype(np.float64) @ patterns
    out = np.empty((n_boot, m))
    block = max(1, BLOCK_CELLS // n)
    for start in range(0, n_boot, block):
        stop = min(n_boot, start + block)
        out[start:stop] = bootstrap_weights(n, n_boot=stop - start, rng=rng) @ values
    return out


def ratio_replicates(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """Return num / den elementwise, NaN where den is 0 (an undefined rate in a resample)."""
    num = np.asarray(num, dtype=np.float64)
    den = np.asarray(den, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


def percentile_interval(
    replicates: np.ndarray, *, level: float = 0.95
) -> tuple[np.ndarray, np.ndarray]:
    """Return the percentile interval of bootstrap replicates along axis 0 (NaNs ignored)."""
    _check_level(level)
    reps = np.asarray(replicates, dtype=np.float64)
    alpha = (1.0 - level) / 2.0
    if reps.shape[0] == 0:
        nan = np.full(reps.shape[1:], np.nan)
        return nan, nan.copy()
    all_nan = np.all(np.isnan(reps), axis=0)
    safe = np.where(all_nan, 0.0, reps)
    low, high = np.nanquantile(safe, [alpha, 1.0 - alpha], axis=0)
    return np.where(all_nan, np.nan, low), np.where(all_nan, np.nan, high)


def bootstrap_mean(
    x: np.ndarray, *, n_boot: int = 1000, seed: int = 0, level: float = 0.95
) -> Interval:
    """Return the mean of per-item values with its seeded percentile bootstrap interval."""
    x = np.asarray(x, dtype=np.float64)
    if x.size == 0:
        return Interval(np.nan, np.nan, np.nan)
    sums = bootstrap_sums(x, n_boot=n_boot, rng=rng_for(seed, "bootstrap_mean"))[:, 0]
    low, high = percentile_interval(sums / x.size, level=level)
    return Interval(float(x.mean()), float(low), float(high))


def paired_bootstrap_difference(
    x: np.ndarray, y: np.ndarray, *, n_boot: int = 1000, seed: int = 0, level: float = 0.95
) -> Interval:
    """Return mean(x) − mean(y) over the same items with a paired bootstrap interval.

    `x[i]` and `y[i]` are two measurements (e.g. two judges' 0/1 correctness) of item i; each
    resample draws items, keeping both measurements of a drawn item together.
    """
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if x.shape != y.shape:
        raise ValueError(f"paired arrays differ in shape: {x.shape} vs {y.shape}")
    if x.size == 0:
        return Interval(np.nan, np.nan, np.nan)
    sums = bootstrap_sums(x - y, n_boot=n_boot, rng=rng_for(seed, "paired_difference"))[:, 0]
    low, high = percentile_interval(sums / x.size, level=level)
    return Interval(float(x.mean() - y.mean()), float(low), float(high))


def wilson_interval(
    k: np.ndarray | float, n: np.ndarray | float, *, level: float = 0.95
) -> tuple[np.ndarray, np.ndarray]:
    """Return the Wilson score interval for k successes in n trials (NaN where n is 0).

    Vectorised over arrays of k and n.

    >>> low, high = wilson_interval(0, 10)
    >>> round(float(low), 4), round(float(high), 4)
    (0.0, 0.2775)
    """
    _check_level(level)
    k = np.asarray(k, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    z = _sps.norm.ppf(0.5 + level / 2.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = k / n
        denom = 1.0 + z**2 / n
        centre = (p + z**2 / (2.0 * n)) / denom
        half = z * np.sqrt(p * (1.0 - p) / n + z**2 / (4.0 * n**2)) / denom
    ok = n > 0
    low = np.where(ok, np.clip(centre - half, 0.0, 1.0), np.nan)
    high = np.where(ok, np.clip(centre + half, 0.0, 1.0), np.nan)
    return low, high


def sign_test(k: int, n: int, *, p: float = 0.5) -> SignTest:
    """Exact two-sided binomial test of k successes in n trials (p-value NaN when n is 0).

    >>> round(sign_test(9, 10).p_value, 5)  # 2 · (10 + 1) / 2**10
    0.02148
    """
    k, n = int(k), int(n)
    if n == 0:
        return SignTest(k, n, float("nan"))
    return SignTest(k, n, float(_sps.binomtest(k, n, p, alternative="two-sided").pvalue))


def kappa_from_confusion(conf: np.ndarray) -> np.ndarray:
    """Return Cohen's kappa from confusion counts (..., V, V), vectorised over leading axes.

    Kappa = (p_o − p_e) / (1 − p_e); NaN where there are no counts or chance agreement p_e
    is 1 (both raters use one and the same class for every unit).

    >>> float(kappa_from_confusion(np.array([[40, 10], [5, 45]])))  # p_o=.85, p_e=.5
    0.7
    """
    conf = np.asarray(conf, dtype=np.float64)
    n = conf.sum(axis=(-2, -1))
    with np.errstate(divide="ignore", invalid="ignore"):
        p_o = np.trace(conf, axis1=-2, axis2=-1) / n
        p_e = (conf.sum(axis=-1) * conf.sum(axis=-2)).sum(axis=-1) / n**2
        return np.where((n > 0) & ~np.isclose(p_e, 1.0), (p_o - p_e) / (1 - p_e), np.nan)


def _check_level(level: float) -> None:
    if not 0.0 < level < 1.0:
        raise ValueError(f"confidence level must be in (0, 1), got {level}")
