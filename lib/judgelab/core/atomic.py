"""Atomic file writes: a temporary file beside the target, fsynced, renamed over it.

A write goes to a temporary file in the destination folder, is flushed and fsynced, then
renamed over the target with `os.replace`; a crash at any moment leaves either the old file
or the new one, never a half-written file at the target path. Standard library only, so the
modules that write small files (the data lock, run records, caches) import no table stack;
`judgelab.core.tables` re-exports these for the tables it writes.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path


def current_umask() -> int:
    """Return the process umask without changing it (read from /proc where it can be)."""
    with contextlib.suppress(OSError, ValueError):
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    mask = os.umask(0o022)  # elsewhere the only way to read it is to set it
    os.umask(mask)
    return mask


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike[str], *, suffix: str = "") -> Iterator[Path]:
    """Yield a temporary path beside `path`; on success rename it over `path`.

    On any exception the temporary file is removed and `path` is left untouched.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(
        prefix=f".{target.name}.", suffix=f".tmp{suffix}", dir=target.parent
    )
    try:  # mkstemp creates 0600; a file judgelab writes gets the mode open() would give it
        os.fchmod(fd, 0o666 & ~current_umask())
    finally:
        os.close(fd)
    tmp = Path(tmp_name)
    try:
        yield tmp
        with open(tmp, "rb+") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp, target)
        with contextlib.suppress(OSError):
            dir_fd = os.open(target.parent, os.O_RDONLY)
            try:
                os.fsync(dir_fd)
            finally:
                os.close(dir_fd)
    finally:
        if tmp.exists():
            tmp.unlink()


def write_text(path: str | os.PathLike[str], text: str) -> Path:
    """Write `text` to `path` atomically (UTF-8)."""
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return Path(path)


__all__ = ["atomic_path", "current_umask", "write_text"]
