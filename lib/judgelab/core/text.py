r"""Text measures: refusal detection, lexical grounding, token-F1, ROUGE-L (pure functions).

The offline baselines (`judgelab.judges.offline`) and the analyses call these; nothing here
reads files or knows about judges.

Definitions:
- *content tokens*: lower-cased `\w+` tokens minus a short English stop-word list;
  grounding = (# response content tokens that occur in the context) / (# response content
  tokens), counting repeated tokens each time; a response with no content tokens scores 0.
- *refusal*: the text matches one of `REFUSAL_PATTERNS` (e.g. "cannot answer", "does not
  mention", "not enough information").
- *token-F1*: SQuAD F1 after SQuAD normalisation (lower case, punctuation and articles
  removed); two empty texts score 1.
- *ROUGE-L*: F-measure of the longest common subsequence over `rouge_score` default tokens
  (lower-cased `[a-z0-9]+` runs, no stemming), as `evaluate`'s default; non-ASCII letters
  are dropped by that tokenizer, exactly as in the paper's setup.
- `SIMILARITY`: the reference-similarity measures by name (`token_f1`, `rougeL`).
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Callable

REFUSAL_PATTERNS = (
    r"\b(can ?not|can't|cannot|unable to|not able to)\b.{0,40}\b(answer|determine|tell|find|"
    r"say|provide|know)\b",
    r"\b(does not|doesn't|do not|don't|did not)\b.{0,30}\b(mention|state|say|specify|"
    r"provide|contain|include|indicate)\b",
    r"\b(not enough|insufficient|no) (information|context|details|data)\b",
    r"\bi (do not|don't) know\b",
    r"\b(is|are) not (mentioned|stated|specified|provided)\b",
    r"^\s*unknown\W*$",
)
_REFUSAL = re.compile("|".join(f"(?:{p})" for p in REFUSAL_PATTERNS), flags=re.I | re.S)

STOPWORDS = frozenset(
    """a an the and or but if of to in on at by for with from as is are was were be been being
    it its this that these those there here i you he she we they me him her us them my your his
    our their what which who whom whose when where why how do does did done have has had not no
    so than too very can will just should would could may might must shall also into about over
    under again further then once all any both each few more most other some such only own same
    s t""".split()
)


def is_refusal(text: str) -> bool:
    """Return True when `text` reads as a refusal to answer.

    >>> is_refusal("The context does not mention the date, so I cannot answer.")
    True
    >>> is_refusal("The library moved in March 2019.")
    False
    """
    return bool(_REFUSAL.search(text or ""))


def content_tokens(text: str) -> list[str]:
    r"""Return lower-cased `\w+` tokens without stop words.

    >>> content_tokens("The library moved in March 2019.")
    ['library', 'moved', 'march', '2019']
    """
    return [t for t in re.findall(r"\w+", (text or "").lower()) if t not in STOPWORDS]


def grounding(response: str, context: str) -> float:
    """Return the share of the response's content tokens that occur in the context.

    >>> grounding("Library moved 2019 Paris", "The library moved in 2019.")  # 3 of 4
    0.75
    """
    toks = content_tokens(response)
    if not toks:
        return 0.0
    ctx = set(content_tokens(context))
    return sum(t in ctx for t in toks) / len(toks)


_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCTUATION = frozenset(string.punctuation)


def squad_tokens(text: str) -> list[str]:
    """Return SQuAD-normalised tokens (lower case, no punctuation, no articles).

    >>> squad_tokens("The Eiffel-Tower, in Paris!")
    ['eiffeltower', 'in', 'paris']
    """
    s = "".join(ch for ch in (text or "").lower() if ch not in _PUNCTUATION)
    return _ARTICLES.sub(" ", s).split()


def token_f1(prediction: str, reference: str) -> float:
    """Return SQuAD token-F1 between two texts.

    >>> round(token_f1("the cat sat on the mat", "a cat on a mat"), 4)  # P=3/4, R=3/3
    0.8571
    """
    pred, ref = squad_tokens(prediction), squad_tokens(reference)
    if not pred or not ref:
        return float(pred == ref)
    same = sum((Counter(pred) & Counter(ref)).values())
    if same == 0:
        return 0.0
    p, r = same / len(pred), same / len(ref)
    return 2 * p * r / (p + r)


def rouge_tokens(text: str) -> list[str]:
    """Return `rouge_score`'s default tokens: lower-cased `[a-z0-9]+` runs.

    >>> rouge_tokens("Café, 2 cats!")
    ['caf', '2', 'cats']
    """
    return re.sub(r"[^a-z0-9]+", " ", (text or "").lower()).split()


def _lcs(a: list[str], b: list[str]) -> int:
    prev = [0] * (len(b) + 1)
    for x in a:
        cur = [0]
        for j, y in enumerate(b, start=1):
            cur.append(prev[j - 1] + 1 if x == y else max(prev[j], cur[j - 1]))
        prev = cur
    return prev[-1]


def rouge_l(prediction: str, reference: str) -> float:
    """Return the ROUGE-L F-measure (LCS-based, beta = 1).

    >>> rouge_l("the cat sat on the mat", "the cat on a mat")  # LCS 4: P=4/6, R=4/5
    0.7272727272727272
    """
    pred, ref = rouge_tokens(prediction), rouge_tokens(reference)
    if not pred or not ref:
        return 0.0
    lcs = _lcs(pred, ref)
    if lcs == 0:
        return 0.0
    p, r = lcs / len(pred), lcs / len(ref)
    return 2 * p * r / (p + r)


SIMILARITY: dict[str, Callable[[str, str], float]] = {"token_f1": token_f1, "rougeL": rouge_l}


__all__ = [
    "REFUSAL_PATTERNS",
    "SIMILARITY",
    "STOPWORDS",
    "content_tokens",
    "grounding",
    "is_refusal",
    "rouge_l",
    "rouge_tokens",
    "squad_tokens",
    "token_f1",
]
