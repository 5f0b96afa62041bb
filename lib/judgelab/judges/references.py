"""Reference texts per reference condition (spec 001 §3.3), filled in before prompts are built.

The judge runner calls `reference_for_condition` to put the `self`, `random`, `wrong`… reference
of every item into `meta["references"]`; the reference-quality analysis reads them back.
"""

from __future__ import annotations

import pandas as pd

from judgelab.core import stats
from judgelab.core.schema import read_meta
from judgelab.core.schema import require_columns as _require
from judgelab.errors import check_choice

CONDITIONS = ("none", "self", "human", "gold", "wrong", "random", "verified_other")


def text_or_none(value: object) -> str | None:
    """Return `value` when it is a non-blank string, else None."""
    return value if isinstance(value, str) and value.strip() else None


def reference_for_condition(
    items: pd.DataFrame,
    condition: str,
    *,
    seed: int = 0,
    self_model: str | None = None,
    verified_model: str | None = None,
) -> pd.Series:
    """Return the reference text each item gets under a reference condition (spec 001 §3.3).

    Conditions:
        `none`: no reference (all null). `human` / `gold`: the item's `reference`.
        `wrong`: `meta["references"]["wrong"]` (a hand-edited wrong reference; null when the
        item has none). `self`: the response of candidate `self_model` to the same question
        (same benchmark, split and question text); null where it did not answer.
        `verified_other`: the same, from `verified_model`, only where that answer's gold is
        "Correct" (spec's GPT-4o(✓)). `random`: the `reference` of another question of the
        same benchmark and split, drawn with a generator seeded by `seed` and the split; one
        draw per question, so every candidate and every judge of a question gets the same
        text; never a question whose reference text equals the item's own.

    Args:
        items: An items table; needs `benchmark`, `split`, `item_id`, `question`,
            `reference`, `meta` (and `response`, `gold` for `self` / `verified_other`).
        condition: One of `CONDITIONS`.
        seed: Seed of the `random` draw (stable across runs and independent of row order).
        self_model: Candidate model whose answers are the `self` references.
        verified_model: Candidate model whose correct answers are `verified_other`.

    Returns:
        A string Series aligned with `items` (null = no reference for that item).
    """
    _require(items, ["benchmark", "split", "item_id", "question", "reference", "meta"], "items")
    check_choice("reference condition", condition, CONDITIONS)
    out = pd.Series([None] * len(items), index=items.index, dtype=object)
    if condition == "none":
        return out.astype("string")
    if condition in ("human", "gold"):
        return items["reference"].astype(object).map(text_or_none).astype("string")
    if condition == "wrong":
        refs = [
            (m.get("references") or {}).get("wrong")
            for m in map(read_meta, items["meta"].astype(object))
        ]
        return pd.Series([text_or_none(r) for r in refs], index=items.index, dtype="string")
    qkey = list(zip(items["benchmark"], items["split"], items["question"].fillna(""), strict=True))
    if condition in ("self", "verified_other"):
        model = self_model if condition == "self" else verified_model
        if model is None:
            raise ValueError(f"condition {condition!r} needs the candidate model that answers")
        _require(items, ["response", "gold"], condition)
        answers: dict = {}
        for key, m, resp, gold in zip(
            qkey,
            map(read_meta, items["meta"].astype(object)),
            items["response"],
            items["gold"],
            strict=True,
        ):
            if m.get("candidate_model") == model and text_or_none(resp):
                if condition == "verified_other" and gold != "Correct":
                    continue
                answers.setdefault(key, resp)
        return pd.Series([answers.get(k) for k in qkey], index=items.index, dtype="string")
    # random: one draw per question, from the other questions of the same benchmark and split
    own = items["reference"].astype(object).map(text_or_none)
    ref_of: dict = {}
    for key, ref in zip(qkey, own, strict=True):
        if ref is not None:
            ref_of.setdefault(key, ref)
    drawn: dict = {}
    for (bench, split), keys in _by_split(ref_of):
        rng = stats.rng_for(seed, "random_reference", bench, split)
        refs = [ref_of[k] for k in keys]
        for i, k in enumerate(keys):
            pool = [j for j in range(len(keys)) if refs[j] != refs[i]]
            drawn[k] = refs[pool[int(rng.integers(len(pool)))]] if pool else None
    return pd.Series([drawn.get(k) for k in qkey], index=items.index, dtype="string")


def _by_split(ref_of: dict) -> list:
    groups: dict = {}
    for key in sorted(ref_of, key=lambda k: tuple(map(str, k))):
        groups.setdefault(key[:2], []).append(key)
    return sorted(groups.items(), key=lambda kv: tuple(map(str, kv[0])))
