"""Get a source's files onto this machine, verified: from the mirror or from the public origin.

`ensure_local(source)` returns a folder holding every registry file; `local_path` says where
one file lies in it (its registry path, or for a Hugging Face glob the name it resolved to):

- With `JUDGELAB_MIRROR=DIR` set, that folder is `DIR/<mirror_dir>`. Every file must exist
  (a glob must match exactly one file there) and match the registry's size and sha256 (or
  the lock file's, see below); nothing is ever written into the mirror.
- Otherwise files are downloaded into `paths.benchmarks()/<name>/`. A GitHub or URL origin
  streams each file into `<path>.part` beside the target, resumes a partial `.part` with an
  HTTP Range request, checks it against the expected size and sha256, and only then renames
  it into place (`os.replace`). A mismatch deletes the `.part` and raises `ChecksumError`
  naming the file, the URL, and the expected and actual hashes.
- A Hugging Face origin goes through `judgelab.data.hub` (`huggingface_hub`): the registry
  revision (e.g. `main`) is resolved to its commit on first download and pinned in the lock
  file, and every later download asks for that commit, so a file changed upstream under the
  same path is never picked up silently (a 40-hex revision is used as is). Globs resolve
  against the repository's file list at the pinned commit, to exactly one file, which is
  stored under its resolved name. Files are staged in `paths.benchmarks()/.hf-cache/<name>/`,
  verified (registry sha256, else the lock record, else the Hub's LFS sha256), then moved
  into place with `os.replace`: the destination never holds a partial file.

A verified file is never downloaded again. Files whose sha256 is unknown are trusted on first
use: the first verified download records sha256 + size in `paths.benchmarks()/sources.lock.json`
(`judgelab.data.lockfile`), and every later fetch or mirror read must match that record.
Delete a record (for a Hugging Face source also its `sources` entry, which holds the pinned
commit) to accept a new upstream version on purpose. `JUDGELAB_OFFLINE` forbids any network.

A Hugging Face token, when needed for gated data, is read only from `HF_TOKEN` and sent only
to the Hub (never forwarded on redirects, never logged or stored).
"""

from __future__ import annotations

import http.client
import os
import socket
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path

from judgelab import __version__
from judgelab.core import paths
from judgelab.data import hub, lockfile
from judgelab.data.lockfile import LOCK_NAME as LOCK_NAME
from judgelab.data.lockfile import lock_path as lock_path
from judgelab.data.lockfile import read_lock as read_lock
from judgelab.data.lockfile import sha256_file as sha256_file
from judgelab.data.sources import Source, SourceFile, file_url
from judgelab.errors import ChecksumError as ChecksumError
from judgelab.errors import FetchError as FetchError

CHUNK = 1 << 20
DEFAULT_TIMEOUT = 60.0
_TEMPORARY = (".part", ".lck", ".incomplete")
_check = lockfile.check
_locked = lockfile.locked
_lock_key = lockfile.key
_record_lock = lockfile.record_file
expected = lockfile.expected


def cache_root(source: Source) -> Path:
    """Return the download cache folder of `source` (it may not exist yet)."""
    return paths.benchmarks() / source.name


def mirror_root(source: Source) -> Path | None:
    """Return the mirror folder of `source` when `JUDGELAB_MIRROR` is set, else None."""
    m = paths.mirror()
    return None if m is None else m / source.mirror_dir


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


def is_hub(source: Source) -> bool:
    """Return True when `source` comes from a Hugging Face dataset (fetched via `hub`)."""
    return source.origin["type"] == "huggingface"


pinned = hub.pinned


def local_path(source: Source, f: SourceFile, root: Path) -> Path:
    """Return where file `f` of `source` lies under `root` (a mirror or the download cache).

    A plain registry path lies at `root / f.path`. A glob lies under the name it resolved to:
    in the download cache the one the lock recorded; in a mirror (or a cache without a
    record) the one file under `root` the glob matches. Importers read files through this.

    Raises:
        FetchError: The glob matches no file or several (the message lists them).
    """
    if not f.is_pattern:
        return root / f.path
    resolved = read_lock().get(_lock_key(source, f), {}).get("resolved")
    if resolved and (root == cache_root(source) or (root / resolved).is_file()):
        return root / resolved
    hits = sorted(
        p.relative_to(root).as_posix()
        for p in root.glob(f.path)
        if p.is_file() and not p.name.endswith(_TEMPORARY)
    )
    if len(hits) != 1:
        raise FetchError(
            f"source {source.name!r}, file {f.path}: the pattern must match exactly one file in "
            f"{root}, it matches {len(hits)}: {hub.short_list(hits)}"
        )
    return root / hits[0]


def _check_mirror(source: Source, root: Path) -> Path:
    if not root.is_dir():
        raise FetchError(
            f"source {source.name!r}: mirror folder {root} does not exist "
            f"(JUDGELAB_MIRROR={paths.mirror()}, mirror_dir={source.mirror_dir!r})"
        )
    for f in source.files:
        label = f"source {source.name!r}, mirror file {f.path}"
        try:
            p = local_path(source, f, root)
        except FetchError as exc:
            raise FetchError(f"{label}: missing from the mirror ({exc})") from None
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
            be reached, or sends a truncated body; a Hugging Face repo, revision or file is
            not found or refused, or a glob matches no file or several (the message names
            the source, the file and the URL or repo and revision).
        ChecksumError: A file's size or sha256 differs from the registry or lock record.
    """
    mroot = mirror_root(source)
    if mroot is not None:
        if progress:
            progress(f"{source.name}: checking {len(source.files)} files in mirror {mroot}")
        return _check_mirror(source, mroot)
    root = cache_root(source)
    root.mkdir(parents=True, exist_ok=True)
    hs = hub.HubSource(source, timeout=timeout, offline=offline()) if is_hub(source) else None
    for f in source.files:
        if hs is not None:
            path, downloaded = hub.fetch_file(hs, f, root)
            if progress:
                how = f"downloaded at commit {hs.commit()}" if downloaded else "cached"
                progress(f"{source.name}: {f.path} -> {path.relative_to(root)} ({how})")
            continue
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
    records = read_lock()
    for f in source.files:
        rec = records.get(_lock_key(source, f), {})
        if f.is_pattern and not rec.get("resolved"):
            return False
        p = root / rec.get("resolved", f.path)
        if not p.is_file():
            return False
        size = f.size if f.size is not None else rec.get("size")
        if size is not None and p.stat().st_size != size:
            return False
    return bool(source.files)


def in_mirror(source: Source) -> bool:
    """Return True when `JUDGELAB_MIRROR` is set and holds every file of `source` (no hashing)."""
    root = mirror_root(source)
    if root is None:
        return False
    try:
        return all(local_path(source, f, root).is_file() for f in source.files)
    except FetchError:
        return False
