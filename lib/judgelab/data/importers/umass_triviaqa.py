"""UMass "Judging the Judges" TriviaQA files: LLM judges' and baselines' Correct/Incorrect.

`TriviaQA_Judges_w_HumanJudgement_V1.csv` / `_V2.csv`, 3,600 rows each: `model` (the
exam-taker), `question`, `references` (newline-separated gold aliases), `benchmark`,
`response`, then one True/False column per judge, and the human label (`HumanJudgement`
in V1; `Human-Eval` plus `Human-Eval_Confidence` in V2).

CAUTION: `response` holds the few-shot exam PROMPT (ending in "A:"), not the candidate's
answer; the answer text is not in the files. Items therefore have `response` = null and
keep the prompt as `meta.exam_prompt`; a judge re-run cannot be made from these items.

Tables: split = "V1"/"V2" (from the file name), item_id = the 0-based row (rows repeat a
(model, question) pair, so the row is the only key), task = pointwise, gold = "Correct" /
"Incorrect" from the human label (empty -> null). Every judge column becomes a judge
"<column>.umass"; EM and Contains are lexical baselines ("EM.baseline",
"Contains.baseline"). True -> "Correct", False -> "Incorrect", anything else (also an
empty cell) -> invalid with the cell kept as `output`.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from judgelab.data.importers.base import Imported, SourceFormatError
from judgelab.data.importers.common import (
    assemble,
    judge_id,
    pointwise_outcome,
    read_delimited,
    source_files,
)

BASELINES = ("EM", "Contains")
HUMAN_COLUMNS = ("HumanJudgement", "Human-Eval")
_NOT_JUDGES = {
    "model",
    "question",
    "references",
    "benchmark",
    "response",
    "Human-Eval_Confidence",
    *HUMAN_COLUMNS,
}
_VERSION = re.compile(r"_(V\d+)\.csv$")
_LABELS = {"true": "Correct", "false": "Incorrect"}


def label(value: str) -> str | None:
    """Return "Correct"/"Incorrect" for a True/False cell, None for anything else.

    >>> label("True"), label(" false "), label(""), label("maybe")
    ('Correct', 'Incorrect', None, None)
    """
    return _LABELS.get(value.strip().lower()) if isinstance(value, str) else None


def import_umass_triviaqa(root: Path, source: Any) -> Imported:
    """Import every TriviaQA judges CSV listed in the source registry."""
    root = Path(root)
    benchmark = source.name
    items: list[dict[str, Any]] = []
    judgments: list[dict[str, Any]] = []
    for path in source_files(source, "*.csv"):
        file = root / path
        version = _VERSION.search(path)
        split = version.group(1) if version else Path(path).stem
        df = read_delimited(root, path, columns=("model", "question", "references", "response"))
        human = next((c for c in HUMAN_COLUMNS if c in df.columns), None)
        if human is None:
            raise SourceFormatError(
                str(file),
                f"no human label column (expected one of {HUMAN_COLUMNS})",
                column=HUMAN_COLUMNS[0],
            )
        judges = [c for c in df.columns if c not in _NOT_JUDGES]
        if not judges:
            raise SourceFormatError(str(file), "no judge columns")
        for i, row in enumerate(df.to_dict("records")):
            gold = label(row[human])
            if gold is None and row[human].strip():
                raise SourceFormatError(
                    str(file), f"human label {row[human]!r} is not True/False", row=i, column=human
                )
            meta = {
                "candidate_model": row["model"],
                "exam_prompt": row["response"],
                "source_benchmark": row.get("benchmark"),
                "answer_text": "missing from the source",
            }
            if "Human-Eval_Confidence" in row:
                meta["human_confidence"] = row["Human-Eval_Confidence"] or None
            items.append(
                {
                    "benchmark": benchmark,
                    "split": split,
                    "item_id": str(i),
                    "task": "pointwise",
                    "question": row["question"],
                    "context": None,
                    "response_pos": None,
                    "response_neg": None,
                    "response": None,
                    "reference": row["references"],
                    "gold": gold,
                    "meta": meta,
                }
            )
            for col in judges:
                prompt = "baseline" if col in BASELINES else "umass"
                judgments.append(
                    {
                        "benchmark": benchmark,
                        "split": split,
                        "item_id": str(i),
                        "judge": judge_id(col, prompt),
                        "model": col,
                        "prompt": prompt,
                        "condition": "",
                        "sample": 0,
                        "output": row[col],
                        **pointwise_outcome(label(row[col]), gold=gold),
                    }
                )
    return assemble(items, judgments, what=source.name)
