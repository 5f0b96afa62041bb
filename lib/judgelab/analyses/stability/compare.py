"""The judge-swap headline: what swapping judge A for judge B does on one benchmark.

`headline` gathers, for two raters on the units both rated, the share of changed verdicts,
agreement and Cohen's kappa (`shift.verdict_shift`), the mean score drift when both give
numbers (`drift.score_drift`), and — when the items name their systems — Kendall's τ between
the two raters' rankings of the systems (`leaderboard.leaderboard_stability`), each with its
interval, n and clusters: the numbers `judgelab compare A B --benchmark X` prints.
"""

from __future__ import annotations

import pandas as pd

from judgelab.analyses.stability import drift, leaderboard, shift
from judgelab.core import estimates, wild
from judgelab.core.schema import require_columns
from judgelab.errors import check_choice

#: Columns of `headline`.
HEADLINE_COLUMNS: tuple[str, ...] = ("measure", *estimates.FIELDS)


def headline(
    judgments: pd.DataFrame,
    items: pd.DataFrame,
    a: str,
    b: str,
    *,
    by: str = "judge",
    system: str | None = None,
    positive: str | None = None,
    seed: int = 0,
    level: float = 0.95,
    n_boot: int = 999,
    n_boot_wild: int = wild.N_BOOT,
) -> pd.DataFrame:
    """Return the headline rows of swapping rater `a` for `b` (values of `by`).

    Args:
        judgments: A judgments table holding both raters.
        items: Its items table (for `system`).
        a: The rater swapped out (A).
        b: The rater swapped in (B).
        by: The column naming the raters (`judge`, `model`, `prompt`).
        system: Where an item's system is named (`meta.<key>` or a judgments column) to rank
            the systems under A and under B (None: no ranking).
        positive: The verdict counted as a pass when ranking (None: numeric verdicts).
        seed: Seed of every bootstrap.
        level: Confidence level.
        n_boot: Cluster bootstrap resamples (τ).
        n_boot_wild: Wild bootstrap replicates (shares, drift).

    Returns:
        One row per measure (`changed`, `agreement`, `kappa`, `drift_mean` when both score,
        `tau` when `system` is given): `measure`, `estimates.FIELDS`.

    Raises:
        ChoiceError: `a` or `b` is not a value of `by` in `judgments` (the message lists them).
    """
    require_columns(judgments, [by], "compare")
    present = tuple(sorted(judgments[by].dropna().astype(str).unique()))
    for name in (a, b):
        check_choice(by, name, present)
    rows = judgments[judgments[by].astype(str).isin([a, b])]
    out = shift.verdict_shift(
        rows, by=by, pairs=[(a, b)], seed=seed, level=level, n_boot=n_boot_wild
    ).drop(columns=["a", "b"])
    if drift.drift_reason(rows, a, b, by=by) is None:
        d = drift.score_drift(
            rows, a, b, by=by, quantiles=(), seed=seed, level=level, n_boot=n_boot_wild
        )
        out = pd.concat([out, d.assign(measure="drift_mean")[list(HEADLINE_COLUMNS)]])
    if system is not None:
        scores = leaderboard.scores_from_judgments(
            rows.assign(judge=rows[by].astype(str)), items, system=system, positive=positive
        )
        if leaderboard.leaderboard_reason(scores) is None:
            board = leaderboard.leaderboard_stability(
                scores, reference=a, seed=seed, level=level, n_boot=n_boot,
                n_boot_wild=min(n_boot_wild, 199),
            )  # fmt: skip
            t = board.taus.iloc[0]
            tau = {"measure": "tau", "value": t["tau"], "ci_low": t["ci_low"]}
            tau |= {"ci_high": t["ci_high"], "p_value": float("nan"), "n": t["n_systems"]}
            tau |= {k: t[k] for k in ("n_clusters", "n_eff_clusters", "few_clusters", "method")}
            out = pd.concat([out, pd.DataFrame([tau])])
    return out[list(HEADLINE_COLUMNS)].reset_index(drop=True)
