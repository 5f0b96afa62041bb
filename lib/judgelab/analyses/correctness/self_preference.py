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

from judgelab.analyses.correctness.compare import (
    check_metrics,
    columns,
    mark_policy_sensitive,
    policies,
    two_sides,
)
from judgelab.analyses.correctness.rates import (
    CLUSTER,
    INFERENCE,
    INVALID_POLICIES,
    correctness_rates,
    groups_of,
)
from judgelab.core.schema import require_columns as _require
from judgelab.errors import check_choice

SUBSETS = ("overall", "answered_correctly", "answered_incorrectly")
AMBIGUOUS = ("exclude", "incorrect")
#: What "self" means: the judge's own model (spec 001 §4.3, default) or its model family.
SELF_LEVELS = ("model", "family")
#: Fewest own-model rows of a metric's denominator (own negatives for the FPR) for a test,
#: and fewest clusters holding them (`self_vs_others`); below them the row is declined.
MIN_OWN = 10
MIN_OWN_CLUSTERS = 5


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
    inference: str = "wild",
    min_own: int = MIN_OWN,
    min_own_clusters: int = MIN_OWN_CLUSTERS,
    n_boot: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> pd.DataFrame:
    """Compare a rate on the judge's own answers with the same rate on other models' answers.

    Spec 001 §4.3 (Fig. 4/5). The difference self − others is `core.estimates.difference`
    over the rows of both sides, clustered by `cluster` (own and other answers share question
    clusters): the interval inverts the restricted wild cluster bootstrap test whose p-value
    is `p_value` (`compare`; `inference="bootstrap"` is the earlier paired percentile cluster
    bootstrap with an adaptive p). Each row reports its effective clusters (`n_eff_clusters`,
    `few_clusters` below `core.clusters.FEW_EFFECTIVE`).

    A rate on own answers needs enough of them: a row whose own side holds fewer than
    `min_own` rows of the metric's denominator (own-model negatives for the FPR, positives for
    the FNR), or whose such rows sit in fewer than `min_own_clusters` clusters, gets no
    interval and no test, and `declined` says why (so does an empty other side, or an
    undefined kappa). Judges without own or without other answers are dropped.

    Invalid verdicts: with `missing_as_error` (and `invalid_policy="exclude"`), every group
    holding invalid verdicts gets a second row counting them as errors (`invalid_policy =
    "error"`); `policy_sensitive` marks the metrics whose conclusion — significant or not at
    1 − `level`, or tested or not — differs between the two rows.

    Args:
        table: Output of `mark_self`; needs `by`, `candidate_is_judge`, `human`, `verdict`.
        by: Group columns.
        metrics: Any of agreement, kappa, fpr, fnr.
        invalid_policy: `exclude` or `error` (see `correctness.rates`).
        missing_as_error: Add the `invalid_policy = "error"` rows beside `exclude`.
        cluster: Cluster column: the items' `cluster` by default (else `question_uid`,
            `rates.resolve_cluster`); None = i.i.d. rows (legacy).
        inference: `wild` (default) or `bootstrap` (the earlier default).
        min_own: Fewest own-model rows in the metric's denominator for a test.
        min_own_clusters: Fewest clusters holding them for a test.
        n_boot: Bootstrap replicates B.
        seed: Seed of the bootstrap.
        level: Confidence level.

    Returns:
        One row per group × metric × invalid policy: the `by` columns, `self_level` (when
        marked), `compare.columns(("self", "others"))`.
    """
    by = list(by)
    _require(table, [*by, "candidate_is_judge", "human", "verdict"], "self_vs_others")
    check_metrics(metrics)
    check_choice("invalid_policy", invalid_policy, INVALID_POLICIES)
    check_choice("inference", inference, INFERENCE)
    data = table[table["candidate_is_judge"].notna()]
    keys = by + (["self_level"] if "self_level" in data.columns and "self_level" not in by else [])
    rows = []
    for key, block in groups_of(data, keys):
        is_self = block["candidate_is_judge"].astype(bool).to_numpy()
        if is_self.all() or not is_self.any():
            continue
        for policy in policies(block, invalid_policy, missing_as_error):
            fields = two_sides(
                block,
                is_self,
                names=("self", "others"),
                metrics=metrics,
                invalid_policy=policy,
                cluster=cluster,
                n_boot=n_boot,
                seed=seed,
                key=("self", policy, *key),
                level=level,
                inference=inference,
                min_a=min_own,
                min_a_clusters=min_own_clusters,
                label_a="own-model",
            )
            base = dict(zip(keys, key, strict=True))
            rows += [{**base, "invalid_policy": policy, **f} for f in fields]
    out = pd.DataFrame(rows, columns=[*keys, *columns(("self", "others"))])
    out["policy_sensitive"] = mark_policy_sensitive(out, keys, level)
    return out


#: How the two invalid policies are named in `policy_sides`.
POLICY_NAMES = {"exclude": "excluded", "error": "as_errors"}


def policy_sides(comparison: pd.DataFrame, *, level: float = 0.95) -> pd.DataFrame:
    """Put a comparison's invalid policies side by side: a column per policy, and a reading.

    Issue 33 item 6: where a conclusion depends on whether invalid verdicts are excluded or
    counted as errors, the table says so. Works on `self_vs_others` and `answered_gap` output.

    Args:
        comparison: `self_vs_others` / `answered_gap` output (rows per `invalid_policy`).
        level: Confidence level of the tests (significant = p < 1 − level).

    Returns:
        One row per group × metric: the group columns, `metric`, then for each policy
        (`excluded`, `as_errors`) `diff_<p>`, `diff_low_<p>`, `diff_high_<p>`, `p_value_<p>`,
        `n_boot_p_<p>`, `declined_<p>`; `policy_sensitive` and `reading` (the conclusion in
        words).
    """
    cols = list(comparison.columns)
    keys = cols[: cols.index("metric")] + ["metric"]
    fields = ["diff", "diff_low", "diff_high", "p_value", "n_boot_p", "declined"]
    wide = None
    for policy, name in POLICY_NAMES.items():
        part = comparison.loc[comparison["invalid_policy"] == policy, [*keys, *fields]]
        part = part.rename(columns={f: f"{f}_{name}" for f in fields})
        wide = part if wide is None else wide.merge(part, on=keys, how="left", sort=False)
    assert wide is not None
    sensitive = comparison.groupby(keys, sort=False, dropna=False)["policy_sensitive"].any()
    wide = wide.merge(sensitive.reset_index(), on=keys, how="left")
    wide["reading"] = [_reading(r, 1.0 - level) for r in wide.to_dict("records")]
    return wide.reset_index(drop=True)


def _reading(r: dict, alpha: float) -> str:
    """Return the conclusion of one group × metric under both invalid policies, in words."""

    def verdict(name: str) -> str:
        declined = r.get(f"declined_{name}")
        p = r.get(f"p_value_{name}")
        if isinstance(declined, str) and declined:
            return f"no test ({declined})"
        if p is None or pd.isna(p):
            return "no row"
        b = r.get(f"n_boot_p_{name}")
        shown = f"p < {1 / b:.2g}" if p == 0 and b and b > 0 else f"p = {p:.3g}"
        return f"{'significant' if p < alpha else 'not significant'} ({shown})"

    excluded, errors = verdict("excluded"), verdict("as_errors")
    if errors == "no row":
        return f"{excluded}; no invalid verdicts, one policy"
    if not r["policy_sensitive"]:
        return f"same conclusion either way: {excluded} when excluded, {errors} as errors"
    return f"DEPENDS on invalid verdicts: {excluded} when excluded, {errors} as errors"


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
    inference: str = "wild",
    n_boot: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> pd.DataFrame:
    """Return the Table 4 layout in long form: rates overall and per answered subset.

    Only judges with a known `judge_answered` on some question are kept; `overall` covers all
    their rows. Each subset's interval uses its own clusters (spec 001 §4.4 step 6). Every rate
    (agreement, kappa, FPR, FNR) comes with its `n`. A table without such judges gives an
    empty result (same columns). The gap between the subsets, with its interval and test,
    is `answered_gap`.

    Args:
        table: Output of `mark_answered`.
        by: Group columns (the `subset` column is added).
        invalid_policy: `exclude` or `error`.
        cluster: Bootstrap unit column (the items' `cluster`, else `question_uid`); None = rows.
        inference: `wild` (default) or `bootstrap` (`correctness_rates`).
        n_boot: Bootstrap resamples B.
        seed: Seed of the bootstrap.
        level: Confidence level.

    Returns:
        `correctness_rates` output with a `subset` column (overall, answered_correctly,
        answered_incorrectly) after the `by` columns.
    """
    _require(table, ["judge_answered", *by], "kappa_by_answered")
    check_choice("inference", inference, INFERENCE)
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
        inference=inference,
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
    inference: str = "wild",
    n_boot: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> pd.DataFrame:
    """The §4.5 gap: a rate on questions the judge answered correctly minus incorrectly.

    Spec 001 §4.5 ("red" cells of Table 4): `core.estimates.difference` over the rows of both
    subsets with the clusters as units (`compare`; kappa through its linearization), the
    interval that inverts its restricted wild cluster bootstrap test and that test's p-value
    (`inference="bootstrap"`: the earlier percentile cluster bootstrap with an adaptive p).
    A positive kappa gap = the judge grades worse where it was wrong as a candidate. FPR and
    FNR per subset come with their `n`; a subset without rows of a metric's denominator (or
    an undefined kappa) gives a row with no test and the reason in `declined`.

    Kappa (issue 33): the linearized wild test alone rejected a true null 5–10 % of the time
    at 5 % on the calibration grid; its interval is now joined with a delete-one-cluster
    jackknife t(G − 1) interval (`compare`: the union, p the larger of the two), and a side
    with fewer than `compare.MIN_KAPPA_CLASS` answers of a human label gets no test
    (declined with the reason). Measured (R = 400 per cell and hypothesis): type-I 0.011–0.083
    per cell, pooled 4.6 %, coverage 0.954 / 0.957 (null / alternative); the hardest cells at
    R = 1,600: 0.056–0.067 (balanced, 15 clusters and n = 240, or 50 clusters and n = 100).

    Args:
        table: Output of `mark_answered`.
        by: Group columns.
        metrics: Rate metrics (kappa first: the §4.5 gap).
        invalid_policy: `exclude` or `error`.
        missing_as_error: Add `invalid_policy = "error"` rows beside `exclude` where the
            group holds invalid verdicts (`policy_sensitive` marks a changed conclusion).
        cluster: Cluster column (the items' `cluster`, else `question_uid`); None = rows.
        inference: `wild` (default) or `bootstrap` (the earlier default).
        n_boot: Bootstrap replicates B.
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
    check_choice("invalid_policy", invalid_policy, INVALID_POLICIES)
    check_choice("inference", inference, INFERENCE)
    data = table[table["judge_answered"].isin(["correct", "incorrect"])]
    names = ("correctly", "incorrectly")
    rows = []
    for key, block in groups_of(data, by):
        good = (block["judge_answered"] == "correct").to_numpy()
        if good.all() or not good.any():
            continue
        for policy in policies(block, invalid_policy, missing_as_error):
            fields = two_sides(
                block,
                good,
                names=names,
                metrics=metrics,
                invalid_policy=policy,
                cluster=cluster,
                n_boot=n_boot,
                seed=seed,
                key=("answered", policy, *key),
                level=level,
                inference=inference,
            )
            base = dict(zip(by, key, strict=True))
            rows += [{**base, "invalid_policy": policy, **f} for f in fields]
    out = pd.DataFrame(rows, columns=[*by, *columns(names)])
    out["policy_sensitive"] = mark_policy_sensitive(out, by, level)
    return out
