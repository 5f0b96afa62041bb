"""One validator for every name that becomes a path component.

A benchmark, judge, run, notebook, params file stem or source name ends up in a path such as
`data/judgments/<benchmark>/<judge>.parquet` or `figures/<notebook>/<run>/`. Names come from
mapping constants, data rows, items files, spec files, command lines and file names, so each
goes through `safe_name` before it touches the file system: `..`, `/abs`, `a/b` or a NUL never
leave (or delete) anything outside the folder it belongs in.

Allowed: ASCII letters, digits and `_ - . : + =`, at most `MAX_LENGTH` characters, and never a
name made only of dots (`.`, `..`, `...`). A name is checked, never rewritten: `jugé` is refused
(naming `é` and its code point), not stored as `jug`. `check_case` refuses a name that differs
from one already there only by case (one file on a case-insensitive disk).

`relative_path_problem` is the rule for a path that an input file gives relative to its own
folder (a registry file, a mapping's joined files): relative, no `..`; `check_inside` (links
resolved) is the rule for where it may lead.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from judgelab.errors import UnsafeNameError, short_repr

MAX_LENGTH = 200
_ALLOWED = re.compile(r"[A-Za-z0-9_.:+=-]+")
KINDS = ("benchmark", "split", "judge", "run", "notebook", "params file", "source")


def _problem(value: object) -> str | None:
    """Return why `value` cannot be a path component, None when it can."""
    if not isinstance(value, str):
        return f"must be a string, got {type(value).__name__}"
    if not value:
        return "must not be empty"
    if "\x00" in value:
        return "must not contain a NUL character"
    if "/" in value or "\\" in value or Path(value).is_absolute():
        return "must not contain a path separator or be an absolute path"
    if set(value) == {"."}:
        return "must not be made only of dots"
    if len(value) > MAX_LENGTH:
        return f"must be at most {MAX_LENGTH} characters, got {len(value)}"
    if not _ALLOWED.fullmatch(value):
        bad = sorted({c for c in value if not _ALLOWED.fullmatch(c)})
        shown = ", ".join(repr(c) if c.isascii() else f"{c!r} U+{ord(c):04X}" for c in bad)
        return f"may hold only ASCII letters, digits and '_-.:+=' (not {shown})"
    return None


def safe_name(kind: str, value: object, *, where: str | None = None) -> str:
    """Return `value` when it is safe as one path component, else raise `UnsafeNameError`.

    `kind` says what the name is (benchmark, judge, run, ...) and `where` where it came from
    (a file, a column); both appear in the message.

    >>> safe_name("benchmark", "llmbar")
    'llmbar'
    >>> safe_name("run", "..")
    Traceback (most recent call last):
    ...
    judgelab.errors.UnsafeNameError: run name '..' must not be made only of dots
    """
    problem = _problem(value)
    if problem is None:
        return str(value)
    prefix = f"{where}: " if where else ""
    raise UnsafeNameError(f"{prefix}{kind} name {short_repr(value)} {problem}")


def check_case(kind: str, value: str, existing: Iterable[str], *, where: str | None = None) -> str:
    """Return `value` unless one of `existing` differs from it only by case; else raise.

    `GPT-4` and `gpt-4` would be one file on a case-insensitive disk (and two easily
    confused tables on any other), so the second is refused, naming the first.
    """
    for other in existing:
        if other != value and other.casefold() == value.casefold():
            prefix = f"{where}: " if where else ""
            raise UnsafeNameError(
                f"{prefix}{kind} name {short_repr(value)} differs only by case from "
                f"{short_repr(other)}, which is already there; use the same spelling, or a "
                "name that differs in more than case"
            )
    return value


def relative_path_problem(value: object) -> str | None:
    """Return why `value` is not a relative path that stays in its folder, None when it is."""
    if not isinstance(value, str) or not value:
        return f"must be a non-empty relative path, got {short_repr(value)}"
    if value.startswith(("/", "\\")) or ".." in Path(value).parts or Path(value).is_absolute():
        return f"must be relative and stay inside the folder, got {short_repr(value)}"
    return None


def child(parent: Path, kind: str, value: object, *, where: str | None = None) -> Path:
    """Return `parent/<value>` after checking `value` with `safe_name`."""
    return Path(parent) / safe_name(kind, value, where=where)


def check_inside(path: Path, parent: Path) -> Path:
    """Return `path` when it lies strictly inside `parent` (links resolved), else raise.

    Used before deleting anything: a folder that resolves to `parent` itself, above it, or
    elsewhere through a link is refused.
    """
    resolved, root = Path(path).resolve(), Path(parent).resolve()
    if resolved == root or root not in resolved.parents:
        raise UnsafeNameError(f"{path} is not strictly inside {parent}; refusing to touch it")
    return path


__all__ = [
    "KINDS",
    "MAX_LENGTH",
    "check_case",
    "check_inside",
    "child",
    "relative_path_problem",
    "safe_name",
]
