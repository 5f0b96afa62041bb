"""Reference conditions of one judge compared on the same items (spec 001 §4.5, Table 5).

Every pair of conditions of a judge (reference=human vs =self vs =none …) is compared on the
items both conditions judged: the difference of a per-item 0/1 outcome (CA by default) with a
*paired* cluster bootstrap — a drawn cluster (source, question) brings both conditions'
outcomes of all its items — its percentile interval, and a two-sided bootstrap p-value
resolved adaptively (`inference.adaptive_p`). The exact McNemar p on the discordant items
is kept beside it (`p_mcnemar`; `test="mcnemar"` makes it the reported p, the legacy choice).
The comparisons of one judge × group are one family: `p_adjusted` is Holm-adjusted across
them (stated in `adjustment`, with `n_tests`).

Pooled rows over splits resample clusters within each split (stratified). With
`missing_as_error`, items complete in one condition only are added as errors of the other
(`missing = "error"` rows) wherever the two conditions' complete items differ.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations

import numpy as np
import pandas as pd

from judgelab.analyses import pairwise
from judgelab.core import clusters, inference, stats
from judgelab.core.schema import require_columns as _require
from judgelab.errors import check_choice

TESTS = ("bootstrap", "mcnemar")
MAX_BOOT = 20_000
_COLUMNS = ["metric", "missing", "value_1", "value_2", "diff", "ci_low", "ci_high", "n_common",
            "n_clusters", "only_1", "only_2", "p_value", "p_bound", "n_boot_p", "p_mcnemar",
            "p_adjusted", "adjustment", "n_tests"]  # fmt: skip


def _wide(outcomes: pd.DataFrame, metric: str, keys: list[str], cluster: str | None):
    """Return (per-item outcome per condition, cluster per item) of complete items."""
    num_col, den_col, _ = pairwise.METRICS[metric]
    data = outcomes[outcomes["complete"].astype(bool)]
    if den_col == "has_gold":
        data = data[data["has_gold"].astype(bool)]
    index = [*keys, "sample", "item_id"]
    unit = clusters.codes(data, cluster)  # None or absent: each item its own unit
    units = pd.Series(unit, index=pd.MultiIndex.from_frame(data[index]))
    units = units[~units.index.duplicated()]
    wide = data.set_index([*index, "condition"])[num_col].astype(float).unstack("condition")
    return wide, units.reindex(wide.index)


def _strata(x: pd.DataFrame, units: pd.Series, missing: str) -> tuple[np.ndarray, np.ndarray]:
    """Return (per-cluster sums of [x1, x2, 1], discordant counts) of one cell and pair."""
    x = x.dropna() if missing == "exclude" else x.dropna(how="all").fillna(0.0)
    vals = np.column_stack([x.to_numpy(), np.ones(len(x))])
    codes = pd.factorize(units.reindex(x.index).to_numpy(), sort=True)[0]
    disc = np.array([np.sum(vals[:, 0] > vals[:, 1]), np.sum(vals[:, 0] < vals[:, 1])])
    return clusters.sum_by(vals, codes) if len(vals) else np.zeros((0, 3)), disc


def _fields(mats: list[np.ndarray], disc: np.ndarray, rng, n_boot: int, level: float) -> dict:
    """Return the comparison fields of one cell (several strata: stratified bootstrap)."""
    total = sum(m.sum(axis=0) for m in mats)
    n = total[2]

    def draw(k: int) -> np.ndarray:
        s = sum(stats.bootstrap_sums(m, n_boot=k, rng=rng) for m in mats if len(m))
        return stats.ratio_replicates(s[:, 0] - s[:, 1], s[:, 2])

    if n == 0:
        return {"n_common": 0, "n_clusters": 0, "p_value": np.nan, "p_mcnemar": np.nan}
    reps = draw(n_boot)
    pv = inference.adaptive_p(draw, first=reps, n_boot=n_boot, max_boot=max(MAX_BOOT, n_boot))
    return {
        "value_1": total[0] / n,
        "value_2": total[1] / n,
        **stats.interval_fields(
            (total[0] - total[1]) / n, reps, level=level, names=("diff", "ci_low", "ci_high")
        ),  # fmt: skip
        "n_common": int(n),
        "n_clusters": int(sum(len(m) for m in mats)),
        "only_1": int(disc[0]),
        "only_2": int(disc[1]),
        "p_value": pv.p,
        "p_bound": pv.bound,
        "n_boot_p": pv.n_boot,
        "p_mcnemar": stats.sign_test(int(disc[0]), int(disc.sum())).p_value,
    }


def compare_conditions(
    outcomes: pd.DataFrame,
    *,
    metric: str = "ca",
    across: str | None = "split",
    cluster: str | None = "cluster",
    test: str = "bootstrap",
    adjust: str = "holm",
    missing_as_error: bool = True,
    n_boot: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> pd.DataFrame:
    """Compare every pair of conditions of each judge on the items both judged (paired).

    Args:
        outcomes: `pairwise.item_outcomes` output grouped by judge and `condition` (from
            judgments carrying `cluster`, so that outcomes keep their cluster).
        metric: One of a1, a2, ca, oa, cons.
        across: Group column pooled into an extra `pooled` row (stratified), or None.
        cluster: Resampling unit column (absent: each item is its unit); None = items (legacy).
        test: `bootstrap` (adaptive bootstrap p) or `mcnemar` (exact, items independent).
        adjust: Multiplicity correction across one judge's comparisons (`inference.adjust`).
        missing_as_error: Add `missing = "error"` rows where the conditions' complete items
            differ (an item complete in one condition only counts as an error of the other).
        n_boot: Bootstrap resamples B behind the intervals.
        seed: Seed of the bootstrap.
        level: Confidence level.

    Returns:
        `judge`, `condition_1`, `condition_2`, the other group keys, `sample`, then `metric`,
        `missing`, `value_1`, `value_2`, `diff` (1 − 2), `ci_low`, `ci_high`, `n_common`,
        `n_clusters`, `only_1`, `only_2`, `p_value`, `p_bound`, `n_boot_p`, `p_mcnemar`,
        `p_adjusted`, `adjustment`, `n_tests`.
    """
    check_choice("compare_conditions metric", metric, pairwise.COMPARE_METRICS)
    check_choice("test", test, TESTS)
    _require(outcomes, ["judge", "condition"], "compare_conditions")
    # group columns: those before `item_id` in `item_outcomes` output
    _require(outcomes, ["item_id", "sample", "complete", "has_gold"], "compare_conditions")
    cols = list(outcomes.columns)
    keys = [g for g in cols[: cols.index("item_id")] if g not in ("condition", "cluster")]
    other = [k for k in keys if k != "judge"]
    if across is not None and across not in other:
        raise KeyError(f"across={across!r} is not a group column of the outcomes ({keys})")
    wide, units = _wide(outcomes, metric, keys, cluster)
    rows = []
    for c1, c2 in combinations(sorted(wide.columns), 2):
        pair = wide[[c1, c2]]
        both = pair.dropna()
        differs = len(both) < len(pair.dropna(how="all"))
        for missing in ["exclude"] + (["error"] if missing_as_error and differs else []):
            rows += _pair_rows(pair, units, (c1, c2), keys, across, missing, n_boot, seed, level)
    out = pd.DataFrame(rows, columns=["judge", "condition_1", "condition_2", *other, "sample",
                                      *_COLUMNS])  # fmt: skip
    out["metric"] = metric
    if test == "mcnemar":
        out["p_value"], out["p_bound"], out["n_boot_p"] = out["p_mcnemar"], False, 0
    return _adjust(out, ["judge", *other, "sample", "missing"], adjust)


def _pair_rows(pair, units, conds, keys, across, missing, n_boot, seed, level) -> list[dict]:
    """Rows of one condition pair: each cell, then the pooled rows over `across`."""
    cells: dict[tuple, tuple[np.ndarray, np.ndarray]] = {}
    for key, block in pair.groupby(level=[*keys, "sample"], sort=True, dropna=False):
        cells[key] = _strata(block, units, missing)
    pools: dict[tuple, list[tuple]] = {}
    if across is not None:
        pos = keys.index(across)
        for key in cells:
            pools.setdefault((*key[:pos], "pooled", *key[pos + 1 :]), []).append(key)
    rows = []
    for key, parts in [*((k, [k]) for k in cells), *pools.items()]:
        mats = [cells[p][0] for p in parts]
        disc = sum(cells[p][1] for p in parts)
        rng = stats.rng_for(seed, "conditions", *conds, missing, *key)
        rows.append(
            {
                "condition_1": conds[0],
                "condition_2": conds[1],
                **dict(zip([*keys, "sample"], key, strict=True)),
                "missing": missing,
                **_fields(mats, disc, rng, n_boot, level),
            }  # fmt: skip
        )
    return rows


def _adjust(out: pd.DataFrame, family: Sequence[str], method: str) -> pd.DataFrame:
    out = out.copy()
    out["adjustment"] = method
    if out.empty:
        return out
    fam = out[list(family)].astype(str).agg("|".join, axis=1)
    out["n_tests"] = fam.map(fam.value_counts()).astype(int)
    out["p_adjusted"] = np.nan
    adjust = holm if method == "holm" else lambda p: inference.adjust(p, method)
    for _, idx in out.groupby(fam).groups.items():
        out.loc[idx, "p_adjusted"] = adjust(out.loc[idx, "p_value"].to_numpy(dtype=float))
    return out


def holm(p_values: np.ndarray) -> np.ndarray:
    """Return Holm-adjusted p-values (NaNs left out of the family), as `inference.adjust`.

    Computed here because statsmodels' Holm runs a full garbage collection on every call
    (~0.2 s), too slow inside a calibration replicate.

    >>> holm(np.array([0.01, 0.04, np.nan])).round(3).tolist()
    [0.02, 0.04, nan]
    """
    p = np.asarray(p_values, dtype=np.float64)
    out = p.copy()
    ok = np.flatnonzero(~np.isnan(p))
    order = ok[np.argsort(p[ok], kind="stable")]
    scaled = p[order] * np.arange(len(order), 0, -1)
    out[order] = np.minimum(1.0, np.maximum.accumulate(scaled))
    return out
