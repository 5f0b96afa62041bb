"""arena-bench-v1 (lm-sys/arena-hard-auto, Dec 2023): reference-guided GPT-4 1-10 scores.

Files: `question.jsonl` (300 single-turn questions), `reference_answer/gpt-4.jsonl`,
`model_answer/<model>.jsonl` (FastChat format; the judged text is `choices[0].turns[0]`,
a few answers carry extra turns, counted in meta) and `model_judgment/<file>.jsonl`
(`question_id`, `model`, `user_prompt`, `judgment`, `score`). A judgment file is matched to
its answers through the `model` field (e.g. `gpt-4-turbo.jsonl` grades
gpt-4-1106-preview), never through its file name.

Tables: pointwise items, split = the answering model (the answer file's stem), item_id =
question_id; judge "gpt-4.single-ref" (the era's config: GPT-4 judge, GPT-4 reference,
"[[rating]]" format). `score` null -> invalid, judgment text kept; the importer does not
re-parse the text (some null-score judgments say "[[9.5]]", which FastChat's parser of
that era rejected; they stay invalid and counted).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from judgelab.data.importers.base import Imported, SourceFormatError
from judgelab.data.importers.common import (
    assemble,
    field,
    format_score,
    judge_id,
    pointwise_outcome,
    read_jsonl,
    source_files,
)

JUDGE_MODEL = "gpt-4"
PROMPT = "single-ref"


def _first_turn(rec: dict[str, Any], file: Path, i: int) -> tuple[str | None, int]:
    choices = field(rec, "choices", file=file, row=i, kinds=(list,))
    turns = choices[0].get("turns") if choices and isinstance(choices[0], dict) else None
    if not isinstance(turns, list) or not turns:
        raise SourceFormatError(str(file), "no answer turns", row=i, column="choices")
    return turns[0], len(turns)


_ANSWER = re.compile(
    r"\[The Start of Assistant's Answer\]\n(.*)\n\[The End of Assistant's Answer\]\s*$", re.S
)


def graded_answer(user_prompt: Any) -> str | None:
    r"""Return the answer text quoted in a judge prompt (None when the prompt has none).

    >>> graded_answer("Q\n[The Start of Assistant's Answer]\nHi.\n[The End of Assistant's Answer]")
    'Hi.'
    """
    m = _ANSWER.search(user_prompt) if isinstance(user_prompt, str) else None
    return m.group(1) if m else None


def _use_graded_answer(item: dict[str, Any] | None, user_prompt: Any) -> None:
    """Make the item's response the answer GPT-4 actually graded.

    In the released files, some judgments (e.g. 122 of Llama-2-70b-chat's 300) graded another
    sample of the model's answer than the one in `model_answer/`; the score belongs to the text
    in the judge prompt, so that text becomes `response` and the file's text moves to meta.
    """
    graded = graded_answer(user_prompt)
    if item is None or graded is None:
        return
    if " ".join(graded.split()) == " ".join((item["response"] or "").split()):
        return  # the same answer, laid out with other white space
    item["meta"]["answer_file_response"] = item["response"]
    item["meta"]["response_source"] = "judge_prompt"
    item["response"] = graded


def _judgments(
    root: Path,
    source: Any,
    split_of: dict[str, str],
    item_of: dict[tuple[str, str], dict[str, Any]],
) -> list[dict[str, Any]]:
    """Return GPT-4's scores as judgments (and put the graded answer text in its item)."""
    benchmark = source.name
    judgments: list[dict[str, Any]] = []
    for path in source_files(source, "model_judgment/*.jsonl"):
        file = root / path
        for i, rec in enumerate(read_jsonl(root, path)):
            model = str(field(rec, "model", file=file, row=i))
            if model not in split_of:
                raise SourceFormatError(
                    str(file),
                    f"judged model {model!r} has no model_answer file",
                    row=i,
                    column="model",
                )
            field(rec, "score", file=file, row=i)
            _use_graded_answer(
                item_of.get((model, str(rec["question_id"]))), rec.get("user_prompt")
            )
            out = pointwise_outcome(format_score(rec["score"]), gold=None)
            judgments.append(
                {
                    "benchmark": benchmark,
                    "split": split_of[model],
                    "item_id": str(field(rec, "question_id", file=file, row=i)),
                    "judge": judge_id(JUDGE_MODEL, PROMPT),
                    "model": JUDGE_MODEL,
                    "prompt": PROMPT,
                    "condition": "",
                    "sample": 0,
                    "output": field(rec, "judgment", file=file, row=i),
                    **out,
                }
            )
    return judgments


def import_arena_bench(root: Path, source: Any) -> Imported:
    """Import arena-bench-v1 answers as pointwise items and GPT-4's scores as judgments."""
    root = Path(root)
    benchmark = source.name
    qfile = root / "question.jsonl"
    questions = {
        field(r, "question_id", file=qfile, row=i): r
        for i, r in enumerate(read_jsonl(root, "question.jsonl"))
    }
    refs: dict[Any, str | None] = {}
    for path in source_files(source, "reference_answer/*.jsonl"):
        for i, r in enumerate(read_jsonl(root, path)):
            refs[field(r, "question_id", file=root / path, row=i)] = _first_turn(
                r, root / path, i
            )[0]

    items: list[dict[str, Any]] = []
    item_of: dict[tuple[str, str], dict[str, Any]] = {}
    split_of: dict[str, str] = {}
    for path in source_files(source, "model_answer/*.jsonl"):
        file, split = root / path, Path(path).stem
        for i, rec in enumerate(read_jsonl(root, path)):
            qid = field(rec, "question_id", file=file, row=i)
            if qid not in questions:
                raise SourceFormatError(
                    str(file), f"unknown question_id {qid!r}", row=i, column="question_id"
                )
            split_of[str(field(rec, "model_id", file=file, row=i))] = split
            text, n_turns = _first_turn(rec, file, i)
            q = questions[qid]
            items.append(
                {
                    "benchmark": benchmark,
                    "split": split,
                    "item_id": str(qid),
                    "task": "pointwise",
                    "question": q["turns"][0] if q.get("turns") else None,
                    "context": None,
                    "response_pos": None,
                    "response_neg": None,
                    "response": text,
                    "reference": refs.get(qid),
                    "gold": None,
                    "meta": {
                        "candidate_model": rec["model_id"],
                        "category": q.get("category"),
                        "answer_turns": n_turns,
                    },
                }
            )
            item_of[(str(rec["model_id"]), str(qid))] = items[-1]

    judgments = _judgments(root, source, split_of, item_of)
    return assemble(items, judgments, what=source.name)
