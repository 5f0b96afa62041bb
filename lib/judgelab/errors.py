"""Every public judgelab error, in one module below all others.

Each error subclasses `JudgelabError` *and* the builtin it has always been (a `SchemaError` is
still a `ValueError`), so `except ValueError` keeps working and `except JudgelabError` catches
everything judgelab raises on purpose. Messages clip long values: a 10 MB cell never becomes a
10 MB message.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

MESSAGE_LIMIT = 2000
VALUE_LIMIT = 80


def short_repr(value: Any, limit: int = VALUE_LIMIT) -> str:
    """Return `repr(value)`, its middle elided when longer than `limit` characters.

    Error messages show offending values; a 10 MB cell must not become a 10 MB message.

    >>> short_repr("x" * 1000, limit=20)
    "'xxxxxxxxx…[1002 chars]…xxxx'"
    """
    text = repr(value)
    if len(text) <= limit:
        return text
    return f"{text[: limit // 2]}…[{len(text)} chars]…{text[-(limit // 4) :]}"


def clip(message: str, limit: int = MESSAGE_LIMIT) -> str:
    """Return `message` with its middle elided when longer than `limit` characters.

    >>> clip("a" * 30 + "b" * 30, limit=20)
    'aaaaaaaaaa…[60 chars]…bbbbb'
    """
    if len(message) <= limit:
        return message
    return f"{message[: limit // 2]}…[{len(message)} chars]…{message[-(limit // 4) :]}"


class JudgelabError(Exception):
    """Base class of every error judgelab raises on purpose."""


class ChoiceError(JudgelabError, ValueError):
    """An argument is not one of its allowed values; the message names it and the options."""


def check_choice(name: str, value: Any, options: Collection[Any]) -> Any:
    """Return `value` when it is one of `options`, else raise `ChoiceError` naming both.

    >>> check_choice("unit", "words", ("words", "chars"))
    'words'
    >>> check_choice("unit", "bytes", ("words", "chars"))
    Traceback (most recent call last):
    ...
    judgelab.errors.ChoiceError: unit must be one of ('words', 'chars'), got 'bytes'
    """
    if value not in options:
        shown = tuple(options) if not isinstance(options, tuple) else options
        raise ChoiceError(f"{name} must be one of {shown}, got {short_repr(value)}")
    return value


class SchemaError(JudgelabError, ValueError):
    """A table violates its schema; the message names table, file, column, row and key."""

    def __init__(
        self,
        table: str,
        problem: str,
        *,
        column: str | None = None,
        row: int | None = None,
        key: dict[str, Any] | None = None,
        expected: str | None = None,
        source: str | None = None,
    ):
        self.table, self.column, self.row, self.key = table, column, row, key
        self.expected, self.source, self.problem = expected, source, problem
        where = [f"{table} table"]
        if source:
            where.append(f"file {source}")
        if column is not None:
            where.append(f"column '{clip(str(column), 200)}'")
        if row is not None:
            where.append(f"row {row}")
        if key:
            where.append("key " + ", ".join(f"{k}={short_repr(v)}" for k, v in key.items()))
        msg = ", ".join(where) + f": {clip(problem)}"
        if expected:
            msg += f" (expected {clip(expected)})"
        super().__init__(msg)


class TableError(JudgelabError, ValueError):
    """A file could not be read as a table; the message names the file and the place."""


class NotUTF8(TableError):
    """A text file is not UTF-8; carries the file, the 1-based line and the problem."""

    def __init__(self, file: str, problem: str, line: int):
        self.file, self.problem, self.line = file, problem, line
        super().__init__(f"{file}, line {line}: {problem}")


class JsonlError(TableError):
    """A JSON-lines text is malformed; carries the file, the 1-based line and the problem."""

    def __init__(self, file: str, problem: str, line: int | None = None):
        self.file, self.problem, self.line = file, problem, line
        where = f"{file}, line {line}" if line is not None else str(file)
        super().__init__(f"{where}: {problem}")


class LengthUnitError(JudgelabError, ValueError):
    """A length unit is unknown or cannot be used on this machine."""


class RegistryError(JudgelabError, ValueError):
    """A registry YAML is malformed; the message names the file and the key."""


class UnknownSourceError(JudgelabError, LookupError):
    """No registry entry has this name; the message lists the known names."""


class FetchError(JudgelabError, RuntimeError):
    """A file could not be obtained (HTTP error, connection error, missing mirror file)."""


class ChecksumError(FetchError):
    """A file's content does not match its recorded sha256 or size."""


class SourceNotFound(JudgelabError, LookupError):
    """A named table does not exist; the message says where it was looked for."""


class TargetError(JudgelabError, ValueError):
    """A target file or a comparison is malformed; the message names the file and row."""


class SourceFormatError(JudgelabError, ValueError):
    """A source file does not have the expected shape; names file, line/row and column."""

    def __init__(
        self,
        file: str,
        problem: str,
        *,
        line: int | None = None,
        row: int | None = None,
        column: str | None = None,
    ):
        self.file, self.line, self.row, self.column = file, line, row, column
        parts = [str(file)]
        if line is not None:
            parts.append(f"line {line}")
        if row is not None:
            parts.append(f"row {row}")
        if column is not None:
            parts.append(f"column '{clip(str(column), 200)}'")
        super().__init__(", ".join(parts) + f": {clip(problem)}")


class JudgeSpecError(JudgelabError, ValueError):
    """A judge spec is malformed; the message names the file (if any) and the key."""

    def __init__(self, problem: str, *, source: str | None = None, key: str | None = None):
        self.problem, self.source, self.key = problem, source, key
        where = [source or "judge spec"]
        if key is not None:
            where.append(f"key '{clip(str(key), 200)}'")
        super().__init__(", ".join(where) + f": {clip(problem)}")


class NotApplicable(JudgelabError, ValueError):
    """A template cannot build a prompt for this item/condition (e.g. it has no reference)."""


class OfflineNotApplicable(JudgelabError, ValueError):
    """An offline baseline does not apply to a benchmark; the message says why."""


class RetryableError(JudgelabError):
    """A failure worth retrying; `reason` is its counter name, `wait_s` the server's wish."""

    def __init__(self, reason: str, message: str, wait_s: float | None = None):
        super().__init__(message)
        self.reason, self.wait_s = reason, wait_s


class FatalError(JudgelabError):
    """The endpoint refuses the credentials (401/403): no request of the run can succeed."""


class RequestError(JudgelabError, RuntimeError):
    """The endpoint rejects this request (a 4xx other than 401/403/408/409/429)."""


class JudgeRunError(JudgelabError, RuntimeError):
    """A run cannot continue (e.g. the endpoint rejects the key); finished work is kept."""


class ParamsError(JudgelabError, ValueError):
    """A params file or override is malformed or names a key the notebook does not declare."""

    def __init__(self, message: str):
        super().__init__(clip(message))


class UnsafeNameError(JudgelabError, ValueError):
    """A name that becomes a path component (benchmark, judge, run, ...) is not safe as one."""

    def __init__(self, message: str):
        super().__init__(clip(message))


# --- issue 19 (items 10, 19): YAML aliases and oversized lines -------------------------------
class YamlError(JudgelabError, ValueError):
    """A YAML file is refused before it is built (aliases/anchors); names the file and line."""

    def __init__(self, file: str, problem: str, line: int | None = None):
        self.file, self.problem, self.line = file, problem, line
        where = f"{file}, line {line}" if line is not None else str(file)
        super().__init__(f"{where}: {clip(problem)}")


class LineTooLong(JsonlError):
    """A JSON-lines record is longer than the per-line limit (`JUDGELAB_MAX_LINE_BYTES`)."""


# --- issue 19 (item 13): one run of a notebook at a time --------------------------------------
class RunInProgress(JudgelabError, RuntimeError):
    """Another process is running the same notebook under the same run name."""


class BatchFormatError(JudgelabError, ValueError):
    """A batch file line that cannot be read (names the file and line)."""

    def __init__(self, file: str, line: int, problem: str):
        self.file, self.line, self.problem = file, line, problem
        super().__init__(f"{file}, line {line}: {problem}")
