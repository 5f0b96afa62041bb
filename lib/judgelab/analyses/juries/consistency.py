"""Self-consistency: a majority vote over each judge's samples (spec 000 §4.6).

The samples of a judge on an item (self-consistency draws, or repeated runs) vote like a jury
(`votes`), beside the judge's greedy (sample 0) label. Rates are fractions; the resampling
unit is the items' `cluster` (else the item; `cluster=None`: items, the legacy).

By default (`interval="wild"`, issue 33) every rate is a ratio of sums with the restricted
wild cluster bootstrap interval of `core.estimates` (effective clusters and `few_clusters`
on every row), and sc − greedy is a paired difference of rates with its test of 0 (the
p-value inverts the interval); pooled rows pool the splits' items (a cluster in several
splits is one unit). `interval="percentile"` keeps the percentile cluster bootstrap (the
default before issue 33; pooled rows add the strata's sums: a stratified bootstrap).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from judgelab.analyses import pairwise
from judgelab.analyses.juries.resample import Sums, cluster_sums, pool_sums
from judgelab.analyses.juries.votes import (
    LABELS,
    NO_WINNER,
    TIE,
    check_rule,
    consolidated_labels,
    label_codes,
    vote,
    vote_counts,
    with_cluster,
)
from judgelab.core import clusters, estimates, stats
from judgelab.core.schema import require_columns as _require
from judgelab.errors import check_choice

SC_MODES: tuple[str, ...] = ("per_draw_consolidate", "per_run_majority")
INVALID_DRAWS: tuple[str, ...] = ("tie", "exclude")
SC_COLUMNS: tuple[str, ...] = (
    "n_samples",
    "has_gold",
    "greedy_label",
    "sc_label",
    "greedy_correct",
    "sc_correct",
    "changed",
)
#: Metrics of `self_consistency_rates`, in the order of its value columns.
SC_METRICS: tuple[str, ...] = ("greedy_ca", "sc_ca", "sc_minus_greedy", "changed")
SC_INTERVALS: tuple[str, ...] = ("wild", "percentile")
#: Columns of a `self_consistency_rates` row after the group columns.
RATE_COLUMNS: tuple[str, ...] = (
    "aggregation",
    "metric",
    "value",
    "ci_low",
    "ci_high",
    "n",
    "n_samples",
    "p_value",
    "n_clusters",
    "n_eff_clusters",
    "few_clusters",
    "method",
)


def self_consistency(
    judgments: pd.DataFrame,
    *,
    mode: str = "per_draw_consolidate",
    vote_rule: str = "plurality_with_tie_class",
    invalid_draws: str = "tie",
    groups: Sequence[str] = pairwise.GROUPS,
    min_samples: int = 2,
) -> pd.DataFrame:
    """Majority vote over each judge's samples per item, beside its greedy (sample 0) label.

    Args:
        judgments: A judgments table with several `sample` values per judge (self-consistency
            draws, or repeated runs); needs the `groups` columns and `item_id`, `sample`,
            `order`, `valid`, `chosen`, `correct`.
        mode: `per_draw_consolidate` (spec §4.6 default: consolidate the two orders of each
            draw, then vote over draws) or `per_run_majority` (vote within each order over
            its draws, then consolidate the two majorities).
        vote_rule: One of `VOTE_RULES`.
        invalid_draws: In `per_run_majority`, an invalid draw votes `tie` or is excluded.
        groups: Columns that identify a group (must include `judge`).
        min_samples: Judges × items with fewer complete samples are left out.

    Returns:
        One row per group × item: the `groups` columns, `item_id`, `cluster` (when the
        judgments carry it), `n_samples`, `has_gold`,
        `greedy_label`, `sc_label` (pos/neg/tie, or "none" when the vote has no clear
        winner), `greedy_correct`, `sc_correct` (null without gold), `changed` (the SC label
        differs from the greedy one).
    """
    check_choice("mode", mode, SC_MODES)
    check_choice("invalid_draws", invalid_draws, INVALID_DRAWS)
    check_rule(vote_rule)
    groups = list(groups)
    labels = consolidated_labels(judgments, groups=with_cluster(groups, judgments))
    units = [*groups, "item_id"]
    extra = ["cluster"] if "cluster" in labels.columns else []
    columns = [*units, *extra, *SC_COLUMNS]
    if labels.empty:
        return pd.DataFrame(columns=columns)
    labels["_unit"] = labels.groupby(units, sort=False, dropna=False).ngroup()
    winner = _sc_winner(labels, mode=mode, vote_rule=vote_rule, invalid_draws=invalid_draws)
    first = labels.sort_values("sample", kind="stable").drop_duplicates("_unit")
    greedy = first[first["sample"] == labels["sample"].min()].set_index("_unit")
    out = labels.drop_duplicates("_unit").set_index("_unit")[units + extra].sort_index()
    out["n_samples"] = np.bincount(labels["_unit"].to_numpy(), minlength=len(out))
    out["has_gold"] = labels.groupby("_unit")["has_gold"].any().sort_index()
    out["greedy_label"] = greedy["label"].reindex(out.index)
    names = np.array([*LABELS, "none"], dtype=object)
    out["sc_label"] = names[np.where(winner == NO_WINNER, 3, winner)]
    gold = out["has_gold"].to_numpy(dtype=bool)
    out["greedy_correct"] = pd.array(out["greedy_label"] == "pos", dtype="boolean")
    out["sc_correct"] = pd.array(out["sc_label"] == "pos", dtype="boolean")
    out.loc[~gold, ["greedy_correct", "sc_correct"]] = pd.NA
    out["changed"] = out["sc_label"] != out["greedy_label"]
    out = out[(out["n_samples"] >= min_samples) & out["greedy_label"].notna()]
    return out.reset_index(drop=True)[columns]


def _sc_winner(
    labels: pd.DataFrame, *, mode: str, vote_rule: str, invalid_draws: str
) -> np.ndarray:
    """Return the winning class code per unit (`_unit` 0..n-1) of the samples' vote."""
    unit = labels["_unit"].to_numpy()
    n_units = int(unit.max()) + 1
    if mode == "per_draw_consolidate":
        counts = vote_counts(unit, label_codes(labels["label"]), n_units)
        return vote(counts, rule=vote_rule)
    majority = []
    for o in (0, 1):
        chosen = labels[f"chosen_{o}"].to_numpy()
        keep = (chosen != "invalid") | (invalid_draws == "tie")
        counts = vote_counts(unit[keep], label_codes(chosen)[keep], n_units)
        majority.append(vote(counts, rule=vote_rule))
    m0, m1 = majority
    return np.where((m0 == m1) & (m0 != TIE) & (m0 != NO_WINNER), m0, TIE)


def self_consistency_reason(sc: pd.DataFrame) -> str | None:
    """Return why self-consistency cannot be shown, None when some judge has several samples.

    `sc` is `self_consistency` output: empty when no judge × item has `min_samples` complete
    samples, so there is no vote over samples (and no distribution of hits over draws).
    """
    if not sc.empty:
        return None
    return (
        "every judge was run once per item (one sample), so there is no majority over samples "
        "to set against the greedy label and no spread of hits over draws; a judge run with "
        "several samples (self-consistency draws or repeated runs) shows it"
    )


def self_consistency_rates(
    sc: pd.DataFrame,
    *,
    groups: Sequence[str] = pairwise.GROUPS,
    across: str | None = "split",
    cluster: str | None = "cluster",
    n_boot: int = 1000,
    seed: int = 0,
    level: float = 0.95,
    interval: str = "wild",
) -> pd.DataFrame:
    """Return greedy vs self-consistent CA per group with intervals (long form).

    Args:
        sc: Output of `self_consistency`.
        groups: The group columns used there.
        across: Group column pooled into an extra `pooled` row.
        cluster: Column of `sc` giving the resampling unit (default `cluster`; absent: the
            item), or None (items on their own: legacy).
        n_boot: Bootstrap resamples B (`percentile`).
        seed: Seed of the bootstrap.
        level: Confidence level.
        interval: `wild` (default: restricted wild cluster bootstrap, `core.estimates`) or
            `percentile` (the percentile cluster bootstrap, the default before issue 33).

    Returns:
        Long table: the `groups` columns, `aggregation`, `metric` ∈ {`greedy_ca`, `sc_ca`,
        `sc_minus_greedy` (paired), `changed` (share of items whose label the vote changed;
        defined without gold)}, `value`, `ci_low`, `ci_high`, `n` (items; gold items for the
        accuracies), `n_samples` (median samples per item), `p_value` (sc_minus_greedy: H0
        sc = greedy; NaN otherwise and for `percentile`), `n_clusters`, `n_eff_clusters`,
        `few_clusters`, `method`.
    """
    groups = list(groups)
    check_choice("interval", interval, SC_INTERVALS)
    _require(sc, [*groups, "greedy_correct", "sc_correct", "changed", "n_samples"], "sc rates")
    columns = [*groups, *RATE_COLUMNS]
    if interval == "wild":
        return pd.DataFrame(
            _wild_rows(sc, groups, across=across, cluster=cluster, seed=seed, level=level),
            columns=columns,
        )
    cells = _sc_cells(sc, groups, n_boot=n_boot, seed=seed, cluster=cluster)
    if across is not None and cells:
        rest = [g for g in groups if g != across]
        outer: dict[tuple, list] = {}
        for c in cells:
            outer.setdefault(tuple(c[0][g] for g in rest), []).append(c)
        for okey, members in outer.items():
            cells.append(
                (
                    {**dict(zip(rest, okey, strict=True)), across: pairwise.POOLED},
                    pool_sums([m[1] for m in members]),
                    float(np.median([m[2] for m in members])),
                )
            )
    rows = []
    for key, cell, med in cells:
        aggregation = pairwise.POOLED if key.get(across) == pairwise.POOLED else "split"
        rows += _sc_rows(key, cell, level=level, aggregation=aggregation, n_samples=med)
    return pd.DataFrame(rows, columns=columns)


def _sc_values(sc: pd.DataFrame) -> np.ndarray:
    """Per item: greedy correct, sc correct (0 without gold), changed, has gold (n × 4)."""
    gold = sc["has_gold"].to_numpy(dtype=bool)
    g = sc["greedy_correct"].astype("boolean").fillna(False).to_numpy(dtype=float)
    s = sc["sc_correct"].astype("boolean").fillna(False).to_numpy(dtype=float)
    return np.column_stack([g, s, sc["changed"].to_numpy(dtype=float), gold])


def _wild_rows(
    sc: pd.DataFrame,
    groups: list[str],
    *,
    across: str | None,
    cluster: str | None,
    seed: int,
    level: float,
) -> list[dict]:
    """Return the `self_consistency_rates` rows by `core.estimates` (per group, then pooled)."""
    if sc.empty:
        return []
    values = _sc_values(sc)
    unit = clusters.codes(sc, cluster)
    cells = [
        (dict(zip(groups, key if isinstance(key, tuple) else (key,), strict=True)), idx)
        for key, idx in sc.groupby(groups, sort=True, dropna=False).indices.items()
    ]
    if across is not None:
        rest = [g for g in groups if g != across]
        outer: dict[tuple, list[np.ndarray]] = {}
        for key, idx in cells:
            outer.setdefault(tuple(key[g] for g in rest), []).append(idx)
        for okey, parts in outer.items():
            key = {**dict(zip(rest, okey, strict=True)), across: pairwise.POOLED}
            cells.append((key, np.concatenate(parts)))
    n_samples = sc["n_samples"].to_numpy(dtype=float)
    rows = []
    for key, idx in cells:
        aggregation = pairwise.POOLED if key.get(across) == pairwise.POOLED else "split"
        head = {**key, "aggregation": aggregation, "n_samples": float(np.median(n_samples[idx]))}
        rows += [
            head | {"metric": m} | fields
            for m, fields in _wild_metrics(values[idx], unit[idx], seed, level, key).items()
        ]
    return rows


def _wild_metrics(
    v: np.ndarray, unit: np.ndarray, seed: int, level: float, key: dict
) -> dict[str, dict]:
    """Return the four metrics' fields of one cell (columns of `_sc_values`)."""
    g, s, changed, gold = v.T
    n = len(v)

    def rng(metric: str) -> np.random.Generator:
        return estimates.seeded(seed, "sc", *key.values(), metric)

    diff = estimates.difference(
        np.concatenate([g, s]),
        np.concatenate([gold, gold]),
        np.repeat([0, 1], n),
        np.concatenate([unit, unit]),
        null=0.0,
        level=level,
        rng=rng("sc_minus_greedy"),
    )
    out = {
        "greedy_ca": estimates.ratio(g, gold, unit, level=level, rng=rng("greedy_ca")),
        "sc_ca": estimates.ratio(s, gold, unit, level=level, rng=rng("sc_ca")),
        "sc_minus_greedy": diff,
        "changed": estimates.ratio(changed, np.ones(n), unit, level=level, rng=rng("changed")),
    }
    return {metric: e.fields() for metric, e in out.items()}


def _sc_cells(
    sc: pd.DataFrame, groups: list[str], *, n_boot: int, seed: int, cluster: str | None
) -> list[tuple[dict, Sums, float]]:
    """Return (key, sums of greedy, sc, sc − greedy, changed, gold, median samples) per group."""
    cells = []
    for key, block in sc.groupby(groups, sort=True, dropna=False):
        key = key if isinstance(key, tuple) else (key,)
        gold = block["has_gold"].to_numpy(dtype=bool)
        g = block["greedy_correct"].astype("boolean").fillna(False).to_numpy(dtype=float)
        s = block["sc_correct"].astype("boolean").fillna(False).to_numpy(dtype=float)
        values = np.column_stack([g, s, s - g, block["changed"].to_numpy(dtype=float), gold])
        units = clusters.codes(block, cluster)
        rng = stats.rng_for(seed, "sc", *key)
        cells.append(
            (
                dict(zip(groups, key, strict=True)),
                cluster_sums(values, units, n_boot=n_boot, rng=rng),
                float(block["n_samples"].median()),
            )
        )
    return cells


def _sc_rows(
    key: dict, cell: Sums, *, level: float, aggregation: str, n_samples: float
) -> list[dict]:
    """Return the `self_consistency_rates` rows (one per metric) of one group (bootstrap)."""
    sums, reps, n = cell.sums, cell.reps, cell.n
    n_gold = sums[4]
    dens = [n_gold, n_gold, n_gold, n]
    rep_dens = [reps[:, 4], reps[:, 4], reps[:, 4], np.full(len(reps), n)]
    rows = []
    for i, name in enumerate(SC_METRICS):
        fields = stats.interval_fields(
            stats.ratio_replicates(sums[i], dens[i]),
            stats.ratio_replicates(reps[:, i], rep_dens[i]),
            level=level,
            n=dens[i],
        )
        rows.append(
            {
                **key,
                "aggregation": aggregation,
                "metric": name,
                **fields,
                "n_samples": n_samples,
                "p_value": np.nan,
                "n_clusters": cell.n_units,
                "n_eff_clusters": np.nan,
                "few_clusters": True,
                "method": f"percentile cluster bootstrap (B={len(reps)})",
            }
        )
    return rows
