"""Item outcomes: the two presentation orders of every pairwise item, paired (spec 000 §4.1).

Conventions of the judgments table: `order` 0 shows `response_pos` as A (first, "Run 1"),
`order` 1 shows it as B ("Run 2"); `chosen` is un-swapped (pos/neg/tie, null when the output
is invalid); `correct` is null when the item has no gold label. The unit of analysis is an
*item*: one row per judge × group keys × item × sample. When the judgments carry a `cluster`
column (the resampling unit: a source, a question; `core.clusters`), every outcome row keeps
its item's cluster, so `pairwise_rates` and `compare_judges` resample clusters.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
import pandas as pd

from judgelab.analyses.pairwise import lazy
from judgelab.analyses.pairwise.coverage_layout import coverage_frame
from judgelab.core.schema import require_columns as _require
from judgelab.errors import check_choice

GROUPS: tuple[str, ...] = ("judge", "benchmark", "split")
INVALID_POLICIES = ("repo", "strict")
CATEGORIES = ("consistent", "biased_first", "biased_second", "inconsistent_tie", "invalid")
#: The optional resampling-unit column carried from the judgments (never a group column).
CLUSTER = "cluster"

#: The nullable boolean outcome columns of `item_outcomes`.
BOOLEAN_OUTCOMES = (
    "correct_0",
    "correct_1",
    "consistent",
    "consistently_correct",
    "optimistically_correct",
    "both_invalid",
)
OUTCOME_COLUMNS = (
    "item_id",
    "sample",
    "complete",
    "chosen_0",
    "chosen_1",
    "has_gold",
    *BOOLEAN_OUTCOMES,
    "picks_a",
    "decisive",
    "category",
)
_CODES = {"pos": 1, "neg": 2, "tie": 3}
_NAMES = np.array([None, "pos", "neg", "tie", "invalid"], dtype=object)
_MISSING, _POS, _NEG, _TIE, _INVALID = 0, 1, 2, 3, 4


class _Verdicts(NamedTuple):
    """Per unit and order: the verdict code, whether it is correct; per unit: gold known."""

    chosen: np.ndarray  # (2, n) int8 verdict codes, _MISSING where the order is absent
    right: np.ndarray  # (2, n) bool
    has_gold: np.ndarray  # (n,) bool


def select_judges(judgments: pd.DataFrame, judges: Sequence[str] = ()) -> pd.DataFrame:
    """Return the rows of the named judges (all rows when `judges` is empty).

    Raises:
        ValueError: a named judge has no rows (the message lists the known judges).
    """
    _require(judgments, ["judge"], "select_judges")
    if not judges:
        return judgments
    known = set(judgments["judge"].unique())
    unknown = [j for j in judges if j not in known]
    if unknown:
        raise ValueError(f"unknown judge(s) {unknown}; known: {sorted(known)}")
    return judgments[judgments["judge"].isin(list(judges))].reset_index(drop=True)


def item_outcomes(
    judgments: pd.DataFrame,
    *,
    groups: Sequence[str] = GROUPS,
    invalid_policy: str = "repo",
    cluster: str | None = CLUSTER,
) -> pd.DataFrame:
    """Pair the two orders of every item: one row per group keys × item × sample.

    A verdict is *invalid* when `valid` is False or `chosen` is null. Position A is the first
    response shown: in order 0 it is `response_pos`, in order 1 `response_neg`.

    Args:
        judgments: A judgments table; needs the `groups` columns and `item_id`, `sample`,
            `order`, `valid`, `chosen`, `correct`.
        groups: Columns that identify a group (must include `judge`). Every (group, item,
            sample, order) must occur at most once; add `condition` when a judge was run under
            several conditions.
        invalid_policy: `repo` (two invalid outputs count as consistent, as the released
            ContextualJudgeBench code does) or `strict` (an invalid output is never consistent).
        cluster: Column of `judgments` holding each item's resampling unit, copied into the
            outcomes as `cluster` (first non-empty value of the unit's rows) when present;
            None leaves it out (the bootstrap then resamples items).

    Returns:
        One row per unit, in order of first appearance in `judgments`: the `groups` columns,
        `item_id`, `sample`, `cluster` (only when carried), and:
        `complete` (both orders present; the remaining columns are null otherwise),
        `chosen_0`, `chosen_1` (pos/neg/tie/invalid per order; null when the order is missing),
        `has_gold` (some row of the item carries a non-null `correct`),
        `correct_0`, `correct_1` (null without gold; an invalid verdict is incorrect),
        `consistent` (same verdict in both orders, per `invalid_policy`),
        `consistently_correct` (correct in both orders; CA), `optimistically_correct`
        (correct in at least one; OA), `both_invalid`, `picks_a` (0-2 verdicts for position A),
        `decisive` (0-2 valid non-tie verdicts), and `category`: `consistent` (same valid
        verdict twice, tie-tie included), `biased_first` (position A both times),
        `biased_second` (position B both times), `inconsistent_tie` (a tie against a choice),
        `invalid` (at least one invalid verdict), or `incomplete`.
        A polars LazyFrame (a large source, `catalog.LAZY_ROWS`) gives a `lazy.LazyOutcomes`
        instead, which `pairwise_rates` and `coverage` reduce in polars (same numbers).
    """
    groups = list(groups)
    if "judge" not in groups:
        raise ValueError(f"groups must include 'judge', got {groups}")
    check_choice("invalid_policy", invalid_policy, INVALID_POLICIES)
    needed = [*groups, "item_id", "sample", "order", "valid", "chosen", "correct"]
    if lazy.is_lazy(judgments):  # a large source: nothing is read until the rates
        lazy.require_columns(judgments, needed, "item_outcomes")
        return lazy.LazyOutcomes(judgments, tuple(groups), invalid_policy, cluster, {})
    _require(judgments, needed, "item_outcomes")
    units = [*groups, "item_id", "sample"]
    carry = cluster is not None and cluster in judgments.columns and cluster not in units
    df = judgments[list(dict.fromkeys(needed + ([cluster] if carry else [])))]
    _check_unique(df, units, groups)
    if df.empty:
        return pd.DataFrame(columns=[*groups, *OUTCOME_COLUMNS])
    code = df.groupby(units, sort=False, observed=True, dropna=False).ngroup().to_numpy()
    n = int(code.max()) + 1
    first = np.full(n, -1, dtype=np.int64)
    first[code[::-1]] = np.arange(len(code))[::-1]
    out = df.iloc[first][units].reset_index(drop=True)
    if carry:
        out[CLUSTER] = _unit_cluster(df[cluster], code, n)
    return _add_outcomes(out, _verdicts(df, code, n), invalid_policy)


def _unit_cluster(values: pd.Series, code: np.ndarray, n: int) -> np.ndarray:
    """Return the first non-empty cluster value of each unit (None where it has none)."""
    v = values.astype("string")
    ok = (v.notna() & (v != "")).to_numpy()
    out = np.full(n, None, dtype=object)
    idx = np.flatnonzero(ok)[::-1]
    out[code[idx]] = v.to_numpy(dtype=object)[idx]
    return out


def _check_unique(df: pd.DataFrame, units: list[str], groups: list[str]) -> None:
    """Raise when a (unit, order) occurs twice: a group column is missing from `groups`."""
    dup = df.duplicated(subset=[*units, "order"])
    if dup.any():
        row = df[dup].iloc[0]
        key = ", ".join(f"{c}={row[c]!r}" for c in [*units, "order"])
        raise ValueError(
            f"item_outcomes: several judgments for {key}; add the distinguishing column "
            f"(e.g. 'condition') to groups {groups} or filter the table first"
        )


def _verdicts(df: pd.DataFrame, code: np.ndarray, n: int) -> _Verdicts:
    """Scatter each row's verdict code and correctness into its unit × order cell."""
    order = df["order"].to_numpy(dtype=np.int64)
    valid = df["valid"].astype("boolean").fillna(False).to_numpy(dtype=bool)
    chosen_raw = df["chosen"].astype(object).map(_CODES).to_numpy(dtype=float, na_value=np.nan)
    verdict = np.where(valid & ~np.isnan(chosen_raw), np.nan_to_num(chosen_raw), _INVALID)
    correct_raw = df["correct"].astype("boolean")
    has_correct = correct_raw.notna().to_numpy()
    is_correct = correct_raw.fillna(False).to_numpy(dtype=bool)

    chosen = np.zeros((2, n), dtype=np.int8)
    right = np.zeros((2, n), dtype=bool)
    has_gold = np.zeros(n, dtype=bool)
    for o in (0, 1):
        m = order == o
        chosen[o, code[m]] = verdict[m]
        right[o, code[m]] = is_correct[m]
    np.logical_or.at(has_gold, code, has_correct)
    return _Verdicts(chosen, right, has_gold)


def _nullable(values: np.ndarray, mask: np.ndarray) -> pd.Series:
    """Return `values` as a nullable boolean Series, null where `mask` is False."""
    return pd.Series(pd.array(values, dtype="boolean")).mask(~mask)


def _add_outcomes(out: pd.DataFrame, v: _Verdicts, invalid_policy: str) -> pd.DataFrame:
    """Add the outcome columns of `item_outcomes` to the unit keys `out`."""
    c0, c1 = v.chosen
    right, has_gold = v.right, v.has_gold
    complete = (c0 != _MISSING) & (c1 != _MISSING)
    inv0, inv1 = c0 == _INVALID, c1 == _INVALID
    any_inv = inv0 | inv1
    both_inv = inv0 & inv1
    same_valid = ~any_inv & (c0 == c1)
    first_both = (c0 == _POS) & (c1 == _NEG)
    second_both = (c0 == _NEG) & (c1 == _POS)
    consistent = same_valid | both_inv if invalid_policy == "repo" else same_valid
    category = np.select(
        [~complete, any_inv, same_valid, first_both, second_both],
        ["incomplete", "invalid", "consistent", "biased_first", "biased_second"],
        default="inconsistent_tie",
    )
    gold = complete & has_gold
    out["complete"] = complete
    out["chosen_0"] = _NAMES[c0]
    out["chosen_1"] = _NAMES[c1]
    out["has_gold"] = has_gold
    out["correct_0"] = _nullable(right[0], gold)
    out["correct_1"] = _nullable(right[1], gold)
    out["consistent"] = _nullable(consistent, complete)
    out["consistently_correct"] = _nullable(right[0] & right[1], gold)
    out["optimistically_correct"] = _nullable(right[0] | right[1], gold)
    out["both_invalid"] = _nullable(both_inv, complete)
    picks_a = (c0 == _POS).astype(int) + (c1 == _NEG).astype(int)
    decisive = np.isin(c0, (_POS, _NEG)).astype(int) + np.isin(c1, (_POS, _NEG)).astype(int)
    out["picks_a"] = pd.array(np.where(complete, picks_a, 0), dtype="Int64")
    out["decisive"] = pd.array(np.where(complete, decisive, 0), dtype="Int64")
    out.loc[~complete, ["picks_a", "decisive"]] = pd.NA
    out["category"] = category
    return out


def group_columns(outcomes: pd.DataFrame) -> list[str]:
    """Return the group columns of an `item_outcomes` frame (those before `item_id`)."""
    _require(outcomes, OUTCOME_COLUMNS, "pairwise metrics need item_outcomes(...) output;")
    return [c for c in outcomes.columns if c not in OUTCOME_COLUMNS and c != CLUSTER]


def coverage(
    outcomes: pd.DataFrame, items: pd.DataFrame, *, keys: Sequence[str] = ("benchmark", "split")
) -> pd.DataFrame:
    """Count, per judge × `keys` × sample, the items judged in both orders, in one, or never.

    Returns:
        The group columns (`judge`, `keys`), `sample`, `n_items_table` (items of the items
        table in that group), `n_complete`, `n_incomplete`, `n_missing` (items of the table
        with no judgment), `n_unknown` (judged items absent from the items table).
    """
    if lazy.is_lazy(outcomes):
        return lazy.coverage(outcomes, items, keys)
    keys = list(keys)
    _require(items, [*keys, "item_id"], "coverage items")
    _require(outcomes, ["judge", *keys, "item_id", "sample", "complete"], "coverage outcomes")
    table = items[[*keys, "item_id"]].drop_duplicates()
    expected = table.groupby(keys, sort=True).size().rename("n_items_table")
    counts = ["n_items_table", "n_complete", "n_incomplete", "n_missing", "n_unknown"]
    cols = ["judge", *keys, "sample", *counts]
    rows = [
        _coverage_block(block, table, expected, keys, judge, sample)
        for (judge, sample), block in outcomes.groupby(["judge", "sample"], sort=True)
    ]
    if not rows:
        return pd.DataFrame(columns=cols)
    out = pd.concat(rows, ignore_index=True)[cols]
    for c in counts:
        out[c] = out[c].astype(int)
    return out


def _coverage_block(
    block: pd.DataFrame,
    table: pd.DataFrame,
    expected: pd.Series,
    keys: list[str],
    judge: object,
    sample: object,
) -> pd.DataFrame:
    """Return the coverage counts of one judge × sample, one row per `keys` group."""
    known = block.merge(table, on=[*keys, "item_id"], how="left", indicator=True)
    in_table = known["_merge"] == "both"
    per = (
        known.assign(
            complete=known["complete"].astype(bool) & in_table,
            incomplete=~known["complete"].astype(bool) & in_table,
            unknown=~in_table,
        )
        .groupby(keys, sort=True)[["complete", "incomplete", "unknown"]]
        .sum()
    )
    return coverage_frame(per, expected, judge, sample, keys)
