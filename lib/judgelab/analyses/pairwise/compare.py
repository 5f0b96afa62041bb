"""Judges side by side: the leaderboard layout and paired judge-against-judge comparisons.

`leaderboard` reshapes `pairwise_rates` into the ContextualJudgeBench Table 3 layout;
`compare_judges` pairs two judges on the items both judged (paired bootstrap, McNemar test).
"""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pandas as pd

from judgelab.analyses.pairwise.outcomes import group_columns
from judgelab.analyses.pairwise.rates import (
    AGGREGATIONS,
    METRICS,
    POOLED,
    cells_across,
    rate_keys,
)
from judgelab.core import stats
from judgelab.errors import check_choice

#: Metrics `compare_judges` compares (per-item 0/1 outcomes).
COMPARE_METRICS = ("a1", "a2", "ca", "oa", "cons")
_COMPARE_COLUMNS = [
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
    keys = rate_keys(rates)
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
    check_choice("compare_judges metric", metric, COMPARE_METRICS)
    groups = group_columns(outcomes)
    other = [g for g in groups if g != "judge"]
    if across is not None and across not in other:
        raise KeyError(f"across={across!r} is not a group column of the outcomes ({groups})")
    wide = _judge_columns(outcomes, metric, other)
    cell_keys = [*other, "sample"]
    rows = []
    for j1, j2 in combinations(sorted(wide.columns), 2):
        cells = _pair_cells(wide[[j1, j2]].dropna(), j1, j2, cell_keys, n_boot=n_boot, seed=seed)
        merged = [(dict(zip(cell_keys, c[0], strict=True)), *c[1:]) for c in cells]
        if across is not None:
            merged += _pooled_pair_cells(cells, cell_keys, across)
        for key, sums, n, reps, disc in merged:
            rows.append(
                {"judge_1": j1, "judge_2": j2, **key, "metric": metric}
                | _compare_fields(sums, n, reps, disc, level)
            )
    return pd.DataFrame(rows, columns=["judge_1", "judge_2", *cell_keys, *_COMPARE_COLUMNS])


def _judge_columns(outcomes: pd.DataFrame, metric: str, other: list[str]) -> pd.DataFrame:
    """Return the metric's per-item 0/1 outcome, one column per judge (complete items only)."""
    num_col, den_col, _ = METRICS[metric]
    data = outcomes[outcomes["complete"].astype(bool)]
    if den_col == "has_gold":
        data = data[data["has_gold"].astype(bool)]
    wide = data.set_index([*other, "sample", "item_id", "judge"])[num_col].astype(float)
    return wide.unstack("judge")


def _pair_cells(
    pair: pd.DataFrame, j1: str, j2: str, cell_keys: list[str], *, n_boot: int, seed: int
) -> list[tuple]:
    """Return (key, sums, n, replicate sums, discordant counts) per cell of one judge pair."""
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
    return cells


def _pooled_pair_cells(cells: list[tuple], cell_keys: list[str], across: str) -> list[tuple]:
    """Return one `pooled` cell per combination of the keys other than `across` (stratified)."""
    pooled = []
    for base, members in cells_across(cells, cell_keys, across):
        pooled.append(
            (
                {**base, across: POOLED},
                np.sum([m[1] for m in members], axis=0),
                sum(m[2] for m in members),
                np.sum([m[3] for m in members], axis=0),
                np.sum([m[4] for m in members], axis=0),
            )
        )
    return pooled


def _compare_fields(
    sums: np.ndarray, n: int, reps: np.ndarray, disc: np.ndarray, level: float
) -> dict:
    """Return the values, paired difference with its interval, and McNemar test of a cell."""
    value = sums / n if n else np.array([np.nan, np.nan])
    diff_reps = stats.ratio_replicates(reps[:, 0] - reps[:, 1], np.full(len(reps), n))
    return {
        "value_1": value[0],
        "value_2": value[1],
        **stats.interval_fields(
            value[0] - value[1], diff_reps, level=level, names=("diff", "ci_low", "ci_high")
        ),
        "n_common": int(n),
        "only_1": int(disc[0]),
        "only_2": int(disc[1]),
        "p_value": stats.sign_test(disc[0], disc[0] + disc[1]).p_value,
    }
