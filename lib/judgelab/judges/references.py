"""Reference texts per reference condition (spec 001 §3.3), filled in before prompts are built.

`reference_for_condition` gives the `self`, `random`, `wrong`… reference of every item; the
judge runner puts the derived ones (`with_derived_references`) into `meta["references"]`
before it plans, and the reference-quality analysis reads them back.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable

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
        answers = _answers_of(items, qkey, model, verified=condition == "verified_other")
        return pd.Series([answers.get(k) for k in qkey], index=items.index, dtype="string")
    drawn = _random_references(items, qkey, seed)
    return pd.Series([drawn.get(k) for k in qkey], index=items.index, dtype="string")


def _answers_of(items: pd.DataFrame, qkey: list, model: str, *, verified: bool) -> dict:
    """Return the first answer of candidate `model` per question (correct ones if `verified`)."""
    answers: dict = {}
    for key, m, resp, gold in zip(
        qkey,
        map(read_meta, items["meta"].astype(object)),
        items["response"],
        items["gold"],
        strict=True,
    ):
        if m.get("candidate_model") == model and text_or_none(resp):
            if verified and gold != "Correct":
                continue
            answers.setdefault(key, resp)
    return answers


def _random_references(items: pd.DataFrame, qkey: list, seed: int) -> dict:
    """Return one drawn reference per question, from the other questions of its split."""
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
    return drawn


def _by_split(ref_of: dict) -> list:
    groups: dict = {}
    for key in sorted(ref_of, key=lambda k: tuple(map(str, k))):
        groups.setdefault(key[:2], []).append(key)
    return sorted(groups.items(), key=lambda kv: tuple(map(str, kv[0])))


#: Reference conditions whose text the runner derives from the items (spec 001 §3.3) when an
#: item does not carry it in `meta["references"]` already: `random` (another question's
#: reference, seeded) and `self` (the judge model's own answer, matched on
#: `meta["candidate_model"] == model`).
DERIVED_REFERENCES = ("random", "self")


def with_derived_references(
    items: pd.DataFrame, conditions: Iterable[str], *, seed: int, model: str
) -> pd.DataFrame:
    """Return `items` with the derived references `conditions` need in their meta.

    References an item already carries are kept (a user's own wins). The draw is made over all
    `items`, never over a selection, so the prompts (and cache keys) of an item do not depend
    on what else was requested. `random` is seeded by `seed`; `self` is `model`'s answer.
    """
    if "meta" not in items.columns:
        return items
    wanted = [
        c.split("=", 1)[1]
        for c in conditions
        if c.startswith("reference=") and c.split("=", 1)[1] in DERIVED_REFERENCES
    ]
    if not wanted:
        return items
    # A parsed string is a fresh dict; a dict cell is copied so the caller's frame is kept.
    metas = [
        read_meta(m) if isinstance(m, str) else copy.deepcopy(read_meta(m)) for m in items["meta"]
    ]
    for name in wanted:
        refs = reference_for_condition(items, name, seed=seed, self_model=model)
        for meta, ref in zip(metas, refs.astype(object), strict=True):
            have = meta.setdefault("references", {})
            if isinstance(have, dict) and name not in have and isinstance(ref, str):
                have[name] = ref
    out = items.copy()
    out["meta"] = [json.dumps(m, sort_keys=True, ensure_ascii=False) for m in metas]
    return out
