"""Repeat-trial reliability: the same judge, the same prompt, sampled again.

A unit (one item in one order) judged in several `sample`s is a set of trials. Per judge:

- `flip` — the share of units whose trials do not all agree, and `disagreement` — the share
  of trial pairs that disagree (both ratios of sums: `core.estimates.ratio`);
- `kappa` — intra-judge kappa over every ordered pair of trials of a unit (Fleiss-style,
  from the symmetric pair confusion), with the cluster-jackknife interval of `shift`.

`trials_needed` answers "how many trials before the majority vote settles": the per-unit
probability q of the `positive` label is modelled as Beta(a, b) across units (a beta-binomial
fitted by moments to the counts); a majority of k trials (k odd) agrees with the many-trial
majority (q > ½ or not) with probability E[P(Bin(k, q) on q's side of ½)], computed on a
quantile grid of the Beta; the trials needed for probability p is the smallest odd k that
reaches it. Intervals: the percentile cluster bootstrap (clusters resampled, the moments
refitted in each resample).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from judgelab.analyses.stability import shift
from judgelab.analyses.stability import units as _units
from judgelab.core import estimates, stats, wild

#: Probabilities of agreeing with the many-trial majority `trials_needed` reports by default.
TARGETS: tuple[float, ...] = (0.9, 0.95)
#: Largest odd number of trials the curve is computed for.
MAX_TRIALS = 51
#: Points of the Beta quantile grid the curve is averaged over (801 moves it by < 1e-4).
GRID = 201
#: How `trials_needed` fits and resamples (its `method`).
METHOD = "beta-binomial by moments; percentile cluster bootstrap"


def trials(judgments: pd.DataFrame, *, label: str | None = None) -> pd.DataFrame:
    """Return the labelled trials of judges run more than once on a unit.

    Returns:
        `judge`, the unit keys, `cluster`, `sample`, `label`, `code` (resampling unit).
        Only units with at least two labelled trials are kept.
    """
    rows, name = _units.labelled(judgments, label=label)
    keys = ["judge", *_units.UNIT_KEYS]
    n = rows.groupby(keys)["sample"].transform("nunique")
    rows = rows[n >= 2]
    if "cluster" not in rows.columns:
        rows = rows.assign(cluster=None)
    out = rows[[*keys, "cluster", "sample"]].assign(label=rows[name].to_numpy())
    return out.sort_values([*keys, "sample"]).reset_index(drop=True)


def repeat_reliability(
    judgments: pd.DataFrame,
    *,
    label: str | None = None,
    seed: int = 0,
    level: float = 0.95,
    n_boot: int = wild.N_BOOT,
) -> pd.DataFrame:
    """Return each repeated judge's flip rate, trial disagreement and intra-judge kappa.

    Args:
        judgments: A judgments table with several `sample`s for some judge × unit.
        label: The label column (default `chosen` for pairwise, else `verdict`).
        seed: Seed of the bootstraps.
        level: Confidence level.
        n_boot: Wild bootstrap replicates of the shares.

    Returns:
        `judge`, `measure` (`flip`, `disagreement`, `kappa`), `trials` (mean trials per
        unit), then `estimates.FIELDS` (`n`: units for flip and kappa, trial pairs for
        disagreement).
    """
    t = trials(judgments, label=label)
    rows = []
    for judge, block in t.groupby("judge", sort=True):
        keys = list(_units.UNIT_KEYS)
        per_unit = block.groupby(keys, sort=True)
        first = per_unit.head(1)
        codes = _units.unit_codes(first)
        k = per_unit["label"].size().to_numpy(dtype=np.float64)
        flip = (per_unit["label"].nunique().to_numpy() > 1).astype(np.float64)
        counts = block.groupby([*keys, "label"]).size()
        agree_pairs = (counts * (counts - 1) / 2).groupby(level=keys).sum().to_numpy()
        pairs = k * (k - 1) / 2
        head = {"judge": judge, "trials": float(k.mean())}
        e = estimates.ratio(
            flip, np.ones(len(flip)), codes, level=level, n_boot=n_boot,
            rng=estimates.seeded(seed, "repeat", judge, "flip"),
        )  # fmt: skip
        rows.append(head | {"measure": "flip"} | e.fields())
        e = estimates.ratio(
            pairs - agree_pairs, pairs, codes, level=level, n_boot=n_boot,
            rng=estimates.seeded(seed, "repeat", judge, "disagreement"),
        )  # fmt: skip
        rows.append(head | {"measure": "disagreement"} | e.fields())
        a, b, c = _ordered_pairs(block, keys, codes)
        kap = shift.kappa_fields(a, b, c, level=level) | {"n": float(len(flip))}
        rows.append(head | {"measure": "kappa"} | kap)
    cols = ["judge", "measure", "trials", *estimates.FIELDS]
    return pd.DataFrame(rows, columns=cols)


def _ordered_pairs(block: pd.DataFrame, keys: list[str], codes: np.ndarray):
    """Return every ordered pair (i ≠ j) of trials of each unit, with the unit's code."""
    unit = block.groupby(keys, sort=True).ngroup().to_numpy()
    labels = block["label"].to_numpy(dtype=object)
    left = pd.DataFrame({"u": unit, "i": np.arange(len(unit))})
    both = left.merge(left, on="u")
    both = both[both["i_x"] != both["i_y"]]
    return (
        labels[both["i_x"].to_numpy()],
        labels[both["i_y"].to_numpy()],
        codes[both["u"].to_numpy()],
    )


def _beta_moments(x: np.ndarray, m: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, ...]:
    """Return beta-binomial (a, b) by moments from counts x of m, weighted per unit (B × n)."""
    p = x / m
    W = w.sum(axis=1)
    mu = (w * x).sum(axis=1) / (w * m).sum(axis=1)
    var = (w * (p - mu[:, None]) ** 2).sum(axis=1) / W
    mbar = (w * m).sum(axis=1) / W
    base = np.clip(mu * (1 - mu), 1e-12, None)
    rho = (var / base - 1.0 / mbar) / (1.0 - 1.0 / mbar)
    rho = np.clip(rho, 1e-4, 1 - 1e-4)
    mu = np.clip(mu, 1e-6, 1 - 1e-6)
    scale = 1.0 / rho - 1.0
    return mu * scale, (1 - mu) * scale


def majority_curve(a: np.ndarray, b: np.ndarray, ks: np.ndarray) -> np.ndarray:
    """Return P(majority of k trials agrees with the many-trial majority) (len(a) × len(ks)).

    q ~ Beta(a, b) per unit; averaged over a quantile grid of the Beta.

    >>> majority_curve(np.array([1e4]), np.array([1.0]), np.array([1, 3])).round(3).tolist()
    [[1.0, 1.0]]
    """
    from scipy import special

    u = (np.arange(GRID) + 0.5) / GRID
    q = special.betaincinv(np.asarray(a)[:, None], np.asarray(b)[:, None], u[None, :])
    out = np.empty((q.shape[0], len(ks)))
    for j, k in enumerate(ks):
        half = int(k) // 2
        up = special.betainc(half + 1, int(k) - half, q)  # P(Bin(k, q) > k/2), k odd
        out[:, j] = np.where(q > 0.5, up, np.where(q < 0.5, 1 - up, 0.5)).mean(axis=1)
    return out


def trials_needed(
    judgments: pd.DataFrame,
    *,
    positive: str | None = None,
    targets: Sequence[float] = TARGETS,
    label: str | None = None,
    max_trials: int = MAX_TRIALS,
    seed: int = 0,
    level: float = 0.95,
    n_boot: int = 400,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Return the trials a repeated judge needs for its majority vote to settle, and the curve.

    Args:
        judgments: A judgments table with several `sample`s for some judge × unit.
        positive: The label counted (default `pos` for pairwise labels, else each judge's
            most frequent label).
        targets: Probabilities p of agreeing with the many-trial majority.
        label: The label column (default `chosen` for pairwise, else `verdict`).
        max_trials: Largest odd k considered (beyond it: `trials_needed` is NaN, `beyond`).
        seed: Seed of the cluster bootstrap.
        level: Confidence level.
        n_boot: Cluster bootstrap resamples.

    Returns:
        `needed`: `judge`, `target`, `trials_needed`, `ci_low`, `ci_high` (NaN: beyond
        `max_trials`), `beyond` (True when even `max_trials` does not reach the target),
        `a`, `b` (the fitted Beta), `label`, `n` (units), `n_clusters`, `method`; and
        `curve`: `judge`, `k`, `p_agree`, `ci_low`, `ci_high`.
    """
    t = trials(judgments, label=label)
    ks = np.arange(1, max_trials + 1, 2)
    need_rows, curve_rows = [], []
    for judge, block in t.groupby("judge", sort=True):
        keys = list(_units.UNIT_KEYS)
        target_label = positive or ("pos" if "pos" in set(block["label"]) else None)
        if target_label is None:
            target_label = str(block["label"].value_counts().index[0])
        g = block.assign(hit=(block["label"] == target_label).astype(float))
        per = g.groupby(keys, sort=True).agg(x=("hit", "sum"), m=("hit", "size"))
        codes = _units.unit_codes(g.groupby(keys, sort=True).head(1))
        G = int(codes.max()) + 1
        x, m = per["x"].to_numpy(), per["m"].to_numpy(dtype=np.float64)
        a0, b0 = _beta_moments(x, m, np.ones((1, len(x))))
        point = majority_curve(a0, b0, ks)[0]
        wg = stats.bootstrap_weights(G, n_boot=n_boot, rng=stats.rng_for(seed, "trials", judge))
        ab, bb = _beta_moments(x, m, wg[:, codes])
        boot = majority_curve(ab, bb, ks)
        lo, hi = stats.percentile_interval(boot, level=level)
        for j, k in enumerate(ks):
            curve_rows.append(
                {"judge": judge, "k": int(k), "p_agree": point[j]}
                | {"ci_low": lo[j], "ci_high": hi[j]}
            )
        for p in targets:
            k_point = _first_k(point[None, :], ks, p)[0]
            k_boot = _first_k(boot, ks, p)
            capped = np.where(np.isfinite(k_boot), k_boot, max_trials + 2.0)
            klo, khi = np.quantile(capped, [(1 - level) / 2, (1 + level) / 2], method="lower")
            klo, khi = (k if k <= max_trials else np.inf for k in (klo, khi))
            need_rows.append(
                {"judge": judge, "target": p, "trials_needed": _finite(k_point)}
                | {"ci_low": _finite(klo), "ci_high": _finite(khi)}
                | {"beyond": bool(not np.isfinite(k_point)), "a": float(a0[0])}
                | {"b": float(b0[0]), "label": target_label, "n": len(x), "n_clusters": G}
                | {"method": f"{METHOD} (B={n_boot})"}
            )
    return pd.DataFrame(need_rows), pd.DataFrame(curve_rows)


def _first_k(curves: np.ndarray, ks: np.ndarray, p: float) -> np.ndarray:
    """Return per row the first k whose probability reaches p (inf when none does)."""
    ok = curves >= p
    idx = np.argmax(ok, axis=1)
    return np.where(ok.any(axis=1), ks[idx].astype(float), np.inf)


def _finite(x: float) -> float:
    return float(x) if np.isfinite(x) else float("nan")


def repeats_reason(reliability: pd.DataFrame) -> str | None:
    """Return why repeat-trial reliability cannot be shown, None when some judge was rerun."""
    if not reliability.empty:
        return None
    return (
        "every judge was run once per item (one sample), so there are no repeated trials to "
        "compare; rerun a judge with several samples (`samples:` in its spec) to see it"
    )
