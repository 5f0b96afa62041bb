"""Which member of each pair a method prefers (spec 004 §2.2): pointwise scores and template runs.

A preference (`pref`) is `pos` (the human-preferred summary: aligned), `neg`, `tie` or
`invalid` (a score or verdict missing). Pointwise scores (`ragas_scores`) are compared per
pair; model runs of the `ragas.*` templates over the pair items (`ragas_pairs.pair_items`)
are read back by `template_preferences`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from judgelab.analyses.faithfulness.ragas_pairs import PAIR_COLUMNS
from judgelab.core.schema import meta_field
from judgelab.core.schema import require_columns as _need
from judgelab.errors import check_choice

METHODS = ("Ragas", "Baseline", "Ranking")
#: The ragas.* template behind each method (spec 004 §2.2–2.4).
TEMPLATE_METHOD = {
    "ragas.direct": "Baseline",
    "ragas.compare": "Ranking",
    "ragas.faithfulness": "Ragas",
    "ragas.context_relevance": "Ragas",
}
PREF_COLUMNS = ("pair_id", "group", "metric", "judge", "method", "score_pos", "score_neg", "pref")
ORDERS = ("consensus", "0", "1")

#: A run's preferences per pair id: (pref, score of pos, score of neg).
Prefs = tuple[pd.Series, pd.Series, pd.Series]


def _compare(winner: pd.Series, loser: pd.Series) -> np.ndarray:
    """`pos` / `neg` / `tie` by the higher score; `invalid` where either score is missing."""
    return np.select(
        [winner.isna() | loser.isna(), winner > loser, winner < loser],
        ["invalid", "pos", "neg"],
        "tie",
    )


def pointwise_preferences(scores: pd.DataFrame, pairs: pd.DataFrame) -> pd.DataFrame:
    """Compare the scores of each pair's two members (direct scoring, spec 004 §2.2).

    Args:
        scores: Long scores (`item_id`, `judge`, `method`, `score`; NaN = invalid); one
            score per item and judge.
        pairs: Output of `faithbench_pairs`.

    Returns:
        One row per pair × judge with the columns of `PREF_COLUMNS`; `pref` is `pos`, `neg`,
        `tie`, or `invalid` (either score missing).
    """
    _need(scores, ["item_id", "judge", "method", "score"], "scores")
    _need(pairs, list(PAIR_COLUMNS), "pairs")
    if scores.duplicated(["item_id", "judge"]).any():
        first = scores.loc[scores.duplicated(["item_id", "judge"]), ["item_id", "judge"]]
        raise ValueError(f"several scores for one item and judge: {first.iloc[0].tolist()}")
    out = []
    for (judge, method), s in scores.groupby(["judge", "method"], sort=True):
        by_item = s.set_index("item_id")["score"]
        pos = pairs["item_pos"].map(by_item).astype(float)
        neg = pairs["item_neg"].map(by_item).astype(float)
        out.append(
            pairs[["pair_id", "group", "metric"]].assign(
                judge=judge, method=method, score_pos=pos, score_neg=neg, pref=_compare(pos, neg)
            )
        )
    if not out:
        return pd.DataFrame(columns=list(PREF_COLUMNS))
    return pd.concat(out, ignore_index=True)[list(PREF_COLUMNS)]


def _ranking(j: pd.DataFrame, orders: str) -> Prefs:
    """`ragas.compare`: the candidate chosen per order, or the consensus of both orders."""
    chosen = j.assign(c=np.where(j["valid"].astype(bool), j["chosen"], None))
    wide = chosen.pivot_table(index="item_id", columns="order", values="c", aggfunc="first")
    if orders == "consensus":
        a, b = wide.get(0), wide.get(1)
        pref = pd.Series(
            [
                "invalid"
                if x is None or y is None or pd.isna(x) or pd.isna(y)
                else (x if x == y else "tie")
                for x, y in zip(a, b, strict=True)
            ]
            if a is not None and b is not None
            else ["invalid"] * len(wide),
            index=wide.index,
        )
    else:
        col = wide.get(int(orders))
        pref = (
            col.map(lambda v: "invalid" if v is None or pd.isna(v) else v)
            if col is not None
            else pd.Series("invalid", index=wide.index)
        )
    none = pd.Series(np.nan, index=wide.index)
    return pref, none, none


def _scored(j: pd.DataFrame) -> Prefs:
    """Score templates: each candidate scored alone (`candidate=pos|neg`), the higher preferred."""
    cand = j["condition"].str.extract(r"candidate=(pos|neg)")[0]
    val = pd.to_numeric(j["verdict"].where(j["valid"].astype(bool)), errors="coerce")
    s = pd.DataFrame({"item_id": j["item_id"], "cand": cand, "v": val})
    wide = s.pivot_table(index="item_id", columns="cand", values="v", aggfunc="first")
    sp = wide.get("pos", pd.Series(np.nan, index=wide.index))
    sn = wide.get("neg", pd.Series(np.nan, index=wide.index))
    return pd.Series(_compare(sp, sn), index=wide.index), sp, sn


def template_preferences(
    judgments: pd.DataFrame, pair_table: pd.DataFrame, *, orders: str = "consensus"
) -> pd.DataFrame:
    """Preferences from `ragas.*` runs over pair items (see `pair_items`).

    `ragas.compare` (Ranking) gives `chosen` per order: `orders="consensus"` keeps a choice
    both orders agree on and calls a disagreement a tie; `"0"` / `"1"` use one order. The
    score templates (`ragas.direct`, `ragas.faithfulness`, `ragas.context_relevance`) score
    each candidate alone (`candidate=pos|neg` conditions); the higher score is preferred.

    Returns:
        The columns of `PREF_COLUMNS`.
    """
    check_choice("orders", orders, ORDERS)
    _need(judgments, ["item_id", "judge", "prompt", "condition", "order", "verdict", "valid"], "j")
    meta = pair_table.set_index("item_id")["meta"]
    group, metric = meta_field(meta, "group"), meta_field(meta, "metric")
    out = []
    for (judge, prompt), j in judgments.groupby(["judge", "prompt"], sort=True):
        if prompt not in TEMPLATE_METHOD:
            continue
        j = j[j["item_id"].isin(meta.index)]
        pref, sp, sn = _ranking(j, orders) if prompt == "ragas.compare" else _scored(j)
        ids = pref.index
        out.append(
            pd.DataFrame(
                {
                    "pair_id": ids,
                    "group": group.loc[ids].tolist(),
                    "metric": metric.loc[ids].tolist(),
                    "judge": judge,
                    "method": TEMPLATE_METHOD[prompt],
                    "score_pos": sp.reindex(ids).to_numpy(),
                    "score_neg": sn.reindex(ids).to_numpy(),
                    "pref": pref.to_numpy(),
                }
            )
        )
    if not out:
        return pd.DataFrame(columns=list(PREF_COLUMNS))
    return pd.concat(out, ignore_index=True)[list(PREF_COLUMNS)]


def all_preferences(
    scores: pd.DataFrame,
    pairs: pd.DataFrame,
    *,
    pair_table: pd.DataFrame | None = None,
    pair_judgments: pd.DataFrame | None = None,
    orders: str = "consensus",
) -> pd.DataFrame:
    """Stack pointwise preferences and (when present) the `ragas.*` template preferences."""
    parts = [pointwise_preferences(scores, pairs)]
    if pair_judgments is not None and pair_table is not None and len(pair_judgments):
        parts.append(template_preferences(pair_judgments, pair_table, orders=orders))
    parts = [p for p in parts if len(p)]
    if not parts:
        return pd.DataFrame(columns=list(PREF_COLUMNS))
    return pd.concat(parts, ignore_index=True)
