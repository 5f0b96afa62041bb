"""Intervals of clustered items for the population target: the wild cluster bootstrap.

**Population target** (`wild`). With λ fixed at its tuned value, PPI++ is a linear
combination of ratios of sums, so `core.estimates.contrast` gives its interval and
effective clusters: per stratum h (one stratum when unstratified) three groups of rows,
the judge label on the unlabelled items (mean_u f), the human label and the judge label on
the labelled ones (mean_l Y, mean_l f), with weights W_h · (λ_h, 1, −λ_h) — W_h the share of
the items in h. The clusters are the units (the labelled items' two rows share theirs). The
interval inverts the restricted wild cluster bootstrap test (Webb weights below 12 clusters),
so it holds with few and unequal clusters where the cluster bootstrap-t under-covered.
Treating λ̂ as fixed costs nothing to first order: θ̂ is unbiased for every λ. The
human-only mean (labelled rows, weights W_h) and the judge-only mean (every row) are
contrasts of the same kind.

A win rate with ties dropped is a ratio of two such combinations, m₁ / m₂: its interval is
the set of r for which the wild test of m₁ − r·m₂ = 0 does not reject (Fieller's
construction, one bootstrap per r with the same weights), cut to [0, 1].
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from judgelab.core import clusters, estimates, wild


class Row(NamedTuple):
    """One method's interval from clustered items."""

    estimate: float
    low: float
    high: float
    se: float
    n_eff: float
    few: bool
    how: str


def _groups(
    f: np.ndarray, y: np.ndarray, lab: np.ndarray, strata: np.ndarray, col: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Return (num, group, item index) of the 3·H row groups of column `col` (see above)."""
    h = np.asarray(strata, dtype=np.int64)
    idx = np.arange(len(f))
    u, l_ = ~lab, lab
    num = np.concatenate([f[u, col], y[l_, col], f[l_, col]])
    group = np.concatenate([3 * h[u], 3 * h[l_] + 1, 3 * h[l_] + 2])
    item = np.concatenate([idx[u], idx[l_], idx[l_]])
    return num, group, item


def _weights(lams: np.ndarray, shares: np.ndarray, method: str) -> np.ndarray:
    """Contrast weights over the 3·H groups of one column for `method`."""
    out = np.zeros((len(shares), 3))
    if method == "classical":
        out[:, 1] = shares
    else:
        out[:, 0], out[:, 1], out[:, 2] = shares * lams, shares, -shares * lams
    return out.ravel()


def wild_rows(
    f: np.ndarray,
    y: np.ndarray,
    lab: np.ndarray,
    units: np.ndarray,
    *,
    lams: dict[str, np.ndarray],
    strata: np.ndarray | None = None,
    level: float = 0.95,
    n_boot: int = wild.N_BOOT,
    seed: int = 0,
    bounds: tuple[float, float] | None = None,
    methods: Sequence[str] = ("naive", "classical", "ppi", "ppi_plain"),
) -> dict[str, Row]:
    """Return the population-target row of each of `methods` from the wild cluster bootstrap.

    Args:
        f: Judge labels (n × 1, or n × 2 for a ratio).
        y: Human labels (same shape; ignored where not labelled).
        lab: Which items are labelled.
        units: Integer cluster of every item.
        lams: λ per stratum of `ppi` and `ppi_plain` (arrays of length H).
        strata: Integer stratum of every item (None: one stratum).
        level: Confidence level.
        n_boot: Wild bootstrap replicates.
        seed: Seed (each method draws from `estimates.seeded(seed, "grounding", method)`).
        bounds: Parameter space of a mean (e.g. (0, 1) for 0/1 labels), or None.
        methods: The methods to compute.
    """
    n, k = f.shape
    h = np.zeros(n, dtype=np.int64) if strata is None else np.asarray(strata, dtype=np.int64)
    H = int(h.max()) + 1
    shares = np.bincount(h, minlength=H) / n
    out = {}
    for method in methods:
        rng = estimates.seeded(seed, "grounding", method)
        if k == 2:
            out[method] = _ratio_row(f, y, lab, units, method, lams, level, n_boot, rng)
            continue
        if method == "naive":  # every item's judge label: one group per stratum
            e = estimates.contrast(f[:, 0], np.ones(n), h, units, shares, level=level,
                                   n_boot=n_boot, rng=rng, bounds=bounds)  # fmt: skip
        else:
            num, group, item = _groups(f, y, lab, h, 0)
            lam = lams.get(method, np.zeros(H))
            e = estimates.contrast(num, np.ones(len(num)), group, units[item],
                                   _weights(lam, shares, method), level=level, n_boot=n_boot,
                                   rng=rng, bounds=bounds)  # fmt: skip
        out[method] = _row(e)
    return out


def as_rows(
    wild_rows: dict[str, Row], lams: dict[str, float], counts: dict[str, Any]
) -> list[dict[str, Any]]:
    """Return `ppi.COLUMNS` rows from `wild_rows` (`lams`: the `lambda` column per method)."""
    out = []
    for method, r in wild_rows.items():
        out.append(
            {"method": method, "estimate": r.estimate, "ci_low": r.low, "ci_high": r.high,
             "width": r.high - r.low, "se": r.se, **counts, "lambda": lams[method],
             "interval": r.how, "n_eff_clusters": r.n_eff, "few_clusters": r.few}
        )  # fmt: skip
    return out


def _row(e: estimates.Estimate) -> Row:
    return Row(e.value, e.ci_low, e.ci_high, _se(e), e.n_eff_clusters, e.few_clusters, e.method)


def _se(e: estimates.Estimate) -> float:
    """A standard error read off the interval (half its width over t_{G−1}; NaN if unbounded)."""
    from scipy import stats as sps

    if e.n_clusters < 2 or not np.isfinite(e.ci_high - e.ci_low):
        return float("nan")
    return float((e.ci_high - e.ci_low) / (2 * sps.t.ppf(0.975, e.n_clusters - 1)))


def _ratio_row(
    f: np.ndarray,
    y: np.ndarray,
    lab: np.ndarray,
    units: np.ndarray,
    method: str,
    lams: dict[str, np.ndarray],
    level: float,
    n_boot: int,
    rng: np.random.Generator,
) -> Row:
    """A ratio m₁ / m₂ of two combinations of group means: Fieller inversion of the wild test."""
    n = len(f)
    if method == "naive":
        e = estimates.ratio(f[:, 0], f[:, 1], units, level=level, n_boot=n_boot, rng=rng)
        return _row(e)
    if method == "classical":
        e = estimates.ratio(y[lab, 0], y[lab, 1], units[lab], level=level, n_boot=n_boot,
                            rng=rng)  # fmt: skip
        return _row(e)
    lam = float(np.ravel(lams[method])[0])
    zero = np.zeros(n, dtype=np.int64)
    num1, g1, item = _groups(f, y, lab, zero, 0)
    num2, g2, _ = _groups(f, y, lab, zero, 1)
    problem = wild.ratios_problem(
        np.concatenate([num1, num2]),
        np.ones(2 * len(num1)),
        np.concatenate([g1, g2 + 3]),
        np.concatenate([units[item], units[item]]),
        6,
    )
    a = np.array([lam, 1.0, -lam])
    a1, a2 = np.concatenate([a, np.zeros(3)]), np.concatenate([np.zeros(3), a])
    state = rng.bit_generator.state
    low, high, theta, se = fieller(problem, a1, a2, level=level, n_boot=n_boot, state=state)
    n_eff = clusters.effective(np.ones(n), units)  # every item alike, ICC 1: conservative
    how = f"wild cluster bootstrap, restricted, Fieller ratio (B={n_boot})"
    return Row(theta, low, high, se, n_eff, bool(n_eff < clusters.FEW_EFFECTIVE), how)


def fieller(
    problem: wild.Linear,
    a1: np.ndarray,
    a2: np.ndarray,
    *,
    level: float,
    n_boot: int,
    state: dict,
    limits: tuple[float, float] = (0.0, 1.0),
) -> tuple[float, float, float, float]:
    """Return (low, high, θ̂, se) of θ = a₁'β / a₂'β by inverting the wild test of (a₁ − θa₂)'β = 0.

    Every p-value uses the same bootstrap weights (the generator restored to `state`).
    The interval is the connected set around θ̂ that the test does not reject, cut to
    `limits`.
    """
    Hs = problem.H.sum(axis=0)
    beta = np.linalg.pinv(Hs) @ problem.b.sum(axis=0)
    theta = float((a1 @ beta) / (a2 @ beta))
    alpha = 1.0 - level

    def p_at(r: float) -> float:
        gen = np.random.Generator(np.random.PCG64())
        gen.bit_generator.state = state
        res = wild.wild_test(problem, a1 - r * a2, null=0.0, n_boot=n_boot, rng=gen,
                             interval=False)  # fmt: skip
        return float(res.p_value)

    se_num = wild.wild_test(problem, a1 - theta * a2, null=0.0, n_boot=n_boot,
                            rng=np.random.default_rng(0), interval=False).se  # fmt: skip
    se = float(se_num / abs(a2 @ beta)) if np.isfinite(se_num) else float("nan")
    if not np.isfinite(theta) or not np.isfinite(se) or se <= 0:
        return float("nan"), float("nan"), theta, se
    bounds = []
    for side, limit in ((-1, limits[0]), (+1, limits[1])):
        inside, step = theta, 2.0 * se
        outside = theta + side * step
        found = False
        for _ in range(40):
            if side * (outside - limit) >= 0:
                outside = limit
                if p_at(limit) >= alpha:
                    inside = limit
                break
            if p_at(outside) < alpha:
                found = True
                break
            inside, step = outside, step * 2.0
            outside = theta + side * step
        if found or inside != limit:
            for _ in range(40):
                if abs(outside - inside) <= 1e-4 * se:
                    break
                mid = 0.5 * (inside + outside)
                if p_at(mid) >= alpha:
                    inside = mid
                else:
                    outside = mid
        bounds.append(float(inside))
    return bounds[0], bounds[1], theta, se


__all__ = ["Row", "as_rows", "fieller", "wild_rows"]
