"""Pairwise judge metrics from judgments in both presentation orders, with uncertainty.

Definitions follow ContextualJudgeBench (spec 000 §4.1-4.3, §4.7) and the MT-Bench consistency
categories. Conventions of the judgments table: `order` 0 shows `response_pos` as A (first,
"Run 1"), `order` 1 shows it as B ("Run 2"); `chosen` is un-swapped (pos/neg/tie, null when
the output is invalid); `correct` is null when the item has no gold label.

The unit of analysis is an *item* (one row per judge × group keys × item × sample):

1. `item_outcomes` pairs the two orders of every item;
2. `pairwise_rates` turns them into rates per (judge, group, sample), each with a seeded
   percentile bootstrap interval over items and a Wilson interval, plus the two averages across
   splits ("pooled" over items and "mean_of_splits");
3. `leaderboard`, `position_preference`, `consistency_categories`, `run_stability` and
   `compare_judges` reshape or extend those rates for the notebooks.

Rates are fractions in [0, 1]; notebooks show them in percent.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations
from typing import Any

import numpy as np
import pandas as pd

from judgelab.core import stats
from judgelab.core.schema import require_columns as _require

GROUPS: tuple[str, ...] = ("judge", "benchmark", "split")
INVALID_POLICIES = ("repo", "strict")
POOLED = "pooled"
MEAN_OF_SPLITS = "mean_of_splits"
AGGREGATIONS = (POOLED, MEAN_OF_SPLITS)
CATEGORIES = ("consistent", "biased_first", "biased_second", "inconsistent_tie", "invalid")

#: metric → (numerator column, denominator column, Wilson applies) in `item_outcomes` terms.
#: A rate is Σ numerator / Σ denominator over the complete items of a group.
METRICS: dict[str, tuple[str, str, bool]] = {
    "a1": ("correct_0", "has_gold", True),
    "a2": ("correct_1", "has_gold", True),
    "ca": ("consistently_correct", "has_gold", True),
    "oa": ("optimistically_correct", "has_gold", True),
    "cons": ("consistent", "complete", True),
    "run_gap": ("run_gap", "has_gold", False),
    "pos_a_rate": ("picks_a", "decisive", True),
    "share_consistent": ("is_consistent", "complete", True),
    "share_biased_first": ("is_biased_first", "complete", True),
    "share_biased_second": ("is_biased_second", "complete", True),
    "share_inconsistent_tie": ("is_inconsistent_tie", "complete", True),
    "share_invalid": ("is_invalid", "complete", True),
    "both_invalid": ("both_invalid", "complete", True),
    "invalid_0": ("invalid_0", "complete", True),
    "invalid_1": ("invalid_1", "complete", True),
}

_OUTCOME_COLUMNS = (
    "item_id",
    "sample",
    "complete",
    "chosen_0",
    "chosen_1",
    "has_gold",
    "correct_0",
    "correct_1",
    "consistent",
    "consistently_correct",
    "optimistically_correct",
    "both_invalid",
    "picks_a",
    "decisive",
    "category",
)
_CODES = {"pos": 1, "neg": 2, "tie": 3}
_NAMES = np.array([None, "pos", "neg", "tie", "invalid"], dtype=object)
_MISSING, _POS, _NEG, _TIE, _INVALID = 0, 1, 2, 3, 4


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

    Returns:
        One row per unit, in order of first appearance in `judgments`: the `groups` columns,
        `item_id`, `sample`, and:
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
    """
    groups = list(groups)
    if "judge" not in groups:
        raise ValueError(f"groups must include 'judge', got {groups}")
    if invalid_policy not in INVALID_POLICIES:
        raise ValueError(
            f"invalid_policy must be one of {INVALID_POLICIES}, got {invalid_policy!r}"
        )
    needed = [*groups, "item_id", "sample", "order", "valid", "chosen", "correct"]
    _require(judgments, needed, "item_outcomes")
    units = [*groups, "item_id", "sample"]
    df = judgments[list(dict.fromkeys(needed))]
    dup = df.duplicated(subset=[*units, "order"])
    if dup.any():
        row = df[dup].iloc[0]
        key = ", ".join(f"{c}={row[c]!r}" for c in [*units, "order"])
        raise ValueError(
            f"item_outcomes: several judgments for {key}; add the distinguishing column "
            f"(e.g. 'condition') to groups {groups} or filter the table first"
        )
    if df.empty:
        return pd.DataFrame(columns=[*groups, *_OUTCOME_COLUMNS])

    code = df.groupby(units, sort=False, observed=True, dropna=False).ngroup().to_numpy()
    n = int(code.max()) + 1
    first = np.full(n, -1, dtype=np.int64)
    first[code[::-1]] = np.arange(len(code))[::-1]
    out = df.iloc[first][units].reset_index(drop=True)

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

    c0, c1 = chosen
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

    def nullable(values: np.ndarray, mask: np.ndarray) -> pd.Series:
        return pd.Series(pd.array(values, dtype="boolean")).mask(~mask)

    out["complete"] = complete
    out["chosen_0"] = _NAMES[c0]
    out["chosen_1"] = _NAMES[c1]
    out["has_gold"] = has_gold
    out["correct_0"] = nullable(right[0], gold)
    out["correct_1"] = nullable(right[1], gold)
    out["consistent"] = nullable(consistent, complete)
    out["consistently_correct"] = nullable(right[0] & right[1], gold)
    out["optimistically_correct"] = nullable(right[0] | right[1], gold)
    out["both_invalid"] = nullable(both_inv, complete)
    picks_a = (c0 == _POS).astype(int) + (c1 == _NEG).astype(int)
    decisive = np.isin(c0, (_POS, _NEG)).astype(int) + np.isin(c1, (_POS, _NEG)).astype(int)
    out["picks_a"] = pd.array(np.where(complete, picks_a, 0), dtype="Int64")
    out["decisive"] = pd.array(np.where(complete, decisive, 0), dtype="Int64")
    out.loc[~complete, ["picks_a", "decisive"]] = pd.NA
    out["category"] = category
    return out


def _group_columns(outcomes: pd.DataFrame) -> list[str]:
    """Return the group columns of an `item_outcomes` frame (those before `item_id`)."""
    _require(outcomes, _OUTCOME_COLUMNS, "pairwise metrics need item_outcomes(...) output;")
    return [c for c in outcomes.columns if c not in _OUTCOME_COLUMNS]


def _value_matrix(outcomes: pd.DataFrame) -> tuple[np.ndarray, list[str]]:
    """Return per-item numerator/denominator columns (0 for incomplete items) and their names."""
    f = {}
    complete = outcomes["complete"].to_numpy(dtype=bool)
    f["complete"] = complete.astype(float)
    f["has_gold"] = (complete & outcomes["has_gold"].to_numpy(dtype=bool)).astype(float)
    for col in (
        "correct_0",
        "correct_1",
        "consistent",
        "consistently_correct",
        "optimistically_correct",
        "both_invalid",
    ):
        f[col] = outcomes[col].astype("boolean").fillna(False).to_numpy(dtype=float)
    f["run_gap"] = f["correct_1"] - f["correct_0"]
    f["picks_a"] = outcomes["picks_a"].astype("Float64").fillna(0).to_numpy(dtype=float)
    f["decisive"] = outcomes["decisive"].astype("Float64").fillna(0).to_numpy(dtype=float)
    category = outcomes["category"].to_numpy()
    for cat in CATEGORIES:
        f[f"is_{cat}"] = (category == cat).astype(float)
    c0, c1 = outcomes["chosen_0"].to_numpy(), outcomes["chosen_1"].to_numpy()
    f["invalid_0"] = (complete & (c0 == "invalid")).astype(float)
    f["invalid_1"] = (complete & (c1 == "invalid")).astype(float)
    names = list(f)
    return np.column_stack([f[k] for k in names]), names


def pairwise_rates(
    outcomes: pd.DataFrame,
    *,
    across: str | None = "split",
    n_boot: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> pd.DataFrame:
    """Return every pairwise rate per (group, sample) with bootstrap and Wilson intervals.

    Rates (fractions; numerator / denominator summed over the complete items of a group):
    `a1`, `a2` (accuracy in order 0 / order 1), `ca` (consistent accuracy), `oa` (optimistic
    accuracy) — over items with gold, NaN when there is none; `cons` (consistency, per the
    invalid policy of `item_outcomes`) over complete items; `run_gap` = a2 − a1 (> 0: the
    judge favours the second position, spec §4.7); `pos_a_rate`, the **position-A preference
    rate**: of all valid non-tie verdicts in both orders, the share that picks the response
    shown first (order 0 choosing pos, order 1 choosing neg), 0.5 = no position preference;
    `share_<category>` for the `CATEGORIES` of `item_outcomes` (they sum to 1); `both_invalid`;
    `invalid_0`, `invalid_1` (invalid rate per order). Items lacking an order are excluded and
    counted in `n_incomplete`.

    Intervals: `ci_low`/`ci_high` are percentile intervals of a bootstrap over items (B =
    `n_boot`), one resample per group shared by all its rates, seeded by `seed` and the group
    key (reproducible; independent of which other groups are present). `wilson_low`/
    `wilson_high` treat k of n as binomial (for `pos_a_rate` the trials are verdicts, two per
    item, so Wilson is optimistic there; `run_gap` has none).

    Averages across `across` (default the split) are added per remaining group key:
    `pooled` (Σ numerators / Σ denominators over all items, ContextualJudgeBench "Average")
    and `mean_of_splits` (unweighted mean of the per-split rates that are defined). Their
    bootstrap is stratified by split (each split resampled on its own, as in the per-split
    rows); Wilson applies to `pooled` only. In those rows the `across` column holds `pooled` /
    `mean_of_splits` and `aggregation` says the same; per-split rows have `aggregation` =
    `split`.

    Args:
        outcomes: Output of `item_outcomes`.
        across: The group column to average over, or None for no averages.
        n_boot: Bootstrap resamples B.
        seed: Seed of the bootstrap.
        level: Confidence level of both intervals.

    Returns:
        Long table: the group columns, `sample`, `aggregation`, `metric`, `value`, `k`
        (numerator sum; NaN for `mean_of_splits`), `n` (denominator sum), `ci_low`, `ci_high`,
        `wilson_low`, `wilson_high`, `n_items` (complete items), `n_gold`, `n_incomplete`.
    """
    groups = _group_columns(outcomes)
    if across is not None and across not in groups:
        raise KeyError(f"across={across!r} is not a group column of the outcomes ({groups})")
    if across is not None:
        clash = set(outcomes[across].astype(str).unique()) & set(AGGREGATIONS)
        if clash:
            raise ValueError(f"{across} value(s) {sorted(clash)} clash with aggregate labels")
    keys = [*groups, "sample"]
    values, names = _value_matrix(outcomes)
    col = {name: i for i, name in enumerate(names)}
    num = np.array([col[m[0]] for m in METRICS.values()])
    den = np.array([col[m[1]] for m in METRICS.values()])
    binomial = np.array([m[2] for m in METRICS.values()])
    incomplete = (~outcomes["complete"].to_numpy(dtype=bool)).astype(float)

    def frame(key: dict, aggregation: str, sums: np.ndarray, reps: np.ndarray, inc: float):
        value = stats.ratio_replicates(sums[num], sums[den])
        low, high = stats.percentile_interval(
            stats.ratio_replicates(reps[:, num], reps[:, den]), level=level
        )
        w_low, w_high = stats.wilson_interval(sums[num], sums[den], level=level)
        return _rates_frame(
            key,
            aggregation,
            value=value,
            k=sums[num],
            n=sums[den],
            ci=(low, high),
            wilson=(np.where(binomial, w_low, np.nan), np.where(binomial, w_high, np.nan)),
            counts=(sums[col["complete"]], sums[col["has_gold"]], inc),
        )

    cells = []  # (key, point sums, replicate sums, n_incomplete) per (group, sample)
    grouped = outcomes.groupby(keys, sort=False, observed=True, dropna=False)
    for key, idx in grouped.indices.items():
        key = key if isinstance(key, tuple) else (key,)
        block = values[idx]
        block = block[block[:, col["complete"]] > 0]
        reps = stats.bootstrap_sums(block, n_boot=n_boot, rng=stats.rng_for(seed, *key))
        cells.append((key, block.sum(axis=0), reps, float(incomplete[idx].sum())))
    rows = [frame(dict(zip(keys, k, strict=True)), "split", s, r, inc) for k, s, r, inc in cells]

    if across is not None:
        for base, members in _cells_across(cells, keys, across):
            sums = np.sum([m[1] for m in members], axis=0)
            reps = np.sum([m[2] for m in members], axis=0)
            inc = float(sum(m[3] for m in members))
            rows.append(frame({**base, across: POOLED}, POOLED, sums, reps, inc))
            split_rates = np.stack([stats.ratio_replicates(m[1][num], m[1][den]) for m in members])
            split_reps = np.stack(
                [stats.ratio_replicates(m[2][:, num], m[2][:, den]) for m in members]
            )
            point, rep_mean = _nanmean0(split_rates), _nanmean0(split_reps)
            nan = np.full(len(num), np.nan)
            rows.append(
                _rates_frame(
                    {**base, across: MEAN_OF_SPLITS},
                    MEAN_OF_SPLITS,
                    value=point,
                    k=nan,
                    n=sums[den],
                    ci=stats.percentile_interval(rep_mean, level=level),
                    wilson=(nan, nan),
                    counts=(sums[col["complete"]], sums[col["has_gold"]], inc),
                )
            )
    out = pd.concat(rows, ignore_index=True)
    for c in ("n_items", "n_gold", "n_incomplete"):
        out[c] = out[c].astype(int)
    return out


def _nanmean0(a: np.ndarray) -> np.ndarray:
    """Return the mean over axis 0 ignoring NaN, NaN (no warning) where all are NaN."""
    ok = ~np.isnan(a)
    count = ok.sum(axis=0)
    total = np.where(ok, a, 0.0).sum(axis=0)
    return np.where(count > 0, total / np.maximum(count, 1), np.nan)


def _rates_frame(
    key: dict,
    aggregation: str,
    *,
    value: np.ndarray,
    k: np.ndarray,
    n: np.ndarray,
    ci: tuple[np.ndarray, np.ndarray],
    wilson: tuple[np.ndarray, np.ndarray],
    counts: tuple[float, float, float],
) -> pd.DataFrame:
    frame = pd.DataFrame(
        {
            **{c: [v] * len(METRICS) for c, v in key.items()},
            "aggregation": aggregation,
            "metric": list(METRICS),
            "value": value,
            "k": k,
            "n": n,
            "ci_low": ci[0],
            "ci_high": ci[1],
            "wilson_low": wilson[0],
            "wilson_high": wilson[1],
            "n_items": counts[0],
            "n_gold": counts[1],
            "n_incomplete": counts[2],
        }
    )
    return frame


def _rate_keys(rates: pd.DataFrame) -> list[str]:
    """Return the key columns of a `pairwise_rates` table (everything before `aggregation`)."""
    _require(rates, ["aggregation", "metric", "value"], "expected pairwise_rates(...) output;")
    cols = list(rates.columns)
    return cols[: cols.index("aggregation")]


def leaderboard(
    rates: pd.DataFrame,
    *,
    metric: str = "ca",
    across: str = "split",
    sort_by: str = POOLED,
    sample: int | None = 0,
) -> pd.DataFrame:
    """Return the ContextualJudgeBench Table 3 layout: one row per judge, one column per split.

    Columns: the row keys (the group columns other than `across`, plus `sample` when
    `sample` is None), then one column per `across` value in order of appearance, then
    `pooled` and `mean_of_splits`, then `<sort_by>_low`, `<sort_by>_high` (bootstrap interval
    of the sort column) and `n` (complete items, pooled). Rows are sorted by `sort_by`,
    best first. Values are fractions.
    """
    keys = _rate_keys(rates)
    if across not in keys:
        raise KeyError(f"across={across!r} is not a key of the rates ({keys})")
    if metric not in METRICS:
        raise ValueError(f"unknown metric {metric!r}; known: {list(METRICS)}")
    if sort_by not in AGGREGATIONS and sort_by not in set(rates[across]):
        raise ValueError(f"sort_by={sort_by!r} is neither an aggregate nor a {across} value")
    data = rates[rates["metric"] == metric]
    if sample is not None:
        data = data[data["sample"] == sample]
    rows = [k for k in keys if k != across and (sample is None or k != "sample")]
    columns = list(dict.fromkeys(data.loc[data["aggregation"] == "split", across]))
    columns += [a for a in AGGREGATIONS if a in set(data[across])]
    wide = data.pivot_table(index=rows, columns=across, values="value", dropna=False, sort=False)
    wide = wide.reindex(columns=columns)
    ref = data[data[across] == sort_by].set_index(rows)
    wide[f"{sort_by}_low"] = ref["ci_low"]
    wide[f"{sort_by}_high"] = ref["ci_high"]
    pooled = data[data["aggregation"] == POOLED].set_index(rows)["n_items"]
    wide["n"] = pooled if len(pooled) else np.nan
    wide = wide.sort_values(sort_by, ascending=False, na_position="last", kind="stable")
    wide.columns.name = None
    return wide.reset_index()


def format_leaderboard(
    board: pd.DataFrame, *, ci: bool = True, percent: bool = True, digits: int = 1
) -> pd.DataFrame:
    """Return a `leaderboard` as display strings ("55.3 [50.1, 60.2]" for the sort column).

    The split and aggregate columns are shown in percent (or as fractions); the sort column
    carries its interval when `ci` is True; `n` stays an integer.
    """
    out = board.copy()
    scale = 100.0 if percent else 1.0
    lows = [c for c in out.columns if c.endswith("_low")]
    interval_of = {c[: -len("_low")]: c for c in lows}
    value_cols = [
        c
        for c in out.columns
        if pd.api.types.is_float_dtype(out[c]) and c != "n" and not c.endswith(("_low", "_high"))
    ]

    def fmt(x: float) -> str:
        return "–" if pd.isna(x) else f"{scale * x:.{digits}f}"

    for c in value_cols:
        text = out[c].map(fmt)
        if ci and c in interval_of:
            low, high = out[interval_of[c]], out[f"{c}_high"]
            text = text + " [" + low.map(fmt) + ", " + high.map(fmt) + "]"
        out[c] = text
    out = out.drop(columns=[c for c in out.columns if c.endswith(("_low", "_high"))])
    if "n" in out:
        out["n"] = out["n"].astype("Int64")
    return out


def position_preference(rates: pd.DataFrame) -> pd.DataFrame:
    """Return the position-A preference per group with its intervals and a sign test.

    The sign test compares the items judged *position A both times* (`biased_first`) with the
    items judged *position B both times* (`biased_second`): exact two-sided binomial test of
    n_biased_first out of n_biased_first + n_biased_second against 1/2. Per-split and pooled
    rows only (counts are not defined for a mean of splits).

    Returns:
        The rate keys and `aggregation`, `pos_a_rate`, `ci_low`, `ci_high`, `wilson_low`,
        `wilson_high`, `n_verdicts` (valid non-tie verdicts), `run_gap` (a2 − a1),
        `n_biased_first`, `n_biased_second`, `p_value`.
    """
    keys = _rate_keys(rates)
    data = rates[rates["aggregation"] != MEAN_OF_SPLITS]
    idx = [*keys, "aggregation"]
    pref = data[data["metric"] == "pos_a_rate"].set_index(idx)
    out = pref[["value", "ci_low", "ci_high", "wilson_low", "wilson_high", "n"]].rename(
        columns={"value": "pos_a_rate", "n": "n_verdicts"}
    )
    by_metric = {m: data[data["metric"] == m].set_index(idx) for m in METRICS}
    out["run_gap"] = by_metric["run_gap"]["value"]
    out["n_biased_first"] = by_metric["share_biased_first"]["k"].astype(int)
    out["n_biased_second"] = by_metric["share_biased_second"]["k"].astype(int)
    out["n_verdicts"] = out["n_verdicts"].astype(int)
    out["p_value"] = [
        stats.sign_test(a, a + b).p_value
        for a, b in zip(out["n_biased_first"], out["n_biased_second"], strict=True)
    ]
    return out.reset_index()


def consistency_categories(rates: pd.DataFrame) -> pd.DataFrame:
    """Return the consistency-category shares in long form (one row per group × category).

    Columns: the rate keys, `aggregation`, `category` (in `CATEGORIES` order), `value`, `k`,
    `n`, `ci_low`, `ci_high`. The shares of a group sum to 1.
    """
    keys = _rate_keys(rates)
    names = {f"share_{c}": c for c in CATEGORIES}
    data = rates[rates["metric"].isin(names)].copy()
    data["category"] = pd.Categorical(data["metric"].map(names), categories=list(CATEGORIES))
    data["_group"] = data.groupby([*keys, "aggregation"], sort=False, dropna=False).ngroup()
    data = data.sort_values(["_group", "category"], kind="stable")
    cols = [*keys, "aggregation", "category", "value", "k", "n", "ci_low", "ci_high"]
    return data[cols].reset_index(drop=True)


def run_stability(rates: pd.DataFrame, *, metric: str = "cons") -> pd.DataFrame:
    """Summarise a metric over repeated runs (`sample`): n_samples, mean, sd, min, max, range.

    One row per rate key other than `sample` (and per aggregation); `sd` is the sample
    standard deviation (ddof = 1; NaN for a single run).
    """
    keys = [k for k in _rate_keys(rates) if k != "sample"]
    data = rates[(rates["metric"] == metric) & rates["value"].notna()]
    grouped = data.groupby([*keys, "aggregation"], sort=False, observed=True)["value"]
    out = grouped.agg(n_samples="count", mean="mean", sd="std", min="min", max="max")
    out["range"] = out["max"] - out["min"]
    out.insert(0, "metric", metric)
    return out.reset_index()


def _cells_across(
    cells: list[tuple], keys: list[str], across: str
) -> list[tuple[dict[str, Any], list[tuple]]]:
    """Group cells (whose first element is their key tuple over `keys`) over `across`.

    Returns (the other keys as a dict, the member cells) per combination of the other keys,
    in first-seen order: the cells an aggregate over `across` (pooled, mean of splits) uses.
    """
    pos = keys.index(across)
    outer: dict[tuple, list[tuple]] = {}
    for cell in cells:
        outer.setdefault(cell[0][:pos] + cell[0][pos + 1 :], []).append(cell)
    rest = [k for k in keys if k != across]
    return [(dict(zip(rest, okey, strict=True)), members) for okey, members in outer.items()]


def compare_judges(
    outcomes: pd.DataFrame,
    *,
    metric: str = "ca",
    across: str | None = "split",
    n_boot: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> pd.DataFrame:
    """Compare every pair of judges on the items both judged: difference and paired CI.

    For each pair (judge_1, judge_2) and group, the items are those complete for both judges
    (and with gold for accuracies). `diff` = value_1 − value_2 with a paired bootstrap
    percentile interval (both judges' outcomes of a drawn item stay together), plus an exact
    McNemar test: a two-sided sign test of the items only judge_1 got right (`only_1`)
    against those only judge_2 got right (`only_2`). With `across`, a `pooled` row per pair
    aggregates the splits (stratified bootstrap).

    Args:
        outcomes: Output of `item_outcomes`.
        metric: One of `a1`, `a2`, `ca`, `oa`, `cons`.
        across: Group column pooled into an extra row, or None.
        n_boot: Bootstrap resamples B.
        seed: Seed of the bootstrap.
        level: Confidence level.

    Returns:
        `judge_1`, `judge_2`, the other group keys, `sample`, `value_1`, `value_2`, `diff`,
        `ci_low`, `ci_high`, `n_common`, `only_1`, `only_2`, `p_value`.
    """
    allowed = ("a1", "a2", "ca", "oa", "cons")
    if metric not in allowed:
        raise ValueError(f"compare_judges metric must be one of {allowed}, got {metric!r}")
    groups = _group_columns(outcomes)
    num_col, den_col, _ = METRICS[metric]
    other = [g for g in groups if g != "judge"]
    if across is not None and across not in other:
        raise KeyError(f"across={across!r} is not a group column of the outcomes ({groups})")
    data = outcomes[outcomes["complete"].astype(bool)]
    if den_col == "has_gold":
        data = data[data["has_gold"].astype(bool)]
    wide = data.set_index([*other, "sample", "item_id", "judge"])[num_col].astype(float)
    wide = wide.unstack("judge")
    judges = sorted(wide.columns)
    cell_keys = [*other, "sample"]
    rows = []
    for j1, j2 in combinations(judges, 2):
        pair = wide[[j1, j2]].dropna()
        cells = []
        for key, block in pair.groupby(level=cell_keys, sort=True, dropna=False):
            key = key if isinstance(key, tuple) else (key,)
            x = block.to_numpy()
            rng = stats.rng_for(seed, "compare", j1, j2, *key)
            reps = stats.bootstrap_sums(x, n_boot=n_boot, rng=rng)
            disc = np.array(
                [np.sum((x[:, 0] == 1) & (x[:, 1] == 0)), np.sum((x[:, 0] == 0) & (x[:, 1] == 1))]
            )
            cells.append((key, x.sum(axis=0), len(x), reps, disc))
        merged = [(dict(zip(cell_keys, c[0], strict=True)), *c[1:]) for c in cells]
        if across is not None:
            for base, members in _cells_across(cells, cell_keys, across):
                merged.append(
                    (
                        {**base, across: POOLED},
                        np.sum([m[1] for m in members], axis=0),
                        sum(m[2] for m in members),
                        np.sum([m[3] for m in members], axis=0),
                        np.sum([m[4] for m in members], axis=0),
                    )
                )
        for key, sums, n, reps, disc in merged:
            low, high = stats.percentile_interval(
                stats.ratio_replicates(reps[:, 0] - reps[:, 1], np.full(len(reps), n)),
                level=level,
            )
            value = sums / n if n else np.array([np.nan, np.nan])
            rows.append(
                {
                    "judge_1": j1,
                    "judge_2": j2,
                    **key,
                    "metric": metric,
                    "value_1": value[0],
                    "value_2": value[1],
                    "diff": value[0] - value[1],
                    "ci_low": float(low),
                    "ci_high": float(high),
                    "n_common": int(n),
                    "only_1": int(disc[0]),
                    "only_2": int(disc[1]),
                    "p_value": stats.sign_test(disc[0], disc[0] + disc[1]).p_value,
                }
            )
    columns = [
        "judge_1",
        "judge_2",
        *cell_keys,
        "metric",
        "value_1",
        "value_2",
        "diff",
        "ci_low",
        "ci_high",
        "n_common",
        "only_1",
        "only_2",
        "p_value",
    ]
    return pd.DataFrame(rows, columns=columns)


def coverage(
    outcomes: pd.DataFrame, items: pd.DataFrame, *, keys: Sequence[str] = ("benchmark", "split")
) -> pd.DataFrame:
    """Count, per judge × `keys` × sample, the items judged in both orders, in one, or never.

    Returns:
        The group columns (`judge`, `keys`), `sample`, `n_items_table` (items of the items
        table in that group), `n_complete`, `n_incomplete`, `n_missing` (items of the table
        with no judgment), `n_unknown` (judged items absent from the items table).
    """
    keys = list(keys)
    _require(items, [*keys, "item_id"], "coverage items")
    _require(outcomes, ["judge", *keys, "item_id", "sample", "complete"], "coverage outcomes")
    table = items[[*keys, "item_id"]].drop_duplicates()
    expected = table.groupby(keys, sort=True).size().rename("n_items_table")
    rows = []
    for (judge, sample), block in outcomes.groupby(["judge", "sample"], sort=True):
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
        per = per.reindex(expected.index.union(per.index), fill_value=0)
        frame = pd.DataFrame({"n_items_table": expected}).reindex(per.index).fillna(0)
        frame["n_complete"] = per["complete"]
        frame["n_incomplete"] = per["incomplete"]
        frame["n_missing"] = frame["n_items_table"] - per["complete"] - per["incomplete"]
        frame["n_unknown"] = per["unknown"]
        frame = frame.reset_index()
        frame.insert(0, "judge", judge)
        frame.insert(len(keys) + 1, "sample", sample)
        rows.append(frame)
    cols = [
        "judge",
        *keys,
        "sample",
        "n_items_table",
        "n_complete",
        "n_incomplete",
        "n_missing",
        "n_unknown",
    ]
    if not rows:
        return pd.DataFrame(columns=cols)
    out = pd.concat(rows, ignore_index=True)[cols]
    for c in cols[len(keys) + 2 :]:
        out[c] = out[c].astype(int)
    return out


def rates_for(
    table: pd.DataFrame,
    *,
    metric: str | Sequence[str] | None = None,
    aggregation: str | Sequence[str] | None = None,
    sample: int | None = None,
) -> pd.DataFrame:
    """Return the rows of a rates-like table for some metrics, aggregations and one sample.

    Works on `pairwise_rates`, `position_preference` and `consistency_categories` output;
    a None filter keeps every value. Metrics keep the order given.
    """
    out = table
    if metric is not None:
        wanted = [metric] if isinstance(metric, str) else list(metric)
        unknown = [m for m in wanted if m not in METRICS]
        if unknown:
            raise ValueError(f"unknown metric(s) {unknown}; known: {list(METRICS)}")
        _require(out, ["metric"], "rates_for")
        out = out[out["metric"].isin(wanted)]
        rank = {m: i for i, m in enumerate(wanted)}
        out = out.iloc[np.argsort(out["metric"].map(rank).to_numpy(), kind="stable")]
    if aggregation is not None:
        wanted = [aggregation] if isinstance(aggregation, str) else list(aggregation)
        bad = [a for a in wanted if a not in ("split", *AGGREGATIONS)]
        if bad:
            raise ValueError(f"unknown aggregation(s) {bad}; known: split, {AGGREGATIONS}")
        _require(out, ["aggregation"], "rates_for")
        out = out[out["aggregation"].isin(wanted)]
    if sample is not None:
        _require(out, ["sample"], "rates_for")
        out = out[out["sample"] == sample]
    return out.reset_index(drop=True)


def rates_wide(
    rates: pd.DataFrame, *, metrics: Sequence[str] = ("a1", "a2", "ca", "oa", "cons")
) -> pd.DataFrame:
    """Return one row per rate key with `<metric>`, `<metric>_low`, `<metric>_high` columns.

    The interval is the bootstrap percentile interval; `n_items`, `n_gold` and
    `n_incomplete` close the row.
    """
    keys = [*_rate_keys(rates), "aggregation"]
    data = rates_for(rates, metric=list(metrics))
    idx = data[keys].drop_duplicates()
    out = idx.copy()
    for m in metrics:
        part = data[data["metric"] == m].set_index(keys)
        cols = part[["value", "ci_low", "ci_high"]]
        cols.columns = [m, f"{m}_low", f"{m}_high"]
        out = out.join(cols, on=keys)
    counts = data.drop_duplicates(keys).set_index(keys)[["n_items", "n_gold", "n_incomplete"]]
    return out.join(counts, on=keys).reset_index(drop=True)
