"""Judges side by side: the leaderboard layout and paired judge-against-judge comparisons.

`leaderboard` reshapes `pairwise_rates` into the ContextualJudgeBench Table 3 layout;
`compare_judges` pairs two judges on the items both judged (paired cluster bootstrap with an
adaptive bootstrap test; the McNemar test kept as the legacy column).
"""

from __future__ import annotations

from itertools import combinations
from typing import NamedTuple

import numpy as np
import pandas as pd

from judgelab.analyses.pairwise import resample
from judgelab.analyses.pairwise.outcomes import CLUSTER, group_columns
from judgelab.analyses.pairwise.rates import (
    AGGREGATIONS,
    METRICS,
    POOLED,
    cells_across,
    rate_keys,
)
from judgelab.core import inference, stats
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
    "n_clusters",
    "missing_1",
    "missing_2",
    "p_bootstrap",
    "p_bound",
    "n_boot_p",
    "p_mcnemar",
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


#: Tests `compare_judges` can report as `p_value`; ways to treat missing verdicts.
COMPARE_TESTS = ("bootstrap", "mcnemar")
MISSING = ("exclude", "wrong")


class _PairBoot(NamedTuple):
    n_boot: int
    seed: int
    level: float
    cluster: str | None
    missing: str


def compare_judges(
    outcomes: pd.DataFrame,
    *,
    metric: str = "ca",
    across: str | None = "split",
    n_boot: int = 1000,
    seed: int = 0,
    level: float = 0.95,
    cluster: str | None = CLUSTER,
    test: str = "bootstrap",
    missing: str = "exclude",
) -> pd.DataFrame:
    """Compare every pair of judges on the items both judged: difference, paired CI and test.

    For each pair (judge_1, judge_2) and group, the items are those complete for both judges
    (and with gold for accuracies). `diff` = value_1 − value_2 with a paired cluster-bootstrap
    percentile interval (a drawn cluster brings both judges' outcomes on all its items; items
    without a cluster, or every item with `cluster=None`, are their own unit) and a bootstrap
    test of diff = 0 (`p_bootstrap`, resolved adaptively; `p_bound` marks an upper bound).
    `p_mcnemar` is the legacy exact McNemar test (a two-sided sign test of the items only
    judge_1 got right, `only_1`, against those only judge_2 got right, `only_2`), which
    assumes independent items. With `across`, a `pooled` row per pair aggregates the splits
    (each split resampled on its own).

    Missing verdicts: `missing_1`/`missing_2` count the items of the cell that the other
    judge judged completely but this one did not (an order absent or never judged). Invalid
    outputs already count as incorrect in the accuracies; `missing="wrong"` is the
    sensitivity analysis that keeps every item judged by either judge and counts a missing
    verdict as wrong (inconsistent for `cons`; pass outcomes built with
    `invalid_policy="strict"` to count invalid outputs as inconsistent too).

    Args:
        outcomes: Output of `item_outcomes`.
        metric: One of `a1`, `a2`, `ca`, `oa`, `cons`.
        across: Group column pooled into an extra row, or None.
        n_boot: Bootstrap resamples B.
        seed: Seed of the bootstrap.
        level: Confidence level.
        cluster: Column of `outcomes` with the resampling unit, or None for items (legacy).
        test: Which test is `p_value`: `bootstrap` (default) or `mcnemar` (legacy).
        missing: `exclude` (items complete for both judges) or `wrong` (see above).

    Returns:
        `judge_1`, `judge_2`, the other group keys, `sample`, `metric`, `value_1`, `value_2`,
        `diff`, `ci_low`, `ci_high`, `n_common` (items compared), `only_1`, `only_2`,
        `p_value`, `n_clusters`, `missing_1`, `missing_2`, `p_bootstrap`, `p_bound`,
        `n_boot_p`, `p_mcnemar`, `test`, `missing`.
    """
    check_choice("compare_judges metric", metric, COMPARE_METRICS)
    check_choice("compare_judges test", test, COMPARE_TESTS)
    check_choice("compare_judges missing", missing, MISSING)
    groups = group_columns(outcomes)
    other = [g for g in groups if g != "judge"]
    if across is not None and across not in other:
        raise KeyError(f"across={across!r} is not a group column of the outcomes ({groups})")
    wide, complete, units = _judge_columns(outcomes, metric, other, cluster)
    cell_keys = [*other, "sample"]
    boot = _PairBoot(n_boot, seed, level, cluster, missing)
    rows = []
    for j1, j2 in combinations(sorted(wide.columns), 2):
        pair = _pair_frame(wide[[j1, j2]], complete[[j1, j2]], units, missing)
        cells = _pair_cells(pair, j1, j2, cell_keys, boot)
        merged = [(dict(zip(cell_keys, c[0], strict=True)), *c[1:]) for c in cells]
        if across is not None:
            merged += _pooled_pair_cells(cells, cell_keys, across)
        for key, cell in merged:
            fields = _compare_fields(cell, boot, ("compare_p", j1, j2, *key.values()))
            fields["p_value"] = (
                fields["p_bootstrap"] if test == "bootstrap" else fields["p_mcnemar"]
            )
            rows.append({"judge_1": j1, "judge_2": j2, **key, "metric": metric} | fields)
    out = pd.DataFrame(rows, columns=["judge_1", "judge_2", *cell_keys, *_COMPARE_COLUMNS])
    out["test"] = "cluster bootstrap" if test == "bootstrap" else "McNemar (legacy)"
    out["missing"] = missing
    return out


def _judge_columns(
    outcomes: pd.DataFrame, metric: str, other: list[str], cluster: str | None
) -> tuple[pd.DataFrame, pd.DataFrame, pd.Series]:
    """Return per item × judge the metric's 0/1 outcome and completeness; per item its unit.

    Rows are items (with gold for accuracies), columns judges; the units are a Series.
    """
    num_col, den_col, _ = METRICS[metric]
    data = outcomes
    if den_col == "has_gold":
        data = data[data["has_gold"].astype(bool)]
    idx = [*other, "sample", "item_id"]
    value = data[num_col].astype("boolean").fillna(False).astype(float)
    frame = data[idx + ["judge"]].assign(
        _value=value.to_numpy(), _complete=data["complete"].astype(bool).to_numpy()
    )
    frame = frame.set_index([*idx, "judge"])
    wide = frame["_value"].unstack("judge")
    complete = frame["_complete"].unstack("judge").astype("boolean").fillna(False)
    if cluster is not None and cluster in data.columns:
        unit = data.assign(_unit=data[cluster]).groupby(idx, sort=False, dropna=False)["_unit"]
        units = unit.first().reindex(wide.index)
    else:
        units = pd.Series(None, index=wide.index, dtype=object)
    return wide, complete.astype(bool), units


def _pair_frame(
    values: pd.DataFrame, complete: pd.DataFrame, units: pd.Series, missing: str
) -> pd.DataFrame:
    """Return the rows of one pair: value_1, value_2, missing_1, missing_2, unit."""
    ok = complete.to_numpy()
    either = ok.any(axis=1)
    both = ok.all(axis=1)
    keep = either if missing == "wrong" else both
    x = np.where(ok, values.to_numpy(dtype=float), 0.0)
    frame = pd.DataFrame(
        {
            "v1": x[:, 0],
            "v2": x[:, 1],
            "m1": (either & ~ok[:, 0]).astype(float),
            "m2": (either & ~ok[:, 1]).astype(float),
            "kept": keep.astype(float),
            "unit": units.to_numpy(dtype=object),
        },
        index=values.index,
    )
    return frame[either]


def _pair_cells(
    pair: pd.DataFrame, j1: str, j2: str, cell_keys: list[str], boot: _PairBoot
) -> list[tuple]:
    """Return (key, _PairCell) per cell of one judge pair."""
    cells = []
    for key, block in pair.groupby(level=cell_keys, sort=True, dropna=False):
        key = key if isinstance(key, tuple) else (key,)
        miss = block[["m1", "m2"]].to_numpy().sum(axis=0)
        block = block[block["kept"] > 0]
        x = block[["v1", "v2"]].to_numpy()
        disc = np.array(
            [np.sum((x[:, 0] == 1) & (x[:, 1] == 0)), np.sum((x[:, 0] == 0) & (x[:, 1] == 1))]
        )
        values = np.column_stack([x, np.ones(len(x))])
        codes = None
        if boot.cluster is not None and block["unit"].notna().any():
            frame = pd.DataFrame(
                {
                    "cluster": block["unit"].to_numpy(),
                    "item_id": block.index.get_level_values("item_id").astype(str),
                }
            )
            codes = resample.unit_codes(frame, "cluster")
        units = resample.unit_rows(values, codes)
        rng = stats.rng_for(boot.seed, "compare", j1, j2, *key)
        reps = stats.bootstrap_sums(units, n_boot=boot.n_boot, rng=rng)
        strata = resample.Strata([units])
        cells.append((key, _PairCell(values.sum(axis=0), reps, disc, miss, strata)))
    return cells


class _PairCell(NamedTuple):
    sums: np.ndarray  # Σ value_1, Σ value_2, n
    reps: np.ndarray
    disc: np.ndarray  # only_1, only_2
    missing: np.ndarray  # missing_1, missing_2
    strata: resample.Strata


def _pooled_pair_cells(cells: list[tuple], cell_keys: list[str], across: str) -> list[tuple]:
    """Return one `pooled` cell per combination of the keys other than `across` (stratified)."""
    pooled = []
    for base, members in cells_across(cells, cell_keys, across):
        parts = [m[1] for m in members]
        cell = _PairCell(
            np.sum([p.sums for p in parts], axis=0),
            np.sum([p.reps for p in parts], axis=0),
            np.sum([p.disc for p in parts], axis=0),
            np.sum([p.missing for p in parts], axis=0),
            resample.Strata([u for p in parts for u in p.strata.members]),
        )
        pooled.append(({**base, across: POOLED}, cell))
    return pooled


def _diff_p(cell: _PairCell, boot: _PairBoot, key: tuple) -> inference.PValue:
    """Return the adaptive cluster-bootstrap p-value of value_1 − value_2 = 0."""
    rng = stats.rng_for(boot.seed, *key)

    def draw(k: int) -> np.ndarray:
        s = cell.strata.draw(np.arange(3), k, rng)
        return stats.ratio_replicates(s[:, 0] - s[:, 1], s[:, 2])

    first = stats.ratio_replicates(cell.reps[:, 0] - cell.reps[:, 1], cell.reps[:, 2])
    return inference.adaptive_p(draw, null=0.0, first=first, n_boot=min(boot.n_boot, 40_000))


def _compare_fields(cell: _PairCell, boot: _PairBoot, key: tuple) -> dict:
    """Return the values, paired difference with its interval, and both tests of a cell."""
    n = cell.sums[2]
    value = cell.sums[:2] / n if n else np.array([np.nan, np.nan])
    diff_reps = stats.ratio_replicates(cell.reps[:, 0] - cell.reps[:, 1], cell.reps[:, 2])
    p = _diff_p(cell, boot, key) if n else inference.PValue(np.nan, 0, np.nan, False)
    return {
        "value_1": value[0],
        "value_2": value[1],
        **stats.interval_fields(
            value[0] - value[1], diff_reps, level=boot.level, names=("diff", "ci_low", "ci_high")
        ),
        "n_common": int(n),
        "only_1": int(cell.disc[0]),
        "only_2": int(cell.disc[1]),
        "n_clusters": cell.strata.n_units,
        "missing_1": int(cell.missing[0]),
        "missing_2": int(cell.missing[1]),
        "p_bootstrap": p.p,
        "p_bound": bool(p.bound),
        "n_boot_p": int(p.n_boot),
        "p_mcnemar": stats.sign_test(cell.disc[0], cell.disc[0] + cell.disc[1]).p_value,
    }
