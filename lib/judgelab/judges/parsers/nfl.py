"""No Free Labels verdict parsers (§3.6): `[[Correct]]`/`[[Incorrect]]` and `[[A]]`/`[[B]]`."""

from __future__ import annotations

import re

from judgelab.core.verdicts import INVALID_EMPTY, Parsed, is_empty
from judgelab.judges.parsers.cjb import bracket_first

_NFL_SINGLE = re.compile(r"\[\[\s*(Correct|Incorrect)\s*\]\]", flags=re.I)
_NFL_PAIR = re.compile(r"\[\[\s*([AB])\s*\]\]")


def _last_or_first(matches: list[str], rule: str, what: str) -> Parsed:
    if not matches:
        return Parsed(None, False, 0, f"no {what} verdict token")
    distinct = sorted(set(matches))
    note = f"{len(matches)} verdict tokens, conflicting {distinct}" if len(distinct) > 1 else ""
    if not note and len(matches) > 1:
        note = f"{len(matches)} identical verdict tokens"
    pick = matches[-1] if rule == "last" else matches[0]
    return Parsed(pick, True, len(matches), note)


def nfl_single(text: str | None, *, rule: str = "last") -> Parsed:
    """Read `[[Correct]]` / `[[Incorrect]]` (case-insensitive); the last match wins.

    `rule="first"` takes the first match instead (a sensitivity check). The substring
    "correct" is never tested on its own, since "Incorrect" contains it.

    >>> nfl_single("Not [[Correct]]; on reflection [[incorrect]]")
    Parsed(verdict='Incorrect', valid=True, n_tokens=2, note="2 verdict tokens, conflicting ['Correct', 'Incorrect']")
    """  # noqa: E501
    if is_empty(text):
        return INVALID_EMPTY
    assert text is not None
    matches = [m.capitalize() for m in _NFL_SINGLE.findall(text)]
    return _last_or_first(matches, rule, "[[Correct]]/[[Incorrect]]")


def nfl_pairwise(text: str | None, *, rule: str = "last") -> Parsed:
    """Read `[[A]]` / `[[B]]`; the last match wins (`rule="first_fastchat"`: A if present).

    >>> nfl_pairwise("[[A]] was tempting, but [[B]]").verdict
    'B'
    >>> nfl_pairwise("[[B]] then [[A]]", rule="first_fastchat").verdict
    'A'
    """
    if is_empty(text):
        return INVALID_EMPTY
    assert text is not None
    if rule == "first_fastchat":
        return bracket_first(text)
    return _last_or_first(_NFL_PAIR.findall(text), rule, "[[A]]/[[B]]")
