"""Judges side by side: the leaderboard layout and paired judge-against-judge comparisons.

`leaderboard` reshapes `pairwise_rates` into the ContextualJudgeBench Table 3 layout;
`compare_judges` pairs two judges on the items both judged (the `core.estimates` paired
difference: the interval inverting the restricted wild cluster bootstrap test; the earlier
percentile bootstrap and the McNemar test kept as options).
"""

from __future__ import annotations

from itertools import combinations
from typing import NamedTuple

import numpy as np
import pandas as pd

from judgelab.analyses.pairwise import resample, scan_compare, units
from judgelab.analyses.pairwise.lazy import LazyOutcomes
from judgelab.analyses.pairwise.outcomes import CLUSTER, group_columns
from judgelab.analyses.pairwise.rates import (
    AGGREGATIONS,
    INFERENCE,
    METRICS,
    POOLED,
    _replicates,
    cells_across,
    rate_keys,
)
from judgelab.core import estimates, inference, stats
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
    "n_eff_clusters",
    "few_clusters",
    "method",
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
    inference: str = "wild"


def compare_judges(
    outcomes: pd.DataFrame | LazyOutcomes,
    *,
    metric: str = "ca",
    across: str | None = "split",
    n_boot: int = 1000,
    seed: int = 0,
    level: float = 0.95,
    cluster: str | None = CLUSTER,
    test: str = "bootstrap",
    missing: str = "exclude",
    inference: str = "wild",
) -> pd.DataFrame:
    """Compare every pair of judges on the items both judged: difference, paired CI and test.

    For each pair (judge_1, judge_2) and group, the items are those complete for both judges
    (and with gold for accuracies). `diff` = value_1 − value_2, paired over the resampling
    units (a unit brings both judges' outcomes on all its items; the clusters of `cluster`,
    items without one — or every item with `cluster=None` — their own unit):

    - `inference="wild"` (default): the `core.estimates` difference — the interval inverts
      the restricted wild cluster bootstrap test of diff = 0, whose p-value is `p_bootstrap`
      (so p < 1 − level exactly when 0 lies outside [ci_low, ci_high]); `n_eff_clusters`,
      `few_clusters` and `method` as every estimate row;
    - `inference="bootstrap"` (the earlier default): a paired percentile cluster bootstrap
      interval and an adaptive bootstrap test (`p_bound` marks an upper bound), each split
      resampled on its own in the pooled row.

    `p_mcnemar` is the legacy exact McNemar test (a two-sided sign test of the items only
    judge_1 got right, `only_1`, against those only judge_2 got right, `only_2`), which
    assumes independent items. With `across`, a `pooled` row per pair aggregates the splits.

    Missing verdicts: `missing_1`/`missing_2` count the items of the cell that the other
    judge judged completely but this one did not (an order absent or never judged). Invalid
    outputs already count as incorrect in the accuracies; `missing="wrong"` is the
    sensitivity analysis that keeps every item judged by either judge and counts a missing
    verdict as wrong (inconsistent for `cons`; pass outcomes built with
    `invalid_policy="strict"` to count invalid outputs as inconsistent too).

    Args:
        outcomes: Output of `item_outcomes` (for a large source a `LazyOutcomes`: its
            items are read judge by judge, `scan_compare`; same rows and numbers).
        metric: One of `a1`, `a2`, `ca`, `oa`, `cons`.
        across: Group column pooled into an extra row, or None.
        n_boot: Bootstrap replicates B.
        seed: Seed of the bootstrap.
        level: Confidence level.
        cluster: Column of `outcomes` with the resampling unit, or None for items (legacy).
        test: Which test is `p_value`: `bootstrap` (the cluster test of `inference`;
            default) or `mcnemar` (legacy).
        missing: `exclude` (items complete for both judges) or `wrong` (see above).
        inference: "wild" (default) or "bootstrap" (the earlier default).

    Returns:
        `judge_1`, `judge_2`, the other group keys, `sample`, `metric`, `value_1`, `value_2`,
        `diff`, `ci_low`, `ci_high`, `n_common` (items compared), `only_1`, `only_2`,
        `p_value`, `n_clusters`, `missing_1`, `missing_2`, `p_bootstrap`, `p_bound`,
        `n_boot_p`, `p_mcnemar`, `n_eff_clusters`, `few_clusters`, `method`, `test`,
        `missing`.
    """
    check_choice("compare_judges metric", metric, COMPARE_METRICS)
    check_choice("compare_judges test", test, COMPARE_TESTS)
    check_choice("compare_judges missing", missing, MISSING)
    check_choice("compare_judges inference", inference, INFERENCE)
    lazy = isinstance(outcomes, LazyOutcomes)
    groups = list(outcomes.groups) if lazy else group_columns(outcomes)
    other = [g for g in groups if g != "judge"]
    if across is not None and across not in other:
        raise KeyError(f"across={across!r} is not a group column of the outcomes ({groups})")
    columns = scan_compare.judge_columns if lazy else _judge_columns
    wide, complete, labels = columns(outcomes, metric, other, cluster)
    codes = pd.factorize(labels.to_numpy(dtype=object), sort=True)[0]  # in sorted-label order
    cell_keys = [*other, "sample"]
    boot = _PairBoot(n_boot, seed, level, cluster, missing, inference)
    rows = []
    for j1, j2 in combinations(sorted(wide.columns), 2):
        pair = _pair_frame(wide[[j1, j2]], complete[[j1, j2]], labels, codes, missing)
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
    if test == "mcnemar":
        out["test"] = "McNemar (legacy)"
    else:
        out["test"] = "cluster bootstrap" if inference == "bootstrap" else out["method"]
    out["missing"] = missing
    return out


def compare_reason(outcomes: pd.DataFrame | LazyOutcomes) -> str | None:
    """Return why judges cannot be compared, None when two judges share a complete item.

    `compare_judges` pairs judges on the items both judged in both orders: with one judge,
    or judges with no such item in common, its table is empty.
    """
    if isinstance(outcomes, LazyOutcomes):  # a large source: one pass per judge, kept
        judges, shared = scan_compare.compare_reason_inputs(outcomes)
    else:
        judges = sorted(map(str, outcomes["judge"].dropna().unique()))
        shared = _shares_an_item(outcomes)
    if len(judges) < 2:
        which = f" ({judges[0]})" if judges else ""
        return (
            f"only one judge{which} is in the data, so there is no other judge to set it "
            "against; a source (or a `judges` choice) with two or more judges shows it"
        )
    if shared:
        return None
    return (
        "no item judged in both orders by two judges, so no paired difference can be taken "
        f"between the {len(judges)} judges"
    )


def _shares_an_item(outcomes: pd.DataFrame) -> bool:
    """Whether two judges judged some item (of the same sample) in both orders."""
    keys = [c for c in ("benchmark", "split", "item_id", "sample") if c in outcomes.columns]
    done = outcomes[outcomes["complete"].astype(bool)]
    return bool((done.groupby(keys, sort=False, observed=True)["judge"].nunique() >= 2).any())


def _judge_columns(
    outcomes: pd.DataFrame, metric: str, other: list[str], cluster: str | None
) -> tuple[pd.DataFrame, pd.DataFrame, pd.Series]:
    """Return per item × judge the metric's 0/1 outcome and completeness; per item its unit.

    Rows are items (with gold for accuracies), columns judges; the unit labels
    (`units.unit_labels`: the cluster, else the item) are a Series on the same index.
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
    carry = cluster is not None and cluster in data.columns
    per_item = data.assign(_unit=data[cluster] if carry else None)
    first = per_item.groupby(idx, sort=False, dropna=False)["_unit"].first().reindex(wide.index)
    keys = first.index.to_frame(index=False).assign(_unit=first.to_numpy())
    labels = units.unit_labels(keys, "_unit" if carry else None, other)
    return wide, complete.astype(bool), pd.Series(labels, index=wide.index)


def _pair_frame(
    values: pd.DataFrame,
    complete: pd.DataFrame,
    labels: pd.Series,
    codes: np.ndarray,
    missing: str,
) -> pd.DataFrame:
    """Return the rows of one pair: value_1, value_2, missing_1, missing_2, unit label, code."""
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
            "unit": labels.to_numpy(dtype=object),
            "code": codes,
        },
        index=values.index,
    )
    return frame[either]


class _PairCell(NamedTuple):
    sums: np.ndarray  # Σ value_1, Σ value_2, n
    disc: np.ndarray  # only_1, only_2
    missing: np.ndarray  # missing_1, missing_2
    values: np.ndarray  # (n × 2) value_1, value_2 of the kept items
    labels: np.ndarray  # (n,) unit labels
    codes: np.ndarray  # (n,) the labels' codes in sorted-label order (over every cell)
    reps: np.ndarray | None = None  # bootstrap replicates ("bootstrap" only)
    strata: resample.Strata | None = None


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
        labels = block["unit"].to_numpy(dtype=object)
        cell = _PairCell(values.sum(axis=0), disc, miss, x, labels, block["code"].to_numpy())
        if boot.inference == "bootstrap":
            codes = None
            if boot.cluster is not None:
                codes = resample.unit_codes(pd.DataFrame({"cluster": labels}), "cluster")
            units_ = resample.unit_rows(values, codes)
            rng = stats.rng_for(boot.seed, "compare", j1, j2, *key)
            reps = stats.bootstrap_sums(units_, n_boot=boot.n_boot, rng=rng)
            cell = cell._replace(reps=reps, strata=resample.Strata([units_]))
        cells.append((key, cell))
    return cells


def _pooled_pair_cells(cells: list[tuple], cell_keys: list[str], across: str) -> list[tuple]:
    """Return one `pooled` cell per combination of the keys other than `across`."""
    pooled = []
    for base, members in cells_across(cells, cell_keys, across):
        parts = [m[1] for m in members]
        cell = _PairCell(
            np.sum([p.sums for p in parts], axis=0),
            np.sum([p.disc for p in parts], axis=0),
            np.sum([p.missing for p in parts], axis=0),
            np.vstack([p.values for p in parts]),
            np.concatenate([p.labels for p in parts]),
            np.concatenate([p.codes for p in parts]),
        )
        if parts[0].reps is not None:  # the earlier bootstrap: each split on its own
            cell = cell._replace(
                reps=np.sum([p.reps for p in parts], axis=0),
                strata=resample.Strata([u for p in parts for u in p.strata.members]),
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


def _wild_diff(cell: _PairCell, boot: _PairBoot, key: tuple) -> estimates.Estimate:
    """Return the `core.estimates` paired difference value_1 − value_2 of a cell."""
    n = len(cell.values)
    num = np.concatenate([cell.values[:, 1], cell.values[:, 0]])
    group = np.repeat([0, 1], n)  # group 1 − group 0 = judge_1 − judge_2
    s = units.row_sums(num, np.ones(2 * n), group, np.concatenate([cell.codes, cell.codes]), 2)
    rng = estimates.seeded(boot.seed, *map(str, key))
    return units.estimate(
        s,
        None,
        [-1.0, 1.0],
        null=0.0,
        level=boot.level,
        n_boot=boot.n_boot,
        rng=rng,
        bounds=(-1.0, 1.0),
    )


def _compare_fields(cell: _PairCell, boot: _PairBoot, key: tuple) -> dict:
    """Return the values, paired difference with its interval, and both tests of a cell."""
    n = cell.sums[2]
    value = cell.sums[:2] / n if n else np.array([np.nan, np.nan])
    common = {
        "value_1": value[0],
        "value_2": value[1],
        "n_common": int(n),
        "only_1": int(cell.disc[0]),
        "only_2": int(cell.disc[1]),
        "missing_1": int(cell.missing[0]),
        "missing_2": int(cell.missing[1]),
        "p_mcnemar": stats.sign_test(cell.disc[0], cell.disc[0] + cell.disc[1]).p_value,
    }
    if boot.inference == "wild":
        e = _wild_diff(cell, boot, key)
        return common | {
            "diff": e.value,
            "ci_low": e.ci_low,
            "ci_high": e.ci_high,
            "n_clusters": int(e.n_clusters),
            "p_bootstrap": e.p_value,
            "p_bound": False,
            "n_boot_p": _replicates(e),
            "n_eff_clusters": e.n_eff_clusters,
            "few_clusters": bool(e.few_clusters),
            "method": e.method,
        }
    diff_reps = stats.ratio_replicates(cell.reps[:, 0] - cell.reps[:, 1], cell.reps[:, 2])
    p = _diff_p(cell, boot, key) if n else inference.PValue(np.nan, 0, np.nan, False)
    return common | {
        **stats.interval_fields(
            value[0] - value[1], diff_reps, level=boot.level, names=("diff", "ci_low", "ci_high")
        ),
        "n_clusters": cell.strata.n_units,
        "p_bootstrap": p.p,
        "p_bound": bool(p.bound),
        "n_boot_p": int(p.n_boot),
        "n_eff_clusters": np.nan,
        "few_clusters": False,
        "method": "cluster bootstrap, percentile; adaptive bootstrap p",
    }
