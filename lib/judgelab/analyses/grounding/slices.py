"""Per-slice PPI++ with stratified label allocation: where the labels go, what each slice gets.

A slice is a category, a candidate model (an exam-taker) or a source. `by_slice` gives each
slice its own corrected estimate (`methods.estimates` on the slice's items: its own λ̂, its
own labels, its own interval) and the population-level estimate from the strata
(`methods.estimates` with `stratum`: per-stratum wild intervals combined by MOVER when
clusters are shared, `strata`), each beside the naive and human-only rows. `study` replays
the whole plan on a table where every item carries a human label (UMass TriviaQA): a pilot
of `pilot` labels per slice, `budget.allocate` on it (proportional and Neyman), then the
labels each plan asks for — the pilot's labels kept, never drawn again — and `by_slice` on
each plan, with the all-human value of every slice beside its rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from judgelab.analyses.grounding import budget as _budget
from judgelab.analyses.grounding import methods as _methods
from judgelab.core import stats
from judgelab.core.schema import require_columns

#: The rows `by_slice` reports per slice (the judge alone, humans alone, PPI++).
METHODS = ("naive", "classical", "ppi")
#: Columns of a `by_slice` row.
COLUMNS = (
    "slice", "method", "estimate", "ci_low", "ci_high", "n_labelled", "n_total", "n_clusters",
    "n_eff_clusters", "few_clusters", "lambda", "interval", "share",
)  # fmt: skip


def by_slice(
    df: pd.DataFrame,
    *,
    slice_col: str = "group",
    labelled_col: str | None = None,
    cluster_col: str | None = "cluster",
    methods: Sequence[str] = METHODS,
    level: float = 0.95,
    n_boot: int = 999,
    seed: int = 0,
) -> pd.DataFrame:
    """Return each slice's PPI++ (and naive, classical) row, then the stratified `all` rows.

    Args:
        df: One row per item: `judge_label` (every item), `human_label` (NaN where
            unlabelled), the slice and (optionally) the cluster.
        slice_col: The slice of every item (the strata of the population row).
        labelled_col: Boolean column of the labelled items (default: human label present).
        cluster_col: Resampling unit (None: items independent).
        methods: Rows per slice (`ppi.METHODS`).
        level: Confidence level.
        n_boot: Wild-bootstrap replicates.
        seed: Seed (each slice's rows seeded by the slice's name).

    Returns:
        `COLUMNS`: per slice, then `slice="all"` (population target); `share` the slice's
        items among all items (the stratum weight).
    """
    require_columns(df, ["judge_label", "human_label", slice_col, labelled_col, cluster_col],
                    "grounding.slices.by_slice")  # fmt: skip
    options = {"target": "population", "level": level, "n_boot": n_boot, "methods": methods}

    def rows(part: pd.DataFrame, name: str, stratum: Any = None) -> pd.DataFrame:
        lab = None if labelled_col is None else part[labelled_col].astype(bool).to_numpy()
        out = _methods.estimates(
            part["judge_label"].to_numpy(float), part["human_label"].to_numpy(float),
            labelled=lab, stratum=stratum, seed=int(stats.rng_for(seed, name).integers(2**31)),
            cluster=None if cluster_col is None else part[cluster_col].to_numpy(object),
            **options,
        )  # fmt: skip
        return out.assign(slice=name, share=len(part) / len(df))

    parts = [rows(g, str(name)) for name, g in df.groupby(slice_col, sort=True)]
    parts.append(rows(df, "all", stratum=df[slice_col].astype(str).to_numpy(object)))
    return pd.concat(parts, ignore_index=True)[list(COLUMNS)]


def _draw(rng: np.random.Generator, codes: np.ndarray, have: np.ndarray, want: np.ndarray):
    """Return `have` plus random unlabelled items so that stratum h holds max(want_h, have_h)."""
    out = have.copy()
    for h, n in enumerate(want):
        free = np.flatnonzero((codes == h) & ~out)
        extra = int(n) - int(out[codes == h].sum())
        if extra > 0:
            out[rng.choice(free, size=extra, replace=False)] = True
    return out


def study(
    table: pd.DataFrame,
    *,
    judge: str,
    budget: int,
    pilot: int = 20,
    slice_col: str = "group",
    cluster_col: str | None = "cluster",
    level: float = 0.95,
    n_boot: int = 999,
    seed: int = 0,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Replay a stratified study of one judge on a fully human-labelled grounding table.

    Args:
        table: `tables.pointwise_table` rows (every item with its human label).
        judge: The judge studied.
        budget: Human labels in all (the pilot's included); a replay places at most half
            of the table's items (`budget_asked` in the plan keeps what was asked).
        pilot: Labels drawn at random in every slice first (what the plan is made from; at
            most a quarter of a slice's items, so a small table still leaves room to plan).
        slice_col: The slices (strata).
        cluster_col: Resampling unit, or None.
        level: Confidence level.
        n_boot: Wild-bootstrap replicates.
        seed: Seed of the draws and the intervals.

    Returns:
        (plan, estimates): `budget.allocate` on the pilot; `by_slice` rows under each
        allocation (`allocation` column) with the slice's all-human value (`all_human`)
        and whether the interval covers it.

    Raises:
        ValueError: `judge` is not in the table, or the budget cannot be placed.
    """
    require_columns(table, ["judge", "judge_label", "human_label", slice_col],
                    "grounding.slices.study")  # fmt: skip
    one = table[table["judge"] == judge].reset_index(drop=True)
    if one.empty:
        raise ValueError(
            f"judge {judge!r} not in the table; judges: {sorted(table['judge'].unique())[:10]}"
        )
    if not np.isfinite(one["human_label"].to_numpy(float)).all():
        raise ValueError("study replays a table with a human label on every item")
    names, codes = np.unique(one[slice_col].astype(str).to_numpy(), return_inverse=True)
    rng = stats.rng_for(seed, "grounding.slices", judge)
    sizes = np.bincount(codes)
    first = _draw(rng, codes, np.zeros(len(one), bool), np.minimum(pilot, sizes // 4))
    placed = min(int(budget), len(one) // 2)
    human = one["human_label"].to_numpy(float)
    plan = _budget.allocate(one["judge_label"].to_numpy(float), np.where(first, human, np.nan),
                            names[codes], placed)  # fmt: skip
    plan.insert(len(plan.columns), "budget_asked", int(budget))
    truth = one.groupby(slice_col)["human_label"].mean().rename(lambda s: str(s)).to_dict()
    truth["all"] = float(human.mean())
    parts = []
    for allocation in _budget.ALLOCATIONS:
        want = plan.set_index("stratum").loc[list(names), allocation].to_numpy()
        lab = _draw(rng, codes, first, want)
        rows = by_slice(one.assign(labelled=lab, human_label=np.where(lab, human, np.nan)),
                        slice_col=slice_col, labelled_col="labelled", cluster_col=cluster_col,
                        level=level, n_boot=n_boot, seed=seed)  # fmt: skip
        parts.append(rows.assign(allocation=allocation, judge=judge))
    out = pd.concat(parts, ignore_index=True)
    out["all_human"] = out["slice"].map(truth)
    out["covers"] = (out["ci_low"] <= out["all_human"]) & (out["all_human"] <= out["ci_high"])
    return plan.assign(judge=judge), out
