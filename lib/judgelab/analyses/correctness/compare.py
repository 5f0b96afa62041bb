"""Two groups of one judge's graded answers compared on the same resampled clusters.

The engine behind `self_vs_others` (own answers vs others', spec 001 §4.3) and
`answered_gap` (questions the judge answered correctly vs incorrectly, §4.5): each row's six
confusion cells go to side A or side B, the 12 columns are summed per cluster, and one
cluster bootstrap resamples both sides together (*paired*: a drawn question brings its rows
of both sides). The difference A − B gets the percentile interval of its replicates and a
two-sided bootstrap p-value resolved by `inference.adaptive_p` (more replicates until its
Monte-Carlo error is below 10 % of p, else reported as a bound).

`missing_as_error`: when invalid verdicts are excluded and their share differs between the
two sides, the comparison is repeated counting them as errors (`invalid_policy = "error"`),
a sensitivity row beside the default one.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from judgelab.analyses.correctness.rates import (
    RATE_METRICS,
    cluster_matrix,
    denominators,
    rates_from_counts,
)
from judgelab.analyses.correctness.table import confusion_counts
from judgelab.core import inference, stats

#: Bootstrap replicates at most behind one adaptive p-value.
MAX_BOOT = 20_000


def check_metrics(metrics: Sequence[str]) -> None:
    """Raise ValueError naming metrics that are not rate metrics."""
    unknown = [m for m in metrics if m not in RATE_METRICS]
    if unknown:
        raise ValueError(f"unknown metric(s) {unknown}; known: {RATE_METRICS}")


def policies(block: pd.DataFrame, side_a: np.ndarray, invalid_policy: str, sensitivity: bool):
    """Return the invalid policies to report: the chosen one, plus a sensitivity row.

    The sensitivity row (`error`) is added when invalid verdicts are excluded and their share
    differs between the two sides.
    """
    if not sensitivity or invalid_policy != "exclude":
        return [invalid_policy]
    invalid = block["verdict"].isna().to_numpy()
    share_a = invalid[side_a].mean() if side_a.any() else 0.0
    share_b = invalid[~side_a].mean() if (~side_a).any() else 0.0
    return ["exclude", "error"] if invalid.any() and share_a != share_b else ["exclude"]


def two_sides(
    block: pd.DataFrame,
    side_a: np.ndarray,
    *,
    names: tuple[str, str],
    metrics: Sequence[str],
    invalid_policy: str,
    cluster: str | None,
    n_boot: int,
    rng: np.random.Generator,
    level: float,
) -> list[dict]:
    """Return one row per metric comparing side A (`side_a` True) with side B of `block`.

    Args:
        block: Correctness-table rows of one group (one judge).
        side_a: Boolean per row: side A (True) or B.
        names: Column stems of the two sides, e.g. ("self", "others").
        metrics: Rate metrics.
        invalid_policy: `exclude` or `error`.
        cluster: Bootstrap unit column (`rates.resolve_cluster`); None = rows.
        n_boot: Replicates behind the intervals (and the first ones of each p-value).
        rng: Random generator.
        level: Confidence level.

    Returns:
        Dicts with `metric`, `<a>`, `<a>_low`, `<a>_high`, `n_<a>`, the same for B, `diff`,
        `diff_low`, `diff_high`, `p_value`, `p_bound`, `n_boot_p`, `n_invalid_<a>`,
        `n_invalid_<b>`, `n_clusters` (resampled units), `n_clusters_both` (units with rows
        on both sides).
    """
    a, b = names
    cells = confusion_counts(block)
    both = np.hstack([cells * side_a[:, None], cells * ~side_a[:, None]])
    mat = cluster_matrix(block, both, cluster)
    has_a, has_b = mat[:, :6].sum(axis=1) > 0, mat[:, 6:].sum(axis=1) > 0
    units = int(np.sum(has_a | has_b))  # resampled units (a question may sit on one side only)
    paired = int(np.sum(has_a & has_b))
    total = mat.sum(axis=0)
    reps = stats.bootstrap_sums(mat, n_boot=n_boot, rng=rng)

    def rates(counts: np.ndarray) -> tuple[dict, dict]:
        return (
            rates_from_counts(counts[..., :6], invalid_policy=invalid_policy),
            rates_from_counts(counts[..., 6:], invalid_policy=invalid_policy),
        )

    (p_a, p_b), (b_a, b_b) = rates(total), rates(reps)
    d_a, d_b = denominators(total[:6], invalid_policy), denominators(total[6:], invalid_policy)
    out = []
    for m in metrics:
        delta = b_a[m] - b_b[m]

        def draw(k: int, m: str = m) -> np.ndarray:
            more_a, more_b = rates(stats.bootstrap_sums(mat, n_boot=k, rng=rng))
            return more_a[m] - more_b[m]

        pv = _p_value(delta, draw, n_boot)
        out.append(
            {
                "metric": m,
                **stats.interval_fields(p_a[m], b_a[m], level=level, names=_names(a)),
                f"n_{a}": int(d_a[m]),
                **stats.interval_fields(p_b[m], b_b[m], level=level, names=_names(b)),
                f"n_{b}": int(d_b[m]),
                **stats.interval_fields(
                    p_a[m] - p_b[m], delta, level=level, names=("diff", "diff_low", "diff_high")
                ),
                "p_value": pv.p,
                "p_bound": pv.bound,
                "n_boot_p": pv.n_boot,
                f"n_invalid_{a}": int(total[4] + total[5]),
                f"n_invalid_{b}": int(total[10] + total[11]),
                "n_clusters": units,
                "n_clusters_both": paired,
            }
        )
    return out


def _names(stem: str) -> tuple[str, str, str]:
    return stem, f"{stem}_low", f"{stem}_high"


def _p_value(first: np.ndarray, draw, n_boot: int) -> inference.PValue:
    if np.all(np.isnan(first)):
        return inference.PValue(float("nan"), 0, float("nan"), False)
    return inference.adaptive_p(draw, first=first, n_boot=n_boot, max_boot=max(MAX_BOOT, n_boot))


def columns(names: tuple[str, str]) -> list[str]:
    """Return the columns `two_sides` fills, in order (after the group columns)."""
    a, b = names
    sides = [f"{s}{x}" for s in (a, b) for x in ("", "_low", "_high")]
    return ["metric", "invalid_policy", *sides[:3], f"n_{a}", *sides[3:], f"n_{b}", "diff",
            "diff_low", "diff_high", "p_value", "p_bound", "n_boot_p", f"n_invalid_{a}",
            f"n_invalid_{b}", "n_clusters", "n_clusters_both"]  # fmt: skip
