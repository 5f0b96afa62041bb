"""MT-Bench judgments in FastChat's format (the Stefanstud/FastChat fork).

`model_judgment/gpt-4_pair.jsonl`: one record per (question, turn, model pair) with two
runs. g1 showed model_1's answer as "Assistant A"; g2 showed model_2's answer as A
(checked against `g2_user_prompt` in the real file). FastChat already maps both winners
back to "model_1" / "model_2" / "tie" ("error" = unparseable), so they are compared with
the model slots directly. There is no gold: slots are alphabetical by model name
(`model_pos`/`model_neg` in meta).

`model_judgment/gpt-4_single.jsonl`: single-answer 1-10 scores, imported as a pointwise
judge (FastChat writes -1 for an unparseable score; that, or a missing score, is invalid).

Judge ids: "gpt-4.pair" and "gpt-4.single"; `prompt` holds the FastChat template of each
row (pair-v2 / pair-math-v1 / single-v1 / single-math-v1-multi-turn ...), which FastChat
picks by category and turn. Turn-2 items carry the first turn in `meta.history`.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from judgelab.data.importers.base import Imported, SourceFormatError
from judgelab.data.importers.common import (
    TIE,
    assemble,
    canonical_pair,
    field,
    format_score,
    judge_id,
    pairwise_outcome,
    pointwise_outcome,
    read_jsonl,
    source_files,
)

_WINNERS = {"model_1", "model_2", "tie"}


def _answers(root: Path, source: Any, bench: str) -> dict[str, dict[int, list[str]]]:
    out: dict[str, dict[int, list[str]]] = {}
    for path in source_files(source, f"{bench}/model_answer/*.jsonl"):
        file = root / path
        answers: dict[int, list[str]] = {}
        for i, rec in enumerate(read_jsonl(root, path)):
            choices = field(rec, "choices", file=file, row=i, kinds=(list,))
            if not choices or not isinstance(choices[0], dict):
                raise SourceFormatError(str(file), "no choices", row=i, column="choices")
            answers[field(rec, "question_id", file=file, row=i)] = choices[0].get("turns") or []
        out[Path(path).stem] = answers
    return out


def _by_qid(root: Path, path: str, key: str) -> dict[Any, dict[str, Any]]:
    file = root / path
    return {field(r, key, file=file, row=i): r for i, r in enumerate(read_jsonl(root, path))}


def _turn_text(turns: list[str], turn: int) -> str | None:
    return turns[turn - 1] if 0 < turn <= len(turns) else None


def _base_item(
    benchmark: str, bench: str, question: dict[str, Any], turn: int, refs: dict[Any, Any]
) -> dict[str, Any]:
    qid = question["question_id"]
    ref = refs.get(qid)
    ref_turns = ref["choices"][0]["turns"] if ref else []
    return {
        "benchmark": benchmark,
        "split": bench,
        "question": _turn_text(question["turns"], turn),
        "context": None,
        "reference": _turn_text(ref_turns, turn),
        "meta": {"question_id": qid, "category": question.get("category"), "turn": turn},
    }


def _history(question: dict[str, Any], answer_turns: list[str], turn: int) -> list[dict]:
    return [
        {"user": question["turns"][t], "assistant": _turn_text(answer_turns, t + 1)}
        for t in range(turn - 1)
    ]


@dataclasses.dataclass
class _Corpus:
    """MT-Bench's questions, references and answers, and the tables built from its judgments."""

    benchmark: str
    bench: str
    questions: dict[Any, dict[str, Any]]
    refs: dict[Any, dict[str, Any]]
    answers: dict[str, dict[int, list[str]]]
    items: dict[str, dict[str, Any]] = dataclasses.field(default_factory=dict)
    judgments: list[dict[str, Any]] = dataclasses.field(default_factory=list)

    def question_of(self, qid: Any, file: Path, i: int) -> dict[str, Any]:
        """Return the question `qid`, or raise naming the judgment file and row."""
        if qid not in self.questions:
            raise SourceFormatError(
                str(file), f"unknown question_id {qid!r}", row=i, column="question_id"
            )
        return self.questions[qid]

    def answer_of(self, model: str, qid: Any, file: Path, i: int) -> list[str]:
        """Return `model`'s answer turns to `qid`, or raise naming the judgment file and row."""
        if model not in self.answers or qid not in self.answers[model]:
            raise SourceFormatError(
                str(file),
                f"no answer of {model!r} to question {qid!r} in model_answer/",
                row=i,
                column="question_id",
            )
        return self.answers[model][qid]

    def judgment(self, iid: str, model: str, prompt: str, kind: str, output: Any) -> dict:
        """Return the key and judge columns of one judgment row (the outcome is added)."""
        return {
            "benchmark": self.benchmark,
            "split": self.bench,
            "item_id": iid,
            "judge": judge_id(model, kind),
            "model": model,
            "prompt": prompt,
            "condition": "",
            "sample": 0,
            "output": output,
        }

    def add_pair(self, rec: Any, file: Path, i: int) -> None:
        """Add one pairwise judgment record: its item and its g1/g2 verdicts."""
        qid = field(rec, "question_id", file=file, row=i)
        turn = int(field(rec, "turn", file=file, row=i))
        m1, m2 = (
            field(rec, "model_1", file=file, row=i),
            field(rec, "model_2", file=file, row=i),
        )
        model, prompt = field(rec, "judge", file=file, row=i, kinds=(list,))[:2]
        q = self.question_of(qid, file, i)
        pos, neg = canonical_pair(m1, m2)
        turns = {m: self.answer_of(m, qid, file, i) for m in (m1, m2)}
        iid = f"q{qid}-t{turn}-{pos}-vs-{neg}"
        item = _base_item(self.benchmark, self.bench, q, turn, self.refs)
        item["meta"] |= {"model_pos": pos, "model_neg": neg}
        if turn > 1:
            item["meta"]["history"] = {m: _history(q, turns[m], turn) for m in (pos, neg)}
        self.items[iid] = item | {
            "item_id": iid,
            "task": "pairwise",
            "response_pos": _turn_text(turns[pos], turn),
            "response_neg": _turn_text(turns[neg], turn),
            "response": None,
            "gold": None,
        }
        slots = {"model_1": m1, "model_2": m2, "tie": TIE}
        for run, first in (("g1", m1), ("g2", m2)):
            raw = field(rec, f"{run}_winner", file=file, row=i)
            out = pairwise_outcome(slots.get(raw), pos_slot=pos, first_slot=first, gold=None)
            row = self.judgment(iid, model, prompt, "pair", rec.get(f"{run}_judgment"))
            self.judgments.append({**row, **out})

    def add_single(self, rec: Any, file: Path, i: int) -> None:
        """Add one single-answer judgment record: its item and its score."""
        qid = field(rec, "question_id", file=file, row=i)
        turn = int(field(rec, "turn", file=file, row=i))
        cand = field(rec, "model", file=file, row=i, kinds=(str,))
        model, prompt = field(rec, "judge", file=file, row=i, kinds=(list,))[:2]
        q = self.question_of(qid, file, i)
        turns = self.answer_of(cand, qid, file, i)
        iid = f"q{qid}-t{turn}-{cand}"
        item = _base_item(self.benchmark, self.bench, q, turn, self.refs)
        item["meta"]["candidate_model"] = cand
        if turn > 1:
            item["meta"]["history"] = _history(q, turns, turn)
        self.items[iid] = item | {
            "item_id": iid,
            "task": "pointwise",
            "response_pos": None,
            "response_neg": None,
            "response": _turn_text(turns, turn),
            "gold": None,
        }
        score = format_score(rec.get("score"))
        out = pointwise_outcome(None if score == "-1" else score, gold=None)
        row = self.judgment(iid, model, prompt, "single", rec.get("judgment"))
        self.judgments.append({**row, **out})


def import_mtbench_fastchat(root: Path, source: Any) -> Imported:
    """Import the pairwise (g1/g2) and single-answer GPT-4 judgments of MT-Bench."""
    root = Path(root)
    bench = "mt_bench"
    ref_paths = source_files(source, f"{bench}/reference_answer/gpt-4.jsonl")
    corpus = _Corpus(
        benchmark=source.name,
        bench=bench,
        questions=_by_qid(root, f"{bench}/question.jsonl", "question_id"),
        refs=_by_qid(root, ref_paths[0], "question_id") if ref_paths else {},
        answers=_answers(root, source, bench),
    )
    for kind, add in (("pair", corpus.add_pair), ("single", corpus.add_single)):
        for path in source_files(source, f"{bench}/model_judgment/*_{kind}.jsonl"):
            for i, rec in enumerate(read_jsonl(root, path)):
                add(rec, root / path, i)
    return assemble(list(corpus.items.values()), corpus.judgments, what=source.name)
