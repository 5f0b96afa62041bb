"""Krippendorff's alpha across the judges of a pool (spec 000 §4.8, Fig. 6).

The units, values and missing-value handling come from `ratings`. Alpha always comes from the
`krippendorff` package with the level of measurement passed explicitly (`nominal` for these
labels — the package would default to `interval`). The resampling unit is the *cluster* by
default (`cluster="cluster"`: the items' resampling unit, every unit of a cluster — both
presentations of an item included — together); `cluster="item"` uses items, `cluster=None`
every unit on its own (the legacy, which treats the two presentations of an item as
independent under `units="item_order"`).

Alpha is a ratio of sums of coincidences: its plug-in value is biased in small samples (low
by about 0.03 with 8–15 clusters of very unequal size, issue 33), and a percentile bootstrap
interval around it under-covers (0.82–0.88). The default interval (`interval="jackknife"`,
DESIGN §9) is the delete-one-cluster jackknife: the bias estimate (G − 1)(mean α₋g − α) is
shown in `bias`, and the interval is (α − bias) ± t_{G−1} · SE_jack. `interval="bca"` gives
the BCa cluster bootstrap (acceleration from the same jackknife), `"percentile"` the
percentile cluster bootstrap (the earlier default). Nominal leave-one-out values come from
the coincidence matrix minus the cluster's own (vectorised, any G); other levels recompute
alpha with the package, over at most `resample.MAX_JACKKNIFE` (random, seeded) groups of
clusters. Every row reports its effective clusters (`core.clusters.effective`, a unit
weighted by its pairable values) and flags `few_clusters` below `clusters.FEW_EFFECTIVE`.

Measured at 8 clusters (issue 33; R = 200, ICC 0.5, effects varying by cluster): the default
interval covers 0.975–0.98 for the planted null judges but 0.91 [0.86, 0.94] for the
alternative's equally able judges, with unequal and with equal cluster sizes alike, most
misses with the truth above the interval; with unequal sizes the bias-corrected centre is
still low (0.114 against 0.131 on average): with so few clusters the jackknife removes the
plug-in's bias only in part.

Pooled rows pool the splits' units (the jackknife deletes a cluster from every split it is
in; the bootstraps resample each split on its own, stratified) and, by default, pool only
splits rated by the same judges (`pool_strata="same_judges"`: one pooled row per judge set);
every row names its judges and strata. `alpha_variants` puts the codings side by side.
"""

from __future__ import annotations

from typing import NamedTuple

import krippendorff
import numpy as np
import pandas as pd

from judgelab.analyses import pairwise
from judgelab.analyses.juries import resample
from judgelab.analyses.juries.ratings import RATING_CODES, ratings
from judgelab.core import clusters, stats
from judgelab.errors import check_choice

SEP = " + "

LEVELS: tuple[str, ...] = ("nominal", "ordinal", "interval", "ratio")
ALPHA_COLUMNS: tuple[str, ...] = (
    "pool",
    "benchmark",
    "split",
    "alpha",
    "ci_low",
    "ci_high",
    "n_judges",
    "n_units",
    "n_values",
    "units",
    "tie_as_missing",
    "level_of_measurement",
    "judges",
    "strata",
    "cluster",
    "n_clusters",
    "bias",
    "se",
    "interval",
    "n_eff_clusters",
    "few_clusters",
    "method",
)
INTERVALS: tuple[str, ...] = resample.SMOOTH_INTERVALS
POOL_STRATA: tuple[str, ...] = ("same_judges", "all")
#: The codings `alpha_variants` compares: (units, tie_as_missing, description).
CODINGS: tuple[tuple[str, bool, str], ...] = (
    ("item", False, "consolidated label per item; tie and inconsistent pair = tie class"),
    ("item", True, "consolidated label per item; ties and inconsistent pairs missing"),
    ("item_order", False, "raw verdict per presentation; tie a class, invalid missing"),
    ("item_order", True, "raw verdict per presentation; ties and invalid missing"),
)


def krippendorff_alpha(reliability_data: np.ndarray, *, level_of_measurement: str) -> float:
    """Return Krippendorff's alpha of a (coders × units) matrix, NaN for missing values.

    The level of measurement must be given (no silent `interval` default). Returns NaN when
    alpha is undefined: fewer than two values in the data, or no unit rated twice.

    >>> krippendorff_alpha(np.array([[0, 1, 0], [0, 1, 0]]), level_of_measurement="nominal")
    1.0
    """
    check_choice("level_of_measurement", level_of_measurement, LEVELS)
    data = np.asarray(reliability_data, dtype=np.float64)
    if data.ndim != 2:
        raise ValueError(f"reliability_data must be 2-D (coders × units), got shape {data.shape}")
    pairable = (~np.isnan(data)).sum(axis=0) >= 2
    values = np.unique(data[:, pairable][~np.isnan(data[:, pairable])])
    if len(values) < 2:
        return float("nan")
    return float(
        krippendorff.alpha(reliability_data=data, level_of_measurement=level_of_measurement)
    )


def unit_coincidences(reliability_data: np.ndarray, *, n_values: int) -> np.ndarray:
    """Return each unit's contribution to the coincidence matrix (units × V × V).

    Values are integer codes 0..V-1 (NaN = missing). A unit with m ≥ 2 values adds
    n_c (n_k − [c = k]) / (m − 1) to cell (c, k); units with fewer values add nothing. The
    coincidence matrix of Krippendorff's alpha is the sum over units, so a bootstrap over
    units is a reweighted sum (`stats.bootstrap_sums`).
    """
    data = np.asarray(reliability_data, dtype=np.float64)
    ok = ~np.isnan(data)
    counts = np.stack([((data == v) & ok).sum(axis=0) for v in range(n_values)], axis=1)
    m = counts.sum(axis=1)
    outer = counts[:, :, None] * counts[:, None, :] - counts[:, :, None] * np.eye(n_values)
    with np.errstate(divide="ignore", invalid="ignore"):
        contrib = outer / np.where(m > 1, m - 1, 1)[:, None, None]
    contrib[m < 2] = 0.0
    return contrib


def nominal_alpha_from_coincidences(o: np.ndarray) -> np.ndarray:
    """Return nominal alpha = 1 − (n − 1)(n − Σ o_cc) / (n² − Σ n_c²) per coincidence matrix.

    Vectorised over leading axes of `o` (…, V, V); NaN where alpha is undefined (one value).
    """
    n_c = o.sum(axis=-1)
    n = n_c.sum(axis=-1)
    disagree = n - np.trace(o, axis1=-2, axis2=-1)
    expected = n**2 - (n_c**2).sum(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(expected > 0, 1.0 - (n - 1) * disagree / expected, np.nan)


def _alpha_replicates(
    mats: list[np.ndarray],
    groups: list[np.ndarray],
    *,
    level_of_measurement: str,
    n_boot: int,
    rngs: list,
) -> np.ndarray:
    """Return alpha on n_boot resamples of clusters, each matrix (stratum) resampled on its own.

    `groups[s]` gives the cluster code of every unit (column) of `mats[s]`. Nominal alpha is
    computed from resampled coincidence matrices (a cluster's coincidences are the sum of its
    units'; vectorised, the identity with `krippendorff.alpha` is unit-tested); other levels
    call the package per resample.
    """
    if level_of_measurement == "nominal":
        n_values = len(RATING_CODES)
        total = np.zeros((n_boot, n_values * n_values))
        for m, g, r in zip(mats, groups, rngs, strict=True):
            if m.shape[1] == 0:  # a stratum with no unit rated by these judges (e.g. all ties
                continue  # coded missing) adds nothing to any resample
            contrib = unit_coincidences(m, n_values=n_values).reshape(m.shape[1], -1)
            total += stats.bootstrap_sums(clusters.sum_by(contrib, g), n_boot=n_boot, rng=r)
        return nominal_alpha_from_coincidences(total.reshape(n_boot, n_values, n_values))
    weights = [
        stats.bootstrap_weights(int(g.max()) + 1 if g.size else 0, n_boot=n_boot, rng=r)[:, g]
        for g, r in zip(groups, rngs, strict=True)
    ]
    out = np.empty(n_boot)
    for b in range(n_boot):
        cols = [
            np.repeat(np.arange(m.shape[1]), w[b].astype(np.int64))
            for m, w in zip(mats, weights, strict=True)
        ]
        data = np.concatenate([m[:, c] for m, c in zip(mats, cols, strict=True)], axis=1)
        out[b] = krippendorff_alpha(data, level_of_measurement=level_of_measurement)
    return out


class _Stratum(NamedTuple):
    """One split of a pool: its judges, (judges × pairable units) ratings, units' clusters."""

    benchmark: str
    split: str
    judges: list[str]
    matrix: np.ndarray
    groups: np.ndarray  # cluster code of every unit within the stratum (0..G_s − 1)
    labels: np.ndarray  # cluster label of every unit (shared across strata)


def alpha_table(
    judgments: pd.DataFrame,
    *,
    units: str = "item",
    tie_as_missing: bool = False,
    pool: str | None = "prompt",
    level_of_measurement: str = "nominal",
    min_judges: int = 2,
    across: str | None = "split",
    pool_strata: str = "same_judges",
    cluster: str | None = "cluster",
    n_boot: int = 1000,
    seed: int = 0,
    level: float = 0.95,
    interval: str = "jackknife",
) -> pd.DataFrame:
    """Return Krippendorff's alpha across the judges of each pool, per split and pooled.

    Args:
        judgments: A judgments table (see `ratings`); its `cluster` column, when present,
            is the resampling unit.
        units: `item` or `item_order` (see `ratings`).
        tie_as_missing: Treat tie values as missing.
        pool: Column whose values define separate pools of judges (None: one pool).
        level_of_measurement: Passed to `krippendorff.alpha` (the labels are `nominal`).
        min_judges: Splits where fewer judges of the pool rated are left out.
        across: Add pooled rows per pool over the splits (units of the splits together,
            stratified bootstrap), or None.
        pool_strata: `same_judges` (default): one pooled row per set of judges, over the
            splits that set rated (split `pooled` when all splits share one set, else
            `pooled[1]`, `pooled[2]`, … by decreasing number of judges); `all`: one row over
            every split whatever its judges (the legacy row; `judges` lists their union).
        cluster: The resampling unit: `cluster` (default: the items' resampling unit,
            falling back to the item), `item`, or None (every unit on its own: legacy).
        n_boot: Bootstrap resamples B (`bca`, `percentile`).
        seed: Seed of the bootstrap (and of the jackknife's grouping of many clusters).
        level: Confidence level.
        interval: `jackknife` (default: bias-corrected cluster jackknife, t(G − 1)), `bca`
            (BCa cluster bootstrap) or `percentile` (the earlier default).

    Returns:
        `pool`, `benchmark`, `split` (or a pooled label), `alpha` (the plug-in value of the
        package), `ci_low`, `ci_high`, `n_judges`, `n_units` (units rated by at least two
        judges), `n_values` (pairable values), `units`, `tie_as_missing`,
        `level_of_measurement`, `judges` (joined by " + "), `strata` (the splits of the row),
        `cluster` (the resampling unit), `n_clusters`, `bias` (estimated bias of `alpha`:
        jackknife, or bootstrap mean − alpha for `bca` / `percentile`), `se` (jackknife SE;
        bootstrap SD otherwise), `interval`, `n_eff_clusters`, `few_clusters`, `method`.
    """
    check_choice("pool_strata", pool_strata, POOL_STRATA)
    check_choice("interval", interval, INTERVALS)
    if cluster not in (None, "cluster", "item"):
        raise ValueError(f"cluster must be 'cluster', 'item' or None, got {cluster!r}")
    long = ratings(judgments, units=units, tie_as_missing=tie_as_missing, pool=pool)
    rows = []
    for pool_value, pblock in long.groupby("pool", sort=True):
        strata = _strata(pblock, min_judges, cluster)
        cells = [([s], s.benchmark, s.split) for s in strata]
        if across is not None and strata:
            cells += _pooled_cells(strata, pool_strata)
        for members, bench, split in cells:
            row = _alpha_row(
                members,
                level_of_measurement=level_of_measurement,
                n_boot=n_boot,
                level=level,
                rngs=[stats.rng_for(seed, "alpha", pool_value, m[0], m[1]) for m in members],
                interval=interval,
                jk_rng=stats.rng_for(seed, "alpha-jackknife", pool_value, bench, split),
            )
            rows.append(
                {"pool": pool_value, "benchmark": bench, "split": split}
                | row
                | {
                    "units": units,
                    "tie_as_missing": tie_as_missing,
                    "level_of_measurement": level_of_measurement,
                    "strata": ",".join(f"{m.benchmark}/{m.split}" for m in members),
                    "cluster": "unit" if cluster is None else cluster,
                }
            )
    return pd.DataFrame(rows, columns=list(ALPHA_COLUMNS))


def _pooled_cells(strata: list[_Stratum], pool_strata: str) -> list[tuple[list, str, str]]:
    """Return (strata, benchmarks, split label) of the pooled rows of one pool."""
    if pool_strata == "all":
        sets = [strata]
    else:
        by_judges: dict[tuple, list[_Stratum]] = {}
        for s in strata:
            by_judges.setdefault(tuple(s.judges), []).append(s)
        sets = sorted(by_judges.values(), key=lambda g: (-len(g[0].judges), g[0].judges))
    out = []
    for i, members in enumerate(sets, start=1):
        label = pairwise.POOLED if len(sets) == 1 else f"{pairwise.POOLED}[{i}]"
        out.append((members, ",".join(sorted({s.benchmark for s in members})), label))
    return out


def _strata(pblock: pd.DataFrame, min_judges: int, cluster: str | None) -> list[_Stratum]:
    """Return the splits of one pool rated by at least `min_judges` judges."""
    strata = []
    for (bench, split), block in pblock.groupby(["benchmark", "split"], sort=True):
        judges = sorted(block["judge"].unique())
        if len(judges) < min_judges:
            continue
        wide = block.pivot(index="judge", columns="unit", values="value").reindex(judges)
        mat = wide.to_numpy(dtype=float)
        keep = (~np.isnan(mat)).sum(axis=0) >= 2
        if cluster is None:
            labels = np.array([f"{bench}|{split}|{u}" for u in wide.columns[keep]], dtype=object)
        else:
            unit_group = block.drop_duplicates("unit").set_index("unit")[cluster]
            labels = unit_group.reindex(wide.columns).to_numpy()[keep].astype(str)
        groups = pd.factorize(labels, sort=True)[0]
        strata.append(_Stratum(bench, split, judges, mat[:, keep], groups, labels))
    return strata


def _alpha_row(
    members: list[_Stratum],
    *,
    level_of_measurement: str,
    n_boot: int,
    level: float,
    rngs: list[np.random.Generator],
    interval: str = "jackknife",
    jk_rng: np.random.Generator | None = None,
) -> dict:
    """Return alpha with its interval, bias, effective clusters and counts over `members`."""
    judges = sorted({j for m in members for j in m.judges})
    # legacy pooled rows may hold strata with different judges: align rows on the union
    aligned = [_align(m.matrix, m.judges, judges) for m in members]
    data = np.concatenate(aligned, axis=1)
    value = krippendorff_alpha(data, level_of_measurement=level_of_measurement)
    codes = pd.factorize(np.concatenate([m.labels for m in members]), sort=True)[0]
    G = int(codes.max()) + 1 if codes.size else 0
    leave = (
        _leave_one_out(data, codes, level_of_measurement, jk_rng or np.random.default_rng(0))
        if interval in ("jackknife", "bca")
        else np.full(G, np.nan)
    )

    def replicates() -> np.ndarray:
        return _alpha_replicates(
            aligned,
            [m.groups for m in members],
            level_of_measurement=level_of_measurement,
            n_boot=n_boot,
            rngs=rngs,
        )

    fields = {"alpha": value} | resample.smooth_fields(
        value,
        leave,
        replicates,
        interval=interval,
        level=level,
        n_clusters=G,
        n_eff=_effective(data, codes),
    )
    return fields | {
        "n_judges": len(judges),
        "n_units": int(sum(m.matrix.shape[1] for m in members)),
        "n_values": int((~np.isnan(data)).sum()),
        "judges": SEP.join(judges),
        "n_clusters": G,
    }


def _leave_one_out(
    data: np.ndarray, codes: np.ndarray, level_of_measurement: str, rng: np.random.Generator
) -> np.ndarray:
    """Return alpha without each cluster (or, beyond `MAX_JACKKNIFE`, each group of clusters).

    Nominal: the coincidence matrix less the cluster's own (vectorised); other levels: the
    package on the remaining units.
    """
    G = int(codes.max()) + 1 if codes.size else 0
    if G < 2:
        return np.full(G, np.nan)
    if level_of_measurement == "nominal":
        n_values = len(RATING_CODES)
        contrib = unit_coincidences(data, n_values=n_values).reshape(data.shape[1], -1)
        per = clusters.sum_by(contrib, codes)
        rest = (per.sum(axis=0)[None, :] - per).reshape(G, n_values, n_values)
        return nominal_alpha_from_coincidences(rest)
    if G > resample.MAX_JACKKNIFE:
        group = rng.permutation(G) % resample.MAX_JACKKNIFE
        codes = group[codes]
        G = resample.MAX_JACKKNIFE
    return np.array(
        [
            krippendorff_alpha(data[:, codes != g], level_of_measurement=level_of_measurement)
            for g in range(G)
        ]
    )


def _effective(data: np.ndarray, codes: np.ndarray) -> float:
    """Effective clusters of alpha: units weighted by pairable values, ICC of disagreement."""
    if not codes.size:
        return 0.0
    m = (~np.isnan(data)).sum(axis=0).astype(float)
    contrib = unit_coincidences(data, n_values=len(RATING_CODES))
    agree = np.trace(contrib, axis1=1, axis2=2)
    share = np.divide(m - agree, m, out=np.zeros_like(m), where=m > 0)
    return clusters.effective(m, codes, resid=share)


def _align(mat: np.ndarray, judges: list[str], union: list[str]) -> np.ndarray:
    out = np.full((len(union), mat.shape[1]), np.nan)
    idx = [union.index(j) for j in judges]
    out[idx] = mat
    return out


def alpha_variants(
    judgments: pd.DataFrame,
    *,
    codings: tuple[tuple[str, bool, str], ...] = CODINGS,
    level_of_measurement: str = "nominal",
    **options,
) -> pd.DataFrame:
    """Return `alpha_table` under every coding of ties and inconsistent pairs, side by side.

    Alpha moves a lot with how a tie or an inconsistent pair of verdicts is coded (a tie
    class, or missing) and with what a unit is (an item's consolidated label, or each
    presentation's raw verdict); each row states its coding and level of measurement.

    Args:
        judgments: A judgments table (see `alpha_table`).
        codings: (units, tie_as_missing, description) per variant (default `CODINGS`).
        level_of_measurement: Level of every row (stated in `level_of_measurement`).
        **options: Passed to `alpha_table` (pool, across, cluster, n_boot, seed, …).

    Returns:
        The `alpha_table` rows of every coding, with `coding` (the description) first.
    """
    parts = []
    for units, tie_missing, text in codings:
        table = alpha_table(
            judgments,
            units=units,
            tie_as_missing=tie_missing,
            level_of_measurement=level_of_measurement,
            **options,
        )
        parts.append(table.assign(coding=text))
    out = pd.concat(parts, ignore_index=True)
    return out[["coding", *ALPHA_COLUMNS]]
