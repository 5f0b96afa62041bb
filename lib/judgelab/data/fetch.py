"""Get a source's files onto this machine, verified: from the mirror or from the public origin.

`ensure_local(source)` returns a folder holding every registry file at its relative path:

- With `JUDGELAB_MIRROR=DIR` set, that folder is `DIR/<mirror_dir>`. Every file must exist
  and match the registry's size and sha256 (or the lock file's, see below); nothing is ever
  written into the mirror.
- Otherwise files are downloaded into `paths.benchmarks()/<name>/<path>`. Each download
  streams into `<path>.part` beside the target, resumes a partial `.part` with an HTTP Range
  request, is checked against the expected size and sha256, and only then renamed into place
  (`os.replace`). A verified file is never downloaded again. A mismatch deletes the `.part`
  and raises `ChecksumError` naming the file, the URL, and the expected and actual hashes.

Files whose sha256 is null in the registry (nobody here has seen them) are trusted on first
use: the first verified download records sha256 + size in
`paths.benchmarks()/sources.lock.json` (written atomically), and every later fetch or mirror
read must match that record. Delete the record to accept a new upstream version on purpose.

A Hugging Face token, when needed for gated data, is read only from `HF_TOKEN` and sent only
to huggingface.co (never forwarded on redirects, never logged or stored).
"""

from __future__ import annotations

import contextlib
import hashlib
import http.client
import json
import os
import socket
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from judgelab import __version__
from judgelab.core import paths, tables
from judgelab.data.sources import Source, SourceFile, file_url
from judgelab.errors import ChecksumError as ChecksumError
from judgelab.errors import FetchError as FetchError

LOCK_NAME = "sources.lock.json"
CHUNK = 1 << 20
DEFAULT_TIMEOUT = 60.0

try:  # POSIX advisory locks keep two processes from writing the same .part file.
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]


def cache_root(source: Source) -> Path:
    """Return the download cache folder of `source` (it may not exist yet)."""
    return paths.benchmarks() / source.name


def mirror_root(source: Source) -> Path | None:
    """Return the mirror folder of `source` when `JUDGELAB_MIRROR` is set, else None."""
    m = paths.mirror()
    return None if m is None else m / source.mirror_dir


def lock_path() -> Path:
    """Return the lock file that records trust-on-first-use hashes."""
    return paths.benchmarks() / LOCK_NAME


def read_lock() -> dict[str, dict[str, Any]]:
    """Return the lock records, keyed `"<source>/<path>"` -> {sha256, size, url}."""
    p = lock_path()
    if not p.exists():
        return {}
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise FetchError(f"{p}: unreadable lock file ({exc}); fix or delete it") from None
    if not isinstance(data, dict) or not isinstance(data.get("files", {}), dict):
        raise FetchError(f"{p}: lock file must be an object with a 'files' mapping")
    return dict(data.get("files", {}))


def _lock_key(source: Source, f: SourceFile) -> str:
    return f"{source.name}/{f.path}"


def expected(source: Source, f: SourceFile) -> tuple[str | None, int | None, str]:
    """Return the (sha256, size, where-from) a file must match: registry, else lock, else none."""
    if f.sha256 is not None:
        return f.sha256, f.size, "registry"
    rec = read_lock().get(_lock_key(source, f))
    if rec is not None:
        return rec.get("sha256"), rec.get("size"), f"lock file {lock_path()}"
    return None, f.size, "registry (size only)" if f.size is not None else "nothing"


_HASH_MEMO: dict[tuple[str, int, int], str] = {}


def sha256_file(path: Path) -> str:
    """Return the hex sha256 of a file (memoised per path, size and mtime in this process)."""
    st = path.stat()
    memo_key = (str(path.resolve()), st.st_size, st.st_mtime_ns)
    if memo_key in _HASH_MEMO:
        return _HASH_MEMO[memo_key]
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(CHUNK), b""):
            h.update(block)
    _HASH_MEMO[memo_key] = h.hexdigest()
    return _HASH_MEMO[memo_key]


def _check(path: Path, label: str, sha: str | None, size: int | None, where: str) -> str:
    """Verify size then sha256 of an existing file; return its sha256."""
    actual_size = path.stat().st_size
    if size is not None and actual_size != size:
        raise ChecksumError(
            f"{label}: size mismatch at {path}: expected {size} bytes ({where}), got {actual_size}"
        )
    actual = sha256_file(path)
    if sha is not None and actual != sha:
        raise ChecksumError(
            f"{label}: sha256 mismatch at {path}: expected {sha} ({where}), got {actual}"
        )
    return actual


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+b") as fh:
        if fcntl is not None:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            if fcntl is not None:
                fcntl.flock(fh.fileno(), fcntl.LOCK_UN)


def _record_lock(source: Source, f: SourceFile, sha: str, size: int, url: str) -> None:
    with _locked(lock_path().with_name(LOCK_NAME + ".lck")):
        files = read_lock()
        files[_lock_key(source, f)] = {"sha256": sha, "size": size, "url": url}
        text = json.dumps({"version": 1, "files": dict(sorted(files.items()))}, indent=2)
        tables.write_text(lock_path(), text + "\n")


def _request(url: str, *, start: int) -> urllib.request.Request:
    req = urllib.request.Request(url, headers={"User-Agent": f"judgelab/{__version__}"})
    if start > 0:
        req.add_header("Range", f"bytes={start}-")
    token = os.environ.get("HF_TOKEN")
    if token and url.startswith("https://huggingface.co/"):
        # Unredirected: the token never follows a redirect to a CDN or another host.
        req.add_unredirected_header("Authorization", f"Bearer {token}")
    return req


def _download(url: str, part: Path, *, label: str, timeout: float) -> None:
    """Stream `url` into `part`, resuming from its current size when the server allows."""
    start = part.stat().st_size if part.exists() else 0
    try:
        resp = urllib.request.urlopen(_request(url, start=start), timeout=timeout)
    except urllib.error.HTTPError as exc:
        if exc.code == 416 and start > 0:
            # The partial file is not a prefix the server can continue: start over.
            part.unlink()
            return _download(url, part, label=label, timeout=timeout)
        raise FetchError(f"{label}: HTTP {exc.code} {exc.reason} for {url}") from None
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise FetchError(f"{label}: cannot connect to {url} ({reason})") from None
    with resp:
        append = start > 0 and resp.status == 206
        if append:
            content_range = resp.headers.get("Content-Range", "")
            if not content_range.startswith(f"bytes {start}-"):
                raise FetchError(
                    f"{label}: {url} answered Range bytes={start}- with {content_range!r}"
                )
        length = resp.headers.get("Content-Length")
        announced = int(length) if length and length.isdigit() else None
        received = 0
        try:
            with open(part, "ab" if append else "wb") as out:
                while True:
                    block = resp.read(CHUNK)
                    if not block:
                        break
                    out.write(block)
                    received += len(block)
        except (http.client.IncompleteRead, socket.timeout, OSError) as exc:
            raise FetchError(
                f"{label}: download from {url} interrupted after {received} bytes ({exc}); "
                f"the partial file {part} is kept and the next fetch resumes it"
            ) from None
    if announced is not None and received < announced:
        raise FetchError(
            f"{label}: truncated body from {url}: got {received} of {announced} bytes; "
            f"the partial file {part} is kept and the next fetch resumes it"
        )


#: How a Git LFS pointer file starts: GitHub's raw URLs serve these for LFS-tracked files.
LFS_POINTER = b"version https://git-lfs.github.com/spec/"


def offline() -> bool:
    """Return True when downloads are disabled (`JUDGELAB_OFFLINE` set to a non-empty value)."""
    return os.environ.get("JUDGELAB_OFFLINE", "") not in ("", "0", "false", "no")


def _fetch_file(source: Source, f: SourceFile, root: Path, *, timeout: float) -> Path:
    label = f"source {source.name!r}, file {f.path}"
    dest = root / f.path
    url = file_url(source, f)
    sha, size, where = expected(source, f)
    if dest.exists():
        actual = _check(dest, label, sha, size, where)
        if sha is None:
            _record_lock(source, f, actual, dest.stat().st_size, url)
        return dest
    if offline():
        raise FetchError(
            f"{label}: not in the download cache and JUDGELAB_OFFLINE is set, so {url} is not "
            "fetched (point JUDGELAB_MIRROR at a staged copy, or unset JUDGELAB_OFFLINE)"
        )
    dest.parent.mkdir(parents=True, exist_ok=True)
    part = dest.with_name(dest.name + ".part")
    with _locked(dest.with_name(dest.name + ".lck")):
        if dest.exists():  # another process finished it while we waited
            return dest
        _download(url, part, label=label, timeout=timeout)
        with open(part, "rb") as fh:
            head = fh.read(len(LFS_POINTER))
        if head == LFS_POINTER:
            part.unlink(missing_ok=True)
            raise FetchError(
                f"{label}: {url} served a Git LFS pointer, not the file; point the source's "
                "origin at the LFS media URL (e.g. media.githubusercontent.com) or use a mirror"
            )
        try:
            actual = _check(part, f"{label} (downloaded from {url})", sha, size, where)
        except ChecksumError:
            part.unlink(missing_ok=True)
            raise
        os.replace(part, dest)
    if sha is None:
        _record_lock(source, f, actual, dest.stat().st_size, url)
    return dest


def _check_mirror(source: Source, root: Path) -> Path:
    if not root.is_dir():
        raise FetchError(
            f"source {source.name!r}: mirror folder {root} does not exist "
            f"(JUDGELAB_MIRROR={paths.mirror()}, mirror_dir={source.mirror_dir!r})"
        )
    for f in source.files:
        p = root / f.path
        label = f"source {source.name!r}, mirror file {f.path}"
        if not p.is_file():
            raise FetchError(f"{label}: missing from the mirror ({p})")
        sha, size, where = expected(source, f)
        _check(p, label, sha, size, where)
    return root


def ensure_local(
    source: Source,
    *,
    timeout: float = DEFAULT_TIMEOUT,
    progress: Callable[[str], None] | None = None,
) -> Path:
    """Return a folder holding every file of `source`, verified (mirror or download cache).

    Args:
        source: The registry entry.
        timeout: Seconds to wait on a connection or a read before giving up.
        progress: Called with one line per file fetched or checked (e.g. `print`).

    Raises:
        FetchError: A file is missing from the mirror, or a URL answers an HTTP error, cannot
            be reached, or sends a truncated body (the message names the file and URL).
        ChecksumError: A file's size or sha256 differs from the registry or lock record.
    """
    mroot = mirror_root(source)
    if mroot is not None:
        if progress:
            progress(f"{source.name}: checking {len(source.files)} files in mirror {mroot}")
        return _check_mirror(source, mroot)
    root = cache_root(source)
    root.mkdir(parents=True, exist_ok=True)
    for f in source.files:
        if progress:
            state = "cached" if (root / f.path).exists() else f"downloading {file_url(source, f)}"
            progress(f"{source.name}: {f.path} ({state})")
        _fetch_file(source, f, root, timeout=timeout)
    return root


def is_cached(source: Source) -> bool:
    """Return True when every file of `source` is in the download cache with its known size.

    This is a cheap check (existence and size); `ensure_local` verifies the hashes.
    """
    root = cache_root(source)
    for f in source.files:
        p = root / f.path
        if not p.is_file():
            return False
        size = f.size
        if size is None:
            size = read_lock().get(_lock_key(source, f), {}).get("size")
        if size is not None and p.stat().st_size != size:
            return False
    return bool(source.files)


def in_mirror(source: Source) -> bool:
    """Return True when `JUDGELAB_MIRROR` is set and holds every file of `source` (no hashing)."""
    root = mirror_root(source)
    return root is not None and all((root / f.path).is_file() for f in source.files)
