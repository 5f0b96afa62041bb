"""Text lengths in a named unit: the only place judgelab measures length.

Units:
- `words` (default): whitespace-separated tokens, `len(text.split())`.
- `chars`: Unicode code points.
- `tiktoken:<encoding>` (e.g. `tiktoken:cl100k_base`): BPE tokens, when the `tiktoken`
  package and that encoding are available offline; otherwise `LengthUnitError` says why.

Every length column carries its unit (`len_unit`) so that units are never silently mixed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from judgelab.errors import LengthUnitError as LengthUnitError

if TYPE_CHECKING:  # loaded on first use: the judge path checks units without them
    import numpy as np
    import pandas as pd

DEFAULT_UNIT = "words"
LENGTH_COLUMNS = {
    "question": "len_question",
    "context": "len_context",
    "response_pos": "len_pos",
    "response_neg": "len_neg",
    "response": "len_response",
}


@lru_cache(maxsize=8)
def _counter(unit: str) -> Callable[[str], int]:
    if unit == "words":
        return lambda text: len(text.split())
    if unit == "chars":
        return len
    if unit.startswith("tiktoken:"):
        name = unit.split(":", 1)[1]
        try:
            import tiktoken
        except ImportError:
            raise LengthUnitError(
                f"length unit {unit!r} needs the `tiktoken` package (pip install tiktoken); "
                "use unit='words' otherwise"
            ) from None
        try:
            enc = tiktoken.get_encoding(name)
        except Exception as exc:  # network errors, unknown encodings
            raise LengthUnitError(
                f"length unit {unit!r}: encoding {name!r} is not available offline ({exc}); "
                "pre-fetch it into TIKTOKEN_CACHE_DIR or use unit='words'"
            ) from None
        return lambda text: len(enc.encode(text, disallowed_special=()))
    raise LengthUnitError(
        f"unknown length unit {unit!r}; expected 'words', 'chars' or 'tiktoken:<encoding>'"
    )


def count(text: str | None, unit: str = DEFAULT_UNIT) -> float:
    """Return the length of one text in `unit` (NaN for a missing text).

    >>> count("The book was published first.")
    5.0
    """
    return float(_counter(unit)(text)) if isinstance(text, str) else float("nan")


def counts(texts: Iterable[str | None], unit: str = DEFAULT_UNIT) -> np.ndarray:
    """Return the lengths of many texts in `unit` as a float array (NaN for missing).

    Each distinct text is counted once (a large items table repeats its questions and
    contexts; hashing 10^6 texts costs a fraction of counting them one by one).
    """
    import numpy as np
    import pandas as pd

    fn = _counter(unit)
    if isinstance(texts, pd.Series):  # as it is (an Arrow-backed text column: no object copy)
        values: Any = texts
    else:
        values = np.asarray(texts if hasattr(texts, "__len__") else list(texts), dtype=object)
    codes, distinct = pd.factorize(values)  # missing texts: code -1
    each = [float(fn(t)) if isinstance(t, str) else float("nan") for t in distinct]
    return np.append(np.asarray(each, dtype="float64"), np.nan)[codes]


def add_lengths(items: pd.DataFrame, *, unit: str = DEFAULT_UNIT) -> pd.DataFrame:
    """Return a copy of an items table with `len_question/context/pos/neg/response`, `len_unit`.

    Args:
        items: An items table (uses whichever of `question`, `context`, `response_pos`,
            `response_neg`, `response` it has; missing texts give NaN lengths).
        unit: The length unit (see module docstring).
    """
    if "len_unit" in items.columns:
        have = set(items["len_unit"].dropna().unique())
        if have and have != {unit}:
            raise LengthUnitError(
                f"items already carry lengths in {sorted(have)}; refusing to mix with {unit!r}"
            )
    out = items.copy(deep=False)  # copy-on-write: the texts are shared, not copied
    for text_col, len_col in LENGTH_COLUMNS.items():
        if text_col in out.columns:
            out[len_col] = counts(out[text_col], unit)
    out["len_unit"] = unit
    return out
