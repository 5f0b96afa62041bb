"""LLM-as-jury majority votes scored against the jury's best member (spec 000 §4.5).

Juries vote on their members' consolidated labels (`votes`); per (pool, benchmark, split),
juries and judges are scored on the same items. Intervals are percentile intervals of an
item bootstrap (`stats`), seeded by the group key; pooled rows add the strata's sums and
replicates (stratified bootstrap). Rates are fractions.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations
from math import comb
from typing import NamedTuple

import numpy as np
import pandas as pd

from judgelab.analyses import pairwise
from judgelab.analyses.juries.votes import (
    POS,
    check_rule,
    greedy_pools,
    label_codes,
    pool_labels,
    vote,
)
from judgelab.core import stats
from judgelab.core.schema import require_columns as _require

#: Separator of the members in a jury's name.
JURY_SEP = " + "
JURY_COLUMNS: tuple[str, ...] = (
    "pool",
    "benchmark",
    "split",
    "aggregation",
    "vote_rule",
    "size",
    "jury",
    "ca",
    "ca_low",
    "ca_high",
    "best_member",
    "best_member_ca",
    "best_member_ca_low",
    "best_member_ca_high",
    "mean_member_ca",
    "diff_vs_best",
    "diff_low",
    "diff_high",
    "n",
    "n_juries_possible",
)
SUMMARY_COLUMNS: tuple[str, ...] = (
    "pool",
    "benchmark",
    "split",
    "vote_rule",
    "best_judge",
    "best_judge_ca",
    "best_judge_ca_low",
    "best_judge_ca_high",
    "best_jury",
    "best_jury_ca",
    "best_jury_ca_low",
    "best_jury_ca_high",
    "best_jury_diff_vs_best",
    "best_jury_diff_low",
    "best_jury_diff_high",
    "n_juries",
    "share_beating_best",
    "share_sig_better",
    "share_sig_worse",
    "n",
)


class Sums(NamedTuple):
    """Column sums of per-item values, their bootstrap replicates (B × columns) and items."""

    sums: np.ndarray
    reps: np.ndarray
    n: int


def pool_sums(cells: Sequence[Sums]) -> Sums:
    """Return the pooled `Sums` of strata bootstrapped on their own (stratified bootstrap).

    >>> one = Sums(np.array([1.0]), np.array([[1.0], [2.0]]), 2)
    >>> pool_sums([one, one]).n, pool_sums([one, one]).reps[:, 0].tolist()
    (4, [2.0, 4.0])
    """
    return Sums(
        np.sum([c.sums for c in cells], axis=0),
        np.sum([c.reps for c in cells], axis=0),
        sum(c.n for c in cells),
    )


def _juries(judges: list[str], size: int, max_juries: int, seed: int, pool: object) -> list[tuple]:
    """Return every jury of `size` from `judges`, or `max_juries` of them drawn at random."""
    if size > len(judges):
        return []
    total = comb(len(judges), size)
    if total <= max_juries:
        return list(combinations(judges, size))
    rng = stats.rng_for(seed, "juries", pool, size)
    chosen: set[tuple] = set()
    # Rejection sampling of sorted index tuples: never enumerates the C(n, k) juries.
    while len(chosen) < max_juries:
        idx = np.sort(rng.choice(len(judges), size=size, replace=False))
        chosen.add(tuple(judges[i] for i in idx))
    return sorted(chosen)


def jury_table(
    judgments: pd.DataFrame,
    *,
    size: int | Sequence[int] = 3,
    pool: str | None = "prompt",
    vote_rule: str | Sequence[str] = "plurality_with_tie_class",
    max_juries: int = 200,
    n_boot: int = 1000,
    seed: int = 0,
    level: float = 0.95,
    across: str | None = "split",
) -> pd.DataFrame:
    """Score every jury of a given size drawn from each pool of judges, against its best member.

    A *pool* is the set of judges sharing a value of the `pool` column (e.g. one prompting
    strategy); juries never mix pools. Per (pool, benchmark, split), juries and judges are
    scored on the same items: those with gold that every judge of the pool present in that
    split judged in both orders. Size 1 gives each judge alone (its CA on those items).

    Args:
        judgments: A judgments table; needs `judge`, `benchmark`, `split`, `item_id`,
            `sample`, `order`, `valid`, `chosen`, `correct` and the `pool` column. Only
            sample 0 (the greedy run) is used.
        size: Jury size(s).
        pool: Column whose values define separate pools (None: one pool of all judges).
        vote_rule: One or several of `VOTE_RULES`.
        max_juries: At most this many juries per pool and size; when C(n, size) is larger,
            a seeded random subset of that many juries is scored (`n_juries_possible` says so).
        n_boot: Bootstrap resamples B.
        seed: Seed of the bootstrap and of the jury subset.
        level: Confidence level.
        across: Group column pooled into an extra `pooled` row per jury (None: no pooling);
            pooled rows use the splits in which every member judged (stratified bootstrap).

    Returns:
        One row per pool × benchmark × split (or `pooled`) × vote rule × jury: `pool`,
        `benchmark`, `split`, `aggregation` (split / pooled), `vote_rule`, `size`, `jury`
        (members joined by " + "), `ca` with `ca_low`/`ca_high` (bootstrap over items),
        `best_member`, `best_member_ca` (+ `_low`/`_high`), `mean_member_ca`,
        `diff_vs_best` = ca − best_member_ca with a paired bootstrap interval
        (`diff_low`/`diff_high`), `n` (items), `n_juries_possible`.
    """
    sizes = [size] if isinstance(size, int) else list(size)
    rules = [vote_rule] if isinstance(vote_rule, str) else list(vote_rule)
    for r in rules:
        check_rule(r)
    if any(s < 1 for s in sizes):
        raise ValueError(f"jury sizes must be >= 1, got {sizes}")
    if max_juries < 1:
        raise ValueError(f"max_juries must be >= 1, got {max_juries}")
    rows: list[dict] = []
    for pool_value, block in _gold_labels(judgments, pool).groupby("pool", sort=True):
        judges = sorted(block["judge"].unique())
        all_juries = [
            (s, jury) for s in sizes for jury in _juries(judges, s, max_juries, seed, pool_value)
        ]
        possible = {s: comb(len(judges), s) for s in sizes}
        for rule in rules:
            rows += _rule_rows(
                block, pool_value, rule, all_juries, possible, n_boot, seed, level, across
            )
    out = pd.DataFrame(rows, columns=list(JURY_COLUMNS))
    for c in ("size", "n", "n_juries_possible"):
        out[c] = out[c].astype(int)
    return out


def _gold_labels(judgments: pd.DataFrame, pool: str | None) -> pd.DataFrame:
    """Return the consolidated labels of the greedy sample's items with gold, per pool."""
    labels = pool_labels(greedy_pools(judgments, pool, "jury_table"))
    return labels[labels["has_gold"].astype(bool)]


def _rule_rows(
    block: pd.DataFrame,
    pool_value: object,
    rule: str,
    all_juries: list[tuple[int, tuple]],
    possible: dict[int, int],
    n_boot: int,
    seed: int,
    level: float,
    across: str | None,
) -> list[dict]:
    """Return the `jury_table` rows of one pool and vote rule: per split, then pooled."""
    rows: list[dict] = []
    pooled: dict[tuple, list[Sums]] = {}  # per jury: its cells over the splits it was scored in
    for (bench, split), part in block.groupby(["benchmark", "split"], sort=True):
        rng = stats.rng_for(seed, "jury", pool_value, bench, split, rule)
        scored = _score_split(part, all_juries, rule, n_boot=n_boot, rng=rng)
        keys = []
        for (s, jury), cell in scored:
            pooled.setdefault(jury, []).append(cell)
            keys.append((pool_value, bench, split, "split", rule, jury, possible[s]))
        rows += _jury_rows(keys, [cell for _, cell in scored], level)
    if across is None:
        return rows
    benches = ",".join(sorted(block["benchmark"].unique()))
    keys, totals = [], []
    for s, jury in all_juries:
        if pooled.get(jury):
            totals.append(pool_sums(pooled[jury]))
            keys.append(
                (pool_value, benches, pairwise.POOLED, pairwise.POOLED, rule, jury, possible[s])
            )
    return rows + _jury_rows(keys, totals, level)


def _score_split(
    part: pd.DataFrame,
    all_juries: list[tuple[int, tuple]],
    rule: str,
    *,
    n_boot: int,
    rng: np.random.Generator,
) -> list[tuple[tuple[int, tuple], Sums]]:
    """Return, per jury whose members all judged the split, its sums: (jury, members...).

    Items are those every judge of the split labelled; the jury and its members share one
    bootstrap (paired differences).
    """
    wide = part.pivot(index="item_id", columns="judge", values="label").dropna()
    if wide.empty:
        return []
    present = list(wide.columns)
    codes = np.column_stack([label_codes(wide[j]) for j in present])
    cell_juries = [(s, j) for s, j in all_juries if set(j) <= set(present)]
    if not cell_juries:
        return []
    jury_ok = np.empty((len(codes), len(cell_juries)))
    for c, (_, jury) in enumerate(cell_juries):
        sub = codes[:, [present.index(m) for m in jury]]
        counts = np.stack([(sub == k).sum(axis=1) for k in range(3)], axis=-1)
        jury_ok[:, c] = vote(counts, rule=rule) == POS
    values = np.column_stack([jury_ok, (codes == POS).astype(float)])
    reps = stats.bootstrap_sums(values, n_boot=n_boot, rng=rng)
    sums, n = values.sum(axis=0), len(values)
    n_j = len(cell_juries)
    scored = []
    for c, (s, jury) in enumerate(cell_juries):
        cols = [c] + [n_j + present.index(m) for m in jury]
        scored.append(((s, jury), Sums(sums[cols], reps[:, cols], n)))
    return scored


def _jury_rows(keys: list[tuple], cells: list[Sums], level: float) -> list[dict]:
    """Return `jury_table` rows from (jury, members...) sums and bootstrap replicates."""
    if not cells:
        return []
    best = [int(np.argmax(sums[1:])) for sums, _, _ in cells]  # first of equals (sorted)
    # one percentile call for all juries: columns jury, best member, difference per jury
    trio = np.concatenate(
        [
            np.column_stack([r[:, 0], r[:, 1 + b], r[:, 0] - r[:, 1 + b]]) / n
            for (_, r, n), b in zip(cells, best, strict=True)
        ],
        axis=1,
    )
    low, high = stats.percentile_interval(trio, level=level)
    rows = []
    for i, (key, (sums, _, n), b) in enumerate(zip(keys, cells, best, strict=True)):
        pool, bench, split, aggregation, rule, jury, possible = key
        member = sums[1:] / n
        rows.append(
            {
                "pool": pool,
                "benchmark": bench,
                "split": split,
                "aggregation": aggregation,
                "vote_rule": rule,
                "size": len(jury),
                "jury": JURY_SEP.join(jury),
                "ca": sums[0] / n,
                "ca_low": float(low[3 * i]),
                "ca_high": float(high[3 * i]),
                "best_member": jury[b],
                "best_member_ca": member[b],
                "best_member_ca_low": float(low[3 * i + 1]),
                "best_member_ca_high": float(high[3 * i + 1]),
                "mean_member_ca": float(member.mean()),
                "diff_vs_best": sums[0] / n - member[b],
                "diff_low": float(low[3 * i + 2]),
                "diff_high": float(high[3 * i + 2]),
                "n": n,
                "n_juries_possible": possible,
            }
        )
    return rows


def jury_summary(table: pd.DataFrame, *, size: int = 3) -> pd.DataFrame:
    """Summarise a `jury_table` per pool × split × vote rule: best judge, best jury, jury gains.

    Returns:
        `pool`, `benchmark`, `split`, `vote_rule`, `best_judge`, `best_judge_ca` (+ `_low`/
        `_high`), `best_jury`, `best_jury_ca` (+ `_low`/`_high`), `best_jury_diff_vs_best`
        (+ `_low`/`_high`, against that jury's best member), `n_juries`,
        `share_beating_best` (juries whose CA exceeds their best member's),
        `share_sig_better` / `share_sig_worse` (interval of the difference above / below 0),
        `n` (items of the best jury). `best_judge_ca` is over all the judge's items of the
        row (in a pooled row it may cover splits where no jury could be formed); the
        jury-vs-member differences are always on the jury's own items.
    """
    _require(table, ["pool", "split", "vote_rule", "size", "ca", "jury"], "jury_summary")
    keys = ["pool", "benchmark", "split", "vote_rule"]
    rows = []
    for key, block in table.groupby(keys, sort=False):
        singles = block[block["size"] == 1].sort_values("ca", ascending=False, kind="stable")
        juries = block[block["size"] == size].sort_values("ca", ascending=False, kind="stable")
        row = dict(zip(keys, key, strict=True))
        if len(singles):
            row |= _best("best_judge", singles.iloc[0])
        if len(juries):
            j = juries.iloc[0]
            row |= _best("best_jury", j) | {
                "best_jury_diff_vs_best": j["diff_vs_best"],
                "best_jury_diff_low": j["diff_low"],
                "best_jury_diff_high": j["diff_high"],
                "n_juries": len(juries),
                "share_beating_best": float((juries["diff_vs_best"] > 0).mean()),
                "share_sig_better": float((juries["diff_low"] > 0).mean()),
                "share_sig_worse": float((juries["diff_high"] < 0).mean()),
                "n": int(j["n"]),
            }
        else:
            row |= {"n_juries": 0, "n": int(singles.iloc[0]["n"]) if len(singles) else 0}
        rows.append(row)
    return pd.DataFrame(rows).reindex(columns=list(SUMMARY_COLUMNS))


def _best(prefix: str, row: pd.Series) -> dict:
    """Return the name and CA (with interval) of a `jury_table` row under `prefix`."""
    return {
        prefix: row["jury"],
        f"{prefix}_ca": row["ca"],
        f"{prefix}_ca_low": row["ca_low"],
        f"{prefix}_ca_high": row["ca_high"],
    }


def jury_members_long(table: pd.DataFrame, *, pool: str, jury: str | None = None) -> pd.DataFrame:
    """Return the Fig. 6 (top) bars of one jury: each member's CA and the jury's, per split.

    Args:
        table: A `jury_table` with sizes 1 and the jury's size, one vote rule.
        pool: The pool to show.
        jury: The jury (members joined by " + "); None picks the best pooled jury of the
            largest size.

    Returns:
        Per split (no pooled row): `split`, `who` (a member, or "jury (<rule>)"), `value`,
        `ci_low`, `ci_high`, `n`;
        empty when the pool has no scored jury (e.g. no gold labels).
    """
    _require(table, ["pool", "size", "jury", "split", "ca"], "jury_members_long")
    columns = ["split", "who", "value", "ci_low", "ci_high", "n"]
    data = table[table["pool"] == pool]
    if data.empty:  # no jury could be scored (e.g. a source without gold labels)
        return pd.DataFrame(columns=columns)
    if data["vote_rule"].nunique() > 1:
        raise ValueError("jury_members_long: filter the table to one vote rule first")
    if jury is None:
        big = data[data["size"] == data["size"].max()]
        ref = big[big["aggregation"] == pairwise.POOLED]
        ref = ref if len(ref) else big
        jury = str(ref.sort_values("ca", ascending=False, kind="stable")["jury"].iloc[0])
    members = jury.split(JURY_SEP)
    rule = str(data["vote_rule"].iloc[0])
    parts = []
    for name, who in [(m, m) for m in members] + [(jury, f"jury ({rule})")]:
        part = data[data["jury"] == name]
        if part.empty:
            raise ValueError(f"jury/judge {name!r} not in pool {pool!r}")
        parts.append(part.assign(who=who))
    out = pd.concat(parts, ignore_index=True)
    # members are shown on the jury's items: keep splits where the jury was scored, and no
    # pooled row (a member's pooled row may cover splits the jury was not scored on)
    out = out[out["split"].isin(set(out.loc[out["who"].str.startswith("jury"), "split"]))]
    out = out[out["aggregation"] == "split"]
    out = out.rename(columns={"ca": "value", "ca_low": "ci_low", "ca_high": "ci_high"})
    return out[columns].reset_index(drop=True)
