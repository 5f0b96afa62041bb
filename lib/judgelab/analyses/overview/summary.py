"""Per-split dataset statistics (ContextualJudgeBench Table 1 layout) for any items table."""

from __future__ import annotations

import hashlib

import numpy as np
import pandas as pd

from judgelab.core import lengths

TOTAL = "Total"


def context_hash(text: str | None) -> str | None:
    """Return the sha1 of a context string (None for a missing or empty context).

    >>> context_hash("abc")
    'a9993e364706816aba3e25717850c26c9cd0d89d'
    """
    if not isinstance(text, str) or not text:
        return None
    return hashlib.sha1(text.encode("utf-8")).hexdigest()


def split_statistics(items: pd.DataFrame, *, unit: str = lengths.DEFAULT_UNIT) -> pd.DataFrame:
    """Table 1 statistics per (benchmark, split), plus a pooled `Total` row per benchmark.

    Unique contexts are counted by content hash, per split and globally for the total (so a
    context shared by two splits counts once in the total). Mean lengths in the total row are
    pooled over items (item-weighted), as in ContextualJudgeBench Table 1. `L_r` is the mean
    response length: (len_pos + len_neg) / 2 for pairwise items, len_response otherwise.

    Args:
        items: An items table (lengths are computed here in `unit` unless already present).
        unit: The length unit (see `judgelab.core.lengths`).

    Returns:
        One row per split and one `Total` row per benchmark: `benchmark`, `split`, `n_items`,
        `n_contexts`, `L_q` (question), `L_c`, `L_r`, `L_pos`, `L_neg`, `unit` (NaN where a
        benchmark has no such text).
    """
    if "len_unit" not in items.columns or items["len_unit"].isna().any():
        items = lengths.add_lengths(items, unit=unit)
    elif set(items["len_unit"].unique()) != {unit}:
        raise lengths.LengthUnitError(
            f"items carry lengths in {sorted(items['len_unit'].unique())}, not {unit!r}"
        )
    df = items.copy()
    df["_ctx"] = df["context"].map(context_hash) if "context" in df else None
    pair_mean = (df["len_pos"] + df["len_neg"]) / 2
    df["_len_r"] = np.where(df["task"] == "pairwise", pair_mean, df["len_response"])

    def summarise(g: pd.DataFrame) -> dict[str, float]:
        return {
            "n_items": len(g),
            "n_contexts": g["_ctx"].nunique(dropna=True),
            "L_q": g["len_question"].mean(),
            "L_c": g["len_context"].mean(),
            "L_r": g["_len_r"].mean(),
            "L_pos": g["len_pos"].mean(),
            "L_neg": g["len_neg"].mean(),
        }

    rows = []
    for bench, bg in df.groupby("benchmark", sort=False):
        for split, sg in bg.groupby("split", sort=False):
            rows.append({"benchmark": bench, "split": split, **summarise(sg)})
        rows.append({"benchmark": bench, "split": TOTAL, **summarise(bg)})
    out = pd.DataFrame(rows)
    out["n_items"] = out["n_items"].astype(int)
    out["n_contexts"] = out["n_contexts"].astype(int)
    out["unit"] = unit
    return out


def length_long(items: pd.DataFrame) -> pd.DataFrame:
    """Return lengths in long form (`benchmark`, `split`, `text`, `length`) for plotting."""
    names = {
        "len_context": "context",
        "len_pos": "positive",
        "len_neg": "negative",
        "len_response": "response",
    }
    cols = [c for c in names if c in items.columns]
    long = items.melt(
        id_vars=["benchmark", "split"], value_vars=cols, var_name="text", value_name="length"
    ).dropna(subset=["length"])
    long["text"] = long["text"].map(names)
    return long.reset_index(drop=True)
