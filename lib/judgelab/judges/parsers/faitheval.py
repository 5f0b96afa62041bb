"""FaithEval answer matching (spec 003 §2.1): normalisation, refusal phrases, option letters."""

from __future__ import annotations

import re
import string
from collections.abc import Sequence

from judgelab.core.verdicts import is_empty
from judgelab.errors import check_choice

FAITHEVAL_PHRASES = {
    ("unknown", "strict"): ("unknown",),
    ("unknown", "nonstrict"): ("unknown", "no answer", "no information", "not", "unclear"),
    ("conflict", "strict"): ("conflict",),
    ("conflict", "nonstrict"): (
        "conflict",
        "conflicting",
        "disagreement",
        "inconsistent",
        "contradictory",
        "contradiction",
        "inconsistency",
        "two answers",
        "2 answers",
        "multiple answers",
    ),
}
MATCHES = ("letter", "text", "letter_or_text")
_PUNCT = set(string.punctuation + "‘’´`")


def faitheval_normalize(text: str) -> str:
    """Normalise an answer as the FaithEval repo does (underscores, case, punct, articles).

    >>> faitheval_normalize("The answer_is: UNKNOWN!")
    'answer is unknown'
    """
    s = text.replace("_", " ").lower()
    s = "".join(" " if ch in _PUNCT else ch for ch in s)
    s = re.sub(r"\b(a|an|the)\b", " ", s)
    return " ".join(s.split()).strip()


def faitheval_phrase(text: str | None, label: str, *, mode: str) -> str | None:
    """Return the first valid phrase for `label` ("unknown"/"conflict") found, or None.

    This is the paper's substring test on the normalised response, so in non-strict mode
    "cannot" matches "not" (spec 003 §2.1.2).

    >>> faitheval_phrase("I cannot tell.", "unknown", mode="nonstrict")
    'not'
    >>> faitheval_phrase("I cannot tell.", "unknown", mode="strict") is None
    True
    """
    if is_empty(text):
        return None
    assert text is not None
    norm = faitheval_normalize(text)
    for phrase in FAITHEVAL_PHRASES[(label, mode)]:
        if phrase in norm:
            return phrase
    return None


def faitheval_option(
    text: str | None, options: Sequence[tuple[str, str]], *, match: str = "letter_or_text"
) -> str | None:
    """Return the option letter a multiple-choice answer names (letter first, then text).

    Letter: a leading `(B)`, `B)`, `B.` or `B:`, or a standalone capital letter among the
    option labels. Text: the normalised option text inside the normalised response (the
    first option, in the given order, that matches). `match` is spec 003 §2.1.4's
    `cf_match`: `letter`, `text` or `letter_or_text` (both, letter first).

    >>> faitheval_option("(C) the moon", [("A", "sun"), ("B", "earth"), ("C", "the moon")])
    'C'
    >>> faitheval_option("It is the Earth.", [("A", "sun"), ("B", "earth")])
    'B'
    """
    check_choice("match", match, MATCHES)
    if is_empty(text):
        return None
    assert text is not None
    labels = [lab for lab, _ in options]
    if match != "text":
        m = re.match(r"^\s*\(?([A-Z])[).:]", text)
        if m and m.group(1) in labels:
            return m.group(1)
        m = re.search(r"(?<![A-Za-z])([A-Z])(?![A-Za-z])", text)
        if m and m.group(1) in labels and len(text.strip()) <= 3:
            return m.group(1)
    if match == "letter":
        return None
    norm = faitheval_normalize(text)
    for lab, opt in options:
        o = faitheval_normalize(opt)
        if o and o in norm:
            return lab
    return None
