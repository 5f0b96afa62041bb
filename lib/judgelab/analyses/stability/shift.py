"""Verdict shift: what swapping one judge (version, template) for another does to the verdicts.

On the units both rated (`units.wide`): the shift matrix (each label of A and where B sends
it), and three interval rows per pair — `agreement` (share of units with the same label),
`changed` (share whose label changes: 1 − agreement, the "flip share") and Cohen's `kappa`.
The shares are ratios of sums through `core.estimates.ratio` (the restricted wild cluster
bootstrap, inverted); kappa is a smooth function of the cluster-summed confusion counts and
takes the juries family's interval (`juries.resample.smooth_fields`: the bias-corrected
cluster jackknife with t on the effective clusters). Every row carries `n`, `n_clusters`,
`n_eff_clusters`, `few_clusters` and `method`.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations

import numpy as np
import pandas as pd

from judgelab.analyses.juries import resample
from judgelab.analyses.stability import units as _units
from judgelab.core import clusters, estimates, stats, wild
from judgelab.core.jackknife import leave_one_out

#: The measures of a verdict-shift row.
MEASURES: tuple[str, ...] = ("agreement", "changed", "kappa")
#: Columns of `verdict_shift` (after the `within` columns).
SHIFT_COLUMNS: tuple[str, ...] = ("a", "b", "measure", *estimates.FIELDS)


def judge_pairs(
    values: Sequence[str],
    pairs: Sequence[tuple[str, str]] | None,
    reference: str | None = None,
) -> list:
    """Return the pairs to compare: `pairs`; else (reference, v); else every two values.

    (reference, v) pairs every other value with `reference` when it is one of `values`.

    >>> judge_pairs(["b", "a", "c"], None, "c")
    [('c', 'a'), ('c', 'b')]
    """
    if pairs is not None:
        return [tuple(p) for p in pairs]
    if reference is not None:
        if reference not in values:
            return []
        return [(reference, v) for v in sorted(values) if v != reference]
    return list(combinations(sorted(values), 2))


def _confusion(a: np.ndarray, b: np.ndarray, codes: np.ndarray, categories: list[str]):
    """Return per-cluster confusion counts (G × V × V) of two label vectors."""
    V = len(categories)
    index = {c: i for i, c in enumerate(categories)}
    ia = np.array([index[x] for x in a], dtype=np.int64)
    ib = np.array([index[x] for x in b], dtype=np.int64)
    G = int(codes.max()) + 1 if codes.size else 0
    cell = codes * V * V + ia * V + ib
    return np.bincount(cell, minlength=G * V * V).astype(np.float64).reshape(G, V, V)


def kappa_fields(
    a: np.ndarray, b: np.ndarray, codes: np.ndarray, *, level: float = 0.95
) -> dict[str, object]:
    """Return Cohen's kappa of two label vectors with its cluster-jackknife interval fields.

    Args:
        a: Labels of rater A (strings), one per unit.
        b: Labels of rater B on the same units.
        codes: Each unit's resampling-unit code (0..G−1).
        level: Confidence level.

    Returns:
        `estimates.FIELDS` (p_value NaN: kappa is shown with its interval only).
    """
    categories = sorted(set(a) | set(b))
    per = _confusion(a, b, codes, categories)
    conf = per.sum(axis=0)
    value = float(stats.kappa_from_confusion(conf))
    G = per.shape[0]
    leave = leave_one_out(per, stats.kappa_from_confusion) if G else np.zeros(0)
    agree = (a == b).astype(np.float64)
    n_eff = clusters.effective(np.ones(len(codes)), codes, resid=agree) if G else 0.0
    f = resample.smooth_fields(
        value, leave, lambda: np.zeros(0), interval="jackknife", level=level,
        n_clusters=G, n_eff=n_eff,
    )  # fmt: skip
    return {
        "value": value,
        "ci_low": f["ci_low"],
        "ci_high": f["ci_high"],
        "p_value": float("nan"),
        "n": float(len(a)),
        "n_clusters": G,
        "n_eff_clusters": f["n_eff_clusters"],
        "few_clusters": f["few_clusters"],
        "method": f["method"],
    }


def pair_rows(
    a: np.ndarray,
    b: np.ndarray,
    codes: np.ndarray,
    *,
    rng_key: tuple,
    seed: int = 0,
    level: float = 0.95,
    n_boot: int = wild.N_BOOT,
) -> list[dict[str, object]]:
    """Return the `agreement`, `changed` and `kappa` rows of two label vectors on shared units."""
    same = (a == b).astype(np.float64)
    ones = np.ones(len(same))
    out = []
    for measure, num in (("agreement", same), ("changed", 1.0 - same)):
        est = estimates.ratio(
            num, ones, codes, level=level, n_boot=n_boot,
            rng=estimates.seeded(seed, *rng_key, measure),
        )  # fmt: skip
        out.append({"measure": measure} | est.fields())
    out.append({"measure": "kappa"} | kappa_fields(a, b, codes, level=level))
    return out


def verdict_shift(
    judgments: pd.DataFrame,
    *,
    by: str = "judge",
    pairs: Sequence[tuple[str, str]] | None = None,
    reference: str | None = None,
    within: Sequence[str] = (),
    label: str | None = None,
    seed: int = 0,
    level: float = 0.95,
    n_boot: int = wild.N_BOOT,
) -> pd.DataFrame:
    """Return agreement, the share of changed verdicts and Cohen's kappa of pairs of raters.

    Args:
        judgments: A judgments table (see `units.wide`).
        by: The column whose values are swapped (`judge`, `prompt`, `model`, `sample`).
        pairs: The (A, B) pairs to compare (None: see `reference`).
        reference: Compare this value (A) with every other (B) in each `within` group (a
            group without it is skipped); None with `pairs` None: every two values.
        within: Columns held fixed while `by` changes (e.g. `model` when `by="prompt"`).
        label: The label column (default `chosen` for pairwise, else `verdict`).
        seed: Seed of the bootstraps (each row seeded by its key).
        level: Confidence level.
        n_boot: Wild bootstrap replicates of the shares.

    Returns:
        `within…`, `a`, `b`, `measure` (`agreement`, `changed`, `kappa`), `value`, `ci_low`,
        `ci_high`, `p_value`, `n` (units both rated), `n_clusters`, `n_eff_clusters`,
        `few_clusters`, `method`. Pairs with no unit in common are left out.
    """
    within = list(within)
    rows: list[dict[str, object]] = []
    groups = judgments.groupby(within, sort=True) if within else [((), judgments)]
    for key, block in groups:
        key = key if isinstance(key, tuple) else (key,)
        head = dict(zip(within, key, strict=True))
        w = _units.wide(block, by=by, label=label)
        values = [c for c in w.columns if c not in (*_units.UNIT_KEYS, "cluster")]
        for a, b in judge_pairs(values, pairs, reference):
            if a not in w.columns or b not in w.columns:
                continue
            both = w[w[a].notna() & w[b].notna()]
            if both.empty:
                continue
            codes = _units.unit_codes(both)
            for r in pair_rows(
                both[a].to_numpy(dtype=object), both[b].to_numpy(dtype=object), codes,
                rng_key=("shift", by, *key, a, b), seed=seed, level=level, n_boot=n_boot,
            ):  # fmt: skip
                rows.append(head | {"a": a, "b": b} | r)
    return pd.DataFrame(rows, columns=[*within, *SHIFT_COLUMNS])


def shift_matrix(
    judgments: pd.DataFrame,
    a: str,
    b: str,
    *,
    by: str = "judge",
    label: str | None = None,
) -> pd.DataFrame:
    """Return the shift matrix of two raters on the units both rated (A's label → B's).

    Returns:
        One row per (from, to) pair of labels: `a`, `b`, `from`, `to`, `n` (units),
        `share` (of the units A gave `from`), `share_all` (of all shared units).
    """
    w = _units.wide(judgments, by=by, label=label)
    for name in (a, b):
        if name not in w.columns:
            raise KeyError(f"shift_matrix: no rows with {by}={name!r}")
    both = w[w[a].notna() & w[b].notna()]
    counts = both.groupby([a, b]).size()
    cats = sorted(set(both[a]) | set(both[b]))
    full = counts.reindex(pd.MultiIndex.from_product([cats, cats]), fill_value=0)
    out = full.rename("n").rename_axis(["from", "to"]).reset_index()
    totals = out.groupby("from")["n"].transform("sum")
    out["share"] = np.where(totals > 0, out["n"] / totals.where(totals > 0, 1), np.nan)
    out["share_all"] = out["n"] / max(len(both), 1)
    return out.assign(a=a, b=b)[["a", "b", "from", "to", "n", "share", "share_all"]]


def focus_pair(shift: pd.DataFrame, a: str, b: str) -> tuple[str, str] | None:
    """Return (a, b) when the shift table compares them, else its pair that changed most.

    None when the table is empty. `a` and `b` may come in either order in the table.
    """
    if shift.empty:
        return None
    ab = shift[["a", "b"]].astype(str)
    if ((ab["a"] == a) & (ab["b"] == b)).any() or ((ab["a"] == b) & (ab["b"] == a)).any():
        return a, b
    changed = shift[shift["measure"] == "changed"]
    top = changed.loc[changed["value"].idxmax()]
    return str(top["a"]), str(top["b"])


def shift_reason(shift: pd.DataFrame) -> str | None:
    """Return why no verdict shift can be shown, None when some pair shares units."""
    if not shift.empty:
        return None
    return (
        "no two judges (versions, templates) rated the same items, so no verdict can be "
        "compared across a swap; run a second judge over the same benchmark (`judgelab judge` "
        "with a second spec) to see it"
    )
