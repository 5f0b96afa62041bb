"""Self-preference and answerability in correctness grading (spec 001 §4.2, §4.3).

Does a judge grade its own model family's answers more leniently (`mark_self`,
`self_vs_others`; Fig. 4/5), and does it grade worse on questions it cannot answer itself
(`mark_answered`, `kappa_by_answered`; Table 4)?
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fnmatch import fnmatchcase

import numpy as np
import pandas as pd

from judgelab.analyses.correctness.rates import (
    RATE_METRICS,
    cluster_matrix,
    correctness_rates,
    denominators,
    groups_of,
    rates_from_counts,
)
from judgelab.analyses.correctness.table import confusion_counts
from judgelab.core import stats
from judgelab.core.schema import require_columns as _require
from judgelab.errors import check_choice

SUBSETS = ("overall", "answered_correctly", "answered_incorrectly")
AMBIGUOUS = ("exclude", "incorrect")


def mark_self(
    table: pd.DataFrame,
    *,
    judge_family: Mapping[str, str],
    candidate_family: Mapping[str, str],
) -> pd.DataFrame:
    """Add `candidate_is_judge`: the answer comes from the judge's own model family.

    Args:
        table: A correctness table; needs `judge` and `candidate_model`.
        judge_family: Judge id → family (e.g. "GPT-4.umass" → "gpt-4").
        candidate_family: Candidate model (or a glob pattern such as "llama2-*") → family.
            Use one family per model to get model-level "self".

    Returns:
        A copy with `judge_family`, `candidate_family` and `candidate_is_judge` (null where
        either family is unknown).
    """
    _require(table, ["judge", "candidate_model"], "mark_self")

    def fam(model: object) -> str | None:
        if not isinstance(model, str):
            return None
        if model in candidate_family:
            return candidate_family[model]
        return next((f for p, f in candidate_family.items() if fnmatchcase(model, p)), None)

    out = table.copy()
    out["judge_family"] = out["judge"].map(dict(judge_family))
    out["candidate_family"] = [fam(m) for m in out["candidate_model"]]
    known = out["judge_family"].notna() & out["candidate_family"].notna()
    same = out["judge_family"] == out["candidate_family"]
    out["candidate_is_judge"] = pd.array(np.where(known, same, pd.NA), dtype="boolean")
    return out


def self_vs_others(
    table: pd.DataFrame,
    *,
    by: Sequence[str] = ("judge",),
    metrics: Sequence[str] = ("fpr", "fnr"),
    invalid_policy: str = "exclude",
    cluster: str = "question_uid",
    n_boot: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> pd.DataFrame:
    """Compare a rate on the judge's own answers with the same rate on other models' answers.

    Spec 001 §4.3 (Fig. 4/5). The difference self − others gets a *paired* cluster bootstrap:
    each replicate resamples questions once and recomputes both rates on the same resampled
    questions, so questions answered by both sides are compared with themselves. The p-value
    is two-sided from the bootstrap: 2 · min(P*(Δ ≤ 0), P*(Δ ≥ 0)), capped at 1. Groups with
    no self or no other rows are dropped.

    Args:
        table: Output of `mark_self`; needs `by`, `cluster`, `candidate_is_judge`, `human`,
            `verdict`.
        by: Group columns.
        metrics: Any of agreement, kappa, fpr, fnr.
        invalid_policy: `exclude` or `error` (see `correctness.rates`).
        cluster: Column whose values are resampled.
        n_boot: Bootstrap resamples B.
        seed: Seed of the bootstrap.
        level: Confidence level.

    Returns:
        One row per group × metric: the `by` columns, `metric`, `self`, `self_low`,
        `self_high`, `n_self` (denominator), `others`, `others_low`, `others_high`,
        `n_others`, `diff` (self − others), `diff_low`, `diff_high`, `p_value`,
        `n_clusters` (questions with rows on both sides).
    """
    by = list(by)
    _require(table, [*by, cluster, "candidate_is_judge", "human", "verdict"], "self_vs_others")
    unknown = [m for m in metrics if m not in RATE_METRICS]
    if unknown:
        raise ValueError(f"unknown metric(s) {unknown}; known: {RATE_METRICS}")
    data = table[table["candidate_is_judge"].notna()]
    rows = []
    for key, block in groups_of(data, by):
        is_self = block["candidate_is_judge"].astype(bool).to_numpy()
        if is_self.all() or not is_self.any():
            continue
        cells = confusion_counts(block)
        both = np.hstack([cells * is_self[:, None], cells * ~is_self[:, None]])
        mat = cluster_matrix(block, both, cluster)
        paired = int(np.sum((mat[:, :6].sum(axis=1) > 0) & (mat[:, 6:].sum(axis=1) > 0)))
        reps = stats.bootstrap_sums(mat, n_boot=n_boot, rng=stats.rng_for(seed, "self", *key))
        base = dict(zip(by, key, strict=True))
        for fields in _self_other_fields(mat.sum(axis=0), reps, metrics, invalid_policy, level):
            rows.append({**base, **fields, "n_clusters": paired})
    sides = [f"{s}{x}" for s in ("self", "others") for x in ("", "_low", "_high")]
    cols = [*by, "metric", *sides[:3], "n_self", *sides[3:], "n_others", "diff", "diff_low",
            "diff_high", "p_value", "n_clusters"]  # fmt: skip
    return pd.DataFrame(rows, columns=cols)


def _self_other_fields(
    total: np.ndarray,
    reps: np.ndarray,
    metrics: Sequence[str],
    invalid_policy: str,
    level: float,
) -> list[dict]:
    """Return, per metric, both sides' rates, their paired difference and its p-value.

    `total` and `reps` hold the 6 self cells, then the 6 others cells (`CELLS` order).
    """
    p_s = rates_from_counts(total[:6], invalid_policy=invalid_policy)
    p_o = rates_from_counts(total[6:], invalid_policy=invalid_policy)
    b_s = rates_from_counts(reps[:, :6], invalid_policy=invalid_policy)
    b_o = rates_from_counts(reps[:, 6:], invalid_policy=invalid_policy)
    d_s = denominators(total[:6], invalid_policy)
    d_o = denominators(total[6:], invalid_policy)
    out = []
    for m in metrics:
        delta = b_s[m] - b_o[m]
        ok = delta[~np.isnan(delta)]
        p = (
            float(min(1.0, 2 * min(np.mean(ok <= 0), np.mean(ok >= 0))))
            if ok.size
            else float("nan")
        )
        out.append(
            {
                "metric": m,
                **stats.interval_fields(
                    p_s[m], b_s[m], level=level, names=("self", "self_low", "self_high")
                ),
                "n_self": int(d_s[m]),
                **stats.interval_fields(
                    p_o[m], b_o[m], level=level, names=("others", "others_low", "others_high")
                ),
                "n_others": int(d_o[m]),
                **stats.interval_fields(
                    p_s[m] - p_o[m], delta, level=level, names=("diff", "diff_low", "diff_high")
                ),
                "p_value": p,
            }
        )
    return out


def self_others_long(comparison: pd.DataFrame) -> pd.DataFrame:
    """Reshape `self_vs_others` output to long form for plotting: one row per side.

    Returns:
        The group columns, `metric`, `group` (self/others), `value`, `ci_low`, `ci_high`, `n`.
    """
    keys = list(comparison.columns[: list(comparison.columns).index("metric") + 1])
    parts = []
    for side in ("self", "others"):
        part = comparison[keys].copy()
        part["group"] = side
        part["value"] = comparison[side]
        part["ci_low"] = comparison[f"{side}_low"]
        part["ci_high"] = comparison[f"{side}_high"]
        part["n"] = comparison[f"n_{side}"]
        parts.append(part)
    return pd.concat(parts, ignore_index=True)


def mark_answered(
    table: pd.DataFrame,
    *,
    judge_candidate: Mapping[str, str],
    ambiguous: str = "exclude",
) -> pd.DataFrame:
    """Add `judge_answered`: did the judge, as a candidate, answer this question correctly?

    Spec 001 §4.2: the human label of the judge's own answer (candidate `judge_candidate[judge]`)
    to the same question (`question_uid`) puts every row of that question in the
    `answered_correctly` or `answered_incorrectly` subset. The split is a property of
    (judge, question), the same for every condition.

    Args:
        table: A correctness table; needs `judge`, `question_uid`, `candidate_model`, `human`.
        judge_candidate: Judge id → the candidate model that is the same model.
        ambiguous: What a question gets when the judge's own answer has no label or is
            missing: `exclude` (null) or `incorrect` (spec's `treat_as_incorrect`).

    Returns:
        A copy with `judge_answered` ∈ {correct, incorrect, null}; null also for judges
        without a candidate.
    """
    _require(table, ["judge", "question_uid", "candidate_model", "human"], "mark_answered")
    check_choice("ambiguous", ambiguous, AMBIGUOUS)
    own = table[["question_uid", "candidate_model", "human"]].drop_duplicates(
        ["question_uid", "candidate_model"]
    )
    label = {
        (q, m): ("correct" if h == "Correct" else "incorrect")
        for q, m, h in own.itertuples(index=False)
    }
    fill = None if ambiguous == "exclude" else "incorrect"
    out = table.copy()
    out["judge_answered"] = [
        label.get((q, judge_candidate[j]), fill) if j in judge_candidate else None
        for j, q in zip(out["judge"], out["question_uid"], strict=True)
    ]
    return out


def kappa_by_answered(
    table: pd.DataFrame,
    *,
    by: Sequence[str] = ("judge",),
    invalid_policy: str = "exclude",
    cluster: str = "question_uid",
    n_boot: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> pd.DataFrame:
    """Return the Table 4 layout in long form: rates overall and per answered subset.

    Only judges with a known `judge_answered` on some question are kept; `overall` covers all
    their rows. Clusters are resampled within each subset (spec 001 §4.4 step 6).

    Args:
        table: Output of `mark_answered`.
        by: Group columns (the `subset` column is added).
        invalid_policy: `exclude` or `error`.
        cluster: Column whose values are resampled.
        n_boot: Bootstrap resamples B.
        seed: Seed of the bootstrap.
        level: Confidence level.

    Returns:
        `correctness_rates` output with a `subset` column (overall, answered_correctly,
        answered_incorrectly) after the `by` columns.
    """
    _require(table, ["judge_answered", *by], "kappa_by_answered")
    judges = table.loc[table["judge_answered"].notna(), "judge"].unique()
    data = table[table["judge"].isin(judges)]
    parts = [data.assign(subset="overall")]
    for answer in ("correct", "incorrect"):
        parts.append(data[data["judge_answered"] == answer].assign(subset=f"answered_{answer}ly"))
    stacked = pd.concat(parts, ignore_index=True)
    stacked["subset"] = pd.Categorical(stacked["subset"], categories=list(SUBSETS))
    return correctness_rates(
        stacked,
        by=[*by, "subset"],
        invalid_policy=invalid_policy,
        cluster=cluster,
        n_boot=n_boot,
        seed=seed,
        level=level,
    )
