"""LLM-as-jury majority votes scored against the jury's best member (spec 000 §4.5).

Juries vote on their members' consolidated labels (`votes`); per (pool, benchmark, split),
juries and judges are scored on the same items (the items' `cluster` column, else the item,
is the resampling unit).

**Default inference (`best_member="simultaneous"`, `interval="wild"`, issue 33).** The
estimand is jury CA − the best member's CA = min_j (jury − member_j): the jury beats its best
member exactly when it beats every member. Each jury − member_j is a difference of two rates
on the same items, tested by the restricted wild cluster bootstrap of
`core.estimates.difference`; their intervals at level 1 − α/m (Bonferroni over the m
members) hold simultaneously, so [min_j low_j, min_j high_j] covers min_j (jury − member_j)
whatever member is best — no selection step to get wrong. The p-value inverts that interval:
below α when every member is beaten at α/m, or some member beats the jury at α/m. Every
row reports the effective clusters and `few_clusters`. (Scoring a cross-fitted selected
member as if it were fixed under-covered — 0.80–0.90, type-I 0.09–0.18 — because the
selection varies with the data when members are close.)

Earlier readings stay available with the cluster bootstrap (`interval` `t`, `basic`,
`percentile`): `best_member="crossfit"` with `interval="t"` (the default before issue 33:
the member chosen on K − 1 folds of clusters and compared with the jury on the held-out
fold, averaged over the folds; the bootstrap repeats the whole procedure and the interval is
diff ± t_{G−1} · bootstrap SE with the matching t-test p-value — valid, but conservative:
coverage 0.975–0.995), `"reselect"` (wave 1: the in-sample best re-selected inside every
replicate, `interval="basic"`) and `"fixed"` (legacy: the full-sample best member treated as
fixed; also with `interval="wild"`, a plain difference of rates that ignores the selection).
Bootstrap p-values are resolved adaptively (`core.inference.adaptive_p`). `n_comparisons`
and the Holm-adjusted `p_holm` count every jury × vote rule tested in the same pool × split.

Pooled rows pool the splits' items (`wild`; a cluster in several splits is one unit) or add
the strata's sums and replicates (bootstrap, stratified), over splits rated by the same
judges (`pool_strata="same_judges"`: one pooled row per judge set, so a judge alone and the
juries it is compared with stand on the same items); `pool_strata="all"` is the legacy
pooling over every split where the jury's members judged.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations
from math import comb

import numpy as np
import pandas as pd

from judgelab.analyses import pairwise
from judgelab.analyses.juries.jury_bootstrap import boot_fields
from judgelab.analyses.juries.jury_cells import Items, Options, pool_items, score_split
from judgelab.analyses.juries.jury_summary import SUMMARY_COLUMNS, jury_summary
from judgelab.analyses.juries.jury_wild import wild_fields
from judgelab.analyses.juries.resample import Sums, pool_sums
from judgelab.analyses.juries.votes import check_rule, greedy_pools, pool_labels
from judgelab.core import inference, stats
from judgelab.errors import check_choice

__all__ = ["JURY_SEP", "SUMMARY_COLUMNS", "Sums", "jury_summary", "jury_table", "pool_sums"]

#: Separator of the members in a jury's name.
JURY_SEP = " + "
BEST_MEMBER: tuple[str, ...] = ("simultaneous", "crossfit", "reselect", "fixed")
#: Best-member readings each kind of interval supports.
_RULES_OF = {"wild": ("simultaneous", "fixed")}
_BOOT_RULES = ("crossfit", "reselect", "fixed")
INTERVALS: tuple[str, ...] = ("wild", "t", "basic", "percentile")
POOL_STRATA: tuple[str, ...] = ("same_judges", "all")
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
    "p_value",
    "p_bound",
    "n_boot_p",
    "p_holm",
    "n_comparisons",
    "n",
    "n_clusters",
    "n_juries_possible",
    "strata",
    "judges",
    "best_member_rule",
    "interval",
    "n_eff_clusters",
    "few_clusters",
    "method",
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
    best_member: str | None = None,
    interval: str = "wild",
    folds: int = 5,
    repeats: int = 8,
    pool_strata: str = "same_judges",
    cluster: str | None = "cluster",
    max_boot: int = 20_000,
) -> pd.DataFrame:
    """Score every jury of a given size drawn from each pool of judges, against its best member.

    A *pool* is the set of judges sharing a value of the `pool` column (e.g. one prompting
    strategy); juries never mix pools. Per (pool, benchmark, split), juries and judges are
    scored on the same items: those with gold that every judge of the pool present in that
    split judged in both orders. Size 1 gives each judge alone (its CA on those items).

    Args:
        judgments: A judgments table; needs `judge`, `benchmark`, `split`, `item_id`,
            `sample`, `order`, `valid`, `chosen`, `correct` and the `pool` column (and
            `cluster`, the resampling unit, when the source declares one). Only sample 0
            (the greedy run) is used.
        size: Jury size(s).
        pool: Column whose values define separate pools (None: one pool of all judges).
        vote_rule: One or several of `VOTE_RULES` (all of them side by side: a list).
        max_juries: At most this many juries per pool and size; when C(n, size) is larger,
            a seeded random subset of that many juries is scored (`n_juries_possible` says so).
        n_boot: Bootstrap resamples B of the intervals (p-values draw more when needed).
        seed: Seed of the bootstrap and of the jury subset.
        level: Confidence level.
        across: Group column pooled into extra pooled rows (None: no pooling).
        best_member: `simultaneous` (jury − every member, simultaneous intervals; see the
            module docstring), `crossfit` (chosen on the other folds of clusters, see
            `crossfit`; the default before issue 33), `reselect` (the in-sample best,
            re-chosen in every bootstrap replicate) or `fixed` (legacy: the full-sample best
            member, treated as fixed). None (default): `simultaneous` with the wild
            interval, `crossfit` with a bootstrap one.
        interval: Intervals and test: `wild` (default: the restricted wild cluster bootstrap
            of differences of rates, `core.estimates`; with `simultaneous` or `fixed`), `t`
            (the default before issue 33: ± t_{G−1} · bootstrap SE, t-test p-value),
            `basic` or `percentile` (bootstrap p-value); the bootstrap intervals go with
            `crossfit`, `reselect` or `fixed`.
        folds: Folds K of the cross-fitting (`best_member="crossfit"`).
        repeats: Random splits into K folds averaged by the cross-fitting.
        pool_strata: `same_judges` (default: one pooled row per set of judges, split
            `pooled`, or `pooled[1]`, `pooled[2]`, … when the splits' judge sets differ) or
            `all` (legacy: each jury over every split where its members judged).
        cluster: Column of the resampling unit (default `cluster`, falling back to the
            item when absent), or None (items resampled on their own: legacy).
        max_boot: Most bootstrap replicates a p-value may draw (beyond: a bound).

    Returns:
        One row per pool × benchmark × split (or pooled) × vote rule × jury: `pool`,
        `benchmark`, `split`, `aggregation` (split / pooled), `vote_rule`, `size`, `jury`
        (members joined by " + "), `ca` (+ `_low`/`_high`), `best_member` (full-sample),
        `best_member_ca` (+ `_low`/`_high`; cross-fitted: the held-out CA of the
        fold-selected members; `simultaneous`: the full-sample best member's CA and its
        own interval), `mean_member_ca`, `diff_vs_best` = ca − best_member_ca (+
        `diff_low`/`diff_high`), `p_value` (H0: diff = 0; NaN for size 1),
        `p_bound` (p is an upper bound), `n_boot_p`, `p_holm` (Holm over the
        `n_comparisons` juries × vote rules of size > 1 in the pool × benchmark × split), `n`
        (items), `n_clusters`, `n_juries_possible`, `strata` (splits of the row), `judges`
        (the judge set of the row's splits), `best_member_rule` (simultaneous / crossfit /
        reselect / fixed),
        `interval`, `n_eff_clusters` (effective clusters of the difference; NaN for the
        bootstrap intervals), `few_clusters`, `method`.
    """
    sizes = [size] if isinstance(size, int) else list(size)
    rules = [vote_rule] if isinstance(vote_rule, str) else list(vote_rule)
    for r in rules:
        check_rule(r)
    check_choice("interval", interval, INTERVALS)
    if best_member is None:
        best_member = "simultaneous" if interval == "wild" else "crossfit"
    check_choice("best_member", best_member, BEST_MEMBER)
    check_choice("pool_strata", pool_strata, POOL_STRATA)
    if any(s < 1 for s in sizes):
        raise ValueError(f"jury sizes must be >= 1, got {sizes}")
    if max_juries < 1:
        raise ValueError(f"max_juries must be >= 1, got {max_juries}")
    if folds < 2:
        raise ValueError(f"folds must be >= 2, got {folds}")
    allowed = _RULES_OF.get(interval, _BOOT_RULES)
    if best_member not in allowed:
        raise ValueError(
            f"best_member={best_member!r} does not go with interval={interval!r}: "
            + (
                "the wild bootstrap compares the jury with every member ('simultaneous') or "
                "with the full-sample best ('fixed'); use interval 't', 'basic' or "
                "'percentile' for 'crossfit' or 'reselect'"
                if interval == "wild"
                else "'simultaneous' needs interval='wild'"
            )
        )
    opts = Options(n_boot, seed, level, best_member, interval, max_boot, cluster, folds, repeats)
    rows: list[dict] = []
    for pool_value, block in _gold_labels(judgments, pool).groupby("pool", sort=True):
        judges = sorted(block["judge"].unique())
        all_juries = [
            (s, jury) for s in sizes for jury in _juries(judges, s, max_juries, seed, pool_value)
        ]
        possible = {s: comb(len(judges), s) for s in sizes}
        for rule in rules:
            rows += _rule_rows(
                block, pool_value, rule, all_juries, possible, opts, across, pool_strata
            )
    out = pd.DataFrame(rows, columns=list(JURY_COLUMNS))
    for c in ("size", "n", "n_clusters", "n_juries_possible", "n_boot_p"):
        out[c] = out[c].astype(int)
    return _holm(out)


def _holm(table: pd.DataFrame) -> pd.DataFrame:
    """Add `p_holm` and `n_comparisons`: Holm over the tests of one pool × benchmark × split."""
    table["p_holm"] = np.nan
    table["n_comparisons"] = 0
    tested = table["size"] > 1
    for _, idx in table[tested].groupby(["pool", "benchmark", "split"], sort=False).groups.items():
        p = table.loc[idx, "p_value"].to_numpy(dtype=float)
        table.loc[idx, "p_holm"] = inference.adjust(p, "holm")
        table.loc[idx, "n_comparisons"] = int(np.isfinite(p).sum())
    return table


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
    opts: Options,
    across: str | None,
    pool_strata: str,
) -> list[dict]:
    """Return the `jury_table` rows of one pool and vote rule: per split, then pooled."""
    rows: list[dict] = []
    # per judge set (or one set for the legacy pooling): per jury, its cells over the splits
    pooled: dict[tuple, dict[tuple, list[tuple[str, Sums, Items]]]] = {}
    for (bench, split), part in block.groupby(["benchmark", "split"], sort=True):
        rng = stats.rng_for(opts.seed, "jury", pool_value, bench, split, rule)
        present, scored = score_split(part, all_juries, rule, opts=opts, rng=rng)
        group = pooled.setdefault(() if pool_strata == "all" else tuple(present), {})
        keys = []
        for (s, jury), cell, items in scored:
            group.setdefault(jury, []).append((f"{bench}/{split}", cell, items))
            keys.append((pool_value, bench, split, "split", rule, jury, possible[s]))
        cells = [(c, i) for _, c, i in scored]
        rows += _jury_rows(keys, cells, opts, [f"{bench}/{split}"], present)
    if across is None:
        return rows
    benches = ",".join(sorted(block["benchmark"].unique()))
    sets = sorted(pooled.items(), key=lambda kv: (-len(kv[0]), kv[0]))
    for i, (judge_set, by_jury) in enumerate(sets, start=1):
        label = pairwise.POOLED if len(sets) == 1 else f"{pairwise.POOLED}[{i}]"
        for s, jury in all_juries:
            if not by_jury.get(jury):
                continue
            strata = [name for name, _, _ in by_jury[jury]]
            key = (pool_value, benches, label, pairwise.POOLED, rule, jury, possible[s])
            cell = pool_sums([c for _, c, _ in by_jury[jury]])
            items = pool_items([it for _, _, it in by_jury[jury]])
            rows += _jury_rows([key], [(cell, items)], opts, strata, list(judge_set) or list(jury))
    return rows


def _jury_rows(
    keys: list[tuple],
    cells: list[tuple[Sums, Items]],
    opts: Options,
    strata: list[str],
    judges: list[str],
) -> list[dict]:
    """Return `jury_table` rows from (jury, members...) sums (and items, for `wild`)."""
    rows = []
    cache: dict = {}  # members' CA estimates, once per split
    for key, (cell, items) in zip(keys, cells, strict=True):
        pool, bench, split, aggregation, rule, jury, possible = key
        sums, n = cell.sums, cell.n
        member = sums[1 : len(sums) // opts.width] / n
        best = int(np.argmax(member))  # first of equals (sorted)
        if opts.interval == "wild":
            fields = wild_fields(items, best, len(jury), opts, key, cache)
        else:
            fields = boot_fields(cell, best, len(jury), opts)
        n_clusters = fields.pop("n_clusters", cell.n_units)
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
                "best_member": jury[best],
                "mean_member_ca": float(member.mean()),
                **fields,
                "n": n,
                "n_clusters": n_clusters,
                "n_juries_possible": possible,
                "strata": ",".join(strata),
                "judges": JURY_SEP.join(judges),
                "best_member_rule": opts.rule,
                "interval": opts.interval,
            }
        )
    return rows
