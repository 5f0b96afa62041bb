"""Consolidated labels and vote rules (ContextualJudgeBench §4.4; spec 000 §4.5 steps 1-2).

A judge's *consolidated label* per item (spec §4.5 step 1, paper footnote 2: "we treat
inconsistent judgments as ties") is `pos` when the judge picked the positive response in both
presentation orders, `neg` when it picked the negative one in both, `tie` otherwise (an
inconsistent pair, a tie verdict, or any invalid output). A jury — or a judge's n samples —
then votes with one of the `VOTE_RULES`; it is correct only when the winner is `pos`, so "no
clear winner" (e.g. pos, tie, neg or tie, tie, tie) counts as incorrect (spec §4.5 step 2).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from judgelab.analyses import pairwise
from judgelab.core import clusters
from judgelab.core.schema import require_columns as _require
from judgelab.errors import check_choice

LABELS: tuple[str, ...] = ("pos", "neg", "tie")
VOTE_RULES: tuple[str, ...] = (
    "plurality_with_tie_class",
    "strict_majority",
    "plurality_ignore_ties",
)
#: Code of "no clear winner" in the arrays returned by `vote`.
NO_WINNER = -1
#: Class codes of `LABELS` in vote counts and in `vote`'s result.
POS, NEG, TIE = 0, 1, 2


def check_rule(rule: str) -> str:
    """Return `rule` when it is one of `VOTE_RULES`, else raise `ChoiceError`."""
    return check_choice("vote_rule", rule, VOTE_RULES)


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
    check_rule(rule)
    counts = np.asarray(counts, dtype=np.int64)
    if counts.shape[-1] != 3:
        raise ValueError(
            f"counts must end in a dimension of 3 (pos, neg, tie), got {counts.shape}"
        )
    if rule == "plurality_ignore_ties":
        pos, neg = counts[..., POS], counts[..., NEG]
        return np.where(pos > neg, POS, np.where(neg > pos, NEG, NO_WINNER))
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


def label_codes(labels: pd.Series | np.ndarray) -> np.ndarray:
    """Return class codes (0 = pos, 1 = neg, 2 = tie) of pos/neg/anything-else values.

    >>> label_codes(pd.Series(["neg", "pos", "tie", "invalid"])).tolist()
    [1, 0, 2, 2]
    """
    values = np.asarray(labels, dtype=object)
    return np.select([values == "pos", values == "neg"], [POS, NEG], TIE).astype(np.int64)


def vote_counts(units: np.ndarray, codes: np.ndarray, n_units: int) -> np.ndarray:
    """Return the (n_units, 3) vote counts of class `codes` cast by unit index `units`.

    >>> vote_counts(np.array([0, 0, 1]), np.array([POS, TIE, NEG]), 2).tolist()
    [[1, 0, 1], [0, 1, 0]]
    """
    counts = np.zeros((n_units, 3), dtype=np.int64)
    np.add.at(counts, (units, codes), 1)
    return counts


def consolidated_labels(
    judgments: pd.DataFrame, *, groups: Sequence[str] = pairwise.GROUPS
) -> pd.DataFrame:
    """Return each judge's consolidated label per item and sample (spec §4.5 step 1).

    Args:
        judgments: A judgments table; needs the `groups` columns and `item_id`, `sample`,
            `order`, `valid`, `chosen`, `correct`.
        groups: Columns that identify a group (must include `judge`).

    Returns:
        `pairwise.item_outcomes` rows of the complete items (both orders present), plus
        `label` (pos/neg/tie: pos or neg when both orders agree on it, tie otherwise).
    """
    out = pairwise.item_outcomes(judgments, groups=groups)
    out = out[out["complete"].astype(bool)].reset_index(drop=True)
    c0, c1 = out["chosen_0"].to_numpy(), out["chosen_1"].to_numpy()
    same = c0 == c1
    out["label"] = np.where(
        same & (c0 == "pos"), "pos", np.where(same & (c0 == "neg"), "neg", "tie")
    )
    return out


def greedy_pools(judgments: pd.DataFrame, pool: str | None, what: str) -> pd.DataFrame:
    """Return the greedy (sample 0) judgments with a `pool` column (`all` when pool is None).

    Args:
        judgments: A judgments table; needs `judge`, `benchmark`, `split`, `sample` and the
            `pool` column.
        pool: Column whose values define separate pools of judges (None: one pool).
        what: The caller, named in the error when a column is missing.
    """
    _require(judgments, ["judge", "benchmark", "split", "sample"], what)
    data = judgments[judgments["sample"] == 0]
    if pool is None:
        return data.assign(pool="all")
    _require(data, [pool], what)
    return data.assign(pool=data[pool])


def with_cluster(groups: Sequence[str], data: pd.DataFrame) -> list[str]:
    """Return `groups` plus `cluster` when `data` carries the resampling unit (kept per item)."""
    groups = list(groups)
    if clusters.COLUMN in data.columns and clusters.COLUMN not in groups:
        groups.append(clusters.COLUMN)
    return groups


def pool_labels(data: pd.DataFrame) -> pd.DataFrame:
    """Return the consolidated labels of `greedy_pools` judgments per judge, pool and split.

    The items' `cluster` (the resampling unit) is kept when the judgments carry it.
    """
    groups = with_cluster(("judge", "pool", "benchmark", "split"), data)
    return consolidated_labels(data, groups=groups)
