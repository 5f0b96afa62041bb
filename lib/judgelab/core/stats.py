"""Uncertainty for rates: seeded bootstrap over units, Wilson intervals, exact sign tests.

The bootstrap here resamples *units* — items, or the clusters of `core.clusters` (items
sharing a question or document) — never individual judgments; it is the rescaled bootstrap
of Rao & Wu (n − 1 draws weighted n / (n − 1), unbiased for the variance), and vectorised:
`bootstrap_sums` draws every resample of a group at once as a matrix of multiplicities
(over the distinct per-unit value rows, or over units) and turns per-unit value
columns into resampled column sums with one matrix product, so every rate of a group shares
the same resamples and no Python loop runs over resamples or items. A rate that is a ratio of
sums (Σ num / Σ den) is then one division per replicate (`ratio_replicates`), and a
percentile interval one `nanquantile`.

Random numbers come from `rng_for(seed, *key)`: a generator seeded by the user's seed *and*
the group's key, so a group's interval does not change when other groups are added or removed.

Three table builders are shared by the analyses: `interval_fields` (an estimate and its
percentile interval as row fields), `pairwise_matrix` (a judge × judge table filled from a pair
function) and `glm_rows` (one row per term of a statsmodels fit).
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from itertools import combinations
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from judgelab.core.lazy import scipy_stats as _sps  # `judgelab judge` never needs scipy

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


def bootstrap_weights(
    n: int, *, n_boot: int, rng: np.random.Generator, draws: int | None = None
) -> np.ndarray:
    """Return a (n_boot × n) matrix: how often each of n items is drawn in each resample.

    Each row is one bootstrap resample of `draws` (default n) items drawn with replacement
    (rows sum to `draws`).
    """
    if n <= 0:
        return np.zeros((n_boot, 0))
    k = n if draws is None else int(draws)
    idx = rng.integers(0, n, size=(n_boot, k), dtype=np.int64 if n > 2**31 - 1 else np.int32)
    offsets = (np.arange(n_boot, dtype=np.int64) * n)[:, None]
    counts = np.bincount((idx + offsets).ravel(), minlength=n_boot * n)
    return counts.reshape(n_boot, n).astype(np.float64)


def bootstrap_sums(
    values: np.ndarray, *, n_boot: int, rng: np.random.Generator, rescaled: bool = True
) -> np.ndarray:
    """Return the column sums of `values` (n units × m columns) in each of n_boot resamples.

    Units (items, or clusters: rows of per-cluster sums) are resampled with replacement, the
    same resample for every column. By default this is the *rescaled* bootstrap of Rao & Wu
    (1988) with m = n − 1 draws, each weighted n / (n − 1): the resampled sums keep their
    expectation and their variance is the unbiased n · s² instead of the naive bootstrap's
    (n − 1) · s² — the naive percentile interval is too narrow by √((n − 1) / n), which
    matters with few clusters (24 questions, 60 documents). Ratios of sums are unchanged by
    the weight. `rescaled=False` draws n units (the classical bootstrap).

    Units with identical rows are interchangeable, so when the rows take few distinct values
    (0/1 outcome columns do) the resample is drawn as a multinomial over the K distinct rows
    — the same distribution as drawing units, at a cost of n_boot × K instead of n_boot × n.
    Otherwise multiplicities are drawn in blocks of at most `BLOCK_CELLS` cells.

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
    draws_per = n - 1 if rescaled and n > 1 else n
    weight = n / draws_per
    rows = np.ascontiguousarray(values).view(np.dtype((np.void, 8 * m))).ravel()
    _, first, counts = np.unique(rows, return_index=True, return_counts=True)
    patterns = values[first]
    if len(patterns) * 8 <= n:
        draws = rng.multinomial(draws_per, counts / n, size=n_boot)
        return (draws.astype(np.float64) @ patterns) * weight
    out = np.empty((n_boot, m))
    block = max(1, BLOCK_CELLS // n)
    for start in range(0, n_boot, block):
        stop = min(n_boot, start + block)
        w = bootstrap_weights(n, n_boot=stop - start, rng=rng, draws=draws_per)
        out[start:stop] = (w @ values) * weight
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


#: Columns of `glm_rows` (odds_ratio only with `odds_ratio=True`).
GLM_COLUMNS = ("term", "coef", "ci_low", "ci_high", "p_value", "odds_ratio", "n")


def interval_fields(
    value: float,
    replicates: np.ndarray,
    *,
    level: float = 0.95,
    names: Sequence[str] = ("value", "ci_low", "ci_high"),
    half_width: bool = False,
    n: int | None = None,
) -> dict[str, Any]:
    """Return a point estimate and its percentile bootstrap interval as named row fields.

    The one construction behind every "rate with an interval" row: the estimate, the
    percentile interval of its bootstrap `replicates` (NaN replicates ignored), optionally
    `half_width` = max(value − low, high − value) (a symmetric display) and `n`.

    Args:
        value: The point estimate (the statistic on the full data).
        replicates: Its bootstrap replicates (1-D).
        level: Confidence level.
        names: Names of the estimate, the lower and the upper bound.
        half_width: Add `half_width`.
        n: Add `n` (an int) when given.

    Returns:
        A dict of floats (and `n`), ready to merge into a table row.

    >>> f = interval_fields(0.5, np.array([0.4, 0.5, 0.6]), level=0.5, half_width=True, n=3)
    >>> [round(v, 4) for v in f.values()], list(f)
    ([0.5, 0.45, 0.55, 0.05, 3], ['value', 'ci_low', 'ci_high', 'half_width', 'n'])
    """
    low, high = percentile_interval(replicates, level=level)
    est, lo, hi = names
    out: dict[str, Any] = {est: float(value), lo: float(low), hi: float(high)}
    if half_width:
        out["half_width"] = float(max(value - low, high - value))
    if n is not None:
        out["n"] = int(n)
    return out


def pairwise_matrix(
    names: Iterable[str],
    value_fn: Callable[[str, str], Mapping[str, Any]],
    *,
    diagonal: Callable[[str], Mapping[str, Any]] | None = None,
    swap: Sequence[tuple[str, str]] = (),
    labels: tuple[str, str] = ("judge_1", "judge_2"),
) -> pd.DataFrame:
    """Fill a name × name matrix, in long form, from a function of one (unordered) pair.

    `value_fn(a, b)` runs once per pair of sorted names (a < b); its row is written for both
    orders (a, b) and (b, a), the columns named in `swap` exchanged in the mirrored row (e.g.
    ``("error_1", "error_2")``). `diagonal(a)`, when given, fills the rows (a, a) after all
    pairs; without it the diagonal is left out.

    Args:
        names: The units (judges) compared; duplicates are dropped, order is sorted.
        value_fn: Pair function returning the row's values.
        diagonal: Function returning the values of (a, a), or None.
        swap: Pairs of columns exchanged in the mirrored row.
        labels: Names of the two unit columns.

    Returns:
        `labels` columns, then the value columns: pairs in sorted order, each followed by its
        mirror, then the diagonal rows.

    >>> same = lambda a, b: {"same": a == b}
    >>> m = pairwise_matrix(["b", "a"], same, diagonal=lambda a: same(a, a))
    >>> m.to_records(index=False).tolist()
    [('a', 'b', False), ('b', 'a', False), ('a', 'a', True), ('b', 'b', True)]
    """
    units = sorted(set(names))
    first, second = labels
    rows: list[dict[str, Any]] = []
    for a, b in combinations(units, 2):
        values = dict(value_fn(a, b))
        mirror = dict(values)
        for x, y in swap:
            mirror[x], mirror[y] = values[y], values[x]
        rows.append({first: a, second: b, **values})
        rows.append({first: b, second: a, **mirror})
    if diagonal is not None:
        rows.extend({first: a, second: a, **diagonal(a)} for a in units)
    return pd.DataFrame(rows, columns=[first, second, *_value_columns(rows, labels)])


def _value_columns(rows: list[dict[str, Any]], labels: tuple[str, str]) -> list[str]:
    cols: dict[str, None] = {}
    for row in rows:
        cols.update((c, None) for c in row if c not in labels)
    return list(cols)


def glm_rows(
    result: Any,
    *,
    terms: Sequence[str] | None = None,
    level: float = 0.95,
    odds_ratio: bool = False,
    n: int | None = None,
) -> pd.DataFrame:
    """Return one row per term of a fitted statsmodels model: coefficient, Wald interval, p.

    The one reading of a GLM/OLS fit shared by the regression tables. `result` None (the fit
    failed) gives NaN values for every term in `terms`.

    Args:
        result: A fitted statsmodels results object (`params`, `conf_int`, `pvalues`, `nobs`),
            or None.
        terms: Terms to report, in this order (default: every parameter of the fit).
        level: Confidence level of the Wald interval.
        odds_ratio: Add `odds_ratio` = exp(coef) (logistic models).
        n: Observations to report (default: the fit's `nobs`; 0 without a fit).

    Returns:
        `term`, `coef`, `ci_low`, `ci_high`, `p_value`, [`odds_ratio`], `n`.

    >>> import statsmodels.api as sm
    >>> x = pd.DataFrame({"const": 1.0, "x": [0.0, 1.0, 2.0, 3.0]})
    >>> rows = glm_rows(sm.OLS([1.0, 3.0, 5.0, 7.5], x).fit(), terms=["x"])
    >>> rows["term"].tolist(), round(float(rows["coef"].iloc[0]), 4), int(rows["n"].iloc[0])
    (['x'], 2.15, 4)
    >>> failed = glm_rows(None, terms=["x"], odds_ratio=True)
    >>> list(failed.columns), bool(failed.iloc[0, 1:6].isna().all()), int(failed["n"].iloc[0])
    (['term', 'coef', 'ci_low', 'ci_high', 'p_value', 'odds_ratio', 'n'], True, 0)
    """
    _check_level(level)
    if result is None and terms is None:
        raise ValueError("glm_rows: terms are needed when there is no fit")
    names = list(result.params.index if terms is None else terms)
    rows = []
    ci = None if result is None else result.conf_int(alpha=1 - level)
    for term in names:
        if result is None:
            coef = low = high = p = np.nan
        else:
            coef = float(result.params[term])
            low, high = float(ci.loc[term].iloc[0]), float(ci.loc[term].iloc[1])
            p = float(result.pvalues[term])
        row = {"term": term, "coef": coef, "ci_low": low, "ci_high": high, "p_value": p}
        if odds_ratio:
            row["odds_ratio"] = float(np.exp(coef))
        row["n"] = int(n if n is not None else (0 if result is None else result.nobs))
        rows.append(row)
    cols = [c for c in GLM_COLUMNS if odds_ratio or c != "odds_ratio"]
    return pd.DataFrame(rows, columns=cols)
