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


#: A leading option label: `(B)`, `B)`, `B.`, `B:` (spec 003 §2.1.4), or the whole answer.
_LEAD = re.compile(r"^\s*\(?([A-Z])[).:]|^\W*([A-Z])\W*$")
#: An explicit cue: "answer is B", "Answer: C", "option (D)", "the correct choice is E".
_CUE = re.compile(
    r"\b(?:answer|option|choice)\b\s*(?:is|would be|=|:|-)?\s*(?:option\s+|choice\s+)?"
    r"\(?([A-Z])\)?(?![A-Za-z0-9'’-])",
    re.IGNORECASE,
)
#: A parenthesised label anywhere: "... so (B)".
_PAREN = re.compile(r"\(([A-Z])\)")
#: A standalone capital: not inside a word, a number, a contraction or an abbreviation (U.S.A.).
_STANDALONE = re.compile(r"(?<![A-Za-z0-9'’.-])([A-Z])(?![A-Za-z0-9'’-])(?!\.[A-Za-z])")
#: After the article "A", words that still make it a label ("A is correct").
_LABEL_VERBS = ("is", "was", "seems", "appears", "would", "should", "must", "fits", "matches")


def _article(text: str, m: re.Match[str]) -> bool:
    """True when a standalone "A" reads as the article (followed by a lowercase word)."""
    if m.group(1) != "A":
        return False
    nxt = re.match(r"\s+([a-z][a-z'’-]*)", text[m.end() :])
    return bool(nxt) and nxt.group(1) not in _LABEL_VERBS


def faitheval_letter(text: str | None, labels: Sequence[str]) -> str | None:
    """Return the option label a response names by letter (spec 003 §2.1.4), or None.

    In order: a leading `(B)` / `B)` / `B.` / `B:` or a bare letter; an explicit cue
    ("The answer is B.", "Answer: C", "option (D)"); a parenthesised `(B)` anywhere; then
    the first standalone capital letter. Only letters in `labels` count; a letter inside a
    word ("Bees"), a contraction, a number or an abbreviation ("U.S.A.") is no answer, nor is
    the article "A" ("A plant needs light").

    >>> [faitheval_letter(t, "ABCD") for t in ("The answer is B.", "Answer: C", "Bees", "A cat")]
    ['B', 'C', None, None]
    """
    if is_empty(text):
        return None
    assert text is not None
    wanted = set(labels)
    m = _LEAD.match(text)
    if m:
        letter = m.group(1) or m.group(2)
        if letter in wanted:
            return letter
    for pattern in (_CUE, _PAREN):
        for hit in pattern.finditer(text):
            if hit.group(1) in wanted:
                return hit.group(1)
    for hit in _STANDALONE.finditer(text):
        if hit.group(1) in wanted and not _article(text, hit):
            return hit.group(1)
    return None


def faitheval_option(
    text: str | None, options: Sequence[tuple[str, str]], *, match: str = "letter_or_text"
) -> str | None:
    """Return the option letter a multiple-choice answer names (letter first, then text).

    Letter: `faitheval_letter` (spec 003 §2.1.4: a leading `(B)`, `B)`, `B.` or `B:`, an
    explicit "answer is B" / "Answer: C", a `(B)`, else the first standalone option label).
    Text: the normalised option text inside the normalised response (the first option, in
    the given order, that matches). `match` is spec 003 §2.1.4's `cf_match`: `letter`,
    `text` or `letter_or_text` (both, letter first). None: the answer names no option
    (an *unparsed* answer).

    >>> faitheval_option("(C) the moon", [("A", "sun"), ("B", "earth"), ("C", "the moon")])
    'C'
    >>> faitheval_option("It is the Earth.", [("A", "sun"), ("B", "earth")])
    'B'
    >>> faitheval_option("The answer is B.", [("A", "sun"), ("B", "earth")])
    'B'
    """
    check_choice("match", match, MATCHES)
    if is_empty(text):
        return None
    assert text is not None
    if match != "text":
        letter = faitheval_letter(text, [lab for lab, _ in options])
        if letter is not None:
            return letter
    if match == "letter":
        return None
    norm = faitheval_normalize(text)
    for lab, opt in options:
        o = faitheval_normalize(opt)
        if o and o in norm:
            return lab
    return None
