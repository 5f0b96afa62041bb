"""Transport audit: does a judge-to-human correction learned on some slices hold on another?

A correction is fitted on the human labels of the *training* slices (by default every slice
but the one tested: leave one slice out) and applied to the *held-out* labels of the tested
slice s (another exam-taker, domain, summariser or category). The transported error is what
the corrected level estimate of s gets wrong there:

- `rectifier` (the PPI correction, any judge label): the corrected estimate is
  mean_s(f) + Δ_train with Δ = mean(Y − f), so the error is Δ_train − Δ_s. Both means are
  estimated, so it is the contrast of two ratios of sums (`core.estimates.contrast`,
  weights (1, −1) over the training and the tested labelled rows, clusters as units: rows
  of one cluster in both — UMass questions answered by every exam-taker — are paired).
- `isotonic` (a monotone calibration map, for scored judges): m = the isotonic regression of
  Y on the judge score over the training labels (`scipy.optimize.isotonic_regression`,
  linear between the fitted scores), and the error is mean_s(m(f) − Y) over the tested
  labels, a ratio of sums (`core.estimates.ratio`). The interval is conditional on the
  fitted map (the map a user would deploy), not on a map refitted on other training draws.

Each tested slice is graded against `margin` by equivalence logic on the interval, never on
the point estimate: PASS only when the whole interval lies inside [−margin, margin], FAIL
when it lies wholly outside, INCONCLUSIVE otherwise. With the default `level=0.90` a PASS is
the two one-sided tests at 5 % each (TOST): a correction off by more than `margin` passes at
most 5 % of the time. Where the tested slice's judge scores fall outside what the training
labels cover (`support.support`) the slice is REFUSED, with the reason and the count — a
grade there would rest on an extrapolated correction. Every row carries n, the clusters and
the effective clusters behind its grade.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from judgelab.analyses.grounding import ppi
from judgelab.analyses.grounding.support import support
from judgelab.core import estimates, wild
from judgelab.core.schema import require_columns
from judgelab.errors import check_choice

#: Grades of a tested slice.
GRADES = ("PASS", "FAIL", "INCONCLUSIVE", "REFUSED")
#: Corrections: `auto` is the rectifier for labels with at most 3 distinct values (0/1, ½
#: for an invalid verdict), the isotonic map for scores.
CORRECTIONS = ("auto", "rectifier", "isotonic")
#: Columns of an audit row.
COLUMNS = (
    "judge", "slice", "trained_on", "correction", "error", "ci_low", "ci_high", "p_value",
    "judge_only_error", "corrected", "human", "margin", "level", "grade", "n", "n_clusters",
    "n_eff_clusters", "few_clusters", "n_train", "method", "refused", "n_outside",
)  # fmt: skip


def grade(low: float, high: float, margin: float) -> str:
    """Return PASS / FAIL / INCONCLUSIVE of an interval of an error against ±`margin`.

    >>> grade(-0.02, 0.03, 0.05), grade(0.06, 0.2, 0.05), grade(-0.01, 0.08, 0.05)
    ('PASS', 'FAIL', 'INCONCLUSIVE')
    """
    if not (np.isfinite(low) and np.isfinite(high)):
        return "INCONCLUSIVE"
    if -margin <= low and high <= margin:
        return "PASS"
    if high < -margin or low > margin:
        return "FAIL"
    return "INCONCLUSIVE"


def isotonic_map(score: np.ndarray, human: np.ndarray, *, increasing: bool = True):
    """Return the monotone calibration map fitted to (score, human) pairs, as a function.

    Tied scores are pooled first (their mean label, weighted by their count), then
    `scipy.optimize.isotonic_regression` fits the monotone step values; the returned map
    interpolates linearly between the fitted scores and is flat beyond them (which is why
    `support` refuses scores outside the fitted range).
    """
    from scipy.optimize import isotonic_regression

    s = np.asarray(score, dtype=np.float64)
    y = np.asarray(human, dtype=np.float64)
    knots, inv = np.unique(s, return_inverse=True)
    counts = np.bincount(inv, minlength=len(knots)).astype(np.float64)
    means = np.bincount(inv, weights=y, minlength=len(knots)) / counts
    fitted = isotonic_regression(means, weights=counts, increasing=increasing).x

    def calibrate(x: np.ndarray) -> np.ndarray:
        return np.interp(np.asarray(x, dtype=np.float64), knots, fitted)

    return calibrate


def _correction(f: np.ndarray, correction: str) -> str:
    check_choice("correction", correction, CORRECTIONS)
    if correction != "auto":
        return correction
    return "rectifier" if len(np.unique(f)) <= 3 else "isotonic"


def _one_slice(
    f: np.ndarray,
    y: np.ndarray,
    units: np.ndarray,
    train: np.ndarray,
    test: np.ndarray,
    *,
    how: str,
    margin: float,
    level: float,
    n_boot: int,
    rng: np.random.Generator,
    increasing: bool,
) -> dict[str, Any]:
    """The audit row of one tested slice (`train`, `test`: labelled rows of each side)."""
    sup = support(f[train], f[test], kind="score")
    base = {
        "n": int(test.sum()), "n_train": int(train.sum()), "margin": margin, "level": level,
        "judge_only_error": float(np.mean(f[test] - y[test])), "human": float(np.mean(y[test])),
        "refused": sup.reason or "", "n_outside": sup.n_outside,
    }  # fmt: skip
    if sup.reason:
        nan = float("nan")
        return {**base, "error": nan, "ci_low": nan, "ci_high": nan, "p_value": nan,
                "corrected": nan, "grade": "REFUSED", "n_clusters": len(np.unique(units[test])),
                "n_eff_clusters": nan, "few_clusters": True, "method": "refused"}  # fmt: skip
    if how == "rectifier":
        num = np.concatenate([y[train] - f[train], y[test] - f[test]])
        group = np.concatenate([np.zeros(train.sum(), np.int64), np.ones(test.sum(), np.int64)])
        unit = np.concatenate([units[train], units[test]])
        e = estimates.contrast(num, np.ones(len(num)), group, unit, [1.0, -1.0], null=0.0,
                               level=level, n_boot=n_boot, rng=rng)  # fmt: skip
        corrected = float(np.mean(f[test]) + np.mean(y[train] - f[train]))
    else:
        m = isotonic_map(f[train], y[train], increasing=increasing)
        pred = m(f[test])
        e = estimates.ratio(pred - y[test], np.ones(int(test.sum())), units[test], null=0.0,
                            level=level, n_boot=n_boot, rng=rng, bounds=None)  # fmt: skip
        corrected = float(np.mean(pred))
    fields = e.fields(value="error")
    fields.pop("n")
    return {**base, **fields, "corrected": corrected,
            "grade": grade(e.ci_low, e.ci_high, margin)}  # fmt: skip


def audit(
    table: pd.DataFrame,
    *,
    judge_col: str = "judge_label",
    human_col: str = "human_label",
    slice_col: str = "group",
    cluster_col: str | None = "cluster",
    judge: str = "judge",
    margin: float = 0.05,
    correction: str = "auto",
    train: Sequence[str] | None = None,
    level: float = 0.90,
    n_boot: int = wild.N_BOOT,
    seed: int = 0,
    increasing: bool = True,
) -> pd.DataFrame:
    """Return the transport audit: one graded row per judge × tested slice.

    Args:
        table: One row per item (and judge): the judge's label or score, the human label
            (NaN where the item has none), its slice and its cluster (`tables.pointwise_table`
            gives them, with the slice in `group`).
        judge_col: The judge's label or score (every row).
        human_col: The human label (missing where unlabelled; only labelled rows are used).
        slice_col: What the correction has to travel across (exam-taker, domain, category).
        cluster_col: Resampling unit (rows sharing one are dependent), or None.
        judge: Column naming the judge (audited one by one); absent: one judge.
        margin: The largest transported error that still counts as transporting (the
            equivalence margin, on the label's scale: 0.05 = 5 points of a pass rate).
        correction: `rectifier`, `isotonic` or `auto` (see `CORRECTIONS`).
        train: Slices the correction is fitted on (each other slice is then tested);
            None: leave one slice out (fit on every other slice, test each).
        level: Confidence level of the interval graded (0.90: TOST at 5 %).
        n_boot: Wild bootstrap replicates.
        seed: Seed (each row draws from `estimates.seeded(seed, "transport", judge, slice)`).
        increasing: Direction of the isotonic map (higher score, more often positive).

    Returns:
        `COLUMNS`: the transported `error` with its interval and p-value (of error 0), the
        judge-only error beside it, the corrected and the human level of the slice, the
        grade, `n` (tested labels), `n_train`, the clusters and effective clusters.
    """
    if not margin > 0:
        raise ValueError(f"margin must be > 0, got {margin!r}")
    require_columns(table, [judge_col, human_col, slice_col, cluster_col], "transport.audit")
    known = table[human_col].notna().to_numpy()
    data = table.loc[known].reset_index(drop=True)
    names = data[judge].astype(str) if judge in data.columns else pd.Series("judge", data.index)
    slices = data[slice_col].astype(str).to_numpy()
    if train is not None:
        missing = sorted(set(map(str, train)) - set(slices))
        if missing:
            raise ValueError(f"train slices {missing} are not among the slices of {slice_col!r}")
    rows = []
    for name in sorted(names.unique()):
        at = (names == name).to_numpy()
        f = pd.to_numeric(data.loc[at, judge_col], errors="raise").to_numpy(np.float64)
        y = pd.to_numeric(data.loc[at, human_col], errors="raise").to_numpy(np.float64)
        cl = None if cluster_col is None else data.loc[at, cluster_col].to_numpy(dtype=object)
        units = ppi.unit_codes(cl, len(f))
        sl = slices[at]
        how = _correction(f, correction)
        tested = sorted(set(sl) - set(map(str, train))) if train is not None else sorted(set(sl))
        for s in tested:
            test = sl == s
            fit = np.isin(sl, list(map(str, train))) if train is not None else ~test
            if fit.sum() < 2 or test.sum() < 2:
                continue
            rng = estimates.seeded(seed, "transport", name, s)
            row = _one_slice(f, y, units, fit, test, how=how, margin=margin, level=level,
                             n_boot=n_boot, rng=rng, increasing=increasing)  # fmt: skip
            trained_on = "all other slices" if train is None else ", ".join(map(str, train))
            rows.append({**row, "judge": name, "slice": s, "trained_on": trained_on,
                         "correction": how})  # fmt: skip
    return pd.DataFrame(rows, columns=list(COLUMNS))


def summary(audited: pd.DataFrame) -> pd.DataFrame:
    """Per judge: how many tested slices got each grade (and the largest |error|)."""
    if audited.empty:
        return pd.DataFrame(columns=["judge", *GRADES, "max_abs_error"])
    counts = pd.crosstab(audited["judge"], audited["grade"]).reindex(columns=list(GRADES))
    counts = counts.fillna(0).astype(int)
    worst = audited.groupby("judge")["error"].apply(lambda e: float(np.nanmax(np.abs(e))))
    return counts.assign(max_abs_error=worst).reset_index()


__all__ = ["COLUMNS", "CORRECTIONS", "GRADES", "audit", "grade", "isotonic_map", "summary"]
