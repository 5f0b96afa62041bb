"""Position-Bias-Analyzer (Shi et al. 2024): MT-Bench pairs judged in both orders, repeated.

Each run folder `Repetition<N>-<split>_record<k>_<judge>_<m>/record_<judge>_<m>.tsv` has one
row per PRESENTATION: `cmp_index` = "question;model shown as A;model shown as B", the two
turns of the question, of A's and of B's answers, the reference answers, and a last column
named after the judge with its full judgment, ending in "[[A]]", "[[B]]" or "[[C]]" (tie).

The two presentations of each unordered pair become one item. There is no gold, so the
slots follow the canonical order (alphabetical by model name: response_pos = the first
name, recorded as `model_pos`/`model_neg` in meta), and `order` = 0 where model_pos was
shown as A. Repetition N is `sample` N-1. A judgment with no tag, or with tags naming
different verdicts, is invalid (output kept). Items render both turns ("[Turn 1] ...").
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from judgelab.data.importers.base import Imported, SourceFormatError
from judgelab.data.importers.common import (
    TIE,
    assemble,
    canonical_pair,
    dedupe_items,
    judge_id,
    pairwise_outcome,
    parse_bracket_verdict,
    read_delimited,
    render_turns,
    source_files,
)

PROMPT = "mtbench-pair"
_RUN = re.compile(r"^Repetition(?P<rep>\d+)-(?P<split>.+)_record\d+_(?P<judge>.+)_\d+$")
_COLUMNS = (
    "cmp_index",
    "question_1",
    "question_2",
    "answer1_1",
    "answer1_2",
    "answer2_1",
    "answer2_2",
    "A",
    "B",
    "reference_answer_1",
    "reference_answer_2",
    "task",
)
_LABELS = {"A": "A", "B": "B", "C": TIE}


def item_id(question: str, model_pos: str, model_neg: str) -> str:
    """Return the item id of one unordered pair on one question.

    >>> item_id("129", "claude-v1", "vicuna-13b-v1.3")
    '129:claude-v1:vicuna-13b-v1.3'
    """
    return f"{question}:{model_pos}:{model_neg}"


def _reference(row: dict[str, str]) -> str | None:
    refs = [row["reference_answer_1"], row["reference_answer_2"]]
    if not any(r.strip() and r != "nan" for r in refs):
        return None
    return render_turns(refs)


def _read_run(root: Path, path: str) -> tuple[Any, str, str, int]:
    """Read one run TSV; return its rows, the judge (last column), the split and the sample."""
    file = root / path
    run = _RUN.match(Path(path).parent.name)
    if run is None:
        raise SourceFormatError(
            str(file), "folder name is not 'Repetition<N>-<split>_record<k>_<judge>_<m>'"
        )
    df = read_delimited(root, path, sep="\t", columns=_COLUMNS)
    judge = df.columns[-1]
    if judge in _COLUMNS or judge != run["judge"]:
        raise SourceFormatError(
            str(file), f"last column should be the judge {run['judge']!r}", column=judge
        )
    return df, judge, run["split"], int(run["rep"]) - 1


def _item(benchmark: str, split: str, row: dict[str, str], shown: tuple[str, str]) -> dict:
    """Return the item of one presented pair (`shown`: the models shown as A and B)."""
    question = row["cmp_index"].split(";")[0]
    shown_a, shown_b = shown
    model_pos, model_neg = canonical_pair(shown_a, shown_b)
    answers = {
        shown_a: render_turns([row["answer1_1"], row["answer1_2"]]),
        shown_b: render_turns([row["answer2_1"], row["answer2_2"]]),
    }
    return {
        "benchmark": benchmark,
        "split": split,
        "item_id": item_id(question, model_pos, model_neg),
        "task": "pairwise",
        "question": render_turns([row["question_1"], row["question_2"]]),
        "context": None,
        "response_pos": answers[model_pos],
        "response_neg": answers[model_neg],
        "response": None,
        "reference": _reference(row),
        "gold": None,
        "meta": {
            "question_id": question,
            "category": row["task"],
            "model_pos": model_pos,
            "model_neg": model_neg,
            "turns": 2,
        },
    }


def import_position_bias_analyzer(root: Path, source: Any) -> Imported:
    """Import every run TSV listed in the source registry (one judge x repetition each)."""
    root = Path(root)
    benchmark = source.name
    items: list[dict[str, Any]] = []
    judgments: list[dict[str, Any]] = []
    for path in source_files(source, "*.tsv"):
        file = root / path
        df, judge, split, sample = _read_run(root, path)
        seen: dict[str, int] = {}
        for i, row in enumerate(df.to_dict("records")):
            parts = row["cmp_index"].split(";")
            if len(parts) != 3 or parts[1] != row["A"] or parts[2] != row["B"]:
                raise SourceFormatError(
                    str(file),
                    f"cmp_index {row['cmp_index']!r} does not match A/B",
                    row=i,
                    column="cmp_index",
                )
            _, shown_a, shown_b = parts
            item = _item(benchmark, split, row, (shown_a, shown_b))
            key = f"{item['item_id']}:{shown_a}"
            if key in seen:
                raise SourceFormatError(
                    str(file),
                    f"presentation repeated (first at row {seen[key]})",
                    row=i,
                    column="cmp_index",
                )
            seen[key] = i
            items.append(item)
            verdict = parse_bracket_verdict(row[judge], _LABELS)
            winner = {"A": shown_a, "B": shown_b}.get(verdict, verdict)
            pos = item["meta"]["model_pos"]
            out = pairwise_outcome(winner, pos_slot=pos, first_slot=shown_a, gold=None)
            judgments.append(
                {
                    "benchmark": benchmark,
                    "split": split,
                    "item_id": item["item_id"],
                    "judge": judge_id(judge, PROMPT),
                    "model": judge,
                    "prompt": PROMPT,
                    "condition": "",
                    "sample": sample,
                    "output": row[judge],
                    **out,
                }
            )
    items = dedupe_items(items, what=source.name)
    return assemble(items, judgments, what=source.name)
