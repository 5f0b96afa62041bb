"""Contrastive FaithBench pairs: two summaries of one source with different human labels.

FaithBench has 10 summaries (by different LLMs) of each of 75 source documents, each labelled
by humans; a *pair* is two summaries **of the same source** whose human labels differ, and the
human-preferred member is the one judged faithful (`by="gold"`: Consistent over Hallucinated)
or the less severe one (`by="severity"`: Consistent > Benign > Questionable > Unwanted, the
importer's `worst_label`). `pairing="all"` takes every such pair (summaries then recur across
pairs, so pairs of one source are not independent: the source-clustered bootstrap interval
accounts for that, the Wilson and exact intervals do not); `pairing="disjoint"` uses each
summary at most once (seeded matching).

`pair_items` turns the pairs into pairwise items for the `ragas.*` templates (a model run of
the three methods over the pairs; the data catalog writes them as a benchmark).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from judgelab.core import schema, stats
from judgelab.core.schema import read_meta
from judgelab.core.schema import require_columns as _need
from judgelab.data.importers.faithbench import worst_label
from judgelab.errors import check_choice

PAIR_BY = ("gold", "severity")
PAIRINGS = ("all", "disjoint")
SEVERITY = {"Consistent": 0, "Benign": 1, "Questionable": 2, "Unwanted": 3}
PAIR_COLUMNS = ("pair_id", "group", "metric", "item_pos", "item_neg", "label_pos", "label_neg")
#: The instruction FaithBench's summarisers answered (pair items need a question).
SUMMARY_QUESTION = "Summarize the source document."

Record = dict[str, Any]


def pair_summary(pairs: pd.DataFrame) -> pd.DataFrame:
    """Count pairs, sources and distinct summaries per metric and label combination.

    Returns:
        One row per (`metric`, `label_pos`, `label_neg`): `pairs`, `sources`, `summaries`.
    """
    _need(pairs, list(PAIR_COLUMNS), "pairs")
    rows = []
    for key, g in pairs.groupby(["metric", "label_pos", "label_neg"], sort=True):
        rows.append(
            {
                "metric": key[0],
                "label_pos": key[1],
                "label_neg": key[2],
                "pairs": len(g),
                "sources": g["group"].nunique(),
                "summaries": len(set(g["item_pos"]) | set(g["item_neg"])),
            }
        )
    return pd.DataFrame(
        rows, columns=["metric", "label_pos", "label_neg", "pairs", "sources", "summaries"]
    )


def _worst(meta: object) -> str:
    """The worst human label of a summary: the importer's `worst_label`, else its annotations."""
    m = read_meta(meta)
    if "worst_label" in m:
        return str(m["worst_label"])
    labels = [lab for a in m.get("annotations") or [] for lab in a.get("label") or []]
    return worst_label(labels)


def _ranked(items: pd.DataFrame, by: str) -> pd.DataFrame:
    """The items with the human `label` compared and its `rank` (0 = preferred)."""
    df = items[["item_id", "context", "gold", "meta"]].copy()
    if by == "gold":
        df["label"] = df["gold"].astype(str)
        df["rank"] = df["label"].map({"Consistent": 0, "Hallucinated": 1})
    else:
        df["label"] = df["meta"].map(_worst)
        df["rank"] = df["label"].map(SEVERITY)
    if df["rank"].isna().any():
        bad = df.loc[df["rank"].isna(), ["item_id", "label"]].iloc[0].tolist()
        raise ValueError(f"item {bad[0]!r}: label {bad[1]!r} cannot be ordered (by={by!r})")
    return df


def _disjoint(recs: list[Record], rng: np.random.Generator) -> list[tuple[Record, Record]]:
    """Match summaries of different rank, each at most once, in a seeded random order."""
    order = list(rng.permutation(len(recs)))
    free, cand = [recs[i] for i in order], []
    while True:
        best = next(
            ((a, b) for i, a in enumerate(free) for b in free[i + 1 :] if a["rank"] != b["rank"]),
            None,
        )
        if best is None:
            return cand
        a, b = best
        free = [r for r in free if r is not a and r is not b]
        cand.append((a, b) if a["rank"] < b["rank"] else (b, a))


def faithbench_pairs(
    items: pd.DataFrame, *, by: str = "gold", pairing: str = "all", seed: int = 0
) -> pd.DataFrame:
    """Build contrastive pairs: two summaries of the same source with different human labels.

    Args:
        items: FaithBench items (`context` = source document, `gold` =
            Consistent/Hallucinated, `meta.annotations` for `by="severity"`).
        by: `gold` (Consistent preferred over Hallucinated) or `severity` (the less severe
            worst label preferred: Consistent > Benign > Questionable > Unwanted).
        pairing: `all` cross-label pairs of a source, or `disjoint` (each summary used at
            most once; seeded random matching per source).
        seed: Seed of the disjoint matching.

    Returns:
        The columns of `PAIR_COLUMNS`: `group` numbers the source documents, `item_pos` is
        the human-preferred summary, `label_*` the labels compared.
    """
    check_choice("by", by, PAIR_BY)
    check_choice("pairing", pairing, PAIRINGS)
    _need(items, ["item_id", "context", "gold", "meta"], "items")
    df = _ranked(items, by)
    groups = {c: i for i, c in enumerate(dict.fromkeys(df["context"]))}
    rows = []
    for ctx, g in df.groupby("context", sort=False):
        gid = groups[ctx]
        recs = g.sort_values("item_id", kind="stable").to_dict("records")
        if pairing == "all":
            cand = [(a, b) for a in recs for b in recs if a["rank"] < b["rank"]]
        else:
            cand = _disjoint(recs, stats.rng_for(seed, "disjoint", gid))
        for a, b in cand:
            rows.append(
                {
                    "pair_id": f"{a['item_id']}>{b['item_id']}",
                    "group": gid,
                    "metric": "faithfulness",
                    "item_pos": a["item_id"],
                    "item_neg": b["item_id"],
                    "label_pos": a["label"],
                    "label_neg": b["label"],
                }
            )
    return pd.DataFrame(rows, columns=list(PAIR_COLUMNS))


def pair_items(
    items: pd.DataFrame,
    pairs: pd.DataFrame,
    *,
    benchmark: str | None = None,
    question: str = SUMMARY_QUESTION,
) -> pd.DataFrame:
    """Return the pairs as pairwise items for the `ragas.*` templates (`judgelab judge`).

    `item_id` is the `pair_id`, `response_pos` the human-preferred summary, `context` the
    source, `question` the summarisation instruction, `meta.metric` the metric. The
    benchmark is named `<items benchmark>_pairs` unless `benchmark` is given.
    """
    _need(items, ["benchmark", "item_id", "context", "response"], "items")
    if benchmark is None:
        benchmark = f"{items['benchmark'].iloc[0]}_pairs" if len(items) else "pairs"
    by_id = items.set_index("item_id")
    rows = [
        {
            "benchmark": benchmark,
            "split": p["metric"],
            "item_id": p["pair_id"],
            "task": "pairwise",
            "question": question,
            "context": by_id.at[p["item_pos"], "context"],
            "response_pos": by_id.at[p["item_pos"], "response"],
            "response_neg": by_id.at[p["item_neg"], "response"],
            "gold": "pos",
            "meta": {
                "metric": p["metric"],
                "group": int(p["group"]),
                "item_pos": p["item_pos"],
                "item_neg": p["item_neg"],
                "labels": [p["label_pos"], p["label_neg"]],
            },
        }
        for p in pairs.to_dict("records")
    ]
    return schema.new_items(rows)
