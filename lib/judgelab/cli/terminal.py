r"""What the command line prints: control characters escaped, storage failures as one line.

Everything `judgelab` prints goes through `escaped_output()`: server error text, file contents
quoted in an error, item ids — none of it can move the cursor, retitle the window, write the
clipboard (OSC 52) or reorder text (bidi overrides). Control characters are written as Python
escapes (`\x1b`). A carriage return that starts a write is kept: that is how a progress bar
redraws its line; anywhere else it is escaped too.

`storage_failure(exc)` turns a write that the file system refused (disk full, quota, read-only,
permission) into the one-line message every command gives.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import sqlite3
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

from judgelab.core import paths

# C0 controls but \t and \n, DEL, C1 controls, and the bidi / direction controls.
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def terminal_safe(text: str) -> str:
    r"""Return `text` with every control character escaped (newlines and tabs kept).

    >>> terminal_safe("bad \x1b]52;c;aGk=\x07 \u202eevil\r!\n")
    'bad \\x1b]52;c;aGk=\\x07 \\u202eevil\\x0d!\n'
    """
    return _UNSAFE.sub(_escape, text)


class EscapingStream:
    """A text stream that writes `terminal_safe` text to the stream it wraps."""

    def __init__(self, inner: TextIO) -> None:
        self.inner = inner

    def write(self, text: str) -> int:
        """Write `text` escaped; a leading carriage return (a progress bar redraw) is kept."""
        lead = "\r" if text.startswith("\r") else ""
        self.inner.write(lead + terminal_safe(text[len(lead) :]))
        return len(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


@contextlib.contextmanager
def escaped_output() -> Iterator[None]:
    """Route `sys.stdout` and `sys.stderr` through `EscapingStream` for the block."""
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = EscapingStream(saved[0]), EscapingStream(saved[1])  # type: ignore[assignment]
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved


_REASONS = {
    errno.ENOSPC: "disk full",
    errno.EDQUOT: "disk quota exceeded",
    errno.EROFS: "read-only file system",
    errno.EACCES: "permission denied",
    errno.EPERM: "operation not permitted",
}
_SQLITE_REASONS = (
    ("full", "disk full"),
    ("readonly", "read-only database"),
    ("unable to open", "cannot open the database file"),
    ("disk i/o error", "disk I/O error"),
)


def _disk_full(path: Path) -> bool:
    """Return whether the file system holding `path` (or its nearest parent) has no space left."""
    while not path.exists() and path != path.parent:
        path = path.parent
    try:
        return os.statvfs(path).f_bavail == 0
    except OSError:
        return False


def storage_failure(exc: BaseException) -> str | None:
    """Return the one-line message for a refused write, or None when `exc` is not one."""
    if isinstance(exc, OSError) and exc.errno in _REASONS:
        where = f" {exc.filename}" if exc.filename else f" under {paths.home()}"
        reason = _REASONS[exc.errno]
    elif isinstance(exc, sqlite3.OperationalError):
        text = str(exc).lower()
        reason = next((r for k, r in _SQLITE_REASONS if k in text), "")
        if not reason:
            return None
        where = " the request cache"
        if reason == "disk I/O error" and _disk_full(paths.cache()):
            reason = "disk full"
    else:
        return None
    return (
        f"cannot write{where}: {reason} ({exc}). Nothing was half-written: tables and caches "
        "are as they were before this write. Free space, or point JUDGELAB_HOME at a writable "
        "folder, and rerun the same command"
    )


__all__ = ["EscapingStream", "escaped_output", "storage_failure", "terminal_safe"]
