"""ContextualJudgeBench verdict parsers (spec 000 §3.5, §3.6): each judge family's repo rule."""

from __future__ import annotations

import re

from judgelab.core.verdicts import INVALID_EMPTY, Parsed, is_empty


def split_marker(text: str | None, marker: str = "**Result:**") -> Parsed:
    r"""Read the verdict after the last `marker`; it must be exactly "A" or "B" (CJB default).

    This is the repo rule `output.split('**Result:**')[-1].strip() in ('A', 'B')`: strict,
    so "**A**", "A." or "Response A" are invalid.

    >>> split_marker("**Reasoning:** ok\n\n**Result:** B")
    Parsed(verdict='B', valid=True, n_tokens=1, note='')
    >>> split_marker("**Result:** Response A").valid
    False
    """
    if is_empty(text):
        return INVALID_EMPTY
    assert text is not None
    n = text.count(marker)
    if n == 0:
        return Parsed(None, False, 0, f"no {marker!r} marker")
    tail = text.split(marker)[-1].strip()
    if tail in ("A", "B"):
        return Parsed(tail, True, n, "multiple markers, last used" if n > 1 else "")
    return Parsed(None, False, n, f"text after the last {marker!r} is not exactly A or B")


def bracket_first(text: str | None) -> Parsed:
    """Skywork-Critic / Self-taught-evaluator rule: `[[A]]` anywhere → A, else `[[B]]` → B.

    A is checked first, so an output holding both reads as A (the repo's behaviour); the
    note records it.

    >>> bracket_first("[[B]] ... on reflection [[A]]")
    Parsed(verdict='A', valid=True, n_tokens=2, note='both [[A]] and [[B]] present; A wins')
    """
    if is_empty(text):
        return INVALID_EMPTY
    assert text is not None
    has_a, has_b = "[[A]]" in text, "[[B]]" in text
    n = text.count("[[A]]") + text.count("[[B]]")
    note = "both [[A]] and [[B]] present; A wins" if has_a and has_b else ""
    if has_a:
        return Parsed("A", True, n, note)
    if has_b:
        return Parsed("B", True, n, note)
    return Parsed(None, False, 0, "no [[A]] or [[B]]")


def offsetbias(text: str | None) -> Parsed:
    """OffsetBias rule: substring `(a)` → A, else `(b)` → B.

    >>> offsetbias("Output (b)").verdict
    'B'
    """
    if is_empty(text):
        return INVALID_EMPTY
    assert text is not None
    n = text.count("(a)") + text.count("(b)")
    if "(a)" in text:
        return Parsed("A", True, n, "both (a) and (b) present; A wins" if "(b)" in text else "")
    if "(b)" in text:
        return Parsed("B", True, n)
    return Parsed(None, False, 0, "no (a) or (b)")


def prometheus(text: str | None) -> Parsed:
    """Prometheus-2 rule: the text after the last `[RESULT]` must be exactly A or B.

    >>> prometheus("Feedback: A is grounded. [RESULT] A").verdict
    'A'
    """
    return split_marker(text, "[RESULT]")


def glider(text: str | None) -> Parsed:
    """GLIDER rule: float between `<score>` and `</score>`; 0 → A, 1 → B, else invalid.

    >>> glider("<reasoning>...</reasoning><score>1</score>").verdict
    'B'
    """
    if is_empty(text):
        return INVALID_EMPTY
    assert text is not None
    m = re.search(r"<score>(.*?)</score>", text, flags=re.S)
    if not m:
        return Parsed(None, False, 0, "no <score>...</score>")
    try:
        value = float(m.group(1).strip())
    except ValueError:
        return Parsed(None, False, 1, f"score {m.group(1).strip()!r} is not a number")
    if value == 0:
        return Parsed("A", True, 1)
    if value == 1:
        return Parsed("B", True, 1)
    return Parsed(None, False, 1, f"score {value:g} is neither 0 nor 1")


def yes_no_field(text: str | None, label: str) -> str | None:
    r"""Return "yes"/"no" written after `**<label>:**` (structured prompt), else None.

    >>> yes_no_field("**Response A:** Yes\n**Response B:** no", "Response B")
    'no'
    """
    if is_empty(text):
        return None
    assert text is not None
    m = re.findall(rf"\*\*{re.escape(label)}:\*\*\s*(yes|no)\b", text, flags=re.I)
    return m[-1].lower() if m else None


def verification_decision(text: str | None) -> Parsed:
    r"""CJB §3.6 critique verification: "Yes"/"No" after the last `<decision>`.

    The repo gives the "benefit of the doubt" (verified) when both or neither word appear;
    this parser does not guess: those outputs are invalid with a note, and the analysis
    applies the repo policy explicitly. As in the repo, the test is a substring test on the
    lower-cased tail (so "not" counts as "no").

    >>> verification_decision("<explanation>: fine\n<decision>: Yes").verdict
    'Yes'
    >>> verification_decision("<decision>: yes or no").note
    'both yes and no after <decision> (repo: verified)'
    """
    if is_empty(text):
        return INVALID_EMPTY
    assert text is not None
    n = text.count("<decision>")
    tail = text.split("<decision>")[-1].lower()
    yes, no = "yes" in tail, "no" in tail
    if yes and not no:
        return Parsed("Yes", True, n)
    if no and not yes:
        return Parsed("No", True, n)
    what = "both yes and no" if yes else "neither yes nor no"
    return Parsed(None, False, n, f"{what} after <decision> (repo: verified)")
