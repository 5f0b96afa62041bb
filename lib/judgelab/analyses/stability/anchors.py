"""Anchor sensitivity: where scores are win rates against one baseline, move the baseline.

Input is a long table of *wins*: one row per (rater, system, opponent, unit) with `value` 1
(the system's response won), 0.5 (tie) or 0 (lost), both directions of every comparison
present (`pairwise_wins` from pairwise judgments, `wins_from_scores` from pointwise scores of
several systems on the same questions). For each rater, every opponent faced by at least
`min_opponents` systems can serve as the *anchor*: each system's win rate against it is a
board (`leaderboard.leaderboard_stability`, the anchors as its raters), so the rank of each
system under each anchor, its 95 % rank set, P(leader changes) and Kendall's τ-b between the
rankings under two anchors (over the systems compared with both, neither anchor itself; the
questions resampled jointly) come from the one leaderboard engine. An anchor is not ranked
on its own board, so ranks under two anchors count different sets of systems: compare
rankings through τ, not by subtracting ranks.

τ's interval on planted truth (`calibration.checks.stability`, five systems, two anchors,
R = 400 per cell): it covers 0.93–1.00 wherever n ≥ 60 and reads above 0.97 from n = 100
on — τ over five systems moves in steps of 0.2, so once the items settle every pair the
estimate is the truth and any interval holding it covers; with 8 clusters and n = 48
(2–8 effective clusters, `few_clusters`) it covers only 0.875–0.905.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
import pandas as pd

from judgelab.analyses.stability import leaderboard as _board
from judgelab.core import wild
from judgelab.core.schema import meta_field, require_columns

#: Columns of a wins table.
WIN_COLUMNS: tuple[str, ...] = (
    "rater", "system", "opponent", "benchmark", "split", "item_id", "cluster", "value",
)  # fmt: skip
_VALUE = {"pos": 1.0, "neg": 0.0, "tie": 0.5}
_KEYS = ["benchmark", "split", "item_id"]


class Anchors(NamedTuple):
    """The tables of `anchor_sensitivity` (every row carries its `rater`)."""

    board: pd.DataFrame  # rater × anchor × system: win rate, interval, rank, rank set, P(lead)
    taus: pd.DataFrame  # rater × anchor pair: Kendall's τ-b between the two rankings
    leaders: pd.DataFrame  # rater × anchor: leader, P(leader changes)


def _mirror(wins: pd.DataFrame) -> pd.DataFrame:
    """Return the wins with every comparison also seen from the opponent's side."""
    back = wins.rename(columns={"system": "opponent", "opponent": "system"})
    back["value"] = 1.0 - back["value"]
    out = pd.concat([wins, back[wins.columns]], ignore_index=True)
    return out[list(WIN_COLUMNS)].reset_index(drop=True)


def pairwise_wins(
    judgments: pd.DataFrame,
    items: pd.DataFrame,
    *,
    pos: str = "meta.model_pos",
    neg: str = "meta.model_neg",
    human: str | None = None,
) -> pd.DataFrame:
    """Return the wins table of pairwise judgments whose two responses name their systems.

    Args:
        judgments: A pairwise judgments table (valid rows of sample 0; `chosen` pos/neg/tie).
        items: Its items table (`meta`, `cluster`, and the `human` column when used).
        pos: `meta.<key>` (or an items column) naming the system of response_pos.
        neg: The same for response_neg.
        human: An items column of the human verdict (pos/neg/tie, e.g. `gold`): adds the
            rater `humans`, once per item the judgments cover.

    Returns:
        `WIN_COLUMNS`, each comparison in both directions (a judgment in both presentation
        orders counts twice, as in every pairwise share).
    """
    require_columns(judgments, [*_KEYS, "judge", "chosen"], "pairwise_wins")
    rows = judgments
    if "valid" in rows.columns:
        rows = rows[rows["valid"].fillna(False).astype(bool)]
    if "sample" in rows.columns:
        rows = rows[rows["sample"].fillna(0).astype(int) == 0]
    base = items[[*_KEYS, *(["cluster"] if "cluster" in items.columns else [])]].copy()
    for col, name in (("system", pos), ("opponent", neg)):
        got = (
            meta_field(items["meta"], name.removeprefix("meta."))
            if name.startswith("meta.")
            else items[name]
        )
        base[col] = got.to_numpy()
    judged = rows[[*_KEYS, "judge", "chosen"]].merge(base, on=_KEYS, how="inner")
    judged = judged.rename(columns={"judge": "rater"})
    judged["value"] = judged["chosen"].astype(object).map(_VALUE)
    parts = [judged]
    if human is not None:
        require_columns(items, [human], "pairwise_wins")
        hum = base.assign(rater=_board.HUMANS, value=items[human].astype(object).map(_VALUE))
        parts.append(hum.merge(rows[_KEYS].drop_duplicates(), on=_KEYS, how="inner"))
    out = pd.concat(parts, ignore_index=True)
    if "cluster" not in out.columns:
        out["cluster"] = None
    out = out[out["value"].notna() & out["system"].notna() & out["opponent"].notna()]
    return _mirror(out[list(WIN_COLUMNS)].astype({"value": float}))


def wins_from_scores(scores: pd.DataFrame, *, on: Sequence[str] = ("item_id",)) -> pd.DataFrame:
    """Return the wins implied by pointwise scores: on each question, the higher score wins.

    Args:
        scores: `system`, `rater`, `cluster`, `value` and the `on` columns (see
            `leaderboard.scores_from_judgments`): one score per rater, system and question.
        on: The columns naming a question every system answered (e.g. `item_id` where a
            benchmark's item id is the question and its split the system).

    Returns:
        `WIN_COLUMNS`: one row per rater, question and ordered pair of systems scored on it
        (1 when the system scored higher, 0.5 when equal, 0 when lower).
    """
    on = list(on)
    require_columns(scores, ["system", "rater", "cluster", "value", *on], "wins_from_scores")
    dup = scores.duplicated(["rater", "system", *on])
    if dup.any():
        first = scores[dup].iloc[0]
        where = ", ".join(f"{k}={first[k]!r}" for k in ["rater", "system", *on])
        raise ValueError(f"wins_from_scores: two scores for one question ({where}); pass `on`")
    left = scores[["rater", "system", *on, "cluster", "value"]]
    right = left.rename(columns={"system": "opponent", "value": "_other"}).drop(columns="cluster")
    pairs = left.merge(right, on=["rater", *on])
    pairs = pairs[pairs["system"].astype(str) != pairs["opponent"].astype(str)]
    diff = pairs["value"].to_numpy(float) - pairs["_other"].to_numpy(float)
    pairs = pairs.assign(value=np.where(diff > 0, 1.0, np.where(diff < 0, 0.0, 0.5)))
    for k in _KEYS:
        if k not in pairs.columns:
            pairs[k] = scores[k].iloc[0] if k in scores.columns and len(scores) else None
    return pairs[list(WIN_COLUMNS)].reset_index(drop=True)


def anchors_of(wins: pd.DataFrame, *, min_opponents: int = 2) -> pd.DataFrame:
    """Return each rater's possible anchors: opponents faced by `min_opponents`+ systems.

    >>> w = pd.DataFrame({"rater": "r", "system": ["a", "b", "c", "a"],
    ...                   "opponent": ["z", "z", "z", "b"]})
    >>> anchors_of(w).to_dict("records")
    [{'rater': 'r', 'anchor': 'z', 'n_systems': 3}]
    """
    require_columns(wins, ["rater", "system", "opponent"], "anchors_of")
    n = wins.groupby(["rater", "opponent"])["system"].nunique().rename("n_systems")
    n = n[n >= min_opponents].reset_index().rename(columns={"opponent": "anchor"})
    return n[["rater", "anchor", "n_systems"]]


def anchor_sensitivity(
    wins: pd.DataFrame,
    *,
    min_opponents: int = 2,
    seed: int = 0,
    level: float = 0.95,
    n_boot: int = 999,
    n_boot_wild: int = wild.N_BOOT,
) -> Anchors:
    """Return each system's win rate and rank against every anchor, and τ between anchors.

    Args:
        wins: A wins table (`pairwise_wins`, `wins_from_scores`).
        min_opponents: Fewest systems an opponent must have faced to serve as an anchor.
        seed: Seed of the bootstraps (each rater's seeded by its name).
        level: Confidence level.
        n_boot: Cluster bootstrap resamples for τ, rank sets and P(leader changes).
        n_boot_wild: Wild bootstrap replicates of each win rate's interval.

    Returns:
        An `Anchors`: `board` (`rater`, `anchor`, `system`, the win rate's
        `estimates.FIELDS`, `rank`, `rank_low`, `rank_high`, `p_lead`), `taus` (`rater`,
        `anchor_1`, `anchor_2`, `tau`, `ci_low`, `ci_high`, `n_systems`, `n_clusters`,
        `n_eff_clusters`, `few_clusters`, `method`), `leaders` (`rater`, `anchor`, `leader`,
        `runner_up`, `p_leader_changes`, `n_boot`). Raters with fewer than two anchors are
        left out (see `anchor_reason`).
    """
    require_columns(wins, list(WIN_COLUMNS), "anchor_sensitivity")
    possible = anchors_of(wins, min_opponents=min_opponents)
    boards, taus, leaders = [], [], []
    for rater, block in possible.groupby("rater", sort=True):
        if len(block) < 2:
            continue
        w = wins[(wins["rater"] == rater) & wins["opponent"].isin(block["anchor"])]
        long = w.drop(columns="rater").rename(columns={"opponent": "rater"})
        lb = _board.leaderboard_stability(
            long, reference=None, seed=seed, level=level, n_boot=n_boot,
            n_boot_wild=n_boot_wild,
        )  # fmt: skip
        boards.append(lb.board.rename(columns={"rater": "anchor"}).assign(rater=rater))
        named = {"rater_1": "anchor_1", "rater_2": "anchor_2"}
        taus.append(lb.taus.rename(columns=named).assign(rater=rater))
        leaders.append(lb.leaders.rename(columns={"rater": "anchor"}).assign(rater=rater))
    return Anchors(*(_front(parts) for parts in (boards, taus, leaders)))


def _front(parts: list[pd.DataFrame]) -> pd.DataFrame:
    """Return the parts concatenated with `rater` as the first column."""
    if not parts:
        return pd.DataFrame(columns=["rater"])
    out = pd.concat(parts, ignore_index=True)
    return out[["rater", *[c for c in out.columns if c != "rater"]]]


def systems_by_rater(*tables: pd.DataFrame) -> pd.DataFrame:
    """Return the systems each rater compared or scored, from wins and scores tables.

    >>> w = pd.DataFrame({"rater": "j", "system": ["a", "b"], "opponent": ["b", "a"]})
    >>> systems_by_rater(w).to_dict("records")
    [{'rater': 'j', 'n_systems': 2, 'systems': 'a, b'}]
    """
    parts = []
    for t in tables:
        require_columns(t, ["rater", "system"], "systems_by_rater")
        parts.append(t[["rater", "system"]].astype(str))
    if not parts:
        return pd.DataFrame(columns=["rater", "n_systems", "systems"])
    both = pd.concat(parts, ignore_index=True).drop_duplicates()
    g = both.sort_values("system").groupby("rater", sort=True)["system"]
    out = pd.DataFrame({"n_systems": g.size(), "systems": g.agg(", ".join)})
    return out.reset_index()


def anchor_reason(wins: pd.DataFrame, *, min_opponents: int = 2) -> str | None:
    """Return why the anchor cannot move, None when some rater has two or more anchors.

    >>> w = pd.DataFrame({"rater": "r", "system": ["a", "b"], "opponent": ["z", "z"]})
    >>> anchor_reason(w)
    "a single baseline ('z'): every system is compared with it alone, so the anchor cannot move"
    """
    possible = anchors_of(wins, min_opponents=min_opponents)
    if not possible.empty and possible.groupby("rater").size().max() >= 2:
        return None
    if not possible.empty:
        names = sorted(possible["anchor"].unique())
        one = names[0] if len(names) == 1 else names
        return (
            f"a single baseline ({one!r}): every system is compared with it alone, so the "
            "anchor cannot move"
        )
    n = wins["system"].nunique() if not wins.empty else 0
    return (
        f"{n} systems, none faced by {min_opponents} or more others: no ranking against a "
        "baseline, so none whose baseline could move"
    )
