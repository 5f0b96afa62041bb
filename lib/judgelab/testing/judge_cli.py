"""A judge spec for the loopback test server and the `judgelab judge` command line, for tests."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import yaml


def loopback_spec_dict(
    base_url: str,
    *,
    api_key_env: str,
    model: str = "test-model",
    template: str = "cjb.workflow",
    **keys: Any,
) -> dict[str, Any]:
    """Return a remote judge spec (as a dict) aimed at `base_url`; `keys` are further keys."""
    return {
        "endpoint": "openai-compatible",
        "model": model,
        "base_url": base_url,
        "api_key_env": api_key_env,
        "template": template,
        **keys,
    }


def write_loopback_spec(
    path: Path,
    base_url: str,
    *,
    api_key_env: str,
    model: str = "test-model",
    template: str = "cjb.workflow",
    **keys: Any,
) -> Path:
    """Write a remote judge spec aimed at `base_url` (a test server) and return its path.

    `keys` are further spec keys (`concurrency`, `timeout_s`, ...); the key itself is never
    written, only the name of the variable that holds it.
    """
    spec = loopback_spec_dict(
        base_url, api_key_env=api_key_env, model=model, template=template, **keys
    )
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    return path


def judge_command(spec_file: Path, *args: str) -> list[str]:
    """Return the argv of `python -m judgelab.cli.judge --judge SPEC ARGS...`."""
    return [sys.executable, "-m", "judgelab.cli.judge", "--judge", str(spec_file), *args]
