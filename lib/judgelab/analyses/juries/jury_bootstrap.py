"""Cluster-bootstrap fields of a `jury_table` row: the `t`, `basic` and `percentile` intervals.

The best member is cross-fitted, re-selected in every replicate or fixed (`Options.rule`);
p-values are the t-test matching the interval, or bootstrap p-values resolved adaptively.
"""

from __future__ import annotations

import numpy as np

from judgelab.analyses.juries.crossfit import crossfit, t_interval
from judgelab.analyses.juries.jury_cells import Options
from judgelab.analyses.juries.resample import Sums
from judgelab.core import inference, stats


def _interval(
    value: float, reps: np.ndarray, level: float, kind: str, n_units: int = 0
) -> tuple[float, float]:
    """Return the t (± t_{G−1}·SE), percentile or basic (2·value − percentiles) interval."""
    if kind == "t":
        return t_interval(value, reps, n_units, level)[:2]
    low, high = stats.percentile_interval(reps, level=level)
    if kind == "basic":
        return float(2 * value - high), float(2 * value - low)
    return float(low), float(high)


def _diff_reps(reps: np.ndarray, n: int, best: int, opts: Options) -> np.ndarray:
    """Return (best member CA, jury − best member) from cell sums (k × columns, or 1-D)."""
    reps = np.atleast_2d(reps)
    if opts.rule == "crossfit":
        return np.column_stack(crossfit(reps, n, opts.folds, opts.repeats))
    member = reps[:, 1:] / n
    chosen = member.max(axis=1) if opts.rule == "reselect" else member[:, best]
    return np.column_stack([chosen, reps[:, 0] / n - chosen])


def _p_value(cell: Sums, diff: float, first: np.ndarray, best: int, opts: Options) -> tuple:
    """Return (p, bound, replicates) of H0: jury CA = best member CA.

    `t`: the t-test matching the interval; otherwise a bootstrap p-value resolved adaptively.
    """
    if opts.interval == "t":
        return t_interval(diff, first, cell.n_units, opts.level)[2], False, len(first)
    flip = opts.interval == "basic"  # invert the interval reported: replicates 2·d − d*
    stat = (2 * diff - first) if flip else first

    if cell.draw is None:
        return inference.bootstrap_p(stat), False, len(stat)

    def draw(k: int) -> np.ndarray:
        d = _diff_reps(cell.draw(k), cell.n, best, opts)[:, 1]
        return (2 * diff - d) if flip else d

    out = inference.adaptive_p(
        draw, null=0.0, first=stat, n_boot=len(stat), max_boot=max(opts.max_boot, len(stat))
    )
    return out.p, out.bound, out.n_boot


def boot_fields(cell: Sums, best: int, size: int, opts: Options) -> dict:
    """Return the bootstrap intervals and test of a cell (`t`, `basic`, `percentile`)."""
    sums, reps, n = cell.sums, cell.reps, cell.n
    ca_low, ca_high = _interval(sums[0] / n, reps[:, 0] / n, opts.level, "percentile")
    pair = _diff_reps(reps, n, best, opts)
    best_ca, diff = _diff_reps(sums, n, best, opts)[0]
    g = cell.n_units
    b_low, b_high = _interval(best_ca, pair[:, 0], opts.level, opts.interval, g)
    d_low, d_high = _interval(diff, pair[:, 1], opts.level, opts.interval, g)
    p, bound, n_p = (np.nan, False, 0)
    if size > 1:
        p, bound, n_p = _p_value(cell, diff, pair[:, 1], best, opts)
    return {
        "ca_low": ca_low,
        "ca_high": ca_high,
        "best_member_ca": best_ca,
        "best_member_ca_low": b_low,
        "best_member_ca_high": b_high,
        "diff_vs_best": diff,
        "diff_low": d_low,
        "diff_high": d_high,
        "p_value": p,
        "p_bound": bound,
        "n_boot_p": n_p,
        "n_eff_clusters": np.nan,
        "few_clusters": True,
        "method": f"{opts.interval} cluster bootstrap (B={len(reps)})",
    }
