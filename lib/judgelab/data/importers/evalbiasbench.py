"""EvalBiasBench (ncsoft/offsetbias `biasbench.json`): bias-targeted pairs, items only.

The file is a JSON object of lists keyed by bias type ("length bias", "concreteness",
...); each record has `bias`, `instruction`, `response1`, `response2` and `label` ("1"/"2",
the better response). split = the bias type in snake_case, item_id = the index within
its list, response_pos = the labelled response, gold "pos".
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from judgelab.data.importers.base import Imported, SourceFormatError
from judgelab.data.importers.common import assemble, field, read_json, source_files


def split_name(bias: str) -> str:
    """Return a bias type as a split name.

    >>> split_name("familiar knowledge preference bias")
    'familiar_knowledge_preference_bias'
    """
    return re.sub(r"[^a-z0-9]+", "_", bias.lower()).strip("_")


def import_evalbiasbench(root: Path, source: Any) -> Imported:
    """Import EvalBiasBench's pairs as pairwise items with gold (no judgments)."""
    root = Path(root)
    items: list[dict[str, Any]] = []
    for path in source_files(source, "*.json"):
        file = root / path
        data = read_json(root, path)
        if not isinstance(data, dict):
            raise SourceFormatError(str(file), "expected a JSON object of lists by bias type")
        for bias, records in data.items():
            if not isinstance(records, list):
                raise SourceFormatError(str(file), "expected a list of records", column=bias)
            for i, rec in enumerate(records):
                label = str(field(rec, "label", file=file, row=i, kinds=(str, int)))
                if label not in ("1", "2"):
                    raise SourceFormatError(
                        str(file),
                        f"label {label!r} is not 1 or 2 (list {bias!r})",
                        row=i,
                        column="label",
                    )
                other = "2" if label == "1" else "1"
                items.append(
                    {
                        "benchmark": source.name,
                        "split": split_name(bias),
                        "item_id": str(i),
                        "task": "pairwise",
                        "question": field(rec, "instruction", file=file, row=i, kinds=(str,)),
                        "context": None,
                        "response_pos": field(
                            rec, f"response{label}", file=file, row=i, kinds=(str,)
                        ),
                        "response_neg": field(
                            rec, f"response{other}", file=file, row=i, kinds=(str,)
                        ),
                        "response": None,
                        "reference": None,
                        "gold": "pos",
                        "meta": {
                            "bias": rec.get("bias", bias),
                            "label": int(label),
                            "pos_slot": f"response{label}",
                        },
                    }
                )
    return assemble(items, None, what=source.name)
