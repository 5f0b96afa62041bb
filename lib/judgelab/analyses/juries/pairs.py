"""Judge × judge tables: the cells, the paired bootstrap and the matrix they fill.

Cohen's kappa (`kappa`) and error correlation (`correlation`) compare two judges on the units
both rated, per pool × split and pooled over the splits (each split bootstrapped on its own,
stratified). Both orders of a pair carry the same statistic; the diagonal compares a judge
with itself.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from judgelab.analyses import pairwise
from judgelab.core import stats
from judgelab.core.schema import require_columns as _require

#: A stratum: its name (`<benchmark>/<split>`) and its units × judges values.
Stratum = tuple[str, pd.DataFrame]


class PairCell(NamedTuple):
    """The judges of one pool × split (or pooled row) and the strata their pairs are read from."""

    key: dict[str, Any]
    judges: list[str]
    strata: list[Stratum]


def pair_cells(long: pd.DataFrame, *, across: str | None) -> list[PairCell]:
    """Return one `PairCell` per pool × split of a long table, plus a pooled cell per pool.

    Args:
        long: `pool`, `benchmark`, `split`, `unit`, `judge`, `value` (e.g. `ratings`).
        across: Add a `pooled` cell per pool over its splits, or None.
    """
    cells: list[PairCell] = []
    for pool_value, pblock in long.groupby("pool", sort=True):
        split_cells = []
        for (bench, split), block in pblock.groupby(["benchmark", "split"], sort=True):
            wide = block.pivot(index="unit", columns="judge", values="value")
            key = {"pool": pool_value, "benchmark": bench, "split": split}
            split_cells.append(PairCell(key, sorted(wide.columns), [(f"{bench}/{split}", wide)]))
        cells += split_cells
        if across is not None and split_cells:
            judges = sorted({j for c in split_cells for j in c.judges})
            benches = ",".join(sorted({c.key["benchmark"] for c in split_cells}))
            key = {"pool": pool_value, "benchmark": benches, "split": pairwise.POOLED}
            cells.append(PairCell(key, judges, [s for c in split_cells for s in c.strata]))
    return cells


def judge_column(strata: Sequence[Stratum], judge: str) -> pd.Series:
    """Return one judge's values over the strata it appears in."""
    parts = [w[judge] for _, w in strata if judge in w.columns]
    return pd.concat(parts, ignore_index=True) if parts else pd.Series(dtype=float)


def pair_bootstrap(
    cell: PairCell, j1: str, j2: str, *, seed: int, n_boot: int, n_values: int
) -> tuple[np.ndarray, np.ndarray]:
    """Return the confusion counts (V × V) of two judges and their bootstrap replicates.

    Values are integer codes 0..V-1; units either judge left missing are dropped. Each
    stratum is resampled on its own with a generator seeded by pool, stratum and pair.
    """
    conf = np.zeros((n_values, n_values))
    reps = np.zeros((n_boot, n_values, n_values))
    for name, w in cell.strata:
        if j1 not in w.columns or j2 not in w.columns:
            continue
        pair = w[[j1, j2]].dropna().to_numpy(dtype=np.int64)
        onehot = np.zeros((len(pair), n_values * n_values))
        onehot[np.arange(len(pair)), pair[:, 0] * n_values + pair[:, 1]] = 1.0
        rng = stats.rng_for(seed, "pair", cell.key["pool"], name, j1, j2)
        reps += stats.bootstrap_sums(onehot, n_boot=n_boot, rng=rng).reshape(
            n_boot, n_values, n_values
        )
        conf += onehot.sum(axis=0).reshape(n_values, n_values)
    return conf, reps


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
