"""AlpacaEval annotations (tatsu-lab/alpaca_eval `results/<model>/<annotator>/annotations.json`).

Each record compares a baseline `output_1` (`generator_1`) with the model's `output_2`
(`generator_2`); `preference` is 1 (output_1 better) or 2 (output_2 better), a continuous
value in [1, 2] for the logprob-weighted annotators, and 1.5 (or 0, AlpacaEval's legacy
code) for a draw. `chosen` follows AlpacaEval's discrete win rate: below 1.5 -> output_1,
above -> output_2, exactly 1.5 (or 0) -> tie; `verdict` keeps the preference value itself
(e.g. "1.9900139974"); null or out-of-range preferences are invalid (raw kept).

There is no gold. The slots keep the source's order: response_pos = output_1 (the
baseline), response_neg = output_2, with the generators in meta (`model_pos`,
`model_neg`). AlpacaEval randomises the presentation order per item and records it only
for the `*_fn` annotators that write `referenced_models` (which data output got which
identifier); the templates list the "m" slot first, so `order` = 0 when
referenced_models["m"] is output_1. Everywhere else `order` = 0 and the items' meta says
`presentation_order: unknown` (with `presentation_order_known_for` naming the annotators
whose order is real). `price_per_example` and `time_per_example` become `cost_usd` and
`latency_s`; `raw_completion` (JSON) is the output.

Tables: split = "<generator_2> vs <generator_1>", item_id = the record's index (the 805
AlpacaEval instructions, same order in every file; checked), judge = "<annotator>.alpaca_eval".
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from judgelab.data.importers.base import Imported, SourceFormatError
from judgelab.data.importers.common import (
    TIE,
    assemble,
    field,
    judge_id,
    number_or_none,
    pairwise_outcome,
    read_json,
    source_files,
)

PROMPT = "alpaca_eval"
_ITEM_FIELDS = ("instruction", "output_1", "generator_1", "output_2", "generator_2")


def preference_winner(preference: Any) -> str | None:
    """Return the winning slot ("1", "2" or "tie") of a preference, None when invalid.

    >>> [preference_winner(p) for p in (1.0, 1.2, 1.5, 1.9, 2, 0, None, 2.5)]
    ['1', '1', 'tie', '2', '2', 'tie', None, None]
    """
    p = number_or_none(preference)
    if p is None:
        return None
    if p == 0 or p == 1.5:
        return TIE
    if 1 <= p < 1.5:
        return "1"
    if 1.5 < p <= 2:
        return "2"
    return None


def first_shown(referenced_models: Any) -> str | None:
    """Return the data slot ("1"/"2") shown first, from `referenced_models`, or None.

    The prompt lists identifier "m" first, then "M"; with one of the two recorded, the
    other slot is implied.

    >>> first_shown({"M": "output_1", "m": "output_2"}), first_shown({"M": "output_2"})
    ('2', '1')
    >>> first_shown(None) is None
    True
    """
    if not isinstance(referenced_models, dict):
        return None
    slots = {"output_1": "1", "output_2": "2"}
    m, big = slots.get(referenced_models.get("m")), slots.get(referenced_models.get("M"))
    if m and big and m != big:
        return m
    if m and big is None and set(referenced_models) == {"m"}:
        return m
    if big and m is None and set(referenced_models) == {"M"}:
        return "2" if big == "1" else "1"
    return None


def _non_negative(value: Any) -> float | None:
    number = number_or_none(value)
    return None if number is None or number < 0 else number


def import_alpaca_eval(root: Path, source: Any) -> Imported:
    """Import every `*__annotations.json` file listed in the source registry."""
    root = Path(root)
    benchmark = source.name
    items: dict[tuple[str, str], dict[str, Any]] = {}
    judgments: list[dict[str, Any]] = []
    for path in source_files(source, "*annotations.json"):
        file = root / path
        records = read_json(root, path)
        if not isinstance(records, list) or not records:
            raise SourceFormatError(str(file), "expected a non-empty JSON list of annotations")
        for i, rec in enumerate(records):
            vals = {k: field(rec, k, file=file, row=i) for k in _ITEM_FIELDS}
            annotator = str(field(rec, "annotator", file=file, row=i))
            pref = field(rec, "preference", file=file, row=i)
            split = f"{vals['generator_2']} vs {vals['generator_1']}"
            key = (split, str(i))
            item = items.get(key)
            if item is None:
                item = items[key] = {
                    "benchmark": benchmark,
                    "split": split,
                    "item_id": str(i),
                    "task": "pairwise",
                    "question": vals["instruction"],
                    "context": None,
                    "response_pos": vals["output_1"],
                    "response_neg": vals["output_2"],
                    "response": None,
                    "reference": None,
                    "gold": None,
                    "meta": {
                        "dataset": rec.get("dataset"),
                        "model_pos": vals["generator_1"],
                        "model_neg": vals["generator_2"],
                        "slot_order": "source (output_1 = baseline, output_2 = model)",
                        "presentation_order": "unknown",
                        "presentation_order_known_for": [],
                    },
                }
            elif (item["question"], item["response_pos"], item["response_neg"]) != (
                vals["instruction"],
                vals["output_1"],
                vals["output_2"],
            ):
                raise SourceFormatError(
                    str(file),
                    f"record differs from the same item {split}/{i} in another annotations file",
                    row=i,
                    column="instruction",
                )
            first = first_shown(rec.get("referenced_models"))
            if first is not None:
                item["meta"]["presentation_order_known_for"].append(annotator)
            out = pairwise_outcome(
                preference_winner(pref), pos_slot="1", first_slot=first or "1", gold=None
            )
            if out["valid"]:
                out["verdict"] = repr(float(pref))
            raw = rec.get("raw_completion")
            judgments.append(
                {
                    "benchmark": benchmark,
                    "split": split,
                    "item_id": str(i),
                    "judge": judge_id(annotator, PROMPT),
                    "model": annotator,
                    "prompt": PROMPT,
                    "condition": "",
                    "sample": 0,
                    "output": None if raw is None else json.dumps(raw, ensure_ascii=False),
                    "cost_usd": _non_negative(rec.get("price_per_example")),
                    "latency_s": _non_negative(rec.get("time_per_example")),
                    **out,
                }
            )
    return assemble(list(items.values()), judgments, what=source.name)
