"""Cross-fitted jury − best member: the best member chosen on other folds of clusters.

The difference jury − best member is a selection: scoring the member chosen on the same
items as the best favours it (winner's curse: the in-sample max over members is biased
upward, most when the members are close). Cross-fitting removes that: the clusters
(resampling units) are split into K folds at random (seeded); for fold k the best member
s_k is the member with the highest CA on the other K − 1 folds, and the jury and s_k are
compared on fold k only. The estimate is

    diff = Σ_k Σ_{i ∈ fold k} (jury_i − member_{s_k, i}) / n = CA(jury) − CA_cf(best),

where CA_cf(best) is the held-out CA of the fold-selected members. Its estimand is jury −
the member the procedure selects; when one member is best in the population (selection
consistent), or the best members are tied, it equals jury − max_j CA_j (population).

Inference bootstraps the whole procedure: the per-item values are summed per fold
(`fold_values`: one block of columns per fold) so a cluster-bootstrap replicate of the
sums re-selects s_k on its resampled training folds (`crossfit`); the interval is
diff ± t_{G−1} · SE (SE: the replicates' standard deviation, G: clusters), its p-value the
matching two-sided t-test of H0: diff = 0.
"""

from __future__ import annotations

import numpy as np

from judgelab.core.lazy import scipy_stats as sps


def fold_of_units(
    units: np.ndarray, folds: int, rng: np.random.Generator, repeats: int = 1
) -> np.ndarray:
    """Return each item's fold per split (repeats × n): a random permutation of units, mod K.

    >>> fold_of_units(np.array([0, 0, 1, 2]), 3, np.random.default_rng(0), 2).shape
    (2, 4)
    """
    if folds < 2 or repeats < 1:
        raise ValueError(f"need folds >= 2 and repeats >= 1, got {folds}, {repeats}")
    n_units = int(units.max()) + 1 if units.size else 0
    out = np.empty((repeats, len(units)), dtype=np.int64)
    for r in range(repeats):
        of_unit = np.empty(n_units, dtype=np.int64)
        of_unit[rng.permutation(n_units)] = np.arange(n_units) % folds
        out[r] = of_unit[units]
    return out


def fold_values(values: np.ndarray, fold: np.ndarray, folds: int) -> np.ndarray:
    """Return [values, then values·1[fold_r = k] per split r and fold k] (n × (RK + 1)·m)."""
    blocks = [values * (f == k)[:, None] for f in np.atleast_2d(fold) for k in range(folds)]
    return np.column_stack([values, *blocks])


def crossfit(
    sums: np.ndarray, n: float, folds: int, repeats: int = 1
) -> tuple[np.ndarray, np.ndarray]:
    """Return (held-out CA of the fold-selected best member, jury − it) from fold sums.

    Args:
        sums: (…, (R·K + 1)·(1 + m)) sums laid out as `fold_values` of (jury, members…):
            the totals, then one block per split and fold.
        n: Items behind the sums (the denominator of a CA).
        folds: K.
        repeats: R random splits into K folds; the held-out CA is averaged over them.

    Returns:
        Two arrays of the leading shape of `sums`. Ties in the training CA go to the
        first member (the members are sorted).
    """
    x = np.asarray(sums, dtype=np.float64)
    x = x.reshape(*x.shape[:-1], repeats * folds + 1, -1)
    held = x[..., 1:, :]  # (…, R·K, 1 + m)
    held = held.reshape(*held.shape[:-2], repeats, folds, held.shape[-1])
    train = x[..., :1, None, 1:] - held[..., 1:]  # members' sums on the other folds
    chosen = np.argmax(train, axis=-1)[..., None]
    picked = np.take_along_axis(held[..., 1:], chosen, axis=-1)[..., 0]
    member = picked.sum(axis=-1).mean(axis=-1) / n
    return member, x[..., 0, 0] / n - member


def t_interval(
    value: float, reps: np.ndarray, n_units: int, level: float
) -> tuple[float, float, float]:
    """Return (low, high, p of H0: 0) of value ± t_{G−1} · sd(reps) (NaN when undefined)."""
    se = float(np.std(reps, ddof=1)) if len(reps) > 1 else float("nan")
    df = max(n_units - 1, 1)
    q = float(sps.t.ppf(0.5 + level / 2, df))
    if not np.isfinite(se) or se <= 0:
        p = float("nan") if not np.isfinite(se) else (1.0 if value == 0 else 0.0)
        return value, value, p
    p = float(2 * sps.t.sf(abs(value) / se, df))
    return value - q * se, value + q * se, p
