r"""lm-evaluation-harness `--log_samples` files as flat records for the generic importer.

`lm_eval ... --log_samples --output_path OUT` writes, per task, a JSONL file
`samples_<task>_<timestamp>.jsonl`: one line per document with `doc_id`, `doc`, `target`,
`arguments` (the prompt sent), `resps` / `filtered_resps` (the model's answers), `filter`,
`metrics` (the names of the metric fields) and one field per metric. The metric a judge
gives (a task whose `process_results` asks a grader model) is named after the task, so
the reader turns every line into one record per metric:

| record key  | from the line                                                          |
|-------------|------------------------------------------------------------------------|
| `task`      | the file name's `<task>` (`samples_<task>_<timestamp>.jsonl`)         |
| `doc_id`    | `doc_id` (the item: human labels join by it)                          |
| `prompt`    | the first argument of `arguments` (chat messages: their contents)     |
| `response`  | `filtered_resps[0]` (the answer the metric saw; nested lists unwrapped) |
| `target`    | `target`                                                               |
| `filter`    | `filter` (the answer filter; `none` by default)                       |
| `metric`    | each name in `metrics`; `value` its field (`1.0`, `0.0`, ...)          |
| `judge`     | `<metric>` (`<metric>.<filter>` when the filter is not `none`)        |

The model evaluated is read from the `results_*.json` beside the file when there is one
(`model_name`, else `config.model`), else null.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from judgelab.core import tables
from judgelab.data.importers.base import SourceFormatError

NAME = re.compile(r"^samples_(?P<task>.+)_\d{4}-\d{2}-\d{2}T[\d\-.]+\.jsonl$")


def _first(value: Any) -> Any:
    while isinstance(value, list) and value:
        value = value[0]
    return None if isinstance(value, list) else value


def _prompt(arguments: Any) -> Any:
    """The prompt sent: the first argument (chat messages as JSON text: their contents)."""
    if isinstance(arguments, dict) and arguments:
        first = next(iter(arguments.values()))
        arguments = first.get("arg_0") if isinstance(first, dict) else first
    prompt = _first(arguments)
    if isinstance(prompt, str) and prompt[:1] == "[":
        try:
            messages = json.loads(prompt)
        except ValueError:
            return prompt
        if isinstance(messages, list) and all(isinstance(m, dict) for m in messages):
            return "\n".join(str(m.get("content", "")) for m in messages)
    return prompt


def _model(path: Path) -> str | None:
    for results in sorted(path.parent.glob("results_*.json"), reverse=True):
        try:
            data = json.loads(results.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        name = data.get("model_name") or (data.get("config") or {}).get("model")
        if name:
            return str(name)
    return None


def read(path: Path) -> list[dict[str, Any]]:
    """One record per document and metric of the lm-eval samples file `path`."""
    path = Path(path)
    m = NAME.match(path.name)
    if m is None:
        raise SourceFormatError(
            str(path), "an lm-eval samples file is named samples_<task>_<timestamp>.jsonl"
        )
    try:
        parsed = tables.parse_jsonl(tables.read_utf8(path), source=str(path))
    except (tables.JsonlError, tables.NotUTF8) as exc:
        raise SourceFormatError(exc.file, exc.problem, line=exc.line) from None
    model = _model(path)
    records = []
    for line, doc in parsed:
        names = doc.get("metrics")
        if "doc_id" not in doc or not isinstance(names, list):
            raise SourceFormatError(
                str(path), "not an lm-eval --log_samples line (no doc_id / metrics)", line=line
            )
        flt = str(doc.get("filter", "none"))
        for metric in names:
            value = doc.get(metric)
            records.append(
                {
                    "task": m["task"],
                    "model": model,
                    "doc_id": doc["doc_id"],
                    "prompt": _prompt(doc.get("arguments")),
                    "response": _first(doc.get("filtered_resps")),
                    "target": None if doc.get("target") is None else str(doc["target"]),
                    "filter": flt,
                    "metric": metric,
                    "judge": metric if flt == "none" else f"{metric}.{flt}",
                    "value": value,
                }
            )
    return records


__all__ = ["read"]
