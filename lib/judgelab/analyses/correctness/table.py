"""The correctness table: pointwise Correct/Incorrect verdicts joined with human labels.

A *correctness table* has one row per judge × condition × item with the human label
(`human`, Correct/Incorrect) and the judge's verdict (`verdict`, Correct / Incorrect, null =
invalid); `confusion_counts` turns its rows into one-hot confusion cells (`CELLS`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from judgelab.core.schema import meta_field
from judgelab.core.schema import require_columns as _require

LABELS = ("Correct", "Incorrect")
#: Confusion cells: human Correct × judge {Correct, Incorrect}, human Incorrect × judge
#: {Correct, Incorrect}, then invalid verdicts on human-Correct and human-Incorrect items.
CELLS = ("tp", "fn", "fp", "tn", "inv_pos", "inv_neg")
_KEYS = ["benchmark", "split", "item_id"]
_TABLE_COLUMNS = (
    "judge",
    "condition",
    "benchmark",
    "split",
    "item_id",
    "question_uid",
    "candidate_model",
    "human",
    "verdict",
    "cluster",
)


def correctness_table(
    items: pd.DataFrame,
    judgments: pd.DataFrame,
    *,
    judges: Sequence[str] = (),
    splits: Sequence[str] = (),
) -> pd.DataFrame:
    """Join pointwise correctness verdicts with the human labels: one row per judgment unit.

    Items without a human label (`gold` null) are dropped. Several samples of one judge ×
    condition × item are reduced to the majority of their valid verdicts (a tie is invalid,
    spec 001 §3.5).

    Args:
        items: An items table; needs `benchmark`, `split`, `item_id`, `question`, `gold`
            (Correct/Incorrect) and `meta` (its `candidate_model` names who answered).
        judgments: A judgments table; needs `benchmark`, `split`, `item_id`, `judge`,
            `condition`, `sample`, `valid`, `verdict` (Correct/Incorrect when valid).
        judges: Judges to keep (all when empty).
        splits: Splits to keep (all when empty).

    Returns:
        `judge`, `condition`, `benchmark`, `split`, `item_id`, `question_uid` (benchmark |
        split | question), `candidate_model`, `human`, `verdict` (null = invalid), `cluster`
        (the bootstrap unit, `item_clusters`).

    Raises:
        ValueError: a valid verdict or a gold label is not Correct/Incorrect, or a named
            judge or split has no rows.
    """
    _require(items, ["benchmark", "split", "item_id", "question", "gold", "meta"], "items")
    _require(
        judgments,
        ["benchmark", "split", "item_id", "judge", "condition", "sample", "valid", "verdict"],
        "judgments",
    )
    it = items[items["gold"].notna()]
    _check_known("judge", judges, judgments["judge"])
    _check_known("split", splits, it["split"])
    labelled = _human_labels(it if not splits else it[it["split"].isin(list(splits))])
    j = judgments if not judges else judgments[judgments["judge"].isin(list(judges))]
    out = _majority_verdicts(j).merge(labelled, on=_KEYS, how="inner")
    out["verdict"] = out["verdict"].astype(object).where(out["verdict"].notna(), None)
    return out[list(_TABLE_COLUMNS)].reset_index(drop=True)


def _check_known(name: str, values: Sequence[str], column: pd.Series) -> None:
    """Raise when a requested judge or split has no rows (naming the known ones)."""
    unknown = sorted(set(values) - set(column.dropna().unique()))
    if unknown:
        raise ValueError(f"unknown {name}(s) {unknown}; known: {sorted(column.dropna().unique())}")


def item_clusters(items: pd.DataFrame) -> np.ndarray:
    """Return each item's bootstrap unit: its `cluster` (`core.clusters`) when it has one.

    Without one (or with only the item-level unit `<benchmark>|<split>|item|<id>`, what a
    source that declares nothing gets), the question (spec 001 §4.4), else the context the
    item was judged against (FaithBench: summaries of one source document), else the item
    itself — never one cluster for the whole table. Values are prefixed with benchmark and split.
    """
    n = len(items)
    prefix = (items["benchmark"].astype(str) + "|" + items["split"].astype(str) + "|").to_numpy()
    empty = np.full(n, "", dtype=object)

    def text(col: str) -> np.ndarray:
        if col not in items.columns:
            return empty
        values = items[col].to_numpy(dtype=object)
        return np.array(["" if pd.isna(v) else str(v) for v in values], dtype=object)

    question, context = text("question"), text("context")
    rule = np.where(
        question != "",
        prefix + "q|" + question,
        np.where(context != "", prefix + "c|" + context, prefix + "i|" + text("item_id")),
    )
    given = text("cluster")
    item_level = given == prefix + "item|" + text("item_id")
    return np.where((given != "") & ~item_level, given, rule).astype(object)


def _human_labels(it: pd.DataFrame) -> pd.DataFrame:
    """Return the labelled items: keys, `question_uid`, `candidate_model`, `human`, `cluster`."""
    bad = ~it["gold"].isin(LABELS)
    if bad.any():
        raise ValueError(
            f"items: gold {it['gold'][bad].iloc[0]!r} at item {it['item_id'][bad].iloc[0]!r} "
            f"is not one of {LABELS}"
        )
    return pd.DataFrame(
        {
            **{k: it[k].astype(str).to_numpy() for k in _KEYS},
            "question_uid": (
                it["benchmark"].astype(str)
                + "|"
                + it["split"].astype(str)
                + "|"
                + it["question"].fillna("").astype(str)
            ).to_numpy(),
            "candidate_model": meta_field(it["meta"], "candidate_model").tolist(),
            "human": it["gold"].astype(str).to_numpy(),
            "cluster": item_clusters(it),
        }
    )


def _majority_verdicts(j: pd.DataFrame) -> pd.DataFrame:
    """Return one verdict per judge × condition × item: the majority of its valid samples."""
    valid = j["valid"].astype("boolean").fillna(False).to_numpy(dtype=bool) & j["verdict"].notna()
    verdict = j["verdict"].astype(object).where(valid, None)
    odd = verdict.notna() & ~verdict.isin(LABELS)
    if odd.any():
        row = j[odd.to_numpy()].iloc[0]
        raise ValueError(
            f"judgments: verdict {row['verdict']!r} of judge {row['judge']!r} at item "
            f"{row['item_id']!r} is not one of {LABELS} (is this a correctness judge?)"
        )
    keys = ["judge", "condition", *_KEYS]
    frame = pd.DataFrame(
        {
            "judge": j["judge"].astype(str).to_numpy(),
            "condition": j["condition"].fillna("").astype(str).to_numpy(),
            **{k: j[k].astype(str).to_numpy() for k in _KEYS},
            "verdict": verdict.to_numpy(dtype=object),
        }
    )
    if not frame.duplicated(keys).any():  # one sample per unit: its verdict is the majority
        return frame
    votes = frame[keys].assign(
        pos=(verdict == "Correct").to_numpy(dtype=int),
        neg=(verdict == "Incorrect").to_numpy(dtype=int),
    )
    agg = votes.groupby(keys, sort=False).sum().reset_index()
    agg["verdict"] = np.where(
        agg["pos"] > agg["neg"], "Correct", np.where(agg["neg"] > agg["pos"], "Incorrect", None)
    )
    return agg


def confusion_counts(table: pd.DataFrame) -> np.ndarray:
    """Return per-row one-hot confusion cells (n rows × 6, in `CELLS` order).

    Args:
        table: A correctness table; needs `human` and `verdict`.
    """
    _require(table, ["human", "verdict"], "confusion_counts")
    h = table["human"].astype(object).to_numpy()
    v = table["verdict"].astype(object).to_numpy()
    pos, neg = h == "Correct", h == "Incorrect"
    vc, vi = v == "Correct", v == "Incorrect"
    inv = ~(vc | vi)
    return np.column_stack([pos & vc, pos & vi, neg & vc, neg & vi, pos & inv, neg & inv]).astype(
        np.float64
    )
