"""ContextEval's contextual attributes (allenai/ContextEval `data/`) as a tidy table.

The queries themselves are imported by `judgelab.data.importers.seeds.import_contexteval`.
`contextual_attributes_qas.txt`: blocks of `* <Attribute>` followed by
`Q: <follow-up question> A: ["option", ...]`. `read_contextual_attributes` turns it into a
tidy table (one row per attribute x option).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pandas as pd

from judgelab.data.importers.base import SourceFormatError
from judgelab.data.importers.common import read_text

ATTRIBUTES_FILE = "contextual_attributes_qas.txt"
_QA = re.compile(r"^Q:\s*(?P<question>.+?)\s+A:\s*(?P<options>\[.*\])\s*$")


def parse_contextual_attributes(text: str, *, file: str = "<text>") -> pd.DataFrame:
    r"""Parse the contextual-attributes text into a tidy table.

    Args:
        text: The content of `contextual_attributes_qas.txt`.
        file: The file name used in error messages.

    Returns:
        One row per attribute x answer option: `attribute`, `question`, `option`,
        `option_index` (0-based, in the file's order).

    >>> parse_contextual_attributes('* Style\nQ: Which style? A: ["Formal", "Informal"]')
      attribute      question    option  option_index
    0     Style  Which style?    Formal             0
    1     Style  Which style?  Informal             1
    """
    rows: list[dict[str, Any]] = []
    attribute: str | None = None
    asked = True
    for lineno, line in enumerate(text.splitlines(), start=1):
        line = line.strip()
        if not line:
            continue
        if line.startswith("*"):
            if not asked:
                raise SourceFormatError(
                    file, f"attribute {attribute!r} has no Q/A line", line=lineno
                )
            attribute, asked = line.lstrip("* ").strip(), False
            continue
        m = _QA.match(line)
        if m is None or attribute is None:
            raise SourceFormatError(
                file, "expected '* Attribute' or 'Q: ... A: [...]'", line=lineno
            )
        try:
            options = json.loads(m["options"])
        except json.JSONDecodeError as exc:
            raise SourceFormatError(
                file, f"options are not a JSON list ({exc.msg})", line=lineno
            ) from None
        if not isinstance(options, list) or not all(isinstance(o, str) for o in options):
            raise SourceFormatError(file, "options must be a list of strings", line=lineno)
        rows += [
            {"attribute": attribute, "question": m["question"], "option": o, "option_index": k}
            for k, o in enumerate(options)
        ]
        asked = True
    if not asked:
        raise SourceFormatError(file, f"attribute {attribute!r} has no Q/A line")
    if not rows:
        raise SourceFormatError(file, "no attributes found")
    df = pd.DataFrame(rows)
    return df.astype(
        {"attribute": "string", "question": "string", "option": "string", "option_index": "int64"}
    )


def read_contextual_attributes(root: Path) -> pd.DataFrame:
    """Read `contextual_attributes_qas.txt` from a source folder as a tidy table."""
    return parse_contextual_attributes(
        read_text(root, ATTRIBUTES_FILE), file=str(Path(root) / ATTRIBUTES_FILE)
    )
