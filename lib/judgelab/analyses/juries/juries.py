"""LLM-as-jury majority votes and self-consistency (ContextualJudgeBench §4.4; spec 000 §4.5-4.6).

Both build on a judge's *consolidated label* per item (spec §4.5 step 1, paper footnote 2:
"we treat inconsistent judgments as ties"): `pos` when the judge picked the positive response
in both presentation orders, `neg` when it picked the negative one in both, `tie` otherwise
(an inconsistent pair, a tie verdict, or any invalid output). A jury — or a judge's n samples —
then votes with one of the `VOTE_RULES`; it is correct only when the winner is `pos`, so "no
clear winner" (e.g. pos, tie, neg or tie, tie, tie) counts as incorrect (spec §4.5 step 2).

The per-judge rates come from `metrics.item_outcomes`, the intervals from `stats`
(item bootstrap, seeded by the group key); rates are fractions.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations
from math import comb
from typing import NamedTuple

import numpy as np
import pandas as pd

from judgelab.analyses.pairwise import metrics
from judgelab.core import stats
from judgelab.core.schema import require_columns as _require

LABELS: tuple[str, ...] = ("pos", "neg", "tie")
VOTE_RULES: tuple[str, ...] = (
    "plurality_with_tie_class",
    "strict_majority",
    "plurality_ignore_ties",
)
SC_MODES: tuple[str, ...] = ("per_draw_consolidate", "per_run_majority")
INVALID_DRAWS: tuple[str, ...] = ("tie", "exclude")
#: Code of "no clear winner" in the arrays returned by `vote`.
NO_WINNER = -1
_POS, _NEG, _TIE = 0, 1, 2
_JURY_SEP = " + "


def _check_rule(rule: str) -> None:
    if rule not in VOTE_RULES:
        raise ValueError(f"vote_rule must be one of {VOTE_RULES}, got {rule!r}")


def vote(counts: np.ndarray, *, rule: str = "plurality_with_tie_class") -> np.ndarray:
    """Return the winning class per unit from vote counts, `NO_WINNER` (-1) when none.

    Args:
        counts: Array (..., 3) of votes for pos, neg, tie (in `LABELS` order).
        rule: `plurality_with_tie_class`: tie is a class; the unique most frequent class wins
            (a shared first place means no winner). `strict_majority`: a class needs more than
            half of the votes cast. `plurality_ignore_ties`: pos against neg only, ties are
            abstentions (pos, tie, tie → pos; no pos or neg vote → no winner).

    Returns:
        Array (...) of class codes 0 = pos, 1 = neg, 2 = tie, or -1.

    >>> vote(np.array([[1, 1, 1], [2, 0, 1], [1, 0, 2]])).tolist()
    [-1, 0, 2]
    """
    _check_rule(rule)
    counts = np.asarray(counts, dtype=np.int64)
    if counts.shape[-1] != 3:
        raise ValueError(
            f"counts must end in a dimension of 3 (pos, neg, tie), got {counts.shape}"
        )
    if rule == "plurality_ignore_ties":
        pos, neg = counts[..., _POS], counts[..., _NEG]
        return np.where(pos > neg, _POS, np.where(neg > pos, _NEG, NO_WINNER))
    if rule == "strict_majority":
        total = counts.sum(axis=-1, keepdims=True)
        wins = 2 * counts > total
        return np.where(wins.any(axis=-1), wins.argmax(axis=-1), NO_WINNER)
    top = counts.max(axis=-1, keepdims=True)
    unique = (counts == top).sum(axis=-1) == 1
    return np.where(unique & (top[..., 0] > 0), counts.argmax(axis=-1), NO_WINNER)


def vote_labels(labels: Sequence[str], *, rule: str = "plurality_with_tie_class") -> str | None:
    """Return the jury verdict (pos/neg/tie) of a list of labels, None when no clear winner.

    >>> vote_labels(["pos", "tie", "neg"]), vote_labels(["pos", "pos", "neg"])
    (None, 'pos')
    """
    bad = [v for v in labels if v not in LABELS]
    if bad:
        raise ValueError(f"labels must be in {LABELS}, got {bad}")
    counts = np.array([sum(v == c for v in labels) for c in LABELS])
    code = int(vote(counts, rule=rule))
    return None if code == NO_WINNER else LABELS[code]


def consolidated_labels(
    judgments: pd.DataFrame, *, groups: Sequence[str] = metrics.GROUPS
) -> pd.DataFrame:
    """Return each judge's consolidated label per item and sample (spec §4.5 step 1).

    Args:
        judgments: A judgments table; needs the `groups` columns and `item_id`, `sample`,
            `order`, `valid`, `chosen`, `correct`.
        groups: Columns that identify a group (must include `judge`).

    Returns:
        `metrics.item_outcomes` rows of the complete items (both orders present), plus
        `label` (pos/neg/tie: pos or neg when both orders agree on it, tie otherwise).
    """
    out = metrics.item_outcomes(judgments, groups=groups)
    out = out[out["complete"].astype(bool)].reset_index(drop=True)
    c0, c1 = out["chosen_0"].to_numpy(), out["chosen_1"].to_numpy()
    same = c0 == c1
    out["label"] = np.where(
        same & (c0 == "pos"), "pos", np.where(same & (c0 == "neg"), "neg", "tie")
    )
    return out


def _codes(labels: pd.Series) -> np.ndarray:
    """Return label codes (0 = pos, 1 = neg, 2 = tie) of a pos/neg/tie series."""
    values = labels.to_numpy(dtype=object)
    return np.select([values == "pos", values == "neg"], [_POS, _NEG], _TIE).astype(np.int64)


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
        _check_rule(r)
    if any(s < 1 for s in sizes):
        raise ValueError(f"jury sizes must be >= 1, got {sizes}")
    if max_juries < 1:
        raise ValueError(f"max_juries must be >= 1, got {max_juries}")
    _require(judgments, ["judge", "benchmark", "split", "sample"], "jury_table")
    data = judgments[judgments["sample"] == 0]
    if pool is None:
        data = data.assign(_pool="all")
        pool_col = "_pool"
    else:
        _require(judgments, [pool], "jury_table")
        pool_col = pool
    labels = consolidated_labels(data, groups=("judge", pool_col, "benchmark", "split"))
    labels = labels[labels["has_gold"].astype(bool)]
    rows: list[dict] = []
    for pool_value, block in labels.groupby(pool_col, sort=True):
        judges = sorted(block["judge"].unique())
        all_juries = [
            (s, jury) for s in sizes for jury in _juries(judges, s, max_juries, seed, pool_value)
        ]
        possible = {s: comb(len(judges), s) for s in sizes}
        for rule in rules:
            # per jury: list of (sums, reps, n) over the cells it was scored in
            pooled: dict[tuple, list] = {}
            for (bench, split), part in block.groupby(["benchmark", "split"], sort=True):
                wide = part.pivot(index="item_id", columns="judge", values="label").dropna()
                if wide.empty:
                    continue
                present = list(wide.columns)
                codes = np.column_stack([_codes(wide[j]) for j in present])
                cell_juries = [(s, j) for s, j in all_juries if set(j) <= set(present)]
                if not cell_juries:
                    continue
                member_ok = (codes == _POS).astype(float)
                jury_ok = np.empty((len(codes), len(cell_juries)))
                for c, (_, jury) in enumerate(cell_juries):
                    sub = codes[:, [present.index(m) for m in jury]]
                    counts = np.stack([(sub == k).sum(axis=1) for k in range(3)], axis=-1)
                    jury_ok[:, c] = vote(counts, rule=rule) == _POS
                values = np.column_stack([jury_ok, member_ok])
                rng = stats.rng_for(seed, "jury", pool_value, bench, split, rule)
                reps = stats.bootstrap_sums(values, n_boot=n_boot, rng=rng)
                sums, n = values.sum(axis=0), len(values)
                n_j = len(cell_juries)
                keys, cells = [], []
                for c, (s, jury) in enumerate(cell_juries):
                    cols = [c] + [n_j + present.index(m) for m in jury]
                    cell = (sums[cols], reps[:, cols], n)
                    pooled.setdefault(jury, []).append(cell)
                    keys.append((pool_value, bench, split, "split", rule, jury, possible[s]))
                    cells.append(cell)
                rows += _jury_rows(keys, cells, level)
            if across is None:
                continue
            benches = ",".join(sorted(block["benchmark"].unique()))
            keys, totals = [], []
            for s, jury in all_juries:
                cells = pooled.get(jury, [])
                if not cells:
                    continue
                totals.append(
                    (
                        np.sum([c[0] for c in cells], axis=0),
                        np.sum([c[1] for c in cells], axis=0),
                        sum(c[2] for c in cells),
                    )
                )
                keys.append(
                    (pool_value, benches, metrics.POOLED, metrics.POOLED, rule, jury, possible[s])
                )
            rows += _jury_rows(keys, totals, level)
    columns = [
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
    ]
    out = pd.DataFrame(rows, columns=columns)
    for c in ("size", "n", "n_juries_possible"):
        out[c] = out[c].astype(int)
    return out


def _jury_rows(keys: list[tuple], cells: list[tuple], level: float) -> list[dict]:
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
                "jury": _JURY_SEP.join(jury),
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
            s = singles.iloc[0]
            row |= {
                "best_judge": s["jury"],
                "best_judge_ca": s["ca"],
                "best_judge_ca_low": s["ca_low"],
                "best_judge_ca_high": s["ca_high"],
            }
        if len(juries):
            j = juries.iloc[0]
            row |= {
                "best_jury": j["jury"],
                "best_jury_ca": j["ca"],
                "best_jury_ca_low": j["ca_low"],
                "best_jury_ca_high": j["ca_high"],
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
    columns = [
        *keys,
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
    ]
    return pd.DataFrame(rows).reindex(columns=columns)


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
        ref = big[big["aggregation"] == metrics.POOLED]
        ref = ref if len(ref) else big
        jury = str(ref.sort_values("ca", ascending=False, kind="stable")["jury"].iloc[0])
    members = jury.split(_JURY_SEP)
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


# ----------------------------------------------------------------------- self-consistency


def self_consistency(
    judgments: pd.DataFrame,
    *,
    mode: str = "per_draw_consolidate",
    vote_rule: str = "plurality_with_tie_class",
    invalid_draws: str = "tie",
    groups: Sequence[str] = metrics.GROUPS,
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
        One row per group × item: the `groups` columns, `item_id`, `n_samples`, `has_gold`,
        `greedy_label`, `sc_label` (pos/neg/tie, or "none" when the vote has no clear
        winner), `greedy_correct`, `sc_correct` (null without gold), `changed` (the SC label
        differs from the greedy one).
    """
    if mode not in SC_MODES:
        raise ValueError(f"mode must be one of {SC_MODES}, got {mode!r}")
    if invalid_draws not in INVALID_DRAWS:
        raise ValueError(f"invalid_draws must be one of {INVALID_DRAWS}, got {invalid_draws!r}")
    _check_rule(vote_rule)
    groups = list(groups)
    labels = consolidated_labels(judgments, groups=groups)
    units = [*groups, "item_id"]
    columns = [
        *units,
        "n_samples",
        "has_gold",
        "greedy_label",
        "sc_label",
        "greedy_correct",
        "sc_correct",
        "changed",
    ]
    if labels.empty:
        return pd.DataFrame(columns=columns)
    labels["_unit"] = labels.groupby(units, sort=False, dropna=False).ngroup()
    n_units = int(labels["_unit"].max()) + 1
    unit = labels["_unit"].to_numpy()
    n_samples = np.bincount(unit, minlength=n_units)
    if mode == "per_draw_consolidate":
        counts = np.zeros((n_units, 3), dtype=np.int64)
        np.add.at(counts, (unit, _codes(labels["label"])), 1)
        winner = vote(counts, rule=vote_rule)
    else:
        majority = []
        for o in (0, 1):
            chosen = labels[f"chosen_{o}"].to_numpy()
            code = np.select([chosen == "pos", chosen == "neg"], [_POS, _NEG], _TIE)
            keep = (chosen != "invalid") | (invalid_draws == "tie")
            counts = np.zeros((n_units, 3), dtype=np.int64)
            np.add.at(counts, (unit[keep], code[keep]), 1)
            majority.append(vote(counts, rule=vote_rule))
        m0, m1 = majority
        winner = np.where((m0 == m1) & (m0 != _TIE) & (m0 != NO_WINNER), m0, _TIE)
    first = labels.sort_values("sample", kind="stable").drop_duplicates("_unit")
    greedy = first[first["sample"] == labels["sample"].min()].set_index("_unit")
    out = labels.drop_duplicates("_unit").set_index("_unit")[units].sort_index()
    out["n_samples"] = n_samples
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


def self_consistency_rates(
    sc: pd.DataFrame,
    *,
    groups: Sequence[str] = metrics.GROUPS,
    across: str | None = "split",
    n_boot: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> pd.DataFrame:
    """Return greedy vs self-consistent CA per group with bootstrap intervals (long form).

    Args:
        sc: Output of `self_consistency`.
        groups: The group columns used there.
        across: Group column pooled into an extra `pooled` row (stratified bootstrap).
        n_boot: Bootstrap resamples B.
        seed: Seed of the bootstrap.
        level: Confidence level.

    Returns:
        Long table: the `groups` columns, `aggregation`, `metric` ∈ {`greedy_ca`, `sc_ca`,
        `sc_minus_greedy` (paired), `changed` (share of items whose label the vote changed;
        defined without gold)}, `value`, `ci_low`, `ci_high`, `n` (items; gold items for the
        accuracies), `n_samples` (median samples per item).
    """
    groups = list(groups)
    _require(sc, [*groups, "greedy_correct", "sc_correct", "changed", "n_samples"], "sc rates")
    names = ["greedy_ca", "sc_ca", "sc_minus_greedy", "changed"]
    cells = []
    for key, block in sc.groupby(groups, sort=True, dropna=False):
        key = key if isinstance(key, tuple) else (key,)
        gold = block["has_gold"].to_numpy(dtype=bool)
        g = block["greedy_correct"].astype("boolean").fillna(False).to_numpy(dtype=float)
        s = block["sc_correct"].astype("boolean").fillna(False).to_numpy(dtype=float)
        values = np.column_stack([g, s, s - g, block["changed"].to_numpy(dtype=float), gold])
        reps = stats.bootstrap_sums(values, n_boot=n_boot, rng=stats.rng_for(seed, "sc", *key))
        cells.append(
            (
                dict(zip(groups, key, strict=True)),
                values.sum(axis=0),
                reps,
                len(values),
                float(block["n_samples"].median()),
            )
        )
    if across is not None and cells:
        rest = [g for g in groups if g != across]
        outer: dict[tuple, list] = {}
        for c in cells:
            outer.setdefault(tuple(c[0][g] for g in rest), []).append(c)
        for okey, members in outer.items():
            cells.append(
                (
                    {**dict(zip(rest, okey, strict=True)), across: metrics.POOLED},
                    np.sum([m[1] for m in members], axis=0),
                    np.sum([m[2] for m in members], axis=0),
                    sum(m[3] for m in members),
                    float(np.median([m[4] for m in members])),
                )
            )
    rows = []
    for key, sums, reps, n, med in cells:
        n_gold = sums[4]
        dens = [n_gold, n_gold, n_gold, n]
        rep_dens = [reps[:, 4], reps[:, 4], reps[:, 4], np.full(len(reps), n)]
        for i, name in enumerate(names):
            low, high = stats.percentile_interval(
                stats.ratio_replicates(reps[:, i], rep_dens[i]), level=level
            )
            rows.append(
                {
                    **key,
                    "aggregation": metrics.POOLED
                    if key.get(across) == metrics.POOLED
                    else "split",
                    "metric": name,
                    "value": float(stats.ratio_replicates(sums[i], dens[i])),
                    "ci_low": float(low),
                    "ci_high": float(high),
                    "n": int(dens[i]),
                    "n_samples": med,
                }
            )
    columns = [*groups, "aggregation", "metric", "value", "ci_low", "ci_high", "n", "n_samples"]
    return pd.DataFrame(rows, columns=columns)


def draw_counts(
    judgments: pd.DataFrame,
    *,
    count: str = "auto",
    groups: Sequence[str] = ("judge",),
    min_samples: int = 2,
) -> pd.DataFrame:
    """Return the Fig. 7 distribution: per judge and run, how many items got k hits of n draws.

    A *hit* is a correct verdict (`count="correct"`, needs gold) or a verdict for the
    response in the `pos` slot (`count="pos"`, defined without gold: mass at 0 and n means
    the repeated draws agree). `auto` picks `correct` when every item has gold.
    Run 1 = order 0 (positive shown first), Run 2 = order 1. Items are pooled over splits.

    Returns:
        The `groups` columns, `run` ("Run 1"/"Run 2"), `count`, `n_draws`, `hits`, `n_items`,
        `share` (of the items of that judge, run and n_draws).
    """
    groups = list(groups)
    _require(
        judgments,
        [*groups, "item_id", "split", "order", "sample", "chosen", "correct"],
        "draw_counts",
    )
    if count not in ("auto", "correct", "pos"):
        raise ValueError(f"count must be auto, correct or pos, got {count!r}")
    if count == "auto":
        count = "correct" if judgments["correct"].notna().all() else "pos"
    data = judgments
    if count == "correct":
        if data["correct"].isna().any():
            raise ValueError("count='correct' needs gold: some judgments have a null `correct`")
        hit = data["correct"].astype("boolean").fillna(False).to_numpy(dtype=int)
    else:
        hit = (data["chosen"].astype(object) == "pos").to_numpy(dtype=int)
    keys = [*groups, "split", "item_id", "order"]
    per = data[keys].assign(_hit=hit).groupby(keys, sort=False, dropna=False)["_hit"]
    per = per.agg(hits="sum", n_draws="count").reset_index()
    per = per[per["n_draws"] >= min_samples]
    per["run"] = np.where(per["order"] == 0, "Run 1", "Run 2")
    out = per.groupby([*groups, "run", "n_draws", "hits"], sort=True).size().rename("n_items")
    out = out.reset_index()
    out["share"] = out["n_items"] / out.groupby([*groups, "run", "n_draws"])["n_items"].transform(
        "sum"
    )
    out.insert(len(groups) + 1, "count", count)
    return out


# ---------------------------------------------------------------------- notebook helpers


def select(
    judgments: pd.DataFrame,
    *,
    pool: str | None = "prompt",
    pools: Sequence[str] = (),
    splits: Sequence[str] = (),
    judges: Sequence[str] = (),
) -> pd.DataFrame:
    """Return the judgments of the named pools, splits and judges (empty selection: all).

    Raises:
        ValueError: a named pool, split or judge has no rows (the message lists the known ones).
    """
    out = judgments
    for column, wanted in ((pool, pools), ("split", splits), ("judge", judges)):
        if not wanted:
            continue
        if column is None:
            raise ValueError("pools given but pool is None")
        _require(out, [column], "select")
        known = set(out[column].astype(str))
        unknown = [w for w in wanted if w not in known]
        if unknown:
            raise ValueError(f"unknown {column} value(s) {unknown}; known: {sorted(known)}")
        out = out[out[column].isin(list(wanted))]
    return out.reset_index(drop=True)


def pick(table: pd.DataFrame, **equals: object) -> pd.DataFrame:
    """Return the rows whose columns equal the given values (a list value means any of them).

    >>> pick(pd.DataFrame({"a": [1, 2, 3]}), a=[1, 3])["a"].tolist()
    [1, 3]
    """
    _require(table, list(equals), "pick")
    mask = np.ones(len(table), dtype=bool)
    for column, value in equals.items():
        if isinstance(value, (list, tuple, set)):
            mask &= table[column].isin(list(value)).to_numpy()
        else:
            mask &= (table[column] == value).to_numpy()
    return table[mask].reset_index(drop=True)


class Focus(NamedTuple):
    """The pool and split shown in single-panel figures, and why they were chosen."""

    pool: str
    split: str
    note: str


def resolve_focus(
    judgments: pd.DataFrame,
    *,
    pool: str | None = "prompt",
    focus_pool: str = "",
    focus_split: str = "",
) -> Focus:
    """Return the requested pool and split if present, else the largest pool and split.

    "Largest" means most judges (pool) and most items (split within that pool). The note
    says when a request was replaced, so figure titles never hide the substitution.
    """
    _require(judgments, ["judge", "split", "item_id"], "resolve_focus")
    data = judgments.assign(_pool="all" if pool is None else judgments[pool])
    notes = []
    pools = data.groupby("_pool")["judge"].nunique().sort_values(ascending=False, kind="stable")
    chosen_pool = focus_pool if focus_pool in pools.index else str(pools.index[0])
    if focus_pool and focus_pool != chosen_pool:
        notes.append(f"pool {focus_pool!r} not in the data; showing {chosen_pool!r}")
    part = data[data["_pool"] == chosen_pool]
    splits = part.groupby("split")["item_id"].nunique().sort_values(ascending=False, kind="stable")
    chosen_split = focus_split if focus_split in splits.index else str(splits.index[0])
    if focus_split and focus_split != chosen_split:
        notes.append(f"split {focus_split!r} not in the data; showing {chosen_split!r}")
    return Focus(chosen_pool, chosen_split, "; ".join(notes) or "as requested")
