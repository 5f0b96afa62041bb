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

from judgelab.analyses.correctness.compare import check_metrics, columns, policies, two_sides
from judgelab.analyses.correctness.rates import CLUSTER, correctness_rates, groups_of
from judgelab.core import stats
from judgelab.core.schema import require_columns as _require
from judgelab.errors import check_choice

SUBSETS = ("overall", "answered_correctly", "answered_incorrectly")
AMBIGUOUS = ("exclude", "incorrect")
#: What "self" means: the judge's own model (spec 001 §4.3, default) or its model family.
SELF_LEVELS = ("model", "family")


def mark_self(
    table: pd.DataFrame,
    *,
    judge_candidate: Mapping[str, str] | None = None,
    judge_family: Mapping[str, str] | None = None,
    candidate_family: Mapping[str, str] | None = None,
    level: str = "model",
) -> pd.DataFrame:
    """Add `candidate_is_judge`: the answer comes from the judge's own model (or family).

    Spec 001 §4.3: "self" = the candidate model *is* the judge model (`level="model"`, the
    default, from `judge_candidate`). `level="family"` is the named alternative: the answer
    comes from a model of the judge's family (`judge_family`, `candidate_family`) — shown beside
    the model level, never instead of it. Every map is checked against the data: a map that
    matches nothing is an error naming what did not match (`check_maps`).

    Args:
        table: A correctness table; needs `judge` and `candidate_model`.
        judge_candidate: Judge id → the candidate model that is the same model (model level).
        judge_family: Judge id → family (family level), e.g. "Llama-7B.umass" → "llama-2".
        candidate_family: Candidate model (or a glob pattern such as "llama2-*") → family
            (family level; an exact name beats a pattern).
        level: `model` or `family`.

    Returns:
        A copy with `self_level`, `judge_self` (the judge's model / family),
        `candidate_self` (the candidate's model / family) and `candidate_is_judge` (null where
        either is unknown).

    Raises:
        ValueError: a needed map is missing or matches nothing in the data.
    """
    _require(table, ["judge", "candidate_model"], "mark_self")
    check_choice("level", level, SELF_LEVELS)
    if level == "model":
        if not judge_candidate:
            raise ValueError("mark_self(level='model') needs judge_candidate (judge -> its model)")
        check_maps(table, judge_candidate=judge_candidate)
        judge_map, cand = dict(judge_candidate), _candidate_map({})
    else:
        if not judge_family or not candidate_family:
            raise ValueError("mark_self(level='family') needs judge_family and candidate_family")
        check_maps(table, judge_family=judge_family, candidate_family=candidate_family)
        judge_map, cand = dict(judge_family), _candidate_map(candidate_family)
    out = table.copy()
    out["self_level"] = level
    out["judge_self"] = out["judge"].map(judge_map)
    out["candidate_self"] = [cand(m) for m in out["candidate_model"]]
    known = out["judge_self"].notna() & out["candidate_self"].notna()
    same = out["judge_self"] == out["candidate_self"]
    out["candidate_is_judge"] = pd.array(np.where(known, same, pd.NA), dtype="boolean")
    return out


def _candidate_map(candidate_family: Mapping[str, str]):
    """Return candidate model → its self key: the family (exact name, then glob) or the model."""

    def key(model: object) -> str | None:
        if not isinstance(model, str):
            return None
        if not candidate_family:
            return model
        if model in candidate_family:
            return candidate_family[model]
        return next((f for p, f in candidate_family.items() if fnmatchcase(model, p)), None)

    return key


def check_maps(
    table: pd.DataFrame,
    *,
    judge_candidate: Mapping[str, str] | None = None,
    judge_family: Mapping[str, str] | None = None,
    candidate_family: Mapping[str, str] | None = None,
) -> dict[str, list[str]]:
    """Check self maps against the judges and candidate models present in `table`.

    Returns the entries that match nothing (map name → entries); raises when a whole map
    matches nothing — a misspelt map would otherwise silently leave every judge out.

    Raises:
        ValueError: a non-empty map none of whose entries matches the data, naming them.
    """
    judges = set(table["judge"].dropna().astype(str))
    models = sorted(set(table["candidate_model"].dropna().astype(str)))
    unmatched: dict[str, list[str]] = {}
    if judge_candidate:
        unmatched["judge_candidate"] = [
            f"{j} -> {m}" for j, m in judge_candidate.items() if j not in judges or m not in models
        ]
    if judge_family:
        unmatched["judge_family"] = [j for j in judge_family if j not in judges]
    if candidate_family:
        unmatched["candidate_family"] = [
            p for p in candidate_family if not any(fnmatchcase(m, p) for m in models)
        ]
    given = {"judge_candidate": judge_candidate, "judge_family": judge_family,
             "candidate_family": candidate_family}  # fmt: skip
    for name, bad in unmatched.items():
        if bad and len(bad) == len(given[name] or {}):
            raise ValueError(
                f"{name} matches nothing in the data: {bad}; judges in the data: "
                f"{sorted(judges)}; candidate models: {models}"
            )
    return {k: v for k, v in unmatched.items() if v}


def self_vs_others(
    table: pd.DataFrame,
    *,
    by: Sequence[str] = ("judge",),
    metrics: Sequence[str] = ("fpr", "fnr"),
    invalid_policy: str = "exclude",
    missing_as_error: bool = True,
    cluster: str | None = CLUSTER,
    n_boot: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> pd.DataFrame:
    """Compare a rate on the judge's own answers with the same rate on other models' answers.

    Spec 001 §4.3 (Fig. 4/5). The difference self − others gets a *paired* cluster bootstrap
    (`compare.two_sides`): each replicate resamples clusters once and recomputes both rates on
    the same resampled clusters. The p-value is the two-sided bootstrap p, resolved adaptively
    (`inference.adaptive_p`; `p_bound` True = p is an upper bound). Groups with no self or no
    other rows are dropped.

    Args:
        table: Output of `mark_self`; needs `by`, `candidate_is_judge`, `human`, `verdict`.
        by: Group columns.
        metrics: Any of agreement, kappa, fpr, fnr.
        invalid_policy: `exclude` or `error` (see `correctness.rates`).
        missing_as_error: Add `invalid_policy = "error"` sensitivity rows where the invalid
            share differs between self and others (with `exclude`).
        cluster: Bootstrap unit column: the items' `cluster` by default (else `question_uid`,
            `rates.resolve_cluster`); None = i.i.d. rows (legacy).
        n_boot: Bootstrap resamples B behind the intervals.
        seed: Seed of the bootstrap.
        level: Confidence level.

    Returns:
        One row per group × metric × invalid policy: the `by` columns, `self_level` (when
        marked), `compare.columns(("self", "others"))`.
    """
    by = list(by)
    _require(table, [*by, "candidate_is_judge", "human", "verdict"], "self_vs_others")
    check_metrics(metrics)
    data = table[table["candidate_is_judge"].notna()]
    keys = by + (["self_level"] if "self_level" in data.columns and "self_level" not in by else [])
    rows = []
    for key, block in groups_of(data, keys):
        is_self = block["candidate_is_judge"].astype(bool).to_numpy()
        if is_self.all() or not is_self.any():
            continue
        for policy in policies(block, is_self, invalid_policy, missing_as_error):
            fields = two_sides(
                block,
                is_self,
                names=("self", "others"),
                metrics=metrics,
                invalid_policy=policy,
                cluster=cluster,
                n_boot=n_boot,
                rng=stats.rng_for(seed, "self", policy, *key),
                level=level,
            )
            base = dict(zip(keys, key, strict=True))
            rows += [{**base, "invalid_policy": policy, **f} for f in fields]
    return pd.DataFrame(rows, columns=[*keys, *columns(("self", "others"))])


def self_others_long(comparison: pd.DataFrame) -> pd.DataFrame:
    """Reshape `self_vs_others` output to long form for plotting: one row per side.

    Returns:
        The group columns, `metric`, `group` (self/others), `value`, `ci_low`, `ci_high`, `n`.
    """
    keys = list(comparison.columns[: list(comparison.columns).index("metric") + 1])
    keys += ["invalid_policy"] if "invalid_policy" in comparison.columns else []
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
    cluster: str | None = CLUSTER,
    n_boot: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> pd.DataFrame:
    """Return the Table 4 layout in long form: rates overall and per answered subset.

    Only judges with a known `judge_answered` on some question are kept; `overall` covers all
    their rows. Clusters are resampled within each subset (spec 001 §4.4 step 6). Every rate
    (agreement, kappa, FPR, FNR) comes with its `n`. A table without such judges gives an
    empty result (same columns). The gap between the subsets, with its interval and test,
    is `answered_gap`.

    Args:
        table: Output of `mark_answered`.
        by: Group columns (the `subset` column is added).
        invalid_policy: `exclude` or `error`.
        cluster: Bootstrap unit column (the items' `cluster`, else `question_uid`); None = rows.
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


def answered_gap(
    table: pd.DataFrame,
    *,
    by: Sequence[str] = ("judge",),
    metrics: Sequence[str] = ("kappa", "fpr", "fnr"),
    invalid_policy: str = "exclude",
    missing_as_error: bool = True,
    cluster: str | None = CLUSTER,
    n_boot: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> pd.DataFrame:
    """The §4.5 gap: a rate on questions the judge answered correctly minus incorrectly.

    Spec 001 §4.5 ("red" cells of Table 4): a cluster bootstrap over the union of both
    subsets' clusters (`compare.two_sides`; one replicate recomputes both subsets on the same
    draw), the percentile interval of the difference and its adaptive two-sided bootstrap
    p-value (`p_bound` True = an upper bound). A positive kappa gap = the judge grades worse
    where it was wrong as a candidate. FPR and FNR per subset come with their `n`.

    Args:
        table: Output of `mark_answered`.
        by: Group columns.
        metrics: Rate metrics (kappa first: the §4.5 gap).
        invalid_policy: `exclude` or `error`.
        missing_as_error: Add `invalid_policy = "error"` rows where the invalid share differs
            between the subsets (with `exclude`).
        cluster: Bootstrap unit column (the items' `cluster`, else `question_uid`); None = rows.
        n_boot: Bootstrap resamples B behind the intervals.
        seed: Seed of the bootstrap.
        level: Confidence level.

    Returns:
        One row per group × metric × invalid policy: the `by` columns,
        `compare.columns(("correctly", "incorrectly"))` (`diff` = correctly − incorrectly).
        Groups with an empty subset are left out.
    """
    by = list(by)
    _require(table, ["judge_answered", "human", "verdict", *by], "answered_gap")
    check_metrics(metrics)
    data = table[table["judge_answered"].isin(["correct", "incorrect"])]
    names = ("correctly", "incorrectly")
    rows = []
    for key, block in groups_of(data, by):
        good = (block["judge_answered"] == "correct").to_numpy()
        if good.all() or not good.any():
            continue
        for policy in policies(block, good, invalid_policy, missing_as_error):
            fields = two_sides(
                block,
                good,
                names=names,
                metrics=metrics,
                invalid_policy=policy,
                cluster=cluster,
                n_boot=n_boot,
                rng=stats.rng_for(seed, "answered", policy, *key),
                level=level,
            )
            base = dict(zip(by, key, strict=True))
            rows += [{**base, "invalid_policy": policy, **f} for f in fields]
    return pd.DataFrame(rows, columns=[*by, *columns(names)])
