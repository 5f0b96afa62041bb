"""Inspect AI eval logs (`.eval` zip or `.json`) as flat records for the generic importer.

The log is read with `inspect_ai.log.read_eval_log` when Inspect is installed (the
`[inspect]` extra), else from its documented file format: a `.json` log is one object
(`eval`, `samples`, ...), an `.eval` log a zip holding `header.json` and one
`samples/<id>_epoch_<n>.json` per sample and epoch. Inspect compresses those members with
zstd, which Python's own zipfile reads only from 3.14 on: without Inspect, on an older
Python, an `.eval` log is refused with the way out (install the extra, or convert the log
to JSON with `inspect log convert`). Either way each sample's scores become
one record per scorer:

| record key    | from the log                                                        |
|---------------|---------------------------------------------------------------------|
| `task`        | `eval.task`                                                         |
| `model`       | `eval.model` (the model evaluated)                                  |
| `sample_id`   | `sample.id` (the item: human labels join by it)                     |
| `epoch`       | `sample.epoch` (1-based)                                            |
| `sample`      | `epoch - 1`: judgelab's 0-based repeated-sample number (the first   |
|               | epoch is sample 0, the one a report card reads)                     |
| `input`       | `sample.input` (a list of messages: the text of its user messages)  |
| `target`      | `sample.target` (a list: joined by newlines)                        |
| `answer`      | `score.answer`, else `sample.output.completion`                     |
| `response`    | `answer` when every epoch of the sample answered alike, else null   |
| `scorer`      | the scorer's name (the key of `sample.scores`)                      |
| `grader`      | the grader model: the model of the last grading message             |
|               | (`score.metadata.grading`), else the scorer's `model` option        |
| `judge`       | `<scorer>:<grader without its provider>` (the scorer alone without) |
| `value`       | `score.value` (`C`, `I`, `P`, `1.0`, ...; a dict as JSON text)    |
| `explanation` | `score.explanation` (the grader's own words)                        |

A sample that was not scored (an error, a cancelled run) gives one record whose scorer is
the log's first and whose value is null: an invalid verdict, kept. A log without samples
(written with `log_samples=False`) is refused.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

from judgelab.data.importers.base import SourceFormatError


def _load(path: Path) -> dict[str, Any]:
    """The log as the JSON object Inspect writes (`eval`, `samples`, ...)."""
    try:
        from inspect_ai.log import read_eval_log
    except ImportError:
        return _load_documented(path)
    try:
        log = read_eval_log(str(path))
    except Exception as exc:  # noqa: BLE001 - Inspect's reader raises many kinds
        raise SourceFormatError(str(path), f"not an Inspect eval log ({exc})") from None
    return log.model_dump(mode="json", exclude_none=True)


def _load_documented(path: Path) -> dict[str, Any]:
    """Read a log without Inspect: `.json` whole, `.eval` from its zip members."""
    try:
        if path.suffix.lower() == ".json":
            data = json.loads(path.read_text(encoding="utf-8"))
        elif path.suffix.lower() == ".eval":
            with zipfile.ZipFile(path) as zf:
                data = json.loads(_member(zf, "header.json", path))
                names = sorted(n for n in zf.namelist() if n.startswith("samples/"))
                samples = [json.loads(_member(zf, n, path)) for n in names]
            ids = [str(i) for i in (data["eval"].get("dataset") or {}).get("sample_ids") or []]
            rank = {sid: i for i, sid in enumerate(ids)}
            # in the order of the .json log: by epoch, then the dataset's order
            data["samples"] = sorted(
                samples, key=lambda s: (s.get("epoch", 0), rank.get(str(s.get("id")), len(ids)))
            )
        else:
            raise SourceFormatError(str(path), "an Inspect log is a .eval or .json file")
    except (zipfile.BadZipFile, KeyError, json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise SourceFormatError(str(path), f"not an Inspect eval log ({exc})") from None
    if not isinstance(data, dict) or not isinstance(data.get("eval"), dict):
        raise SourceFormatError(str(path), "not an Inspect eval log (no 'eval' header)")
    return data


def _member(zf: zipfile.ZipFile, name: str, path: Path) -> bytes:
    """A member of an `.eval` zip; Inspect compresses them with zstd (zip method 93)."""
    try:
        return zf.read(name)
    except NotImplementedError:  # zstd: Python's zipfile reads it from 3.14 on
        raise SourceFormatError(
            str(path),
            f"{name} is compressed with zstd, which this Python's zipfile cannot read: "
            "install Inspect (pip install 'judgelab[inspect]'), or convert the log to JSON "
            "(inspect log convert --to json LOG) and import the .json",
        ) from None


def _text(value: Any) -> str | None:
    """A sample's input or target as text (messages: their text content, joined)."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, list):
        parts = [_text(v.get("content") if isinstance(v, dict) else v) for v in value]
        return "\n".join(p for p in parts if p)
    if isinstance(value, dict):
        return _text(value.get("text", value.get("content")))
    return str(value)


def _value(value: Any) -> Any:
    """A score's value: as it is (`C`, `1.0`, ...), a dict or list of them as JSON text."""
    if isinstance(value, (dict, list)):
        return json.dumps(value, sort_keys=True)
    return value


def _grader(score: dict[str, Any], options: dict[str, Any]) -> str | None:
    grading = (score.get("metadata") or {}).get("grading")
    if isinstance(grading, list):
        for message in reversed(grading):
            if isinstance(message, dict) and message.get("model"):
                return str(message["model"])
    model = options.get("model")
    if isinstance(model, dict):
        model = model.get("model")
    return str(model) if isinstance(model, str) else None


def _sample(epoch: Any) -> Any:
    """The 0-based judgelab sample number of a 1-based epoch (anything else as it is)."""
    if isinstance(epoch, int) and not isinstance(epoch, bool):
        return epoch - 1
    return epoch


def _judge(scorer: str, grader: str | None) -> str:
    return scorer if not grader else f"{scorer}:{grader.split('/', 1)[-1]}"


def read(path: Path) -> list[dict[str, Any]]:
    """Return one record per sample, epoch and scorer of the Inspect log `path`."""
    log = _load(Path(path))
    header = log.get("eval") or {}
    samples = log.get("samples") or []
    if not samples:
        raise SourceFormatError(
            str(path), "the log holds no samples (was it written with log_samples=False?)"
        )
    scorers = {
        str(s.get("name")): s.get("options") or {}
        for s in header.get("scorers") or []
        if isinstance(s, dict)
    }
    answers: dict[str, set[str | None]] = {}
    records: list[dict[str, Any]] = []
    for sample in samples:
        scores = sample.get("scores") or {next(iter(scorers), "unscored"): {}}
        output = (sample.get("output") or {}).get("completion")
        for scorer, score in scores.items():
            grader = _grader(score, scorers.get(scorer, {}))
            answer = score.get("answer", output)
            sid = str(sample.get("id"))
            answers.setdefault(sid, set()).add(answer)
            records.append(
                {
                    "task": header.get("task"),
                    "model": header.get("model"),
                    "sample_id": sid,
                    "epoch": sample.get("epoch"),
                    "sample": _sample(sample.get("epoch")),
                    "input": _text(sample.get("input")),
                    "target": _text(sample.get("target")),
                    "answer": answer,
                    "scorer": scorer,
                    "grader": grader,
                    "judge": _judge(scorer, grader),
                    "value": _value(score.get("value")),
                    "explanation": score.get("explanation"),
                }
            )
    for rec in records:
        alike = len(answers[rec["sample_id"]]) == 1
        rec["response"] = rec["answer"] if alike else None
    return records


__all__ = ["read"]
