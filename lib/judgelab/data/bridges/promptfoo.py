"""promptfoo `-o results.json` files as flat records for the generic importer.

promptfoo's output holds one result per test case, prompt and provider
(`results.results[]`), each with the grades of its assertions
(`gradingResult.componentResults[]`). Two readers:

`read` (bridge `promptfoo`): one record per *model-graded* assertion (`llm-rubric`,
`model-graded-closedqa`, `factuality`, `g-eval`, `answer-relevance`, `context-*`) of each
result: a pointwise judgment of that output.

| record key    | from the file                                                      |
|---------------|--------------------------------------------------------------------|
| `item_id`     | `<testIdx>.<promptIdx>.<provider id>`: the output graded           |
| `test`        | `testIdx`; `description`: `testCase.description`                   |
| `provider`    | `provider.id` (the model whose output is graded)                   |
| `prompt`      | `prompt.raw` (the prompt as sent); `output`: `response.output`     |
| `rubric`      | `assertion.value` (the criterion)                                  |
| `assertion`   | `assert<k>`: the assertion's position among the result's grades    |
| `grader`      | `testCase.options.provider` (its id), else `promptfoo-default`     |
| `judge`       | `<assertion type>:<grader>`                                        |
| `pass`        | the grade's `pass` (`true`/`false`); `score`, `reason` likewise    |

`read_select_best` (bridge `promptfoo-select-best`): one record per test case with a
`select-best` assertion, holding its two outputs (in the results file's order, the order
promptfoo lists them to the grader) and the one picked (the output whose `select-best`
grade passed): a pairwise judgment. A pick among more than two outputs is refused (judgelab
stores a two-way pick as a pairwise judgment; it has no k-way table).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from judgelab.data.importers.base import SourceFormatError

#: The assertion types a model grades (the rest are deterministic checks, not judgments).
MODEL_GRADED = (
    "llm-rubric",
    "model-graded-closedqa",
    "model-graded-factuality",
    "factuality",
    "g-eval",
    "answer-relevance",
    "context-faithfulness",
    "context-recall",
    "context-relevance",
)
DEFAULT_GRADER = "promptfoo-default"


def _results(path: Path) -> list[dict[str, Any]]:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise SourceFormatError(str(path), f"not a promptfoo results file ({exc})") from None
    results = (data.get("results") or {}) if isinstance(data, dict) else {}
    rows = results.get("results") if isinstance(results, dict) else None
    if not isinstance(rows, list) or not rows:
        raise SourceFormatError(
            str(path), "not a promptfoo results file (no results.results list; made with -o?)"
        )
    return rows


def _grader(result: dict[str, Any]) -> str:
    provider = ((result.get("testCase") or {}).get("options") or {}).get("provider")
    if isinstance(provider, dict):
        provider = provider.get("id")
    return str(provider) if provider else DEFAULT_GRADER


def _components(result: dict[str, Any]) -> list[dict[str, Any]]:
    return list((result.get("gradingResult") or {}).get("componentResults") or [])


def _type(component: dict[str, Any]) -> str:
    return str((component.get("assertion") or {}).get("type", ""))


def _provider(result: dict[str, Any]) -> str:
    return str((result.get("provider") or {}).get("id", ""))


def _output(result: dict[str, Any]) -> Any:
    return (result.get("response") or {}).get("output")


def read(path: Path) -> list[dict[str, Any]]:
    """One record per model-graded assertion of each result of promptfoo file `path`."""
    records = []
    for result in _results(path):
        test, prompt_idx = result.get("testIdx"), result.get("promptIdx")
        for k, component in enumerate(_components(result)):
            kind = _type(component)
            if kind not in MODEL_GRADED:
                continue
            grader = _grader(result)
            records.append(
                {
                    "item_id": f"{test}.{prompt_idx}.{_provider(result)}",
                    "test": test,
                    "description": (result.get("testCase") or {}).get("description"),
                    "provider": _provider(result),
                    "prompt": (result.get("prompt") or {}).get("raw"),
                    "output": _output(result),
                    "rubric": (component.get("assertion") or {}).get("value"),
                    "assertion": f"assert{k}",
                    "grader": grader,
                    "judge": f"{kind}:{grader}",
                    "pass": component.get("pass"),
                    "score": component.get("score"),
                    "reason": component.get("reason"),
                }
            )
    if not records:
        raise SourceFormatError(
            str(path), f"no model-graded assertion ({', '.join(MODEL_GRADED)}) in this file"
        )
    return records


def read_select_best(path: Path) -> list[dict[str, Any]]:
    """One record per `select-best` pick between two outputs of promptfoo file `path`."""
    by_test: dict[Any, list[tuple[dict[str, Any], dict[str, Any]]]] = {}
    for result in _results(path):
        for component in _components(result):
            if _type(component) == "select-best":
                by_test.setdefault(result.get("testIdx"), []).append((result, component))
    if not by_test:
        raise SourceFormatError(str(path), "no select-best assertion in this file")
    records = []
    for test, outputs in by_test.items():
        if len(outputs) != 2:
            raise SourceFormatError(
                str(path),
                f"test {test}: select-best over {len(outputs)} outputs; judgelab stores a "
                "two-way pick (a pairwise judgment) only",
            )
        (r1, c1), (r2, c2) = outputs
        picked = [i for i, c in ((1, c1), (2, c2)) if c.get("pass") is True]
        records.append(
            {
                "item_id": str(test),
                "test": test,
                "description": (r1.get("testCase") or {}).get("description"),
                "prompt": (r1.get("prompt") or {}).get("raw"),
                "output_1": _output(r1),
                "output_2": _output(r2),
                "provider_1": f"{r1.get('promptIdx')}.{_provider(r1)}",
                "provider_2": f"{r2.get('promptIdx')}.{_provider(r2)}",
                "criterion": (c1.get("assertion") or {}).get("value"),
                "grader": _grader(r1),
                "judge": f"select-best:{_grader(r1)}",
                "pick": str(picked[0]) if len(picked) == 1 else None,
                "reason": c1.get("reason") if picked == [1] else c2.get("reason"),
            }
        )
    return records


__all__ = ["DEFAULT_GRADER", "MODEL_GRADED", "read", "read_select_best"]
