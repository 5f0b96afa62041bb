"""Human alignment of each judging method on faithfulness pairs (spec 004 §2.5, Table 1).

Human alignment is the share of contrastive pairs in which the method prefers the
human-preferred candidate. Tie policies (spec 004 §2.2): `miss` (a tie counts as not aligned;
reproduces the paper's near-0 % cells), `half` (half a success), `random` (a seeded coin). An
unparseable verdict is always a miss.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats as sps

from judgelab.analyses.faithfulness.grouped import Rows, per_group
from judgelab.analyses.faithfulness.ragas_scores import METRIC_LABELS
from judgelab.core import stats
from judgelab.core.schema import require_columns as _need
from judgelab.data import targets
from judgelab.errors import check_choice

TIE_POLICIES = ("miss", "half", "random")
CIS = ("wilson", "exact", "boot")


def _exact_ci(k: float, n: int, level: float) -> tuple[float, float]:
    if n == 0 or k != int(k):
        return math.nan, math.nan
    ci = sps.binomtest(int(k), n).proportion_ci(confidence_level=level, method="exact")
    return float(ci.low), float(ci.high)


def _successes(pref: np.ndarray, key: tuple[Any, ...], tie_policy: str, seed: int) -> np.ndarray:
    """1 per aligned pair, ties per `tie_policy`, 0 otherwise (invalid verdicts included)."""
    ties = pref == "tie"
    success = (pref == "pos").astype(float)
    if tie_policy == "half":
        success[ties] = 0.5
    elif tie_policy == "random":
        rng = stats.rng_for(seed, "ties", *key)
        success[ties] = rng.integers(0, 2, size=int(ties.sum()))
    return success


def _aligned(
    g: pd.DataFrame, key: tuple[Any, ...], *, tie_policy: str, n_boot: int, seed: int, level: float
) -> Rows:
    """One group's alignment with its Wilson, exact and source-clustered bootstrap intervals."""
    pref = g["pref"].to_numpy()
    success = _successes(pref, key, tie_policy, seed)
    n = len(pref)
    k = float(success.sum())
    wl, wh = stats.wilson_interval(k, n, level=level)
    el, eh = _exact_ci(k, n, level)
    uniq, inv = np.unique(g["group"].to_numpy(), return_inverse=True)
    per = np.zeros((len(uniq), 2))
    np.add.at(per, inv, np.column_stack([success, np.ones(n)]))
    sums = stats.bootstrap_sums(per, n_boot=n_boot, rng=stats.rng_for(seed, "boot", *key))
    bl, bh = stats.percentile_interval(stats.ratio_replicates(sums[:, 0], sums[:, 1]), level=level)
    n_pos, n_neg = int((pref == "pos").sum()), int((pref == "neg").sum())
    return [
        {
            "n": n,
            "aligned": k,
            "ties": int((pref == "tie").sum()),
            "invalid": int((pref == "invalid").sum()),
            "alignment": k / n if n else math.nan,
            "wilson_low": float(wl),
            "wilson_high": float(wh),
            "exact_low": el,
            "exact_high": eh,
            "boot_low": float(bl),
            "boot_high": float(bh),
            "p_value": stats.sign_test(n_pos, n_pos + n_neg).p_value,
            "tie_policy": tie_policy,
        }
    ]


def alignment(
    prefs: pd.DataFrame,
    *,
    tie_policy: str = "miss",
    by: Sequence[str] = ("judge", "method", "metric"),
    n_boot: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> pd.DataFrame:
    """Human alignment: the share of pairs where the method prefers the human-preferred item.

    Args:
        prefs: Preferences (`pointwise_preferences` / `template_preferences`); `pref` is
            pos (aligned), neg, tie or invalid; `group` clusters pairs (FaithBench source).
        tie_policy: `miss` (a tie counts 0), `half` (0.5) or `random` (a seeded coin per
            tie); invalid verdicts always count 0.
        by: Group columns.
        n_boot: Bootstrap resamples of the source-clustered interval.
        seed: Seed of the random tie-break and of the bootstrap.
        level: Confidence level of every interval.

    Returns:
        One row per group: the `by` columns, `n` (pairs), `aligned` (successes; fractional
        under `half`), `ties`, `invalid`, `alignment`, `wilson_low/high`, `exact_low/high`
        (Clopper–Pearson; NaN for a fractional count), `boot_low/high` (bootstrap over
        `group` clusters), `p_value` (exact sign test of pos vs neg among decided pairs,
        against 50 %), `tie_policy`.
    """
    check_choice("tie_policy", tie_policy, TIE_POLICIES)
    _need(prefs, [*by, "pref", "group"], "preferences")
    return per_group(
        prefs,
        by,
        lambda key, g: _aligned(
            g, key, tie_policy=tie_policy, n_boot=n_boot, seed=seed, level=level
        ),
    )


def alignment_by_tie_policy(prefs: pd.DataFrame, **kwargs: object) -> pd.DataFrame:
    """Return `alignment` under every tie policy, stacked (column `tie_policy`)."""
    return pd.concat(
        [alignment(prefs, tie_policy=p, **kwargs) for p in TIE_POLICIES],  # type: ignore[arg-type]
        ignore_index=True,
    )


def _cell(a: float, lo: float, hi: float, n: float) -> str:
    if pd.isna(a):
        return ""
    ci = f" [{100 * lo:.0f}–{100 * hi:.0f}]" if pd.notna(lo) and pd.notna(hi) else ""
    size = f" n={int(n)}" if pd.notna(n) else ""
    return f"{100 * a:.1f}{ci}{size}"


def _your_rows(aligned: pd.DataFrame, ci: str) -> list[dict[str, str]]:
    """Table 1 rows of your judges: one cell per metric label, empty where not measured."""
    rows = []
    for (judge, method), g in aligned.groupby(["judge", "method"], sort=True):
        row = {"source": "yours", "judge": judge, "method": method}
        for m, lab in METRIC_LABELS.items():
            hit = g[g["metric"] == m]
            row[lab] = (
                ""
                if hit.empty
                else _cell(
                    hit["alignment"].iloc[0],
                    hit[f"{ci}_low"].iloc[0],
                    hit[f"{ci}_high"].iloc[0],
                    hit["n"].iloc[0],
                )
            )
        rows.append(row)
    return rows


def _paper_rows(level: float, targets_root: str | None) -> list[dict[str, str]]:
    """Table 1 rows of the paper, per language; Wilson intervals where it gives n."""
    t = targets.load_targets("ragas_romanian", "table1", root=targets_root)
    parts = t["row"].str.split(" | ", regex=False)
    t = t.assign(
        judge=parts.str[0],
        method=parts.str[1],
        language=t["column"].str.split(" | ", regex=False).str[0],
        metric=t["column"].str.split(" | ", regex=False).str[1],
    )
    rows = []
    for (lang, judge, method), g in t.groupby(["language", "judge", "method"], sort=False):
        row = {"source": f"paper · {lang}", "judge": judge, "method": method}
        for lab in METRIC_LABELS.values():
            hit = g[g["metric"] == lab]
            if hit.empty:
                row[lab] = ""
                continue
            v, n = hit["value"].iloc[0] / 100, hit["n"].iloc[0]
            lo, hi = stats.wilson_interval(v * n, n, level=level) if pd.notna(n) else (None, None)
            row[lab] = _cell(
                v, lo if lo is not None else np.nan, hi if hi is not None else np.nan, n
            )
        rows.append(row)
    return rows


def table1(
    aligned: pd.DataFrame,
    *,
    ci: str = "wilson",
    with_paper: bool = True,
    level: float = 0.95,
    targets_root: str | None = None,
) -> pd.DataFrame:
    """The paper's Table 1 layout: alignment % [CI] n per judge × method (rows) and metric.

    Args:
        aligned: Output of `alignment` (by judge, method, metric).
        ci: Interval shown: `wilson`, `exact` or `boot`.
        with_paper: Add the paper's rows (Romanian and English) from
            `data/targets/ragas_romanian/table1.csv`; the Romanian cells get the Wilson
            interval at the paper's n = 100.
        level: Confidence level of the paper rows' intervals.
        targets_root: Folder of the target CSVs (default: the project's).

    Returns:
        One row per (source, judge, method): `source`, `judge`, `method`, then one text
        column per metric label (`Faithfulness`, `Answer Relevancy`, `Context Relevancy`);
        empty where the metric was not measured.
    """
    check_choice("ci", ci, CIS)
    rows = _your_rows(aligned, ci)
    if with_paper:
        rows += _paper_rows(level, targets_root)
    return pd.DataFrame(rows, columns=["source", "judge", "method", *METRIC_LABELS.values()])
