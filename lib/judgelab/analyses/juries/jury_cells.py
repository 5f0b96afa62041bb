"""One split's jury cells: each jury's and its members' per-item outcomes and cluster sums.

`score_split` votes every jury of a split and shares one cluster bootstrap between a jury
and its members (paired differences); `Items` keeps the per-item outcomes the wild
bootstrap reads, and `pool_items` joins them across splits.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
import pandas as pd

from judgelab.analyses.juries.crossfit import fold_of_units, fold_values
from judgelab.analyses.juries.resample import Sums, cluster_sums, select
from judgelab.analyses.juries.votes import POS, label_codes, vote
from judgelab.core import clusters


class Options(NamedTuple):
    """The inference settings `jury_table` passes down to every cell."""

    n_boot: int
    seed: int
    level: float
    rule: str  # best_member: simultaneous / crossfit / reselect / fixed
    interval: str
    max_boot: int
    cluster: str | None
    folds: int
    repeats: int

    @property
    def width(self) -> int:
        """Blocks of columns in a cell: totals (+ one per split × fold when cross-fitting)."""
        return self.repeats * self.folds + 1 if self.rule == "crossfit" else 1


class Items(NamedTuple):
    """Per-item outcomes of one jury cell: (jury, members…) values, folds, cluster labels."""

    values: np.ndarray  # n × (1 + m)
    fold: np.ndarray | None  # R × n (cross-fitting), or None
    labels: np.ndarray  # each item's resampling unit (shared across splits by label)


def pool_items(parts: Sequence[Items]) -> Items:
    """Return the items of several splits together (folds keep their per-split numbers)."""
    fold = None
    if parts and all(p.fold is not None for p in parts):
        fold = np.concatenate([p.fold for p in parts], axis=1)  # type: ignore[misc]
    return Items(
        np.concatenate([p.values for p in parts]),
        fold,
        np.concatenate([p.labels for p in parts]),
    )


def score_split(
    part: pd.DataFrame,
    all_juries: list[tuple[int, tuple]],
    rule: str,
    *,
    opts: Options,
    rng: np.random.Generator,
) -> tuple[list[str], list[tuple[tuple[int, tuple], Sums, Items]]]:
    """Return the split's judges and, per jury whose members all judged it, its sums and items.

    Items are those every judge of the split labelled; the jury and its members share one
    cluster bootstrap (paired differences). A cell's columns: jury, members....
    """
    wide = part.pivot(index="item_id", columns="judge", values="label").dropna()
    if wide.empty:
        return [], []
    present = list(wide.columns)
    codes = np.column_stack([label_codes(wide[j]) for j in present])
    cell_juries = [(s, j) for s, j in all_juries if set(j) <= set(present)]
    if not cell_juries:
        return present, []
    jury_ok = np.empty((len(codes), len(cell_juries)))
    for c, (_, jury) in enumerate(cell_juries):
        sub = codes[:, [present.index(m) for m in jury]]
        counts = np.stack([(sub == k).sum(axis=1) for k in range(3)], axis=-1)
        jury_ok[:, c] = vote(counts, rule=rule) == POS
    values = np.column_stack([jury_ok, (codes == POS).astype(float)])
    units = _item_units(part, wide.index, opts.cluster)
    labels = _item_labels(part, wide.index, opts.cluster)
    fold = None
    fold_blocks = values
    if opts.rule == "crossfit":  # fold blocks: a replicate re-selects on its training folds
        fold = fold_of_units(units, opts.folds, rng, opts.repeats)
        fold_blocks = fold_values(values, fold, opts.folds)
    boot = 1 if opts.interval == "wild" else opts.n_boot  # the wild path needs no replicates
    cell = cluster_sums(fold_blocks, units, n_boot=boot, rng=rng)
    n_j, w = len(cell_juries), len(cell_juries) + len(present)
    scored = []
    for c, (s, jury) in enumerate(cell_juries):
        member_cols = [c] + [n_j + present.index(m) for m in jury]
        cols = [b * w + col for b in range(opts.width) for col in member_cols]
        items = Items(values[:, member_cols], fold, labels)
        scored.append(((s, jury), select(cell, cols), items))
    return present, scored


def _item_labels(part: pd.DataFrame, items: pd.Index, cluster: str | None) -> np.ndarray:
    """Return the resampling unit label of each of `items` (its cluster, else the item)."""
    first = part.drop_duplicates("item_id").set_index("item_id").reindex(items)
    own = "item|" + first["benchmark"].astype(str) + "|" + first["split"].astype(str) + "|"
    own = (own + items.astype(str)).to_numpy(dtype=object)
    if cluster is None or cluster not in part.columns:
        return own
    given = first[cluster].astype("string")
    ok = (given.notna() & (given != "")).to_numpy()
    return np.where(ok, given.astype(str).to_numpy(dtype=object), own)


def _item_units(part: pd.DataFrame, items: pd.Index, cluster: str | None) -> np.ndarray:
    """Return the resampling unit code of each of `items` (its cluster, or itself)."""
    frame = pd.DataFrame({"item_id": items.astype(str)})
    if cluster is not None and cluster in part.columns:
        by_item = part.drop_duplicates("item_id").set_index("item_id")[cluster]
        frame[cluster] = by_item.reindex(items).astype("string").to_numpy()
    return clusters.codes(frame, cluster)
