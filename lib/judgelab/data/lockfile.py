"""The lock file `paths.benchmarks()/sources.lock.json` and the checks files must pass.

The lock records what was trusted on first use, so every later fetch or mirror read gets the
same bytes::

    {
      "version": 1,
      "files": {"<source>/<registry path>": {"sha256": "...", "size": 123, "url": "...",
                                             "resolved": "...", "commit": "..."}},
      "sources": {"<source>": {"repo": "org/name", "revision": "main", "sha": "<40 hex>"}}
    }

`files` holds one record per file whose sha256 the registry does not give (`resolved` and
`commit` only for Hugging Face files: the name a glob resolved to, and the commit it came
from). `sources` pins each Hugging Face source's revision to a commit. The file is rewritten
whole and atomically, under an advisory lock, so concurrent fetches never lose a record.
Delete a record (or the whole file) to accept a new upstream version on purpose.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from judgelab.core import atomic, locks, paths
from judgelab.data.sources import Source, SourceFile
from judgelab.errors import ChecksumError, FetchError

LOCK_NAME = "sources.lock.json"
CHUNK = 1 << 20

Records = dict[str, dict[str, Any]]


def lock_path() -> Path:
    """Return the lock file that records trust-on-first-use hashes and pinned commits."""
    return paths.benchmarks() / LOCK_NAME


def read_doc() -> dict[str, Records]:
    """Return the lock's `files` and `sources` mappings (empty when there is no lock file)."""
    p = lock_path()
    if not p.exists():
        return {"files": {}, "sources": {}}
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise FetchError(f"{p}: unreadable lock file ({exc}); fix or delete it") from None
    if not isinstance(data, dict):
        raise FetchError(f"{p}: lock file must be an object with a 'files' mapping")
    for key in ("files", "sources"):
        if not isinstance(data.get(key, {}), dict):
            raise FetchError(f"{p}: key '{key}' of the lock file must be a mapping")
    return {"files": dict(data.get("files", {})), "sources": dict(data.get("sources", {}))}


def read_lock() -> Records:
    """Return the file records, keyed `"<source>/<path>"` -> {sha256, size, url, ...}."""
    return read_doc()["files"]


def read_pins() -> Records:
    """Return the pinned Hugging Face revisions, keyed by source name -> {repo, revision, sha}."""
    return read_doc()["sources"]


def locked(path: Path) -> contextlib.AbstractContextManager[None]:
    """Hold an exclusive advisory lock on `path` (created if missing) for the block."""
    return locks.file_lock(path)


def update(change: Callable[[Records, Records], None]) -> None:
    """Apply `change(files, sources)` to the lock and write it back atomically, under a lock."""
    with locked(lock_path().with_name(LOCK_NAME + ".lck")):
        doc = read_doc()
        change(doc["files"], doc["sources"])
        out: dict[str, Any] = {"version": 1, "files": dict(sorted(doc["files"].items()))}
        if doc["sources"]:
            out["sources"] = dict(sorted(doc["sources"].items()))
        atomic.write_text(lock_path(), json.dumps(out, indent=2) + "\n")


def key(source: Source, f: SourceFile) -> str:
    """Return the lock key of a file: `"<source>/<registry path>"`."""
    return f"{source.name}/{f.path}"


def expected(source: Source, f: SourceFile) -> tuple[str | None, int | None, str]:
    """Return the (sha256, size, where-from) a file must match: registry, else lock, else none."""
    if f.sha256 is not None:
        return f.sha256, f.size, "registry"
    rec = read_lock().get(key(source, f))
    if rec is not None:
        return rec.get("sha256"), rec.get("size"), f"lock file {lock_path()}"
    return None, f.size, "registry (size only)" if f.size is not None else "nothing"


def record_file(
    source: Source, f: SourceFile, sha: str, size: int, url: str, **extra: str
) -> None:
    """Record a file's sha256, size and URL (and `extra` fields) on first use."""

    def change(files: Records, _pins: Records) -> None:
        files[key(source, f)] = {"sha256": sha, "size": size, "url": url, **extra}

    update(change)


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


def check(path: Path, label: str, sha: str | None, size: int | None, where: str) -> str:
    """Verify size then sha256 of an existing file; return its sha256.

    Raises:
        ChecksumError: The size or the hash differs (the message names the file, both values
            and where the expected one comes from).
    """
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
