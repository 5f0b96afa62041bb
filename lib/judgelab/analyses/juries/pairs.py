"""Judge × judge tables: the cells, the paired bootstrap and the matrix they fill.

Cohen's kappa (`kappa`) and error correlation (`correlation`) compare two judges on the units
both rated, per pool × split and pooled over the splits (each split bootstrapped on its own,
stratified; by default only splits rated by the same judges are pooled together, one pooled
cell per judge set). The bootstrap resamples clusters (`cluster`: the items' resampling
unit, else the item; None: units on their own, the legacy bootstrap). Both orders of a pair
carry the same statistic; the diagonal compares a judge with itself.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from judgelab.analyses import pairwise
from judgelab.analyses.juries import resample
from judgelab.core import clusters, stats
from judgelab.core.jackknife import leave_one_out
from judgelab.core.schema import require_columns as _require
from judgelab.errors import check_choice

#: A stratum: its name (`<benchmark>/<split>`), its units × judges values and each unit's
#: resampling unit (a Series indexed by unit).
Stratum = tuple[str, pd.DataFrame, pd.Series]
POOL_STRATA: tuple[str, ...] = ("same_judges", "all")


class PairCell(NamedTuple):
    """The judges of one pool × split (or pooled row) and the strata their pairs are read from."""

    key: dict[str, Any]
    judges: list[str]
    strata: list[Stratum]


def pair_cells(
    long: pd.DataFrame,
    *,
    across: str | None,
    cluster: str | None = "cluster",
    pool_strata: str = "same_judges",
) -> list[PairCell]:
    """Return one `PairCell` per pool × split of a long table, plus pooled cells per pool.

    Args:
        long: `pool`, `benchmark`, `split`, `unit`, `judge`, `value` (e.g. `ratings`), and
            the `cluster` column when given.
        across: Add pooled cells per pool over its splits, or None.
        cluster: Column of `long` giving each unit's resampling unit (absent or None: each
            unit on its own).
        pool_strata: `same_judges` (one pooled cell per judge set: `pooled`, or `pooled[1]`,
            `pooled[2]`, … by decreasing size when the splits' judges differ) or `all`.
    """
    check_choice("pool_strata", pool_strata, POOL_STRATA)
    cells: list[PairCell] = []
    for pool_value, pblock in long.groupby("pool", sort=True):
        split_cells = []
        for (bench, split), block in pblock.groupby(["benchmark", "split"], sort=True):
            wide = block.pivot(index="unit", columns="judge", values="value")
            if cluster is not None and cluster in block.columns:
                units = block.drop_duplicates("unit").set_index("unit")[cluster]
            else:
                units = pd.Series(wide.index, index=wide.index)
            key = {"pool": pool_value, "benchmark": bench, "split": split}
            stratum = (f"{bench}/{split}", wide, units)
            split_cells.append(PairCell(key, sorted(wide.columns), [stratum]))
        cells += split_cells
        if across is not None and split_cells:
            cells += _pooled(pool_value, split_cells, pool_strata)
    return cells


def _pooled(pool_value: object, split_cells: list[PairCell], pool_strata: str) -> list[PairCell]:
    """Return the pooled cells of one pool (per judge set, or one over every split)."""
    groups: dict[tuple, list[PairCell]] = {}
    for c in split_cells:
        groups.setdefault(() if pool_strata == "all" else tuple(c.judges), []).append(c)
    sets = sorted(groups.items(), key=lambda kv: (-len(kv[0]), kv[0]))
    out = []
    for i, (_, members) in enumerate(sets, start=1):
        judges = sorted({j for c in members for j in c.judges})
        benches = ",".join(sorted({c.key["benchmark"] for c in members}))
        label = pairwise.POOLED if len(sets) == 1 else f"{pairwise.POOLED}[{i}]"
        key = {"pool": pool_value, "benchmark": benches, "split": label}
        out.append(PairCell(key, judges, [s for c in members for s in c.strata]))
    return out


def judge_column(strata: Sequence[Stratum], judge: str) -> pd.Series:
    """Return one judge's values over the strata it appears in."""
    parts = [s[1][judge] for s in strata if judge in s[1].columns]
    return pd.concat(parts, ignore_index=True) if parts else pd.Series(dtype=float)


class PairUnits(NamedTuple):
    """The units two judges both rated: one-hot confusion rows, cluster labels, strata."""

    rows: np.ndarray  # units × V²: one 1 at (value of j1) · V + (value of j2)
    labels: np.ndarray  # each unit's resampling unit (shared across strata by label)
    stratum: np.ndarray  # each unit's stratum index (the bootstrap resamples within it)


def pair_units(cell: PairCell, j1: str, j2: str, *, n_values: int) -> PairUnits:
    """Return the units both judges rated over the cell's strata (either missing: dropped)."""
    rows, labels, stratum = [], [], []
    for i, (_, w, units) in enumerate(cell.strata):
        if j1 not in w.columns or j2 not in w.columns:
            continue
        both = w[[j1, j2]].dropna()
        pair = both.to_numpy(dtype=np.int64)
        onehot = np.zeros((len(pair), n_values * n_values))
        onehot[np.arange(len(pair)), pair[:, 0] * n_values + pair[:, 1]] = 1.0
        rows.append(onehot)
        labels.append(units.reindex(both.index).astype(str).to_numpy(dtype=object))
        stratum.append(np.full(len(pair), i))
    if not rows:
        return PairUnits(np.zeros((0, n_values * n_values)), np.zeros(0, object), np.zeros(0))
    return PairUnits(np.concatenate(rows), np.concatenate(labels), np.concatenate(stratum))


def pair_bootstrap(
    cell: PairCell, j1: str, j2: str, *, seed: int, n_boot: int, n_values: int
) -> tuple[np.ndarray, np.ndarray]:
    """Return the confusion counts (V × V) of two judges and their bootstrap replicates.

    Values are integer codes 0..V-1; units either judge left missing are dropped. Each
    stratum's resampling units (clusters: every unit of a drawn cluster together) are
    resampled on their own with a generator seeded by pool, stratum and pair.
    """
    units = pair_units(cell, j1, j2, n_values=n_values)
    conf = units.rows.sum(axis=0).reshape(n_values, n_values)
    reps = np.zeros((n_boot, n_values, n_values))
    for i, (name, _, _) in enumerate(cell.strata):
        inside = units.stratum == i
        if not inside.any():
            continue
        codes = pd.factorize(units.labels[inside], sort=True)[0]
        rng = stats.rng_for(seed, "pair", cell.key["pool"], name, j1, j2)
        per_unit = clusters.sum_by(units.rows[inside], codes)
        reps += stats.bootstrap_sums(per_unit, n_boot=n_boot, rng=rng).reshape(
            n_boot, n_values, n_values
        )
    return conf, reps


def pair_fields(
    cell: PairCell,
    j1: str,
    j2: str,
    statistic: Callable[[np.ndarray], np.ndarray],
    *,
    n_values: int,
    interval: str,
    seed: int,
    n_boot: int,
    level: float,
) -> tuple[np.ndarray, dict[str, Any]]:
    """Return the confusion counts of two judges and the interval fields of `statistic`.

    `statistic` maps confusion counts (…, V, V) to the value (kappa, phi), vectorised. The
    jackknife deletes one resampling unit (cluster) at a time from every stratum it is in;
    effective clusters weigh every unit alike, with the ICC of agreement (`resample.
    smooth_fields` gives the interval, the bias and the flags).
    """
    units = pair_units(cell, j1, j2, n_values=n_values)
    conf = units.rows.sum(axis=0).reshape(n_values, n_values)
    value = float(statistic(conf))
    codes = pd.factorize(units.labels, sort=True)[0]
    G = int(codes.max()) + 1 if codes.size else 0
    per = clusters.sum_by(units.rows, codes).reshape(G, n_values, n_values)
    leave = leave_one_out(per, statistic) if G else np.zeros(0)
    diagonal = np.arange(n_values) * (n_values + 1)
    agree = units.rows[:, diagonal].sum(axis=1)
    n_eff = clusters.effective(np.ones(len(codes)), codes, resid=agree) if G else 0.0

    def replicates() -> np.ndarray:
        reps = pair_bootstrap(cell, j1, j2, seed=seed, n_boot=n_boot, n_values=n_values)[1]
        return statistic(reps)

    fields = resample.smooth_fields(
        value, leave, replicates, interval=interval, level=level, n_clusters=G, n_eff=n_eff
    )
    return conf, {"n_clusters": G} | fields


#: Interval columns of a pair statistic (besides its value, `ci_low`, `ci_high`).
PAIR_INTERVAL_COLUMNS: tuple[str, ...] = (
    "bias",
    "se",
    "interval",
    "n_clusters",
    "n_eff_clusters",
    "few_clusters",
    "method",
)
#: The diagonal's interval columns (a judge against itself: nothing to estimate).
DIAGONAL_INTERVAL = {
    "bias": 0.0,
    "se": 0.0,
    "interval": "",
    "n_clusters": 0,
    "n_eff_clusters": float("nan"),
    "few_clusters": False,
    "method": "a judge with itself",
}


PairFn = Callable[[PairCell, str, str], Mapping[str, Any]]
DiagonalFn = Callable[[PairCell, str], Mapping[str, Any]]


def pair_table(
    cells: Sequence[PairCell],
    pair: PairFn,
    diagonal: DiagonalFn,
    *,
    columns: Sequence[str],
    swap: Sequence[tuple[str, str]] = (),
) -> pd.DataFrame:
    """Return the judge × judge table of every cell in long form (`stats.pairwise_matrix`).

    Args:
        cells: The `pair_cells`.
        pair: `pair(cell, j1, j2)` → the values of a pair (j1 < j2), written for both orders.
        diagonal: `diagonal(cell, j)` → the values of (j, j).
        columns: The output columns (the cell's key, `judge_1`, `judge_2`, the values).
        swap: Value columns exchanged in the mirrored row (j2, j1).
    """
    frames = [
        stats.pairwise_matrix(
            cell.judges, partial(pair, cell), diagonal=partial(diagonal, cell), swap=swap
        ).assign(**cell.key)
        for cell in cells
    ]
    if not frames:
        return pd.DataFrame(columns=list(columns))
    return pd.concat(frames, ignore_index=True)[list(columns)]


def mean_off_diagonal(table: pd.DataFrame, *, value: str = "phi") -> pd.DataFrame:
    """Return the mean of a pairwise statistic over distinct judge pairs per pool × split.

    Returns:
        `pool`, `benchmark`, `split`, `mean_<value>`, `n_pairs`.
    """
    _require(table, ["pool", "split", "judge_1", "judge_2", value], "mean_off_diagonal")
    off = table[table["judge_1"] < table["judge_2"]]
    out = off.groupby(["pool", "benchmark", "split"], sort=False)[value].agg(["mean", "count"])
    return out.rename(columns={"mean": f"mean_{value}", "count": "n_pairs"}).reset_index()


def jury_context(summary: pd.DataFrame, kappa: pd.DataFrame, errors: pd.DataFrame) -> pd.DataFrame:
    """Return the jury summary beside the pool's mean kappa and mean error correlation.

    Args:
        summary: Output of `jury_tables.jury_summary`.
        kappa: Output of `kappa.cohen_kappa_matrix`.
        errors: Output of `correlation.error_correlation`.

    Returns:
        Per pool × split: `best_judge_ca`, `best_jury_ca`, `best_jury_diff_vs_best`,
        `share_beating_best`, `mean_kappa`, `mean_phi` and `n`.
    """
    keys = ["pool", "benchmark", "split"]
    _require(summary, [*keys, "best_jury_ca"], "jury_context")
    cols = [
        *keys,
        "vote_rule",
        "best_judge_ca",
        "best_jury_ca",
        "best_jury_diff_vs_best",
        "share_beating_best",
        "n",
    ]
    base = mean_off_diagonal(kappa, value="kappa")[[*keys, "mean_kappa"]]
    base = base.merge(
        mean_off_diagonal(errors, value="phi")[[*keys, "mean_phi"]], on=keys, how="outer"
    )
    base = base.astype({k: object for k in keys})
    # pools without a scored jury (no gold) keep their agreement numbers
    out = base.merge(summary[cols].astype({k: object for k in keys}), on=keys, how="left")
    return out[[*cols, "mean_kappa", "mean_phi"]]
