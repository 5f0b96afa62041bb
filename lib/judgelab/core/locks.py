"""Inter-process advisory locks: the one implementation every writer of shared files uses.

A lock is an exclusive `flock` on a small hidden file beside what it guards; it dies with the
process that holds it, so a killed writer never blocks the next one. Where the platform has no
advisory locks (not POSIX), the blocks run unlocked.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Iterator
from pathlib import Path

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]


class LockBusy(Exception):
    """Raised by `file_lock(..., wait=False)` when another process holds the lock."""

    def __init__(self, path: Path, holder: str) -> None:
        super().__init__(f"{path} is held by process {holder}")
        self.path = path
        self.holder = holder


def lock_file_for(target: str | os.PathLike[str]) -> Path:
    """Return the hidden lock file that guards `target` (`.<name>.lock` beside it)."""
    t = Path(target)
    return t.with_name(f".{t.name}.lock")


@contextlib.contextmanager
def file_lock(path: str | os.PathLike[str], *, wait: bool = True) -> Iterator[None]:
    """Hold an exclusive advisory lock on the lock file `path` (created if missing).

    With `wait=False` raise `LockBusy` (naming the holder's pid) instead of waiting. The
    holder's pid is written into the file for that message.
    """
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(p, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666)
    try:
        if fcntl is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
            except BlockingIOError:
                holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip() or "unknown"
                raise LockBusy(p, holder) from None
            with contextlib.suppress(OSError):
                os.ftruncate(fd, 0)
                os.pwrite(fd, str(os.getpid()).encode(), 0)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the flock


@contextlib.contextmanager
def locked_targets(targets: Iterable[str | os.PathLike[str]]) -> Iterator[None]:
    """Hold the lock of every target file (sorted, so two holders never deadlock)."""
    locks = sorted({lock_file_for(t).resolve() for t in targets})
    with contextlib.ExitStack() as stack:
        for lock in locks:
            stack.enter_context(file_lock(lock))
        yield


__all__ = ["LockBusy", "file_lock", "lock_file_for", "locked_targets"]
