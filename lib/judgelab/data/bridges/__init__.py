"""Bridges: the logs of Inspect AI, promptfoo and lm-evaluation-harness, imported as they are.

`judgelab data import-file LOG --from inspect|promptfoo|lm-eval` imports a tool's own log
with a named mapping shipped with judgelab (`resources/bridges/<tool>.yaml`), read by the
generic importer (`judgelab.data.importers.mapping`): one engine, one table writer. These
logs are not tables a mapping can read directly (a zip of samples, one record per test
case holding every assertion, a metric named after the task), so the mapping's key
`reader: <tool>` has the tool's converter here turn each file into flat records first;
every field of the tables is then read by the mapping, as for any other file.

- `inspect_log`: one record per sample, epoch and scorer of an Inspect eval log;
- `promptfoo`: one record per model-graded assertion of a promptfoo `-o results.json`,
  and one per `select-best` choice;
- `lm_eval`: one record per document and metric of an lm-eval `--log_samples` file.

A user adds keys to (or overrides keys of) the shipped mapping with `--mapping`, e.g. to
join human labels by the tool's sample id (docs/importing.md, sections 15-17).
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

from judgelab.data.bridges import inspect_log, lm_eval, promptfoo

#: The converter of each bridge: a file's path -> its flat records.
READERS: dict[str, Callable[[Path], list[dict[str, Any]]]] = {
    "inspect": inspect_log.read,
    "promptfoo": promptfoo.read,
    "promptfoo-select-best": promptfoo.read_select_best,
    "lm-eval": lm_eval.read,
}


def mapping_path(name: str) -> Path:
    """Return the shipped mapping YAML of bridge `name` (one of `READERS`)."""
    return Path(str(resources.files("judgelab") / "resources" / "bridges" / f"{name}.yaml"))


def read(name: str, path: Path) -> list[dict[str, Any]]:
    """Return the flat records bridge `name` reads from the tool's log `path`."""
    return READERS[name](path)


__all__ = ["READERS", "mapping_path", "read"]
