"""ContextEval (allenai/ContextEval): the underspecified queries, plus released judgment files.

Queries become qa items (split = the short name of their source dataset); an autorater or
human judgment file (spec 002 §1.8, §1.9) becomes pairwise items and judgments, read with the
authors' rule (`judgelab.core.verdicts.ce_judgement`, spec 002 §2.1).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, NamedTuple

import pandas as pd

from judgelab.core import schema
from judgelab.core.verdicts import ce_judgement
from judgelab.data.importers.base import Imported, SourceFormatError
from judgelab.data.importers.releases import (
    cell_text,
    need_column,
    pick_column,
    read_frame,
    registry_files,
)


def source_split(source_dataset: str | None) -> str:
    """Return the split of a ContextEval query: its source dataset's short name.

    >>> source_split("lmsys/chatbot_arena_conversations")
    'chatbot_arena_conversations'
    """
    return source_dataset.rsplit("/", 1)[-1] if source_dataset else "queries"


def import_contexteval(root: Path, source: Any) -> Imported:
    """Load ContextEval (allenai/ContextEval): the underspecified queries, plus judgment files.

    Queries (`query`, `source`, `example_id`) become qa items whose split is the short name of
    their source dataset (e.g. "chatbot_arena_conversations"; "queries" if absent). A registry
    file with autorater records (`eval_judgement`, `rand_choice`, `candidate_one_response`,
    `candidate_two_response`; spec 002 §1.9) or human records (`overall_preference`,
    `model_1`, `model_2`; §1.8) also yields pairwise items (split = setting, pos/neg = the
    pair's candidate 1/2, no gold) and judgments. Its setting, pair and judge come from the
    record or from `options.judgment_files[<path>]`.
    """
    items: list[dict[str, Any]] = []
    judgments: list[dict[str, Any]] = []
    for rel, path in registry_files(root, source, r"\.(jsonl|json|parquet)$"):
        df = read_frame(path)
        if "eval_judgement" in df.columns or "overall_preference" in df.columns:
            _contexteval_judgments(rel, df, source, items, judgments)
            continue
        q = need_column(df, path, "query", ("query",))
        ident = need_column(df, path, "example id", ("example_id", "query_id", "id"))
        src = pick_column(df, path, "source", ("source",))
        for rec in df.to_dict("records"):
            items.append(
                {
                    "benchmark": source.name,
                    "split": source_split(cell_text(rec[src])) if src else "queries",
                    "item_id": cell_text(rec[ident]),
                    "task": "qa",
                    "question": cell_text(rec[q]),
                    "meta": {"source": cell_text(rec[src]) if src else None},
                }
            )
    items_df = schema.new_items(
        pd.DataFrame(items).drop_duplicates(subset=["split", "item_id"], keep="first")
    )
    return Imported(items_df, schema.new_judgments(judgments) if judgments else None)


_CE_RESPONSE = {"response 1": "A", "response 2": "B", "tie": "tie"}


class _Record(NamedTuple):
    """One released judgment record, read: where its row goes and what the judge saw."""

    order: int
    item_id: str
    sample: int
    raw: str | None
    response_pos: str | None
    response_neg: str | None


def _record_info(rec: dict, n: int, rel: str, defaults: dict, human: bool) -> dict[str, Any]:
    """Return the record's setting, pair and judge (from the record, else the registry)."""
    info = {k: cell_text(rec.get(k)) or defaults.get(k) for k in ("setting", "pair", "judge")}
    if human:
        info["judge"] = info["judge"] or "human"
    for k, v in info.items():
        if not v:
            raise SourceFormatError(
                rel,
                f"no {k}: give it per record or in options.judgment_files",
                row=n,
                column=k,
            )
    return info


def _human_record(rec: dict, n: int, rel: str, pair: str) -> _Record:
    """Read a human preference record (spec 002 §1.8): the pair's models in shown order."""
    c1, c2 = pair.split("_vs_", 1)
    # Pair names use "_" where model ids have "/" (e.g. meta-llama_Llama-3...).
    shown = tuple(
        str(cell_text(rec.get(k)) or "").replace("/", "_") for k in ("model_1", "model_2")
    )
    if set(shown) != {c1, c2}:
        raise SourceFormatError(
            rel, f"models {shown} not the pair {pair}", row=n, column="model_1"
        )
    base, _, rep = str(rec.get("example_id", n)).rpartition("_rep")
    return _Record(
        order=0 if shown[0] == c1 else 1,
        item_id=f"{pair}/human/{base or rep}",
        sample=int(rep) if rep.isdigit() else 0,
        raw=cell_text(rec.get("overall_preference")),
        response_pos=None,
        response_neg=None,
    )


def _autorater_record(rec: dict, n: int, rel: str, pair: str) -> _Record:
    """Read an autorater record (spec 002 §1.9): `rand_choice` says which was shown first."""
    rc = cell_text(rec.get("rand_choice"))
    if rc not in ("1", "2"):
        raise SourceFormatError(
            rel, f"rand_choice must be 1 or 2, got {rc!r}", row=n, column="rand_choice"
        )
    return _Record(
        order=0 if rc == "1" else 1,
        item_id=f"{pair}/{n - 1}",
        sample=0,
        raw=cell_text(rec.get("eval_judgement")),
        response_pos=cell_text(rec.get("candidate_one_response")),
        response_neg=cell_text(rec.get("candidate_two_response")),
    )


def _pair_item(source: Any, rec: dict, info: dict[str, Any], r: _Record) -> dict[str, Any]:
    """Return the pairwise item of a record: the pair's candidates 1/2 as pos/neg, no gold."""
    c1, _, c2 = str(info["pair"]).partition("_vs_")
    return {
        "benchmark": source.name,
        "split": info["setting"],
        "item_id": r.item_id,
        "task": "pairwise",
        "question": cell_text(rec.get("query")),
        "context": cell_text(rec.get("context")),
        "response_pos": r.response_pos,
        "response_neg": r.response_neg,
        "gold": None,
        "meta": {
            "pair": info["pair"],
            "model_pos": c1,
            "model_neg": c2,
            "presentation_order": "recorded",
        },
    }


def _judgment(source: Any, info: dict[str, Any], r: _Record) -> dict[str, Any]:
    """Return a record's judgment, read with the authors' rule (spec 002 §2.1)."""
    # The authors' reading: the judgement dict, else "Response 1/2" mentions.
    parsed = ce_judgement(r.raw)
    verdict = _CE_RESPONSE.get(parsed.verdict.lower()) if parsed.valid and parsed.verdict else None
    chosen = None
    if verdict == "tie":
        chosen = "tie"
    elif verdict in ("A", "B"):
        chosen = "pos" if (verdict == "A") == (r.order == 0) else "neg"
    return {
        "benchmark": source.name,
        "split": info["setting"],
        "item_id": r.item_id,
        "judge": re.sub(r"[^A-Za-z0-9._\-]+", "_", str(info["judge"])),
        "model": info["judge"],
        "prompt": "contexteval",
        "order": r.order,
        "sample": r.sample,
        "output": r.raw,
        "verdict": verdict,
        "valid": verdict is not None,
        "chosen": chosen,
        "correct": None,
    }


def _contexteval_judgments(
    rel: str, df: pd.DataFrame, source: Any, items: list, judgments: list
) -> None:
    """Add the items and judgments of one released judgment file (autorater or human)."""
    defaults = dict(source.options.get("judgment_files", {}).get(rel, {}))
    human = "overall_preference" in df.columns
    read = _human_record if human else _autorater_record
    seen: set[tuple[str, str]] = set()
    for n, rec in enumerate(df.to_dict("records"), start=1):
        info = _record_info(rec, n, rel, defaults, human)
        r = read(rec, n, rel, str(info["pair"]))
        key = (info["setting"], r.item_id)
        if key not in seen:
            seen.add(key)
            items.append(_pair_item(source, rec, info, r))
        judgments.append(_judgment(source, info, r))
