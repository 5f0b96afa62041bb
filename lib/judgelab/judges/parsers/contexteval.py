"""Contextualized Evaluations verdict parsers (spec 002): judgements, attribute filters, ratings.

`ce_judgement` lives in `judgelab.core.verdicts` (the ContextEval importer reads the released
judgements with it too) and is re-exported here.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from judgelab.core.verdicts import INVALID_EMPTY, Parsed, is_empty, literal_or_json
from judgelab.core.verdicts import ce_judgement as ce_judgement


def balanced_braces(text: str, start: int = 0) -> str | None:
    """Return the first balanced `{...}` substring at or after `start`, or None.

    >>> balanced_braces("output: {'a': {'b': 1}} trailing }")
    "{'a': {'b': 1}}"
    """
    i = text.find("{", start)
    if i < 0:
        return None
    depth = 0
    for j in range(i, len(text)):
        if text[j] == "{":
            depth += 1
        elif text[j] == "}":
            depth -= 1
            if depth == 0:
                return text[i : j + 1]
    return None


def first_dict(text: str | None) -> dict | None:
    """Return the first `{...}` in the text parsed as a Python/JSON dict, or None.

    >>> first_dict('Output: {"1": "Yes", "2": "No", "3": "Yes"}')
    {'1': 'Yes', '2': 'No', '3': 'Yes'}
    """
    if is_empty(text):
        return None
    assert text is not None
    block = balanced_braces(text)
    value = literal_or_json(block) if block else None
    return value if isinstance(value, dict) else None


def ce_attribute_filter(text: str | None) -> Parsed:
    """Read the three Yes/No answers of the attribute-relevance filter (spec 002 §4.9).

    The verdict is the canonical JSON `{"1": "Yes", "2": "No", "3": "Yes"}`; invalid unless
    all three answers are Yes or No.

    >>> ce_attribute_filter('{"1": "Yes", "2": "yes", "3": "No"}').verdict
    '{"1":"Yes","2":"Yes","3":"No"}'
    """
    d = first_dict(text)
    if d is None:
        return Parsed(None, False, 0, "no dict")
    out = {}
    for k in ("1", "2", "3"):
        v = d.get(k, d.get(int(k)))
        v = str(v).strip().capitalize() if v is not None else None
        if v not in ("Yes", "No"):
            return Parsed(None, False, 1, f"answer {k} is {v!r}, not Yes/No")
        out[k] = v
    return Parsed(json.dumps(out, separators=(",", ":")), True, 1)


def ce_relevance_by_value(text: str | None, values: Sequence[str]) -> Parsed:
    """Read one 1–5 relevance rating per attribute value (spec 002 §4.10).

    Steps: strip `*`, find `output:`, take the balanced-brace dict, parse it, match each
    expected value case- and whitespace-insensitively, accept integers 1–5 only. The verdict
    is the canonical JSON `{value: rating or null}`; it is valid only when every value got a
    rating (the note lists the values that did not, so partial outputs stay usable).

    >>> ce_relevance_by_value("**output: {'Children': {'relevance': 2}, 'Adults': "
    ...     "{'relevance': 5}}**", ["Children", "Adults"]).verdict
    '{"Children":2,"Adults":5}'
    """
    if is_empty(text):
        return INVALID_EMPTY
    assert text is not None
    s = text.replace("*", "")
    at = s.find("output:")
    block = balanced_braces(s, at if at >= 0 else 0)
    d = literal_or_json(block) if block else None
    if not isinstance(d, dict):
        return Parsed(None, False, 0, "no output dict")

    def norm(x: object) -> str:
        return " ".join(str(x).lower().split())

    by_norm = {norm(k): v for k, v in d.items()}
    ratings: dict[str, int | None] = {}
    missing = []
    for value in values:
        entry = by_norm.get(norm(value))
        rating = entry.get("relevance") if isinstance(entry, dict) else None
        try:
            r = int(str(rating).strip())
            ok = str(rating).strip() == str(r) and 1 <= r <= 5
        except (TypeError, ValueError):
            ok = False
        ratings[value] = r if ok else None
        if not ok:
            missing.append(value)
    verdict = json.dumps(ratings, separators=(",", ":"), ensure_ascii=False)
    if missing:
        return Parsed(verdict, False, len(values) - len(missing), f"no valid rating for {missing}")
    return Parsed(verdict, True, len(values))


def relevance_rating(text: str | None) -> Parsed:
    """Read `{"relevance": n}` (spec 002 §4.11): the first dict, key relevance, integer 1–5.

    >>> relevance_rating('{"relevance": 4} The response is tailored.').verdict
    '4'
    """
    d = first_dict(text)
    if d is None:
        return Parsed(None, False, 0, "no dict")
    v = d.get("relevance")
    if isinstance(v, int) and not isinstance(v, bool) and 1 <= v <= 5:
        return Parsed(str(v), True, 1)
    if isinstance(v, str) and v.strip() in {"1", "2", "3", "4", "5"}:
        return Parsed(v.strip(), True, 1)
    return Parsed(None, False, 1, f"relevance {v!r} is not an integer 1-5")


def generation(text: str | None) -> Parsed:
    """Accept any non-empty text as the verdict (generation templates, e.g. default responses).

    >>> generation("  Here is a plan.  ").verdict
    'Here is a plan.'
    """
    if is_empty(text):
        return INVALID_EMPTY
    assert text is not None
    return Parsed(text.strip(), True, 1)
