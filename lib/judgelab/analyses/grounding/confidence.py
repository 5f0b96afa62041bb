"""Judge-confidence calibration: does a judge's probability mean what it says?

For judges that give a probability (or a score in [0, 1]) that the human label is positive —
a detector's consistency score, a verdict's log-probability, a rating rescaled — against 0/1
human labels:

- `scores`: the Brier score mean((p − y)²), a ratio of sums with the interval of
  `core.estimates` (the restricted wild cluster bootstrap; effective clusters on the row),
  and the expected calibration error ECE = Σ_b (n_b / n) |mean_b(p) − mean_b(y)| over
  `bins` equal-width bins. ECE is not linear in the items (the absolute value), so its
  interval comes from a cluster bootstrap (`core.stats`, Rao–Wu rescaled). The plug-in ECE
  is biased upwards — noise in a bin's gap only adds to |·| — and by how much depends on how
  far each bin's true gap is from 0, which the data cannot tell when the gaps are within their
  noise (at n ≤ 250 and 10 bins an over-confident judge's gaps are 0.1–1 SE): no interval
  covers at exactly its level for every judge there. The default, *thresholded*, interval is
  built to err on the safe side. Its upper end is the estimate minus the replicates' bias
  (their mean − the estimate) + t(G − 1) × their SD; the sample's gaps are farther from 0
  than the population's, so the replicates' bias understates the plug-in's and this end
  errs high. Its lower end is the estimate minus the (1 + level) / 2 quantile of ECE − truth
  in a bootstrap world whose bins within k replicate SDs of calibration are calibrated (the
  others' gaps shrunk by k SDs), k the Bonferroni critical value over the bins (2.81 for 10
  bins at 95 %): a world with more bias than the data's where the gaps are small. With every
  bin calibrated this end is valid for any judge (|g + z| − |g| ≤ |z| for a bin's gap g and
  its noise z), and a calibrated judge's world is all calibrated with probability ≥ the
  level; a bin far from calibration keeps its gap, so the end is not wider than it needs to
  be there. Measured on the calibration grid: see `checks.grounding_confidence`.
- a cross-fitted recalibration: the items' clusters are split into `folds` folds; for
  each fold a map (isotonic, `transport.isotonic_map`, or Platt: a logistic regression of
  y on logit(p), statsmodels) is fitted on the other folds and applied to it, so every
  recalibrated probability comes from a map that never saw that item's label (nor its
  cluster's). Brier and ECE of the recalibrated probabilities are scored like the raw
  ones, and `recalibrated − raw` Brier is a paired difference (`core.estimates.difference`)
  with its test of 0.
- `reliability`: per bin, the mean probability beside the observed positive rate with its
  interval (`core.estimates.ratio`), the table behind `plots.reliability`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.special import ndtri, stdtrit

from judgelab.analyses.grounding import ppi
from judgelab.analyses.grounding.transport import isotonic_map
from judgelab.core import clusters, estimates, stats, wild
from judgelab.errors import check_choice

#: Recalibration maps fitted on the other folds.
RECALIBRATIONS = ("isotonic", "platt")
#: Intervals of the ECE from the cluster bootstrap (see `scores`).
ECE_INTERVALS = ("thresholded", "bias_corrected", "basic", "percentile")
#: Columns of a `scores` row.
COLUMNS = (
    "version", "metric", "value", "ci_low", "ci_high", "p_value", "n", "n_clusters",
    "n_eff_clusters", "few_clusters", "method",
)  # fmt: skip


def _check(score: np.ndarray, human: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    p = np.asarray(score, dtype=np.float64)
    y = np.asarray(human, dtype=np.float64)
    if p.shape != y.shape or p.ndim != 1:
        raise ValueError(f"score {p.shape} and human {y.shape} must be 1-D of one length")
    bad = ~np.isfinite(p) | (p < 0) | (p > 1)
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(
            f"confidence calibration needs probabilities in [0, 1]: {int(bad.sum())} scores are "
            f"not (first at row {i}: {float(p[i])}); rescale the judge's score first"
        )
    if not np.isin(y, (0.0, 1.0)).all():
        i = int(np.argmax(~np.isin(y, (0.0, 1.0))))
        raise ValueError(f"human labels must be 0/1 (row {i}: {float(y[i])})")
    return p, y


def _bin_of(p: np.ndarray, bins: int) -> np.ndarray:
    return np.minimum((p * bins).astype(np.int64), bins - 1)


def _ece_from(s: np.ndarray) -> np.ndarray:
    """ECE from summed (count, Σp, Σy) per bin (…, bins, 3)."""
    n = s[..., 0]
    with np.errstate(divide="ignore", invalid="ignore"):
        gap = np.where(n > 0, np.abs(s[..., 1] - s[..., 2]) / np.where(n > 0, n, 1.0), 0.0)
    total = n.sum(axis=-1)
    return (n * gap).sum(axis=-1) / total


def ece(score: np.ndarray, human: np.ndarray, *, bins: int = 10) -> float:
    """Return the expected calibration error over `bins` equal-width bins.

    >>> ece(np.array([0.9, 0.9, 0.1, 0.1]), np.array([1, 0, 0, 0.]))  # |.9−.5|/2 + |.1−0|/2
    0.25
    """
    p, y = _check(score, human)
    b = _bin_of(p, bins)
    s = np.stack([np.bincount(b, minlength=bins), np.bincount(b, p, bins),
                  np.bincount(b, y, bins)], axis=-1)  # fmt: skip
    return float(_ece_from(s))


def _rows(
    p: np.ndarray,
    y: np.ndarray,
    units: np.ndarray,
    version: str,
    *,
    bins: int,
    level: float,
    n_boot: int,
    seed: int,
    ece_interval: str = "thresholded",
) -> list[dict]:
    """Brier (wild interval) and ECE (cluster-bootstrap interval) rows of one version."""
    n = len(p)
    rng = estimates.seeded(seed, "confidence", version, "brier")
    e = estimates.ratio((p - y) ** 2, np.ones(n), units, level=level, n_boot=n_boot, rng=rng)
    brier = {"version": version, "metric": "brier", **e.fields()}
    G = int(units.max()) + 1
    per = np.zeros((G, bins, 3))
    np.add.at(per, (units, _bin_of(p, bins)), np.stack([np.ones(n), p, y], axis=1))
    w = stats.bootstrap_weights(G, n_boot=min(n_boot, 999), draws=max(G - 1, 1),
                                rng=stats.rng_for(seed, "confidence", version, "ece"))  # fmt: skip
    value, low, high, how = _ece_interval(per, w, ece_interval, level)
    n_eff = clusters.effective(np.ones(n), units)
    ece_row = {
        "version": version, "metric": "ece", "value": value,
        "ci_low": low, "ci_high": high, "p_value": float("nan"), "n": n,
        "n_clusters": G, "n_eff_clusters": n_eff,
        "few_clusters": bool(n_eff < clusters.FEW_EFFECTIVE),
        "method": f"{how}, {bins} bins",
    }  # fmt: skip
    return [brier, ece_row]


def _ece_interval(
    per: np.ndarray, w: np.ndarray, how: str, level: float
) -> tuple[float, float, float, str]:
    """Return the ECE, its interval's ends and how they were found (see `scores`).

    `per`: per-cluster (count, Σp, Σy) of each bin (G × bins × 3); `w`: Rao–Wu cluster
    weights of the replicates (B × G).
    """
    G = per.shape[0]
    value = float(_ece_from(per.sum(axis=0)))
    sums = np.einsum("rg,gkc->rkc", w, per)
    reps = _ece_from(sums)
    bias = float(np.mean(reps) - value)
    half = float(stdtrit(max(G - 1, 1), 0.5 + level / 2)) * float(np.std(reps, ddof=1))
    high = value - bias + half  # the bias-corrected upper end (`thresholded`, `bias_corrected`)
    text = f"bias {bias:+.4f}, t({G - 1}) × SD, B={len(reps)}"
    if how == "thresholded":
        k = float(ndtri(1 - (1 - level) / (2 * per.shape[1])))
        world = _thresholded_world(per, sums, k)
        low = max(value - float(np.quantile(world, 0.5 + level / 2)), 0.0)
        return value, low, high, f"thresholded cluster bootstrap (k = {k:.2f}; {text})"
    if how == "bias_corrected":
        low = max(value - bias - half, 0.0)
        return value, low, high, f"bias-corrected cluster bootstrap ({text})"
    low, high = (float(x[0]) for x in stats.percentile_interval(reps[:, None], level=level))
    if how == "basic":  # reflected: the replicates' upward bias moves it down
        low, high = max(2 * value - high, 0.0), 2 * value - low
    return value, low, high, f"cluster bootstrap {how} (Rao–Wu, B={len(reps)})"


def _thresholded_world(per: np.ndarray, sums: np.ndarray, k: float) -> np.ndarray:
    """Return ECE − truth in a bootstrap world whose bins near calibration are calibrated.

    Each bin's share-weighted gap c_b = Σ(p − y) / n moves by z_b in a replicate; the world
    keeps c_b soft-thresholded by k of its replicates' SD (bins within it are set exactly
    calibrated) and returns Σ_b |world_b + z_b| − |world_b| per replicate.
    """
    c = (per[..., 1] - per[..., 2]).sum(axis=0) / per[..., 0].sum()
    z = (sums[..., 1] - sums[..., 2]) / sums[..., 0].sum(axis=1, keepdims=True) - c
    world = np.sign(c) * np.maximum(np.abs(c) - k * z.std(axis=0), 0.0)
    return (np.abs(world + z) - np.abs(world)).sum(axis=1)


def crossfit(
    score: np.ndarray,
    human: np.ndarray,
    units: np.ndarray,
    *,
    how: str = "isotonic",
    folds: int = 5,
    seed: int = 0,
) -> np.ndarray:
    """Return out-of-fold recalibrated probabilities (folds of whole clusters).

    Each item's probability comes from a map fitted on the folds it is not in.
    """
    check_choice("how", how, RECALIBRATIONS)
    p, y = _check(score, human)
    G = int(units.max()) + 1
    if folds < 2 or G < folds:
        raise ValueError(f"cross-fitting needs 2 <= folds <= clusters, got {folds} and {G}")
    fold_of = stats.rng_for(seed, "confidence.folds").permutation(G) % folds
    fold = fold_of[units]
    out = np.empty_like(p)
    for k in range(folds):
        test = fold == k
        train = ~test
        if how == "isotonic":
            out[test] = isotonic_map(p[train], y[train])(p[test])
        else:
            out[test] = _platt(p[train], y[train], p[test])
    return out


def _platt(p_fit: np.ndarray, y_fit: np.ndarray, p_new: np.ndarray) -> np.ndarray:
    """Logistic regression of y on logit(p) (statsmodels), applied to `p_new`."""
    import statsmodels.api as sm

    def logit(x: np.ndarray) -> np.ndarray:
        c = np.clip(x, 1e-6, 1 - 1e-6)
        return np.log(c / (1 - c))

    X = sm.add_constant(logit(p_fit), has_constant="add")
    fit = sm.GLM(y_fit, X, family=sm.families.Binomial()).fit()
    return np.asarray(fit.predict(sm.add_constant(logit(p_new), has_constant="add")))


def scores(
    score: np.ndarray,
    human: np.ndarray,
    *,
    cluster: np.ndarray | None = None,
    bins: int = 10,
    recalibrate: str | None = "isotonic",
    folds: int = 5,
    level: float = 0.95,
    n_boot: int = wild.N_BOOT,
    seed: int = 0,
    ece_interval: str = "thresholded",
) -> pd.DataFrame:
    """Return Brier and ECE of the raw and the cross-fitted recalibrated probabilities.

    Args:
        score: The judge's probability that the human label is 1 (in [0, 1]).
        human: The 0/1 human label.
        cluster: Resampling unit of every item (None: items are independent).
        bins: Equal-width bins of the ECE.
        recalibrate: `isotonic`, `platt`, or None (raw only).
        folds: Cross-fitting folds (of whole clusters).
        level: Confidence level.
        n_boot: Bootstrap replicates.
        seed: Seed.
        ece_interval: `thresholded` (default: see the module docstring), `bias_corrected`
            (the estimate minus the replicates' bias ± t(G − 1) × their SD), `basic`
            (reflected about the estimate) or `percentile` (under-covers most).

    Returns:
        Rows of `COLUMNS`: version `raw` and `recalibrated` × metric `brier` / `ece`, and
        the paired `recalibrated − raw` Brier difference with its p-value (of 0).
    """
    p, y = _check(score, human)
    units = ppi.unit_codes(cluster, len(p))
    check_choice("ece_interval", ece_interval, ECE_INTERVALS)
    kw = {"bins": bins, "level": level, "n_boot": n_boot, "seed": seed,
          "ece_interval": ece_interval}  # fmt: skip
    rows = _rows(p, y, units, "raw", **kw)
    if recalibrate is not None:
        q = crossfit(p, y, units, how=recalibrate, folds=folds, seed=seed)
        version = f"recalibrated ({recalibrate}, {folds}-fold cross-fit)"
        rows += _rows(q, y, units, version, **kw)
        n = len(p)
        both = np.concatenate([(p - y) ** 2, (q - y) ** 2])
        group = np.r_[np.zeros(n, np.int64), np.ones(n, np.int64)]
        rng = estimates.seeded(seed, "confidence", "difference")
        d = estimates.difference(both, np.ones(2 * n), group, np.r_[units, units], level=level,
                                 n_boot=n_boot, rng=rng)  # fmt: skip
        rows.append({"version": "recalibrated − raw", "metric": "brier", **d.fields()})
    return pd.DataFrame(rows, columns=list(COLUMNS))


def scored_judges(table: pd.DataFrame, *, judge: str = "judge", min_distinct: int = 4) -> list:
    """Return the judges of a grounding table whose label is a probability, not a verdict.

    A judge qualifies when its `judge_label` lies in [0, 1] and takes at least
    `min_distinct` distinct values (a 0/1 verdict, or ½ for an invalid one, does not).
    """
    out = []
    for name, g in table.groupby(judge, sort=True):
        v = g["judge_label"].to_numpy(np.float64)
        if v.size and np.all((v >= 0) & (v <= 1)) and len(np.unique(v)) >= min_distinct:
            out.append(name)
    return out


def scored_reason(table: pd.DataFrame, *, judge: str = "judge") -> str | None:
    """Return why confidence calibration cannot be shown, None when some judge gives scores."""
    if table.empty:
        return "no judge output could be read as a number"
    if scored_judges(table, judge=judge):
        return None
    return (
        "every judge here gives a verdict (at most three distinct values), not a probability; "
        "calibration needs a judge whose output is a score in [0, 1] (a detector's probability, "
        "a verdict's log-probability)"
    )


def reliability(
    score: np.ndarray,
    human: np.ndarray,
    *,
    cluster: np.ndarray | None = None,
    bins: int = 10,
    level: float = 0.95,
    n_boot: int = wild.N_BOOT,
    seed: int = 0,
) -> pd.DataFrame:
    """Return the reliability table: per non-empty bin, mean probability and observed rate."""
    p, y = _check(score, human)
    units = ppi.unit_codes(cluster, len(p))
    b = _bin_of(p, bins)
    rows = []
    for k in np.unique(b):
        at = b == k
        rng = estimates.seeded(seed, "confidence", "bin", int(k))
        e = estimates.ratio(y[at], np.ones(int(at.sum())), units[at], level=level,
                            n_boot=n_boot, rng=rng)  # fmt: skip
        rows.append({"bin": int(k), "bin_low": k / bins, "bin_high": (k + 1) / bins,
                     "mean_score": float(p[at].mean()), **e.fields(value="observed")})  # fmt: skip
    return pd.DataFrame(rows)


def _scored(table: pd.DataFrame, judge: str):
    """Yield (judge, probabilities, human labels, clusters) of every scored judge."""
    for name in scored_judges(table, judge=judge):
        g = table[table[judge] == name]
        yield (name, g["judge_label"].to_numpy(), g["human_label"].to_numpy(),
               g["cluster"].to_numpy(dtype=object))  # fmt: skip


def by_judge(
    table: pd.DataFrame, *, judge: str = "judge", bins: int = 10, **options
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Return (`scores`, `reliability`) rows of every scored judge of a grounding table."""
    frames, rel = [], []
    for name, p, y, cluster in _scored(table, judge):
        kw = {"cluster": cluster, "bins": bins, **options}
        frames.append(scores(p, y, **kw).assign(judge=name))
        kw.pop("recalibrate", None), kw.pop("folds", None)
        rel.append(reliability(p, y, **kw).assign(judge=name))
    if not frames:
        return pd.DataFrame(columns=["judge", *COLUMNS]), pd.DataFrame()
    first = ["judge", *COLUMNS]
    return pd.concat(frames, ignore_index=True)[first], pd.concat(rel, ignore_index=True)


def ece_alternatives(
    table: pd.DataFrame, *, judge: str = "judge", bins: int = 10, **options
) -> pd.DataFrame:
    """Return every scored judge's ECE under each interval of `ECE_INTERVALS`, side by side.

    Rows: judge, version (raw, recalibrated), interval, value, ci_low, ci_high, n,
    n_clusters, n_eff_clusters; `options` go to `scores`.
    """
    keep = ["version", "value", "ci_low", "ci_high", "n", "n_clusters", "n_eff_clusters"]
    frames = []
    for name, p, y, cluster in _scored(table, judge):
        for how in ECE_INTERVALS:
            r = scores(p, y, cluster=cluster, bins=bins, ece_interval=how, **options)
            frames.append(r.loc[r["metric"] == "ece", keep].assign(judge=name, interval=how))
    out = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=keep)
    order = ["judge", "version", "interval", *keep[1:]]
    return out.reindex(columns=order).sort_values(["judge", "version"], kind="stable")


__all__ = [
    "COLUMNS",
    "ECE_INTERVALS",
    "RECALIBRATIONS",
    "by_judge",
    "crossfit",
    "ece",
    "ece_alternatives",
    "reliability",
    "scored_judges",
    "scored_reason",
    "scores",
]
