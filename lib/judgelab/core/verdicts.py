"""What a verdict parser returns (`Parsed`), and the parsing primitives shared below the judges.

`Parsed` is the one result type of every verdict parser: the judges' parsers
(`judgelab.judges.parsers`) and the importers that read released judge outputs (e.g. the
ContextEval judgements) both return it. A parser never guesses: no verdict in the expected
format gives `Parsed(verdict=None, valid=False)` and the caller keeps the raw output.
"""

from __future__ import annotations

import ast
import json
import re
from typing import NamedTuple

from judgelab.errors import check_choice

CE_MODES = ("repo_exact", "robust")


class Parsed(NamedTuple):
    """One parsed output: the verdict (None when unparseable), validity, and diagnostics.

    Attributes:
        verdict: The parsed verdict (A/B/tie for pairwise position, a label, a score...).
        valid: False when no verdict could be read; `verdict` is then None.
        n_tokens: How many verdict tokens the text contained (0 when none).
        note: Why a verdict is invalid, or a remark such as "conflicting verdict tokens".
    """

    verdict: str | None
    valid: bool
    n_tokens: int = 0
    note: str = ""


INVALID_EMPTY = Parsed(None, False, 0, "empty output")


def is_empty(text: str | None) -> bool:
    """Return True when `text` is None or only whitespace.

    >>> is_empty("  "), is_empty(None), is_empty("A")
    (True, True, False)
    """
    return text is None or not str(text).strip()


def literal_or_json(text: str) -> object:
    """Return `text` read as a Python literal, else as JSON, else as JSON with `'` for `"`.

    None when none of the three reads it.

    >>> literal_or_json("{'a': 1}"), literal_or_json('{"b": true}'), literal_or_json("{x")
    ({'a': 1}, {'b': True}, None)
    """
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError, TypeError):
        pass
    try:
        return json.loads(text)
    except ValueError:
        pass
    try:
        return json.loads(text.replace("'", '"'))
    except ValueError:
        return None


def ce_judgement(text: str | None, *, mode: str = "repo_exact") -> Parsed:
    """Read the ContextEval judgement: "Response 1", "Response 2" or "Tie" (spec 002 §2.1).

    `repo_exact` mirrors the repo: strip `*`, slice from `output: ` to the first `}`,
    `ast.literal_eval`; on failure fall back to the substring "Response 1" then "Response 2"
    anywhere in the raw text (note records the fallback). `robust` uses a regex for the dict.

    >>> ce_judgement('**output: {"judgement": "Response 2"}** It is better.').verdict
    'Response 2'
    >>> ce_judgement("I prefer Response 1.").note
    'substring_fallback'
    """
    check_choice("ce_judgement mode", mode, CE_MODES)
    if is_empty(text):
        return INVALID_EMPTY
    assert text is not None
    s = text.replace("*", "").strip()
    d: object = None
    if mode == "repo_exact":
        i = s.find("output: ") + 8
        j = s.find("}") + 1
        try:
            d = ast.literal_eval(s[i:j])
        except (ValueError, SyntaxError, MemoryError, RecursionError, TypeError):
            d = None
    else:
        m = re.search(r"output:\s*(\{[^{}]*\})", s)
        if m:
            d = literal_or_json(m.group(1))
    n = len(re.findall(r"judgement", s))
    if isinstance(d, dict) and "judgement" in d:
        v = str(d["judgement"])
        for label in ("Response 1", "Response 2", "Tie"):
            if label in v:
                return Parsed(label, True, max(n, 1), "dict")
        return Parsed(None, False, max(n, 1), f"judgement value {v!r} is not a valid label")
    if "Response 1" in text:
        return Parsed("Response 1", True, 0, "substring_fallback")
    if "Response 2" in text:
        return Parsed("Response 2", True, 0, "substring_fallback")
    return Parsed(None, False, 0, "no judgement dict and no Response 1/2 mention")


__all__ = ["CE_MODES", "INVALID_EMPTY", "Parsed", "ce_judgement", "is_empty", "literal_or_json"]
