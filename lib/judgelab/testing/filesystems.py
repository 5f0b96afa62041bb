"""Real file systems that refuse writes, for tests: a full disk and a read-only home.

Both are tmpfs mounts, which need root (or CAP_SYS_ADMIN); `tmpfs` yields None where the
system refuses to mount, so a test can skip with that reason.
"""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Iterator
from pathlib import Path


@contextlib.contextmanager
def tmpfs(path: Path, *, size_kb: int = 1024, read_only: bool = False) -> Iterator[Path | None]:
    """Mount a tmpfs of `size_kb` at `path` for the block; yield None if it cannot be mounted."""
    path.mkdir(parents=True, exist_ok=True)
    opts = f"size={size_kb}k" + (",ro" if read_only else "")
    try:
        done = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", opts, "tmpfs", str(path)],
            capture_output=True,
            timeout=30,
        )
    except (OSError, subprocess.SubprocessError):
        done = None
    if done is None or done.returncode != 0:
        yield None
        return
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], capture_output=True, timeout=30)


def fill(path: Path) -> None:
    """Fill the file system holding `path` until a write fails with ENOSPC."""
    with open(path / ".filler", "wb", buffering=0) as fh, contextlib.suppress(OSError):
        while True:
            fh.write(b"\0" * 4096)


__all__ = ["fill", "tmpfs"]
