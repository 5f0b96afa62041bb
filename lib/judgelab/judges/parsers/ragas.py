"""Ragas / AdminRo verdict parsers (spec 004 §2, §4): scores, rankings, faithfulness, relevance."""

from __future__ import annotations

import re

from judgelab.core.verdicts import INVALID_EMPTY, Parsed, is_empty, literal_or_json

_SCORE = re.compile(r"(?<![\d.])(10(?:\.0+)?|[0-9](?:\.\d+)?)(?![\d.])")


def score_0_10(text: str | None) -> Parsed:
    """Read the first number in [0, 10] (spec 004 §4.2); the verdict keeps its text form.

    >>> score_0_10("Score: 7/10 because ...").verdict
    '7'
    >>> score_0_10("no number").valid
    False
    """
    if is_empty(text):
        return INVALID_EMPTY
    assert text is not None
    found = _SCORE.findall(text)
    if not found:
        return Parsed(None, False, 0, "no number in [0, 10]")
    v = float(found[0])
    return Parsed(f"{v:g}", True, len(found))


_RANK = re.compile(
    r"\b(?:candidate|response|answer|context|r[ăa]spunsul|contextul|candidatul|varianta)\s*"
    r"(1|2|A|B)\b|\[\[\s*(1|2|A|B)\s*\]\]",
    flags=re.I,
)


def rank_choice(text: str | None) -> Parsed:
    """Read a comparative-ranking choice as position "A"/"B" (spec 004 §4.3).

    Accepts `[[1]]`/`[[2]]`/`[[A]]`/`[[B]]` or "Response/Answer/Context/Răspunsul/Contextul
    1/2"; a bare "1"/"2"/"A"/"B" output is accepted too. The last mention wins; conflicting
    mentions are recorded in the note.

    >>> rank_choice("Răspunsul 2 este mai complet.").verdict
    'B'
    >>> rank_choice("[[1]]").verdict
    'A'
    """
    if is_empty(text):
        return INVALID_EMPTY
    assert text is not None
    bare = text.strip().strip(".*[]() ").upper()
    if bare in ("1", "A"):
        return Parsed("A", True, 1)
    if bare in ("2", "B"):
        return Parsed("B", True, 1)
    picks = []
    for m in _RANK.finditer(text):
        tok = (m.group(1) or m.group(2)).upper()
        picks.append("A" if tok in ("1", "A") else "B")
    if not picks:
        return Parsed(None, False, 0, "no choice of candidate 1/2")
    note = f"conflicting mentions {sorted(set(picks))}; last used" if len(set(picks)) > 1 else ""
    return Parsed(picks[-1], True, len(picks), note)


def ragas_faithfulness(text: str | None) -> Parsed:
    """Read a JSON list of `{statement, verdict}` and return F = |supported| / |statements|.

    Verdicts 1/"Yes" count as supported and 0/"No" as not; any other verdict (e.g. -1,
    null) makes the output invalid (the lib turns it into NaN). An empty list is invalid
    (|S| = 0 is an open policy, spec 004 §2.4). The verdict is F with 4 decimals.

    >>> ragas_faithfulness('[{"statement": "x", "verdict": 1}, {"statement": "y", "verdict": 0}]')
    Parsed(verdict='0.5000', valid=True, n_tokens=2, note='1/2 supported')
    """
    if is_empty(text):
        return INVALID_EMPTY
    assert text is not None
    i, j = text.find("["), text.rfind("]")
    if i < 0 or j < i:
        return Parsed(None, False, 0, "no JSON list")
    value = literal_or_json(text[i : j + 1])
    if not isinstance(value, list):
        return Parsed(None, False, 0, "no JSON list")
    if not value:
        return Parsed(None, False, 0, "no statements (|S| = 0)")
    supported = 0
    for k, entry in enumerate(value):
        v = entry.get("verdict") if isinstance(entry, dict) else None
        v = str(v).strip().lower() if v is not None else ""
        if v in ("1", "yes"):
            supported += 1
        elif v not in ("0", "no"):
            return Parsed(None, False, len(value), f"statement {k} has verdict {v or None!r}")
    return Parsed(
        f"{supported / len(value):.4f}", True, len(value), f"{supported}/{len(value)} supported"
    )


def split_sentences(text: str) -> list[str]:
    """Split text into sentences at ., ! or ? followed by whitespace (a simple splitter).

    >>> split_sentences("One. Two! Three")
    ['One.', 'Two!', 'Three']
    """
    parts = re.split(r"(?<=[.!?])\s+", text.strip())
    return [p for p in parts if p.strip()]


def context_relevance(text: str | None, context: str) -> Parsed:
    """Return CR = min(#extracted sentences / #context sentences, 1) (spec 004 §2.4).

    "Insufficient Information" (or "Informații insuficiente") means 0 sentences. The
    verdict is CR with 4 decimals; an empty context is invalid.

    >>> context_relevance("A b.", "A b. C d. E f. G h.").verdict
    '0.2500'
    """
    if is_empty(text):
        return INVALID_EMPTY
    assert text is not None
    n_ctx = len(split_sentences(context or ""))
    if n_ctx == 0:
        return Parsed(None, False, 0, "empty context")
    low = text.strip().lower().rstrip(".")
    if low in ("insufficient information", "informații insuficiente", "informatii insuficiente"):
        return Parsed("0.0000", True, 1, "insufficient information")
    n_out = len(split_sentences(text))
    return Parsed(f"{min(n_out / n_ctx, 1.0):.4f}", True, 1, f"{n_out}/{n_ctx} sentences")
