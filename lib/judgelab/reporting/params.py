"""Params files and overrides: find them, read them, check them against a notebook.

A run is a params file `params/<notebook>/<run>.yaml`; it may set only parameters the notebook's
`parameters` cell declares (read with `papermill.inspect_notebook`), and never a credential.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import yaml

from judgelab.core import paths, secrets, tables, yamlsafe
from judgelab.core.names import safe_name
from judgelab.errors import ParamsError as ParamsError
from judgelab.reporting import notebook_stack

NOTEBOOK_RE = re.compile(r"^\d\d_[a-z0-9_]+$")
SECRET_NAME_RE = re.compile(r"(api_?key|secret|password|passwd|token)$", re.IGNORECASE)


def list_notebooks() -> list[str]:
    """Return the stems of the committed notebooks, in order."""
    return sorted(p.stem for p in paths.notebooks().glob("*.ipynb") if NOTEBOOK_RE.match(p.stem))


def notebook_path(notebook: str) -> Path:
    """Return the path of a notebook given its stem (or path); raise if it does not exist."""
    stem = safe_name("notebook", Path(notebook).stem, where=f"notebook {notebook!r}")
    path = paths.notebooks() / f"{stem}.ipynb"
    if not path.exists():
        raise FileNotFoundError(
            f"notebook {notebook!r}: {path} does not exist (known: {', '.join(list_notebooks())})"
        )
    return path


def declared_parameters(notebook: str) -> dict[str, dict[str, Any]]:
    """Return the parameters a notebook declares (papermill.inspect_notebook)."""
    notebook_stack.prepare()
    import papermill

    return papermill.inspect_notebook(str(notebook_path(notebook)))


def params_files(notebook: str | None = None, *, run: str | None = None) -> list[Path]:
    """Return the params files `params/<nb>/<run>.yaml`, optionally filtered."""
    root = paths.params()
    nb = "*" if notebook is None else safe_name("notebook", notebook)
    pattern = f"{nb}/{'*' if run is None else safe_name('run', run)}.yaml"
    found = [p for p in root.glob(pattern) if NOTEBOOK_RE.match(p.parent.name)]
    return sorted(found, key=lambda p: (p.parent.name, p.stem))


def check_secrets(params: dict[str, Any], where: str) -> None:
    """Raise `ParamsError` when a parameter is named or valued like a credential."""
    secret_values = secrets.env_secrets()
    for key, value in params.items():
        if SECRET_NAME_RE.search(str(key)):
            raise ParamsError(
                f"{where}: key '{key}' looks like a credential; credentials come from "
                "environment variables only (name the variable, e.g. api_key_env: OPENAI_API_KEY)"
            )
        text = json.dumps(value, default=str)
        found = secrets.find(text, secret_values)
        if found:
            raise ParamsError(
                f"{where}: key '{key}' holds what looks like a secret ({found}); credentials "
                "come from environment variables only and never enter parameters"
            )


def load_params(path: str | os.PathLike[str], notebook: str | None = None) -> dict[str, Any]:
    """Read a params YAML file; check it is a mapping of keys the notebook declares."""
    p = Path(path)
    try:
        text = tables.read_utf8(p)
    except tables.NotUTF8 as exc:
        raise ParamsError(str(exc)) from None
    except OSError as exc:
        raise ParamsError(f"{p}: cannot read params file ({exc})") from None
    try:
        data = yamlsafe.load(text, source=str(p))
    except yamlsafe.YamlError as exc:
        raise ParamsError(str(exc)) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f", line {mark.line + 1}" if mark is not None else ""
        raise ParamsError(f"{p}{line}: invalid YAML ({getattr(exc, 'problem', exc)})") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ParamsError(
            f"{p}: expected a mapping of parameter names to values, got {type(data).__name__}"
        )
    # Secrets first: a credential in a params file is the error to report, declared or not.
    check_secrets(data, str(p))
    if notebook is not None:
        check_declared(data, notebook, where=str(p))
    return data


def check_declared(params: dict[str, Any], notebook: str, *, where: str) -> None:
    """Raise `ParamsError` if `params` holds a key the notebook's parameters cell lacks."""
    declared = declared_parameters(notebook)
    unknown = [k for k in params if k not in declared]
    if unknown:
        raise ParamsError(
            f"{where}: key '{unknown[0]}' is not a parameter of notebook {notebook} "
            f"(declared: {', '.join(sorted(declared))})"
        )


def parse_overrides(pairs: list[str]) -> dict[str, Any]:
    """Parse `key=value` overrides; values are read as YAML (`n=3` → 3, `x=[a, b]` → list)."""
    out: dict[str, Any] = {}
    for pair in pairs:
        if "=" not in pair:
            raise ParamsError(f"-p {pair!r}: expected key=value")
        key, value = pair.split("=", 1)
        key = key.strip()
        if not key.isidentifier():
            raise ParamsError(f"-p {pair!r}: '{key}' is not a valid parameter name")
        try:
            out[key] = yamlsafe.load(value, source=f"-p {key}") if value else ""
        except (yaml.YAMLError, yamlsafe.YamlError):  # `*.jsonl`, `&x`: kept as the string
            out[key] = value
    return out
