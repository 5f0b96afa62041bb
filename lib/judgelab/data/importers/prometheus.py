"""Prometheus eval benchmark files: repeated GPT-4 rubric scores, and HHH preference pairs.

`mt_bench_eval.json` / `vicuna_eval.json`: `idx`, `response_source`, `category`,
`instruction` (the full Prometheus absolute-grading prompt: task description, the
instruction, the response, a score-5 reference answer and the 1-5 rubric), `gpt4_score`
(3 repeated GPT-4 scores) and `gpt4_feedback` (their 3 feedbacks). Each becomes a pointwise
item (the prompt's sections parsed into question / response / reference, the rubric and
the full prompt in meta) and 3 judgments of judge "gpt-4.prometheus-absolute", sample
0..2. A score that is not an integer 1-5 is invalid (feedback kept).

`hhh_alignment_eval.json`: `source` (harmless/helpful/honest/other), `chosen_instruction`
and `rejected_instruction` (the same prompt around the better / worse response). These
become pairwise items (response_pos = the chosen response, gold "pos"), no judgments.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from judgelab.data.importers.base import Imported, SourceFormatError
from judgelab.data.importers.common import (
    assemble,
    field,
    format_score,
    judge_id,
    pointwise_outcome,
    read_json,
    source_files,
)

JUDGE_MODEL = "gpt-4"
PROMPT = "prometheus-absolute"
_SECTIONS = {
    "instruction": "###The instruction to evaluate:",
    "response": "###Response to evaluate:",
    "reference": "###Reference Answer (Score 5):",
    "rubric": "###Score Rubrics:",
    "feedback": "###Feedback:",
}
_SPLITS = {
    "mt_bench_eval.json": "mt_bench",
    "vicuna_eval.json": "vicuna",
    "hhh_alignment_eval.json": "hhh_alignment",
}


def parse_prompt(prompt: str) -> dict[str, str] | None:
    r"""Split a Prometheus prompt into its sections; None unless each header occurs once.

    Returns the text of `instruction`, `response`, `rubric` and (when present) `reference`,
    stripped.

    >>> p = ("###Task Description:\nx\n\n###The instruction to evaluate:\nQ?\n\n"
    ...      "###Response to evaluate:\nA.\n\n###Score Rubrics:\nR\n\n###Feedback: ")
    >>> parse_prompt(p)
    {'instruction': 'Q?', 'response': 'A.', 'rubric': 'R'}
    """
    found = {}
    for name, header in _SECTIONS.items():
        n = prompt.count(header)
        if n > 1 or (n == 0 and name != "reference"):
            return None
        if n:
            found[name] = prompt.index(header)
    order = sorted(found, key=found.get)
    if order != [n for n in _SECTIONS if n in found]:
        return None
    out = {}
    for name, nxt in zip(order, order[1:], strict=False):
        out[name] = prompt[found[name] + len(_SECTIONS[name]) : found[nxt]].strip()
    return {k: out[k] for k in ("instruction", "response", "reference", "rubric") if k in out}


def _score_verdict(score: Any) -> str | None:
    s = format_score(score)
    return s if s in {"1", "2", "3", "4", "5"} else None


def import_prometheus(root: Path, source: Any) -> Imported:
    """Import the GPT-4-scored files as pointwise items + judgments and HHH as pairs."""
    root = Path(root)
    benchmark = source.name
    items: list[dict[str, Any]] = []
    judgments: list[dict[str, Any]] = []
    for path in source_files(source, "*.json"):
        name = Path(path).name
        split = _SPLITS.get(name, Path(path).stem.removesuffix("_eval"))
        file = root / path
        records = read_json(root, path)
        if not isinstance(records, list) or not records:
            raise SourceFormatError(str(file), "expected a non-empty JSON list")
        for i, rec in enumerate(records):
            if "chosen_instruction" in rec:
                items.append(_pair_item(benchmark, split, i, rec, file))
                continue
            prompt = field(rec, "instruction", file=file, row=i, kinds=(str,))
            scores = field(rec, "gpt4_score", file=file, row=i, kinds=(list,))
            feedback = field(rec, "gpt4_feedback", file=file, row=i, kinds=(list,))
            if len(feedback) != len(scores):
                raise SourceFormatError(
                    str(file),
                    f"{len(scores)} scores but {len(feedback)} feedbacks",
                    row=i,
                    column="gpt4_feedback",
                )
            parts = parse_prompt(prompt) or {}
            iid = f"{field(rec, 'idx', file=file, row=i)}:{rec.get('response_source')}"
            items.append(
                {
                    "benchmark": benchmark,
                    "split": split,
                    "item_id": iid,
                    "task": "pointwise",
                    "question": parts.get("instruction"),
                    "context": None,
                    "response_pos": None,
                    "response_neg": None,
                    "response": parts.get("response"),
                    "reference": parts.get("reference"),
                    "gold": None,
                    "meta": {
                        "question_idx": rec["idx"],
                        "candidate_model": rec.get("response_source"),
                        "category": rec.get("category"),
                        "rubric": parts.get("rubric"),
                        "sections_parsed": bool(parts),
                        "judge_prompt": prompt,
                    },
                }
            )
            for sample, (score, text) in enumerate(zip(scores, feedback, strict=True)):
                judgments.append(
                    {
                        "benchmark": benchmark,
                        "split": split,
                        "item_id": iid,
                        "judge": judge_id(JUDGE_MODEL, PROMPT),
                        "model": JUDGE_MODEL,
                        "prompt": PROMPT,
                        "condition": "",
                        "sample": sample,
                        "output": text if isinstance(text, str) else None,
                        **pointwise_outcome(_score_verdict(score), gold=None),
                    }
                )
    return assemble(items, judgments, what=source.name)


def _pair_item(
    benchmark: str, split: str, i: int, rec: dict[str, Any], file: Path
) -> dict[str, Any]:
    chosen = parse_prompt(field(rec, "chosen_instruction", file=file, row=i, kinds=(str,)))
    rejected = parse_prompt(field(rec, "rejected_instruction", file=file, row=i, kinds=(str,)))
    if chosen is None or rejected is None:
        raise SourceFormatError(
            str(file), "prompt sections not parseable", row=i, column="chosen_instruction"
        )
    if chosen["instruction"] != rejected["instruction"]:
        raise SourceFormatError(
            str(file),
            "chosen and rejected prompts ask different instructions",
            row=i,
            column="rejected_instruction",
        )
    return {
        "benchmark": benchmark,
        "split": split,
        "item_id": str(i),
        "task": "pairwise",
        "question": chosen["instruction"],
        "context": None,
        "response_pos": chosen["response"],
        "response_neg": rejected["response"],
        "response": None,
        "reference": None,
        "gold": "pos",
        "meta": {"subset": rec.get("source"), "rubric": chosen["rubric"]},
    }
