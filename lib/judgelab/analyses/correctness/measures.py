"""Card measures of the correctness family: agreement with humans, self-preference, answerability.

Registered with `judgelab.analyses.registry.measure`; the report card runs them. Pointwise
judges are graded once per judge: verdicts and gold mapped to Correct/Incorrect through the
card's `label_map`, each graded answer given the bootstrap cluster of its question (cached per
judge). Pairwise judges get the symmetrized pairwise kappa only.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from judgelab.analyses import correctness
from judgelab.analyses.correctness.table import item_clusters
from judgelab.analyses.registry import CardContext, measure, na, rows, unmet

FAMILY = "correctness"
#: Why a pairwise judge has no measure that grades known candidates' answers.
NO_GRADING = "needs Correct/Incorrect grading of known candidates' answers"


def _map_labels(frame: pd.DataFrame, column: str, label_map: Mapping[str, str]) -> pd.Series:
    return frame[column].astype(object).map(lambda v: v if pd.isna(v) else label_map.get(v, v))


def with_clusters(ctable: pd.DataFrame, items: pd.DataFrame) -> pd.DataFrame:
    """Return `ctable` with `cluster`, the bootstrap unit of the correctness measures.

    `correctness_table` already carries it (`table.item_clusters`: the items' `cluster`, else
    the question, else the context, else the item); older tables get it from `items`.
    """
    if "cluster" in ctable.columns:
        return ctable
    keys = ["benchmark", "split", "item_id"]
    it = items[keys].astype(str).assign(cluster=item_clusters(items))
    return ctable.merge(it, on=keys, how="left", validate="many_to_one")


def graded(ctx: CardContext) -> tuple[pd.DataFrame | None, str]:
    """Return the judge's graded answers with clusters, or None and why (cached per judge)."""

    def build() -> tuple[pd.DataFrame | None, str]:
        label_map = ctx.options.label_map
        items = ctx.items.assign(gold=_map_labels(ctx.items, "gold", label_map))
        own = ctx.own.assign(verdict=_map_labels(ctx.own, "verdict", label_map))
        try:
            table = correctness.correctness_table(items, own, judges=[ctx.judge])
            ctable = with_clusters(table, ctx.items)
        except ValueError as exc:
            return None, f"labels are not Correct/Incorrect (give label_map): {exc}"
        if ctable.empty:
            return None, "no human labels for this judge's items"
        return ctable, ""

    return ctx.cached("correctness.graded", build)


def _rates(ctx: CardContext, metric: str) -> list[dict]:
    """Return one metric of the judge's correctness rates as card rows (scope: the metric)."""
    ctable, why = graded(ctx)
    if ctable is None:
        return na(why)
    crates = ctx.cached(
        "correctness.rates", lambda: correctness.correctness_rates(ctable, **ctx.boot)
    )
    part = crates[crates["metric"] == metric]
    return rows(part.assign(scope=metric), headline=metric)


@measure(
    "kappa_human",
    family=FAMILY,
    label="Kappa vs humans",
    doc="Cohen's kappa with the gold / human labels",
    direction="higher",
)
def kappa_human(ctx: CardContext) -> list[dict]:
    """Cohen's kappa with the human labels (pairwise judges: the symmetrized pairwise kappa)."""
    if not ctx.pairwise:
        return _rates(ctx, "kappa")
    why = unmet(ctx, "gold")
    if why is not None:
        return na(why)
    final = correctness.pairwise_final(ctx.own, groups=("judge", "benchmark", "split"))
    kap = correctness.pairwise_kappa(final, **ctx.boot)
    return rows(kap.assign(scope="pairwise"), headline="pairwise")


@measure(
    "agreement_human",
    family=FAMILY,
    label="Agreement with humans",
    doc="share of verdicts equal to the human label",
    needs=("pointwise",),
    direction="higher",
)
def agreement_human(ctx: CardContext) -> list[dict]:
    """Share of verdicts equal to the human label."""
    return _rates(ctx, "agreement")


@measure(
    "fpr",
    family=FAMILY,
    label="FPR",
    doc="says Correct (Consistent) when the human says Incorrect (Hallucinated)",
    needs=("pointwise",),
    direction="lower",
)
def false_positive_rate(ctx: CardContext) -> list[dict]:
    """Share of human-Incorrect answers the judge calls Correct."""
    return _rates(ctx, "fpr")


@measure(
    "fnr",
    family=FAMILY,
    label="FNR",
    doc="says Incorrect (Hallucinated) when the human says Correct (Consistent)",
    needs=("pointwise",),
    direction="lower",
)
def false_negative_rate(ctx: CardContext) -> list[dict]:
    """Share of human-Correct answers the judge calls Incorrect."""
    return _rates(ctx, "fnr")


#: Scope of the sensitivity rows that count invalid verdicts as errors.
AS_ERRORS = " (invalid as errors)"


def _notes(frame: pd.DataFrame, stems: tuple[str, str], level: float) -> list[str]:
    """Return each comparison row's note: both sides, declines, few clusters, the policy."""
    a, b = stems
    notes = []
    for r in frame.itertuples(index=False):
        r = r._asdict()
        parts = [f"{a} {r[a]:.3f} vs {b} {r[b]:.3f}"]
        if r["declined"]:
            parts.append(f"no test: {r['declined']}")
        elif r["few_clusters"]:
            parts.append(f"uncertain: few effective clusters ({r['n_eff_clusters']:.1f})")
        if r["policy_sensitive"]:
            other = frame[(frame["metric"] == r["metric"])
                          & (frame["invalid_policy"] != r["invalid_policy"])]  # fmt: skip
            p_other = float(other["p_value"].iloc[0]) if len(other) else float("nan")
            parts.append(
                f"conclusion depends on the invalid policy at α = {1 - level:g}: p = "
                f"{r['p_value']:.3g} ({_policy_words(r['invalid_policy'])}) vs "
                f"{p_other:.3g} ({_policy_words(str(other['invalid_policy'].iloc[0]))})"
            )
        if r["p_bound"]:
            parts.append("p is a bound")
        notes.append("; ".join(parts))
    return notes


def _policy_words(policy: str) -> str:
    return "invalid excluded" if policy == "exclude" else "invalid counted as errors"


def _comparison_rows(frame: pd.DataFrame, stems: tuple[str, str], level: float) -> list[dict]:
    """Return the card frame of a two-sided comparison: scope, value, interval, n and note."""
    frame = frame.reset_index(drop=True)
    a, b = stems
    card = frame.assign(
        scope=frame["metric"] + np.where(frame["invalid_policy"] == "error", AS_ERRORS, ""),
        value=frame["diff"],
        ci_low=frame["diff_low"],
        ci_high=frame["diff_high"],
        n=frame[f"n_{a}"] + frame[f"n_{b}"],
        note=_notes(frame, stems, level),
    )
    return card


@measure(
    "self_gap",
    family=FAMILY,
    label="Self − others FPR",
    doc="FPR on its own model's answers minus on others' (wild cluster bootstrap CI and test)",
    needs=("pointwise",),
    unmet={"pointwise": NO_GRADING},
    direction="abs",
)
def self_gap(ctx: CardContext) -> list[dict]:
    """Self-preference: each rate on its own model's answers minus on others' (spec 001 §4.3).

    "Self" is the judge's own model (`judge_candidate`); the family level is a notebook option
    (05), not the card's headline. The light reads the test (`p_value`), not the estimate.
    Too few own-model negatives (or clusters holding them) give no test and no light, the
    reason in the note; where the judge has invalid verdicts, rows counting them as errors
    (scope "<metric> (invalid as errors)") sit beside the default, and a conclusion that
    differs between the two says so in both notes.
    """
    ctable, why = graded(ctx)
    if ctable is None:
        return na(why)
    opts = ctx.options
    if ctx.judge not in opts.judge_candidate:
        return na("no own candidate model given for this judge (judge_candidate)")
    try:
        marked = correctness.mark_self(ctable, judge_candidate=opts.judge_candidate)
    except ValueError as exc:
        return na(str(exc))
    sv = correctness.self_vs_others(marked, **ctx.boot)
    if sv.empty:
        return na("none of the graded answers is from its own model")
    return _with_declines(_comparison_rows(sv, ("self", "others"), ctx.boot["level"]), "fpr")


def _with_declines(card: pd.DataFrame, headline: str) -> list[dict]:
    """Return card rows; a declined row (no test) is n/a, so it gets no light."""
    out = rows(card, headline=headline)
    for r, declined in zip(out, card["declined"], strict=True):
        if declined:
            r["status"] = "n/a"
    return out


def _answered(ctx: CardContext) -> tuple[pd.DataFrame | None, str]:
    """Return the judge's graded answers marked by whether it answered right, or None and why."""
    ctable, why = graded(ctx)
    if ctable is None:
        return None, why
    if ctx.judge not in ctx.options.judge_candidate:
        return None, "the judge was not an exam-taker of this source (judge_candidate)"
    return correctness.mark_answered(ctable, judge_candidate=ctx.options.judge_candidate), ""


def _by_answered(ctx: CardContext) -> tuple[pd.DataFrame | None, str]:
    """Return the judge's kappa per answered subset, or None and why (cached per judge)."""

    def build() -> tuple[pd.DataFrame | None, str]:
        marked, why = _answered(ctx)
        if marked is None:
            return None, why
        ka = correctness.kappa_by_answered(marked, **ctx.boot)
        return ka[ka["metric"] == "kappa"], ""

    return ctx.cached("correctness.by_answered", build)


@measure(
    "kappa_answered",
    family=FAMILY,
    label="Kappa by answered",
    doc="kappa on questions it answered right / wrong",
    needs=("pointwise",),
    unmet={"pointwise": NO_GRADING},
    direction="higher",
)
def kappa_answered(ctx: CardContext) -> list[dict]:
    """Kappa on the questions the judge answered right, wrong, and overall."""
    ka, why = _by_answered(ctx)
    if ka is None:
        return na(why)
    return rows(ka.assign(scope=ka["subset"].astype(str)), headline="overall")


def _gap(ctx: CardContext) -> tuple[pd.DataFrame | None, str]:
    """Return the judge's §4.5 kappa gap with interval and test, or None and why (cached)."""

    def build() -> tuple[pd.DataFrame | None, str]:
        marked, why = _answered(ctx)
        if marked is None:
            return None, why
        gap = correctness.answered_gap(marked, metrics=("kappa",), **ctx.boot)
        if gap.empty:
            return None, "one answered subset is empty"
        return gap, ""

    return ctx.cached("correctness.answered_gap", build)


@measure(
    "answered_gap",
    family=FAMILY,
    label="Answered gap",
    doc="kappa(answered correctly) − kappa(answered incorrectly), wild cluster bootstrap CI "
    "and test",
    needs=("pointwise",),
    unmet={"pointwise": NO_GRADING},
    direction="abs",
)
def answered_gap(ctx: CardContext) -> list[dict]:
    """Kappa on questions answered correctly minus on those answered incorrectly (§4.5).

    The interval and the p-value come from one restricted wild cluster bootstrap over both
    subsets' clusters (`correctness.answered_gap`, kappa linearized); the light reads the
    test, not the estimate. The headline counts invalid verdicts out; where there are any, a
    row counting them as errors sits beside it (a changed conclusion is noted in both).
    """
    gap, why = _gap(ctx)
    if gap is None:
        return na(why)
    card = _comparison_rows(gap, ("correctly", "incorrectly"), ctx.boot["level"])
    card["scope"] = np.where(
        card["invalid_policy"] == "error", "correctly − incorrectly" + AS_ERRORS,
        "correctly − incorrectly",
    )  # fmt: skip
    return _with_declines(card, "correctly − incorrectly")
