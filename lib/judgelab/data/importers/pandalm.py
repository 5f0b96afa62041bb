"""PandaLM test set (WeOpenML/PandaLM): 3 human annotators, PandaLM-7B and gpt-3.5-turbo.

`testset-v1.json`: `idx`, `instruction`, `input`, `response1`, `response2`, `cmp_key`
("<model1>_<model2>"), `annotator1..3` (0 = tie, 1 = response1, 2 = response2).
`pandalm-7b-testset-v1.json`: `idx`, `pandalm_result` (0/1/2), reason, reference.
`gpt-3.5-turbo-testset-v1.json`: `idx`, `gpt_result` ("1", "2", "Tie" or "garbage"), ...

Gold = the label given by at least 2 of the 3 annotators: 1 or 2 -> that response is
response_pos and gold "pos"; 0 -> gold "tie" (response_pos = response1); no majority ->
gold null. Single order: both judges saw response1 first (as "Response 1"), so `order` is
0 when response1 is response_pos and 1 otherwise. "garbage" or any other value is invalid
with the raw fields kept as JSON in `output`.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from judgelab.data.importers.base import Imported, SourceFormatError
from judgelab.data.importers.common import (
    TIE,
    assemble,
    field,
    judge_id,
    pairwise_outcome,
    read_json,
    scalar_text,
    source_files,
)

PROMPT = "pandalm"
_SLOTS = {"0": TIE, "1": "1", "2": "2", "tie": TIE}
# judge file suffix -> (judge model, result field, other raw fields)
_JUDGES = {
    "pandalm-7b": ("pandalm_result", ("pandalm_reason", "pandalm_reference")),
    "gpt-3.5-turbo": ("gpt_result", ("gpt_reason", "gpt_reference")),
}


def majority(labels: list[Any]) -> str | None:
    """Return the slot ("1", "2" or "tie") chosen by at least 2 of 3 annotators, else None.

    >>> majority([2, 1, 2]), majority([0, 0, 1]), majority([0, 1, 2])
    ('2', 'tie', None)
    """
    slots = [_SLOTS.get(str(v).strip().lower()) for v in labels]
    top, n = Counter(slots).most_common(1)[0]
    return top if top is not None and n >= 2 else None


def verdict_slot(value: Any) -> str | None:
    """Return the slot a PandaLM-style result names ("1", "2", "tie"), None when unparseable.

    >>> [verdict_slot(v) for v in (1, "2", "Tie", 0, "garbage", None)]
    ['1', '2', 'tie', 'tie', None, None]
    """
    if value is None or isinstance(value, bool):
        return None
    return _SLOTS.get(str(value).strip().lower())


def _item(benchmark: str, split: str, rec: Any, i: int, tfile: Path) -> tuple[dict, str]:
    """Return one test-set item (majority-vote gold) and the slot ("1"/"2") stored as pos."""
    idx = str(field(rec, "idx", file=tfile, row=i, kinds=(int, str)))
    labels = [field(rec, f"annotator{k}", file=tfile, row=i) for k in (1, 2, 3)]
    for k, v in enumerate(labels, start=1):
        if verdict_slot(v) is None:
            raise SourceFormatError(
                str(tfile),
                f"annotator label {v!r} is not 0/1/2",
                row=i,
                column=f"annotator{k}",
            )
    winner = majority(labels)
    pos = "2" if winner == "2" else "1"
    gold = None if winner is None else ("tie" if winner == TIE else "pos")
    instruction = field(rec, "instruction", file=tfile, row=i, kinds=(str,))
    inp = field(rec, "input", file=tfile, row=i, kinds=(str,))
    texts = {s: scalar_text(rec, f"response{s}", file=tfile, row=i) for s in ("1", "2")}
    responses = {s: text for s, (text, _) in texts.items()}
    coerced = [f"response{s}" for s, (_, conv) in texts.items() if conv]
    models = str(rec.get("cmp_key", "")).split("_", 1)
    item = {
        "benchmark": benchmark,
        "split": split,
        "item_id": idx,
        "task": "pairwise",
        "question": instruction + (f"\n\n{inp}" if inp.strip() else ""),
        "context": None,
        "response_pos": responses[pos],
        "response_neg": responses["2" if pos == "1" else "1"],
        "response": None,
        "reference": None,
        "gold": gold,
        "meta": {
            "motivation_app": rec.get("motivation_app"),
            "cmp_key": rec.get("cmp_key"),
            "pos_slot": f"response{pos}",
            "model_pos": models[int(pos) - 1] if len(models) == 2 else None,
            "model_neg": models[2 - int(pos)] if len(models) == 2 else None,
            "annotators": labels,
            "gold_rule": "majority of 3 annotators (>= 2 agree); none -> null",
            **({"non_text_json_values": coerced} if coerced else {}),
        },
    }
    return item, pos


def _judgments(
    root: Path, source: Any, split: str, pos_slot: dict[str, str], gold_of: dict
) -> list[dict[str, Any]]:
    """Return the two judges' verdicts on the test set, one row per (judge, item)."""
    judgments = []
    for model, (result_key, extra) in _JUDGES.items():
        for path in source_files(source, f"{model}-testset-v1.json"):
            file = root / path
            recs = read_json(root, path)
            if not isinstance(recs, list):
                raise SourceFormatError(str(file), "expected a JSON list")
            for i, rec in enumerate(recs):
                idx = str(field(rec, "idx", file=file, row=i, kinds=(int, str)))
                if idx not in pos_slot:
                    raise SourceFormatError(
                        str(file), f"idx {idx} not in testset-v1.json", row=i, column="idx"
                    )
                raw = field(rec, result_key, file=file, row=i)
                out = pairwise_outcome(
                    verdict_slot(raw),
                    pos_slot=pos_slot[idx],
                    first_slot="1",
                    gold=gold_of[idx],
                )
                output = {k: rec.get(k) for k in (result_key, *extra)}
                judgments.append(
                    {
                        "benchmark": source.name,
                        "split": split,
                        "item_id": idx,
                        "judge": judge_id(model, PROMPT),
                        "model": model,
                        "prompt": PROMPT,
                        "condition": "",
                        "sample": 0,
                        "output": json.dumps(output, ensure_ascii=False),
                        **out,
                    }
                )
    return judgments


def import_pandalm(root: Path, source: Any) -> Imported:
    """Import the PandaLM test set with majority-vote gold and the two judges' verdicts."""
    root = Path(root)
    benchmark, split = source.name, "testset-v1"
    tfile = root / "testset-v1.json"
    records = read_json(root, "testset-v1.json")
    if not isinstance(records, list) or not records:
        raise SourceFormatError(str(tfile), "expected a non-empty JSON list")
    items, pos_slot, gold_of = [], {}, {}
    for i, rec in enumerate(records):
        item, pos = _item(benchmark, split, rec, i, tfile)
        idx = item["item_id"]
        pos_slot[idx], gold_of[idx] = pos, item["gold"]
        items.append(item)
    judgments = _judgments(root, source, split, pos_slot, gold_of)
    return assemble(items, judgments, what=source.name)
