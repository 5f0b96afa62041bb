"""Reference quality (spec 001 §3.3, §4.6): reference conditions, ablations, similarity baselines.

- `reference_for_condition` (from `judges.references`) builds the reference text of one
  condition for every item; the judge runner fills `meta["references"]` with it.
- `strategy_conditions` turns prompting strategies of a corpus (LLMBar's Vanilla /
  Reference / Metrics_Reference) into reference conditions of one judge, so accuracy, CA and
  kappa can be compared per judge × condition (`pairwise.item_outcomes`, and
  `reference.compare.compare_conditions`: paired cluster bootstrap, adjusted p-values).
- `similarity_judgments` is the reference-similarity classifier of spec 001 §4.6 (App. C):
  pairwise, the response more similar to the reference wins (argmax, no threshold; equal
  scores are a tie), as a judgments table that flows through the same metrics as LLM judges.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

import pandas as pd

from judgelab.core import schema
from judgelab.core.schema import require_columns as _require
from judgelab.core.text import SIMILARITY
from judgelab.judges.references import CONDITIONS as CONDITIONS
from judgelab.judges.references import reference_for_condition as reference_for_condition
from judgelab.judges.references import text_or_none


def strategy_conditions(
    judgments: pd.DataFrame, *, strategies: Mapping[str, str], splits: Sequence[str] = ()
) -> pd.DataFrame:
    """Recast prompting strategies as reference conditions of one judge.

    A corpus that stores each strategy as its own judge (LLMBar: judge "GPT-4.Reference",
    model "GPT-4", prompt "Reference") becomes judge = `model`, condition = the strategy's
    condition, keeping only the listed strategies (and splits).

    Args:
        judgments: A judgments table; needs `model`, `prompt`, `split`.
        strategies: Strategy (the `prompt` column) → reference name, e.g. {"Vanilla":
            "none", "Reference": "self"}; the condition is "reference=<name>" (a value that
            already holds "=" is used as the whole condition).
        splits: Splits to keep (all when empty).

    Raises:
        ValueError: a listed strategy has no rows.
    """
    _require(judgments, ["model", "prompt", "split"], "strategy_conditions")
    missing = sorted(set(strategies) - set(judgments["prompt"].dropna().unique()))
    if missing:
        raise ValueError(f"strategies without judgments: {missing}")
    out = judgments[judgments["prompt"].isin(list(strategies))]
    if splits:
        out = out[out["split"].isin(list(splits))]
    out = out.copy()
    out["judge"] = out["model"].astype(str)
    names = {k: v if "=" in v else f"reference={v}" for k, v in strategies.items()}
    out["condition"] = out["prompt"].map(names).astype(str)
    return out.reset_index(drop=True)


def references_from_outputs(judgments: pd.DataFrame, *, judge: str, field: str) -> pd.DataFrame:
    """Return a reference text a judge generated and stored in its raw `output` JSON.

    Some corpora keep the judge's own reference answer beside its verdict (PandaLM:
    `gpt_reference`, `pandalm_reference`); this is the judge's *self-generated* reference.

    Returns:
        `benchmark`, `split`, `item_id`, `reference` (rows without the field are dropped).
    """
    _require(judgments, ["judge", "benchmark", "split", "item_id", "output"], "references")
    rows = judgments[judgments["judge"] == judge]
    if rows.empty:
        raise ValueError(f"no judgments of judge {judge!r}")
    refs = []
    for out in rows["output"].astype(object):
        try:
            value = json.loads(out).get(field) if isinstance(out, str) else None
        except (ValueError, AttributeError):
            value = None
        refs.append(text_or_none(value))
    frame = rows[["benchmark", "split", "item_id"]].assign(reference=refs)
    return frame[frame["reference"].notna()].drop_duplicates(["benchmark", "split", "item_id"])


def similarity_judgments(
    items: pd.DataFrame,
    *,
    references: Mapping[str, pd.Series],
    methods: Sequence[str] = ("token_f1", "rougeL"),
) -> pd.DataFrame:
    """Judge pairwise items by similarity to a reference: the more similar response wins.

    Spec 001 §4.6: score both responses against the reference and pick the argmax (no
    threshold); equal scores are a tie. The choice does not depend on the order, so both
    orders carry it (order 0 and 1), which makes it comparable with two-order LLM judges.

    Args:
        items: Pairwise items; needs `benchmark`, `split`, `item_id`, `response_pos`,
            `response_neg`.
        references: Condition name → reference Series aligned with `items` (e.g.
            `reference_for_condition(items, "random")`); items without a reference are
            skipped in that condition.
        methods: Names in `judgelab.core.text.SIMILARITY` (token_f1, rougeL).

    Returns:
        A judgments table: judge = "<method>.similarity", model = the method, prompt =
        "similarity", condition = the reference condition, `verdict` = "pos=<s>|neg=<s>".
    """
    _require(items, ["benchmark", "split", "item_id", "response_pos", "response_neg"], "items")
    unknown = [m for m in methods if m not in SIMILARITY]
    if unknown:
        raise ValueError(f"unknown similarity method(s) {unknown}; known: {list(SIMILARITY)}")
    rows = []
    for condition, refs in references.items():
        if len(refs) != len(items):
            raise ValueError(f"references[{condition!r}] has {len(refs)} rows, items {len(items)}")
        for (_, it), ref in zip(items.iterrows(), refs.astype(object), strict=True):
            if not isinstance(ref, str) or not ref.strip():
                continue
            for method in methods:
                fn = SIMILARITY[method]
                sp, sn = fn(it["response_pos"] or "", ref), fn(it["response_neg"] or "", ref)
                chosen = "pos" if sp > sn else "neg" if sn > sp else "tie"
                for order in (0, 1):
                    rows.append(
                        {
                            "benchmark": it["benchmark"],
                            "split": it["split"],
                            "item_id": it["item_id"],
                            "judge": f"{method}.similarity",
                            "model": method,
                            "prompt": "similarity",
                            "condition": condition,
                            "order": order,
                            "sample": 0,
                            "output": f"{method} pos={sp:.4f} neg={sn:.4f}",
                            "verdict": f"pos={sp:.4f}|neg={sn:.4f}",
                            "valid": True,
                            "chosen": chosen,
                            "correct": chosen == "pos",
                        }
                    )
    if not rows:
        return schema.empty(schema.JUDGMENTS)
    return schema.new_judgments(rows)


def similarity_vs_judges(
    items: pd.DataFrame,
    judgments: pd.DataFrame,
    *,
    reference_judge: str,
    reference_field: str,
    methods: Sequence[str] = ("token_f1", "rougeL"),
    seed: int = 0,
) -> pd.DataFrame:
    """Return the source's LLM judgments beside similarity classifiers, on the same pairs.

    The reference is the one `reference_judge` generated (`references_from_outputs`), used as
    condition `reference=<judge>`, plus `reference=random`: another pair's reference of the
    same split (`reference_for_condition`, seeded). Only pairs with a gold better response
    (`gold` = "pos") and a reference are kept; the LLM judges keep their own condition.

    Args:
        items: Pairwise items; needs the columns of `similarity_judgments` and `gold`.
        judgments: The source's judgments (any judges).
        reference_judge: Judge whose stored reference is used.
        reference_field: Key of the reference in that judge's `output` JSON.
        methods: Similarity methods.
        seed: Seed of the random reference.

    Returns:
        A judgments table (LLM rows and similarity rows) restricted to the kept pairs.
    """
    _require(items, ["gold", "meta", "question", "reference"], "items")
    keys = ["benchmark", "split", "item_id"]
    refs = references_from_outputs(judgments, judge=reference_judge, field=reference_field)
    kept = items[items["gold"] == "pos"].drop(columns=["reference"]).merge(refs, on=keys)
    kept = kept.reset_index(drop=True)
    sim = similarity_judgments(
        kept,
        references={
            f"reference={reference_judge}": kept["reference"],
            "reference=random": reference_for_condition(kept, "random", seed=seed),
        },
        methods=methods,
    )
    llm = judgments.merge(kept[keys], on=keys)
    return pd.concat([schema.coerce_judgments(llm), sim], ignore_index=True)
