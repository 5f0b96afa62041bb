"""Every directory judgelab reads or writes, in one place.

Each location can be overridden by an environment variable, read at call time, so tests
and users can point outputs anywhere without touching the working tree:

| function        | variable              | default                          |
|-----------------|-----------------------|----------------------------------|
| `project()`     | `JUDGELAB_PROJECT`    | the repository holding this code |
| `home()`        | `JUDGELAB_HOME`       | `project()`                      |
| `data()`        | `JUDGELAB_DATA`       | `home()/data`                    |
| `samples()`     | `JUDGELAB_SAMPLES`    | `project()/data/samples`         |
| `items()`       | `JUDGELAB_ITEMS`      | `data()/items`                   |
| `judgments()`   | `JUDGELAB_JUDGMENTS`  | `data()/judgments`               |
| `benchmarks()`  | `JUDGELAB_BENCHMARKS` | `data()/benchmarks`              |
| `cache()`       | `JUDGELAB_CACHE`      | `data()/cache`                   |
| `figures()`     | `JUDGELAB_FIGURES`    | `home()/figures`                 |
| `reports()`     | `JUDGELAB_REPORTS`    | `home()/reports`                 |

`notebooks()` and `params()` always live in `project()`: they are code, not outputs.
"""

from __future__ import annotations

import os
from pathlib import Path

_PACKAGE_ROOT = Path(__file__).resolve().parents[3]


def _env(name: str, default: Path) -> Path:
    value = os.environ.get(name)
    return Path(value).expanduser().resolve() if value else default


def project() -> Path:
    """Return the repository root (notebooks, params, committed samples)."""
    return _env("JUDGELAB_PROJECT", _PACKAGE_ROOT)


def home() -> Path:
    """Return the root under which outputs (data, figures, reports) are written."""
    return _env("JUDGELAB_HOME", project())


def data() -> Path:
    """Return the data directory."""
    return _env("JUDGELAB_DATA", home() / "data")


def samples() -> Path:
    """Return the directory of the illustrative sample fixtures we wrote ourselves."""
    return _env("JUDGELAB_SAMPLES", project() / "data" / "samples")


def items() -> Path:
    """Return the directory of imported items tables (`<benchmark>.parquet`)."""
    return _env("JUDGELAB_ITEMS", data() / "items")


def judgments() -> Path:
    """Return the directory of judgment tables (`<benchmark>/<judge>.parquet`)."""
    return _env("JUDGELAB_JUDGMENTS", data() / "judgments")


def benchmarks() -> Path:
    """Return the directory of downloaded, checksum-verified source files."""
    return _env("JUDGELAB_BENCHMARKS", data() / "benchmarks")


def cache() -> Path:
    """Return the directory of the request cache."""
    return _env("JUDGELAB_CACHE", data() / "cache")


def figures() -> Path:
    """Return the directory of generated figures (`<notebook>/<run>/*.png|svg`)."""
    return _env("JUDGELAB_FIGURES", home() / "figures")


def reports() -> Path:
    """Return the directory of executed notebooks and their HTML."""
    return _env("JUDGELAB_REPORTS", home() / "reports")


def notebooks() -> Path:
    """Return the directory of the committed notebooks."""
    return project() / "notebooks"


def params() -> Path:
    """Return the directory of the committed parameter files."""
    return project() / "params"


def mirror() -> Path | None:
    """Return the pre-staged mirror of public sources (`JUDGELAB_MIRROR`), if set."""
    value = os.environ.get("JUDGELAB_MIRROR")
    return Path(value).expanduser().resolve() if value else None


def shown(text: str) -> str:
    """Return `text` with this machine's roots named, never spelled out (for outputs).

    The mirror becomes `$JUDGELAB_MIRROR`, the samples, data and output roots (outside the
    repository) `$JUDGELAB_SAMPLES`, `$JUDGELAB_DATA` and `$JUDGELAB_HOME`, the repository
    `.`, the user's home `~`: a shared report never holds an absolute machine path.

    >>> shown(str(project() / "notebooks" / "x.ipynb"))
    './notebooks/x.ipynb'
    """
    roots = [(mirror(), "$JUDGELAB_MIRROR"), (project(), ".")]
    roots += [
        (r, n)
        for r, n in (
            (samples(), "$JUDGELAB_SAMPLES"),
            (data(), "$JUDGELAB_DATA"),
            (home(), "$JUDGELAB_HOME"),
        )
        if not r.is_relative_to(project())
    ]
    roots.append((Path.home(), "~"))
    for root, name in sorted(
        ((r, n) for r, n in roots if r is not None), key=lambda rn: -len(str(rn[0]))
    ):
        text = text.replace(str(root), name)
    return text
