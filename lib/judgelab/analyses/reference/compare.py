"""Reference conditions of one judge compared on the same items (spec 001 §4.5, Table 5).

Every pair of conditions of a judge (reference=human vs =self vs =none …) is compared on the
items both conditions judged: the difference of a per-item 0/1 outcome (CA by default).

**Default (`test="wild"`, DESIGN §9).** `core.estimates.contrast` of the two conditions'
rates over the items' rows, with the clusters (source, question) as units — both conditions'
outcomes of an item sit in its cluster, so the difference is paired — gives the interval that
inverts the restricted wild cluster bootstrap test of diff = 0 and that test's p-value; the
row reports its effective clusters (`n_eff_clusters`, `few_clusters`). Pooled rows over
splits take every split's rows, each cluster one unit across splits.

**Earlier defaults.** `test="bootstrap"`: a *paired* cluster bootstrap (pooled rows resample
within each split), its percentile interval and a two-sided bootstrap p-value resolved
adaptively (`inference.adaptive_p`); `test="mcnemar"` (legacy): that interval with the exact
McNemar p on the discordant items, which treats items as independent. The McNemar p is kept
beside every row (`p_mcnemar`).

The comparisons of one judge × group are one family: `p_adjusted` is Holm-adjusted across
them (stated in `adjustment`, with `n_tests`). With `missing_as_error`, items complete in one
condition only are added as errors of the other (`missing = "error"` rows) wherever the two
conditions' complete items differ. A row with no item in common, or too few clusters for a
test, says why in `declined`.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations

import numpy as np
import pandas as pd

from judgelab.analyses import pairwise
from judgelab.core import clusters, estimates, inference, stats
from judgelab.core.schema import require_columns as _require
from judgelab.errors import check_choice

TESTS = ("wild", "bootstrap", "mcnemar")
MAX_BOOT = 20_000
_COLUMNS = ["metric", "missing", "value_1", "value_2", "diff", "ci_low", "ci_high", "n_common",
            "n_clusters", "only_1", "only_2", "p_value", "p_bound", "n_boot_p", "p_mcnemar",
            "p_adjusted", "adjustment", "n_tests", "n_eff_clusters", "few_clusters", "method",
            "declined"]  # fmt: skip


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


class _Cell:
    """One cell's compared items: outcomes (n × 2), their cluster codes, discordant counts."""

    def __init__(self, x: pd.DataFrame, units: pd.Series, missing: str) -> None:
        x = x.dropna() if missing == "exclude" else x.dropna(how="all").fillna(0.0)
        self.x = x.to_numpy(dtype=np.float64).reshape(-1, 2)
        self.unit = units.reindex(x.index).to_numpy(dtype=np.int64)
        self.disc = np.array([np.sum(self.x[:, 0] > self.x[:, 1]),
                              np.sum(self.x[:, 0] < self.x[:, 1])])  # fmt: skip

    def sums(self) -> np.ndarray:
        """Per-cluster sums of [x1, x2, 1] (the rows a cluster bootstrap resamples)."""
        vals = np.column_stack([self.x, np.ones(len(self.x))])
        codes = pd.factorize(self.unit, sort=True)[0]
        return clusters.sum_by(vals, codes) if len(vals) else np.zeros((0, 3))


def _wild(cells: list[_Cell], rng, n_boot: int, level: float) -> dict:
    """Return the comparison fields of one cell or pool from `core.estimates.contrast`."""
    x = np.vstack([c.x for c in cells])
    unit = np.concatenate([c.unit for c in cells])
    n = len(x)
    disc = sum(c.disc for c in cells)
    out = _counts(x, unit, disc)
    if n == 0:
        return {**out, "declined": "no item complete in both conditions"}
    est = estimates.contrast(
        np.concatenate([x[:, 0], x[:, 1]]),
        np.ones(2 * n),
        np.repeat([0, 1], n),
        np.concatenate([unit, unit]),
        [1.0, -1.0],
        null=0.0,
        level=level,
        n_boot=n_boot,
        rng=rng,
        bounds=(-1.0, 1.0),
    )
    declined = "" if np.isfinite(est.p_value) else f"no test: {est.method}"
    return {
        **out,
        "ci_low": est.ci_low,
        "ci_high": est.ci_high,
        "p_value": est.p_value,
        "p_bound": False,
        "n_boot_p": n_boot,
        "n_eff_clusters": est.n_eff_clusters,
        "few_clusters": est.few_clusters,
        "method": est.method,
        "declined": declined,
    }


def _counts(x: np.ndarray, unit: np.ndarray, disc: np.ndarray) -> dict:
    """Return the descriptive fields of compared items: values, n, clusters, discordant."""
    n = len(x)
    nan = float("nan")
    return {
        "value_1": float(x[:, 0].mean()) if n else nan,
        "value_2": float(x[:, 1].mean()) if n else nan,
        "diff": float((x[:, 0] - x[:, 1]).mean()) if n else nan,
        "n_common": int(n),
        "n_clusters": int(np.unique(unit).size),
        "only_1": int(disc[0]),
        "only_2": int(disc[1]),
        "p_mcnemar": stats.sign_test(int(disc[0]), int(disc.sum())).p_value if n else nan,
    }


def _bootstrap(cells: list[_Cell], rng, n_boot: int, level: float) -> dict:
    """Return the earlier default's fields: stratified paired cluster bootstrap, adaptive p."""
    mats = [c.sums() for c in cells]
    x = np.vstack([c.x for c in cells])
    unit = np.concatenate([c.unit for c in cells])
    out = _counts(x, unit, sum(c.disc for c in cells))
    total = sum(m.sum(axis=0) for m in mats)
    n = total[2]

    def draw(k: int) -> np.ndarray:
        s = sum(stats.bootstrap_sums(m, n_boot=k, rng=rng) for m in mats if len(m))
        return stats.ratio_replicates(s[:, 0] - s[:, 1], s[:, 2])

    if n == 0:
        return {**out, "declined": "no item complete in both conditions"}
    reps = draw(n_boot)
    pv = inference.adaptive_p(draw, first=reps, n_boot=n_boot, max_boot=max(MAX_BOOT, n_boot))
    low, high = stats.percentile_interval(reps, level=level)
    return {
        **out,
        "ci_low": float(low),
        "ci_high": float(high),
        "p_value": pv.p,
        "p_bound": pv.bound,
        "n_boot_p": pv.n_boot,
        "n_eff_clusters": float("nan"),
        "few_clusters": True,
        "method": f"paired cluster bootstrap, percentile (B={n_boot}), adaptive p",
        "declined": "",
    }


def compare_conditions(
    outcomes: pd.DataFrame,
    *,
    metric: str = "ca",
    across: str | None = "split",
    cluster: str | None = "cluster",
    test: str = "wild",
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
        test: `wild` (default: the restricted wild cluster bootstrap test and the interval that
            inverts it), `bootstrap` (the earlier default: percentile interval, adaptive
            bootstrap p) or `mcnemar` (legacy: that interval, the exact McNemar p).
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
        `p_adjusted`, `adjustment`, `n_tests`, `n_eff_clusters`, `few_clusters`, `method`,
        `declined` (why a row has no test).
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
            rows += _pair_rows(
                pair, units, (c1, c2), keys, across, missing, test, n_boot, seed, level
            )
    out = pd.DataFrame(rows, columns=["judge", "condition_1", "condition_2", *other, "sample",
                                      *_COLUMNS])  # fmt: skip
    out["metric"] = metric
    if test == "mcnemar":
        out["p_value"], out["p_bound"], out["n_boot_p"] = out["p_mcnemar"], False, 0
        out["method"] = out["method"].str.replace("adaptive p", "exact McNemar p", regex=False)
    return _adjust(out, ["judge", *other, "sample", "missing"], adjust)


def _pair_rows(pair, units, conds, keys, across, missing, test, n_boot, seed, level) -> list:
    """Rows of one condition pair: each cell, then the pooled rows over `across`."""
    cells: dict[tuple, _Cell] = {}
    for key, block in pair.groupby(level=[*keys, "sample"], sort=True, dropna=False):
        cells[key] = _Cell(block, units, missing)
    pools: dict[tuple, list[tuple]] = {}
    if across is not None:
        pos = keys.index(across)
        for key in cells:
            pools.setdefault((*key[:pos], "pooled", *key[pos + 1 :]), []).append(key)
    fields = _wild if test == "wild" else _bootstrap
    rows = []
    for key, members in [*((k, [k]) for k in cells), *pools.items()]:
        rng = (estimates.seeded if test == "wild" else stats.rng_for)(
            seed, "conditions", *conds, missing, *key
        )
        rows.append(
            {
                "condition_1": conds[0],
                "condition_2": conds[1],
                **dict(zip([*keys, "sample"], key, strict=True)),
                "missing": missing,
                **fields([cells[p] for p in members], rng, n_boot, level),
            }  # fmt: skip
        )
    return rows


def _adjust(out: pd.DataFrame, family: Sequence[str], method: str) -> pd.DataFrame:
    out = out.copy()
    out["adjustment"] = method
    if out.empty:
        return out
    fam = out.groupby(list(family), sort=False, dropna=False).ngroup().to_numpy()
    out["n_tests"] = np.bincount(fam)[fam].astype(int)
    adjust = holm if method == "holm" else lambda p: inference.adjust(p, method)
    p = out["p_value"].to_numpy(dtype=float)
    adjusted = np.full(len(out), np.nan)
    for g in np.unique(fam):
        idx = np.flatnonzero(fam == g)
        adjusted[idx] = adjust(p[idx])
    out["p_adjusted"] = adjusted
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
