"""LLMBar (princeton-nlp/LLMBar): every set, judge and strategy, both orders, gold labels.

Layout (paths relative to the mirror folder; the repository's `Dataset/` prefix stripped):
`<set>/dataset.json` holds the items (`input`, `output_1`, `output_2`, `label` 1|2, the
better output); `<set>/evaluators/<Judge>/<Strategy>/result.json` holds the same records
plus `results`, whose last entry has the two runs `"swap = False"` (output_1 shown as
"Output (a)") and `"swap = True"` (output_2 shown first). LLMBar's `winner` is already
mapped back to the ORIGINAL output index, so it is compared with the slots directly and
never flipped again.

Rating strategies score each output alone (`score_1`, `score_2`), so both "orders" carry
the same two scores; `verdict` holds them in the presented frame ("A-score|B-score").
LLMBar turns equal scores into a positional winner (the output shown second) and
unparseable scores into "the output shown first"; judgelab does neither: unparseable
scores are invalid, and equal scores are `chosen="tie"` unless the source's option
`rating_ties: position` asks for LLMBar's recorded winner (which reproduces the paper's
accuracy).

Tables: benchmark = the source name; split = the set folder without the leading `LLMBar/`
("Natural", "Adversarial/Neighbor", "Processed/MT-Bench", "CaseStudy/Normal", ...);
item_id = the record's index in dataset.json; judge = "<Judge>.<Strategy>" (e.g.
"GPT-4.Vanilla"), model = the LLMBar judge name, prompt = the strategy; shown_first = the
slot shown first ("1" in the "swap = False" run, "2" in "swap = True").
"""

from __future__ import annotations

import json
import re
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
    source_files,
)

_RESULT = re.compile(r"^(?P<set>.+)/evaluators/(?P<judge>[^/]+)/(?P<strategy>[^/]+)/result\.json$")
_SWAPS = (("swap = False", "1"), ("swap = True", "2"))  # run name, slot shown first
_SCORE = re.compile(r"^\s*([+-]?\d+)\s*$")  # what LLMBar's int() accepts for a score
RATING_TIES = ("tie", "position")


def split_name(set_dir: str) -> str:
    """Return the split name of an LLMBar set folder.

    >>> split_name("LLMBar/Adversarial/Neighbor"), split_name("Processed/MT-Bench")
    ('Adversarial/Neighbor', 'Processed/MT-Bench')
    """
    return set_dir.removeprefix("LLMBar/")


def _read_dataset(root: Path, path: str) -> list[dict[str, Any]]:
    records = read_json(root, path)
    file = Path(root) / path
    if not isinstance(records, list) or not records:
        raise SourceFormatError(str(file), "expected a non-empty JSON list of records")
    for i, rec in enumerate(records):
        for key in ("input", "output_1", "output_2"):
            field(rec, key, file=file, row=i, kinds=(str,))
        label = field(rec, "label", file=file, row=i, kinds=(int, str))
        if str(label) not in ("1", "2"):
            raise SourceFormatError(
                str(file), f"label {label!r} is not 1 or 2", row=i, column="label"
            )
    return records


def _items(benchmark: str, set_dir: str, records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    rows = []
    for i, rec in enumerate(records):
        label = str(rec["label"])
        other = "2" if label == "1" else "1"
        rows.append(
            {
                "benchmark": benchmark,
                "split": split_name(set_dir),
                "item_id": str(i),
                "task": "pairwise",
                "question": rec["input"],
                "context": None,
                "response_pos": rec[f"output_{label}"],
                "response_neg": rec[f"output_{other}"],
                "response": None,
                "reference": None,
                "gold": "pos",
                "meta": {"set": set_dir, "label": int(label), "pos_slot": f"output_{label}"},
            }
        )
    return rows


def _score(completion: Any) -> int | None:
    text = completion[0] if isinstance(completion, list) and completion else completion
    m = _SCORE.match(text) if isinstance(text, str) else None
    return int(m.group(1)) if m else None


def _winner(value: Any) -> str | None:
    return str(value) if value is not None and str(value) in ("1", "2") else None


def _judgment_rows(
    *,
    benchmark: str,
    split: str,
    item_id: str,
    judge: str,
    strategy: str,
    last: dict[str, Any],
    label: str,
    rating_ties: str,
    file: Path,
    row: int,
) -> list[dict[str, Any]]:
    rows = []
    rating = "score_1" in last or "score_2" in last
    if rating:
        s1, s2 = _score(last.get("score_1")), _score(last.get("score_2"))
        output = json.dumps(
            {"score_1": last.get("score_1"), "score_2": last.get("score_2")}, ensure_ascii=False
        )
    for run, first in _SWAPS:
        res = field(last, run, file=file, row=row, kinds=(dict,))
        if rating:
            if s1 is None or s2 is None:
                winner = None
            elif s1 != s2:
                winner = "1" if s1 > s2 else "2"
            else:
                winner = TIE if rating_ties == "tie" else _winner(res.get("winner"))
            out = pairwise_outcome(winner, pos_slot=label, first_slot=first, gold="pos")
            if s1 is not None and s2 is not None:
                out["verdict"] = f"{s1}|{s2}" if first == "1" else f"{s2}|{s1}"
        else:
            completion = field(res, "completion", file=file, row=row)
            output = completion[0] if isinstance(completion, list) and completion else None
            if output is not None and not isinstance(output, str):
                output = json.dumps(output, ensure_ascii=False)
            winner = _winner(field(res, "winner", file=file, row=row))
            out = pairwise_outcome(winner, pos_slot=label, first_slot=first, gold="pos")
        rows.append(
            {
                "benchmark": benchmark,
                "split": split,
                "item_id": item_id,
                "judge": judge_id(judge, strategy),
                "model": judge,
                "prompt": strategy,
                "condition": "",
                "sample": 0,
                "output": output,
                **out,
                "shown_first": first,  # the source's slot shown as "Output (a)"
            }
        )
    return rows


def import_llmbar(root: Path, source: Any) -> Imported:
    """Import every LLMBar set and evaluator run listed in the source registry.

    Options (`source.options`): `rating_ties` = "tie" (default: equal Rating scores are a
    tie) or "position" (keep LLMBar's positional tie-break winner).
    """
    root = Path(root)
    rating_ties = source.options.get("rating_ties", "tie")
    if rating_ties not in RATING_TIES:
        raise SourceFormatError(
            source.name, f"option rating_ties={rating_ties!r}; expected one of {RATING_TIES}"
        )
    benchmark = source.name
    datasets: dict[str, list[dict[str, Any]]] = {}
    items: list[dict[str, Any]] = []
    for path in source_files(source, "*dataset.json"):
        set_dir = str(Path(path).parent)
        datasets[set_dir] = _read_dataset(root, path)
        items += _items(benchmark, set_dir, datasets[set_dir])

    judgments: list[dict[str, Any]] = []
    for path in source_files(source, "*/evaluators/*/result.json"):
        m = _RESULT.match(path)
        file = root / path
        if m is None or m["set"] not in datasets:
            raise SourceFormatError(
                str(file), "result file without a dataset.json of its set in the registry"
            )
        base = datasets[m["set"]]
        records = read_json(root, path)
        if not isinstance(records, list) or len(records) != len(base):
            n = len(records) if isinstance(records, list) else type(records).__name__
            raise SourceFormatError(
                str(file), f"{n} records, but the set's dataset.json has {len(base)}"
            )
        for i, (rec, item) in enumerate(zip(records, base, strict=True)):
            for key in ("input", "output_1", "output_2", "label"):
                if field(rec, key, file=file, row=i) != item[key]:
                    raise SourceFormatError(
                        str(file),
                        "record does not match dataset.json at the same index",
                        row=i,
                        column=key,
                    )
            results = field(rec, "results", file=file, row=i, kinds=(list,))
            if not results or not isinstance(results[-1], dict):
                raise SourceFormatError(
                    str(file), "no final result entry", row=i, column="results"
                )
            judgments += _judgment_rows(
                benchmark=benchmark,
                split=split_name(m["set"]),
                item_id=str(i),
                judge=m["judge"],
                strategy=m["strategy"],
                last=results[-1],
                label=str(item["label"]),
                rating_ties=rating_ties,
                file=file,
                row=i,
            )
    return assemble(items, judgments, what=source.name)
