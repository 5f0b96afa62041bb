"""Shapes shared by the corpus importers: reading files, verdict outcomes, table assembly.

Every pairwise source has the same problem: the judge saw the two responses in some order
and named a winner, and the tables want `order` (0 = response_pos shown first), a positional
`verdict` (A/B/tie), and an un-swapped `chosen` (pos/neg/tie). Importers describe each item
by its two *slots* (the source's own names for the responses, e.g. "1"/"2" or two model
names), which slot is `pos`, which slot the judge saw first, and which slot won;
`pairwise_outcome` does the rest, in one tested place.
"""

from __future__ import annotations

import csv
import fnmatch
import io
import json
import math
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from judgelab.core import schema, tables
from judgelab.data.importers.base import Imported, SourceFormatError

TIE = "tie"
_UNSAFE = re.compile(r"[^A-Za-z0-9._+=^-]+")
_BRACKET = re.compile(r"\[\[([A-Za-z])\]\]")


# ---------------------------------------------------------------- reading files


def source_files(source: Any, pattern: str) -> list[str]:
    """Return the registry paths of `source` that match the glob `pattern`, in order.

    `*` matches across folders (fnmatch semantics), so `"*/result.json"` finds every
    `result.json` at any depth.
    """
    return [f.path for f in source.files if fnmatch.fnmatchcase(f.path, pattern)]


def read_text(root: Path, path: str) -> str:
    """Read a UTF-8 file of the source; a missing or undecodable file names the path."""
    p = Path(root) / path
    try:
        return tables.read_utf8(p)
    except FileNotFoundError:
        raise SourceFormatError(str(p), "file not found (is the source fetched?)") from None
    except tables.NotUTF8 as exc:
        raise SourceFormatError(exc.file, exc.problem, line=exc.line) from None


def read_json(root: Path, path: str) -> Any:
    """Parse a JSON file; malformed JSON raises `SourceFormatError` naming file and line."""
    p = Path(root) / path
    text = read_text(root, path)
    if not text.strip():
        raise SourceFormatError(str(p), "empty file")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise SourceFormatError(str(p), f"malformed JSON ({exc.msg})", line=exc.lineno) from None
    except RecursionError:  # issue 19 item 18
        raise SourceFormatError(str(p), "JSON nested too deeply to parse") from None


def read_jsonl(root: Path, path: str) -> list[dict[str, Any]]:
    """Parse a JSON-lines file of objects; a bad line raises `SourceFormatError` naming it."""
    p = Path(root) / path
    try:
        return [rec for _, rec in tables.parse_jsonl(read_text(root, path), source=str(p))]
    except tables.JsonlError as exc:
        raise SourceFormatError(exc.file, exc.problem, line=exc.line) from None


def read_delimited(
    root: Path, path: str, *, sep: str = ",", columns: Iterable[str] = ()
) -> pd.DataFrame:
    """Read a CSV/TSV as strings (empty cells stay ""), checking that `columns` are present."""
    p = Path(root) / path
    text = read_text(root, path)
    if not text.strip():
        raise SourceFormatError(str(p), "empty file")
    try:
        df = pd.read_csv(
            io.StringIO(text), sep=sep, dtype=str, keep_default_na=False, quoting=csv.QUOTE_MINIMAL
        )
    except (pd.errors.ParserError, ValueError) as exc:
        raise SourceFormatError(str(p), f"not a readable table ({exc})") from None
    for col in columns:
        if col not in df.columns:
            raise SourceFormatError(
                str(p), f"missing column (found: {list(df.columns)})", column=col
            )
    return df


def field(record: Any, key: str, *, file: Path | str, row: int, kinds: tuple = ()) -> Any:
    """Return `record[key]`, or raise `SourceFormatError` naming the file, row and column.

    Args:
        record: One parsed source record (a JSON object).
        key: The field to read.
        file: The file the record came from (for the message).
        row: The record's 0-based position in its file (for the message).
        kinds: Accepted Python types of the value; empty accepts any.
    """
    if not isinstance(record, dict):
        raise SourceFormatError(
            str(file), f"expected a JSON object, got {type(record).__name__}", row=row
        )
    if key not in record:
        raise SourceFormatError(str(file), "missing field", row=row, column=key)
    value = record[key]
    if kinds and not isinstance(value, kinds):
        names = "/".join(k.__name__ for k in kinds)
        raise SourceFormatError(
            str(file),
            f"expected {names}, got {type(value).__name__} {value!r:.60}",
            row=row,
            column=key,
        )
    return value


def scalar_text(record: Any, key: str, *, file: Path | str, row: int) -> tuple[str, bool]:
    """Return a text field as a string and whether it had to be converted.

    Some JSON sources store a response that reads "True" or "42" as a JSON boolean or
    number; those scalars are turned back into text (`True` -> "True") and flagged, so
    the caller can record it. Lists, objects and null raise `SourceFormatError`.
    """
    value = field(record, key, file=file, row=row, kinds=(str, bool, int, float))
    return (value, False) if isinstance(value, str) else (str(value), True)


# ---------------------------------------------------------------- naming


def judge_id(model: str, prompt: str) -> str:
    """Return the file-name-safe judge id `model.prompt` (unsafe characters become `_`).

    >>> judge_id("mistralai/Mixtral-8x7B", "single ref")
    'mistralai_Mixtral-8x7B.single_ref'
    """
    return f"{_UNSAFE.sub('_', model)}.{_UNSAFE.sub('_', prompt)}"


def render_turns(turns: Sequence[str]) -> str:
    r"""Render a multi-turn text as one string; a single turn is returned unchanged.

    >>> render_turns(["Hi?", "And then?"])
    '[Turn 1]\nHi?\n\n[Turn 2]\nAnd then?'
    """
    if len(turns) == 1:
        return turns[0]
    return "\n\n".join(f"[Turn {i}]\n{t}" for i, t in enumerate(turns, start=1))


# ---------------------------------------------------------------- verdicts


def parse_bracket_verdict(text: str | None, labels: dict[str, str]) -> str | None:
    """Return the verdict named by `[[X]]` tags in `text`, or None when it is not unambiguous.

    Only tags whose letter is a key of `labels` count. The verdict is `labels[X]` when every
    such tag names the same X; no tag, or tags naming different letters, give None (the
    output is then invalid: the parser never picks one of two conflicting verdicts).

    >>> parse_bracket_verdict("... so [[B]]", {"A": "A", "B": "B", "C": "tie"})
    'B'
    >>> parse_bracket_verdict("[[C]] for turn 1 but [[A]] overall", {"A": "A", "C": "tie"}) is None
    True
    """
    if not isinstance(text, str):
        return None
    found = {m for m in _BRACKET.findall(text) if m in labels}
    return labels[found.pop()] if len(found) == 1 else None


def pairwise_outcome(
    winner: str | None, *, pos_slot: str, first_slot: str, gold: str | None
) -> dict[str, Any]:
    """Map a winner given in source slots to the judgments columns of one pairwise row.

    Args:
        winner: The winning slot name, `"tie"`, or None when the output was unparseable.
        pos_slot: The slot stored as `response_pos` in the items table.
        first_slot: The slot the judge was shown first (as "A").
        gold: The item's gold ("pos", "tie" or None).

    Returns:
        `order` (0 when pos was shown first), `verdict` (A/B/tie in the presented frame,
        None when invalid), `valid`, `chosen` (pos/neg/tie, un-swapped), `correct`
        (None without gold, else `valid and chosen == gold`).

    >>> pairwise_outcome("2", pos_slot="2", first_slot="1", gold="pos")["order"]
    1
    """
    order = 0 if first_slot == pos_slot else 1
    if winner is None:
        verdict, chosen = None, None
    elif winner == TIE:
        verdict, chosen = TIE, TIE
    else:
        verdict = "A" if winner == first_slot else "B"
        chosen = "pos" if winner == pos_slot else "neg"
    valid = chosen is not None
    correct = None if gold is None else bool(valid and chosen == gold)
    return {
        "order": order,
        "verdict": verdict,
        "valid": valid,
        "chosen": chosen,
        "correct": correct,
    }


def pointwise_outcome(verdict: str | None, *, gold: str | None) -> dict[str, Any]:
    """Return `order` (0), `verdict`, `valid`, `chosen` (None) and `correct` of a pointwise row.

    `correct` is None without gold, else `valid and verdict == gold`.

    >>> pointwise_outcome("Correct", gold="Incorrect")["correct"]
    False
    """
    valid = verdict is not None
    correct = None if gold is None else bool(valid and verdict == gold)
    return {"order": 0, "verdict": verdict, "valid": valid, "chosen": None, "correct": correct}


def number_or_none(value: Any) -> float | None:
    """Return `value` as a float; None when it is missing, a bool, not a number, or NaN.

    The one reading of a numeric cell every importer uses (scores, preferences, prices,
    detector outputs): a bool is never a number, and NaN counts as missing.

    >>> number_or_none("2.5"), number_or_none(1), number_or_none(True), number_or_none("n/a")
    (2.5, 1.0, None, None)
    >>> number_or_none(float("nan")) is None, number_or_none(float("inf"))
    (True, inf)
    """
    if value is None or isinstance(value, bool):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(number) else number


def format_score(value: Any) -> str | None:
    """Return a numeric score as a canonical string ("7", "9.5"), None when not a number.

    >>> format_score(10.0), format_score("8"), format_score(None), format_score("n/a")
    ('10', '8', None, None)
    """
    number = number_or_none(value)
    if number is None or math.isinf(number):
        return None
    return str(int(number)) if number.is_integer() else repr(number)


def canonical_pair(model_1: str, model_2: str) -> tuple[str, str]:
    """Return two model names in the canonical slot order used when there is no gold.

    >>> canonical_pair("vicuna-13b", "claude-v1")
    ('claude-v1', 'vicuna-13b')
    """
    return (model_1, model_2) if model_1 <= model_2 else (model_2, model_1)


# ---------------------------------------------------------------- assembling tables


def dedupe_items(rows: list[dict[str, Any]], *, what: str) -> list[dict[str, Any]]:
    """Drop repeated item rows (same key), raising if two rows with one key disagree.

    Args:
        rows: Item rows as dicts; the key is (benchmark, split, item_id).
        what: A description of where the rows came from, used in the error message.
    """
    seen: dict[tuple[str, str, str], dict[str, Any]] = {}
    for row in rows:
        key = (row["benchmark"], row["split"], row["item_id"])
        if key not in seen:
            seen[key] = row
            continue
        old = seen[key]
        for col in ("question", "context", "response_pos", "response_neg", "response"):
            if old.get(col) != row.get(col):
                raise SourceFormatError(
                    what,
                    f"item {key[1]}/{key[2]} appears twice with different {col!r} text",
                    column=col,
                )
    return list(seen.values())


def assemble(
    items: list[dict[str, Any]], judgments: list[dict[str, Any]] | None, *, what: str
) -> Imported:
    """Build validated items and judgments tables; every judgment must name a known item.

    Args:
        items: Item rows (dicts with the items columns; `meta` may be a dict).
        judgments: Judgment rows, or None for an item-only source.
        what: The source name, used in error messages.
    """
    if not items:
        raise SourceFormatError(what, "no items found in the source files")
    items_df = schema.new_items(items)
    if judgments is None:
        return Imported(items_df, None)
    judg_df = schema.new_judgments(judgments)
    keys = ["benchmark", "split", "item_id"]
    known = pd.MultiIndex.from_frame(items_df[keys])
    missing = ~pd.MultiIndex.from_frame(judg_df[keys]).isin(known)
    if missing.any():
        row = judg_df.loc[missing].iloc[0]
        raise SourceFormatError(
            what,
            f"judgment for unknown item {row['split']}/{row['item_id']} (judge {row['judge']})",
            row=int(missing.argmax()),
        )
    return Imported(items_df, judg_df)
