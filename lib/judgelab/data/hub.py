"""Talk to the Hugging Face Hub through `huggingface_hub`: pin a revision, list, download.

Every call reads its settings when it runs, never at import:

- the endpoint from `HF_ENDPOINT` (default https://huggingface.co), passed explicitly, since
  `huggingface_hub` reads that variable once at import time;
- the token from `HF_TOKEN` only (never the token file `huggingface-cli login` writes). It is
  sent in the Authorization header and nowhere else: not in URLs, the lock file, the staging
  folder's metadata, logs or error messages (which are scrubbed of it as well).

Failures become `FetchError`s that name what was asked for (the caller's `label`: source,
repo, revision, file) and why: authentication (401), access (403), not found (404: repo,
revision or file), or a connection problem.

`HubSource` + `fetch_file` are how `judgelab.data.fetch` gets a Hugging Face source: pin the
registry revision to a commit in the lock file (`judgelab.data.lockfile`), resolve each
registry path or glob against the file list at that commit, download into a staging folder,
verify, and move the file into place.
"""

from __future__ import annotations

import contextlib
import fnmatch
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

from judgelab import __version__
from judgelab.core import paths, secrets
from judgelab.data import lockfile
from judgelab.data.sources import Source, SourceFile
from judgelab.errors import ChecksumError, FetchError

DEFAULT_ENDPOINT = "https://huggingface.co"
STAGING = ".hf-cache"  # under paths.benchmarks(): downloads wait here until verified
_COMMIT = re.compile(r"^[0-9a-f]{40}$")


@dataclass(frozen=True)
class RemoteFile:
    """One file of a repository at a commit: its size and, for LFS files, its sha256."""

    path: str
    size: int | None
    sha256: str | None


def endpoint() -> str:
    """Return the Hub endpoint: `HF_ENDPOINT` when set, else https://huggingface.co."""
    return (os.environ.get("HF_ENDPOINT") or DEFAULT_ENDPOINT).rstrip("/")


def token() -> str | None:
    """Return the token of `HF_TOKEN`, or None (then no token is sent at all)."""
    return os.environ.get("HF_TOKEN") or None


def is_commit(revision: str) -> bool:
    """Return True when `revision` is a full 40-hex commit id (used as is, never resolved).

    >>> is_commit("main"), is_commit("a" * 40)
    (False, True)
    """
    return bool(_COMMIT.match(revision))


def file_url(repo: str, commit: str, path: str) -> str:
    """Return the resolve URL of a dataset file at a commit (no credentials in it)."""
    return secrets.scrub(f"{endpoint()}/datasets/{repo}/resolve/{commit}/{path}")


@contextlib.contextmanager
def _no_telemetry() -> Iterator[None]:
    """Switch off huggingface_hub's telemetry for one call (read from the env at its import).

    With it on, the first request also fetches an "agent harness" registry from the import-time
    endpoint (huggingface.co even when `HF_ENDPOINT` is set later) and writes it under ~/.cache.
    """
    from huggingface_hub import constants

    saved, constants.HF_HUB_DISABLE_TELEMETRY = constants.HF_HUB_DISABLE_TELEMETRY, True
    try:
        yield
    finally:
        constants.HF_HUB_DISABLE_TELEMETRY = saved


def _api() -> Any:
    from huggingface_hub import HfApi

    return HfApi(
        endpoint=endpoint(),
        token=token() or False,
        library_name="judgelab",
        library_version=__version__,
    )


def _errors() -> tuple[type[BaseException], ...]:
    from huggingface_hub import errors

    # HTTPError is the HTTP library's base (status and transport errors); OSError covers
    # the rest of huggingface_hub's own errors (offline mode, metadata, local entry).
    return (errors.HTTPError, OSError)


def _problem(exc: BaseException) -> str:
    from huggingface_hub import errors

    cause = exc.__cause__
    if getattr(exc, "response", None) is None and getattr(cause, "response", None) is not None:
        exc = cause  # hf_hub_download wraps a failed HEAD call in LocalEntryNotFoundError
    status = getattr(getattr(exc, "response", None), "status_code", None)
    has_token = token() is not None
    if status == 401:
        return (
            "HF_TOKEN was not accepted (HTTP 401)"
            if has_token
            else "authentication required (HTTP 401): the dataset is gated or private (or "
            "the name is wrong); accept its terms on the Hub and set HF_TOKEN"
        )
    if status == 403:
        return "access refused (HTTP 403): " + (
            "accept the dataset's terms on the Hub with the account of HF_TOKEN"
            if has_token
            else "the dataset is gated; accept its terms on the Hub and set HF_TOKEN"
        )
    if status == 404:
        if isinstance(exc, errors.RevisionNotFoundError):
            return "revision not found (HTTP 404)"
        if isinstance(exc, errors.EntryNotFoundError):
            return "file not found at this revision (HTTP 404)"
        if isinstance(exc, errors.RepositoryNotFoundError):
            return "repository not found (HTTP 404; a private dataset answers so without HF_TOKEN)"
        return "not found (HTTP 404): check the repository, the revision and the file name"
    if status is not None:
        return f"HTTP {status} from {endpoint()}"
    if isinstance(exc, errors.OfflineModeIsEnabled):
        return "huggingface_hub offline mode is on (HF_HUB_OFFLINE)"
    network = (errors.HTTPError, errors.LocalEntryNotFoundError, ConnectionError, TimeoutError)
    if not isinstance(exc, network):  # e.g. the staging folder cannot be written
        return f"{type(exc).__name__}: {exc}"
    reason = exc.__cause__ or exc
    return f"cannot connect to {endpoint()} ({type(reason).__name__}: {reason})"


def _fail(label: str, exc: BaseException) -> NoReturn:
    known = [t for t in (token(),) if t]
    raise FetchError(secrets.scrub(f"{label}: {_problem(exc)}", known)) from None


def resolve_revision(repo: str, revision: str, *, label: str, timeout: float) -> str:
    """Return the commit `revision` (a branch, tag or commit) of dataset `repo` points to."""
    if is_commit(revision):
        return revision
    try:
        with _no_telemetry():
            info = _api().dataset_info(repo, revision=revision, timeout=timeout)
    except _errors() as exc:
        _fail(label, exc)
    sha = getattr(info, "sha", None)
    if not isinstance(sha, str) or not is_commit(sha):
        raise FetchError(f"{label}: {endpoint()} gave no commit for revision {revision!r}")
    return sha


def list_files(repo: str, commit: str, *, label: str) -> dict[str, RemoteFile]:
    """Return every file of dataset `repo` at `commit`, keyed by its path in the repo."""
    try:
        with _no_telemetry():
            api = _api()
            entries = list(
                api.list_repo_tree(repo, repo_type="dataset", revision=commit, recursive=True)
            )
    except _errors() as exc:
        _fail(label, exc)
    out = {}
    for e in entries:
        if not hasattr(e, "blob_id"):  # a folder
            continue
        lfs = getattr(e, "lfs", None)
        sha = lfs.get("sha256") if isinstance(lfs, dict) else getattr(lfs, "sha256", None)
        out[e.path] = RemoteFile(e.path, getattr(e, "size", None), sha)
    return out


def download(
    repo: str, path: str, commit: str, staging: Path, *, label: str, timeout: float
) -> Path:
    """Download one file of dataset `repo` at `commit` into `staging`; return the staged file.

    `hf_hub_download` writes to a temporary file and renames it, so a staged file is whole;
    the caller verifies it and moves it into place. `staging` is a folder of our own (the
    user's global Hugging Face cache is neither read nor written).
    """
    from huggingface_hub import hf_hub_download

    try:
        with _no_telemetry():
            staged = hf_hub_download(
                repo,
                path,
                repo_type="dataset",
                revision=commit,
                local_dir=staging,
                cache_dir=staging / ".hub-cache",
                endpoint=endpoint(),
                token=token() or False,
                etag_timeout=timeout,
                library_name="judgelab",
                library_version=__version__,
            )
    except _errors() as exc:
        _fail(label, exc)
    return Path(staged)


# ---------------------------------------------------------------- a source's files on the Hub


def pinned(source: Source) -> str | None:
    """Return the commit a Hugging Face source is fetched at, when known without the network.

    That is the registry revision when it is a commit, else the commit the lock pinned it to
    (None: not pinned yet, or not a Hugging Face source).
    """
    o = source.origin
    if o["type"] != "huggingface":
        return None
    if is_commit(o["revision"]):
        return o["revision"]
    rec = lockfile.read_pins().get(source.name, {})
    same = (rec.get("repo"), rec.get("revision")) == (o["repo"], o["revision"])
    sha = rec.get("sha")
    return sha if same and isinstance(sha, str) and is_commit(sha) else None


def short_list(names: list[str], limit: int = 12) -> str:
    """Return `names` comma-separated, the first `limit` only.

    >>> short_list(["a", "b", "c"], limit=2)
    'a, b, … (1 more)'
    """
    more = f", … ({len(names) - limit} more)" if len(names) > limit else ""
    return (", ".join(names[:limit]) or "none") + more


def matches(path: str, pattern: str) -> bool:
    """Return True when `path` matches the glob `pattern` folder by folder (`*` stops at `/`).

    >>> matches("data/train-00000-of-00001-fe19.parquet", "data/train-*.parquet")
    True
    >>> matches("data/x/train-0.parquet", "data/*.parquet")
    False
    """
    a, b = path.split("/"), pattern.split("/")
    return len(a) == len(b) and all(fnmatch.fnmatchcase(x, y) for x, y in zip(a, b, strict=True))


class HubSource:
    """One Hugging Face source during a fetch: its pinned commit and its file list (lazily)."""

    def __init__(self, source: Source, *, timeout: float, offline: bool):
        self.source, self.timeout, self.offline = source, timeout, offline
        self.repo, self.revision = source.origin["repo"], source.origin["revision"]
        self.prefix = source.origin.get("prefix", "")
        self._commit = pinned(source)
        self._files: dict[str, RemoteFile] | None = None

    def label(self, f: SourceFile | None = None) -> str:
        """Name the source, repo and revision (and commit, and file) for messages."""
        at = repr(self.revision)
        if self._commit is not None and self._commit != self.revision:
            at += f" (commit {self._commit})"
        where = f"source {self.source.name!r}: Hugging Face dataset {self.repo} at {at}"
        return where if f is None else f"{where}, file {f.path}"

    def commit(self) -> str:
        """Return the pinned commit; resolve and pin the registry revision on first use."""
        if self._commit is None:
            if self.offline:
                raise FetchError(
                    f"{self.label()}: the revision is not pinned to a commit in "
                    f"{lockfile.lock_path()} yet and JUDGELAB_OFFLINE is set (fetch once "
                    "online, or use a mirror)"
                )
            sha = resolve_revision(
                self.repo, self.revision, label=self.label(), timeout=self.timeout
            )
            self._commit = self._pin(sha)
        return self._commit

    def _pin(self, sha: str) -> str:
        kept: list[str] = []

        def change(_files: lockfile.Records, pins: lockfile.Records) -> None:
            old = pins.get(self.source.name, {})
            if (old.get("repo"), old.get("revision")) == (self.repo, self.revision):
                kept.append(old["sha"])  # another process pinned it meanwhile: keep theirs
                return
            pins[self.source.name] = {"repo": self.repo, "revision": self.revision, "sha": sha}

        lockfile.update(change)
        return kept[0] if kept else sha

    def resolve(self, f: SourceFile) -> RemoteFile:
        """Return the one file `f` names at the pinned commit (a glob must match exactly one).

        The returned `path` is relative to the origin's prefix, as registry paths are.
        """
        if self._files is None:
            listing = list_files(self.repo, self.commit(), label=self.label())
            n = len(self.prefix)
            self._files = {
                p[n:]: RemoteFile(p[n:], rf.size, rf.sha256)
                for p, rf in listing.items()
                if p.startswith(self.prefix)
            }
        files = self._files
        if not f.is_pattern:
            if f.path in files:
                return files[f.path]
            raise FetchError(
                f"{self.label(f)}: no such file at that commit; files: {short_list(sorted(files))}"
            )
        hits = sorted(p for p in files if matches(p, f.path))
        if len(hits) != 1:
            seen = hits or sorted(files)
            raise FetchError(
                f"{self.label(f)}: the pattern must match exactly one file, it matches "
                f"{len(hits)}; {'matches' if hits else 'files'}: {short_list(seen)}"
            )
        return files[hits[0]]


def fetch_file(hs: HubSource, f: SourceFile, root: Path) -> tuple[Path, bool]:
    """Fetch one file of a Hugging Face source into `root`; return (its path, downloaded?).

    On first use the listing names the file (a glob resolves to one name) and gives its size
    and LFS sha256; the download is staged in `paths.benchmarks()/.hf-cache/<source>/`,
    verified, moved into place with `os.replace` and recorded in the lock (resolved name,
    commit, sha256, size). Later fetches check the cached file against that record.
    """
    source = hs.source
    rec = lockfile.read_lock().get(lockfile.key(source, f))
    sha, size, where = lockfile.expected(source, f)
    resolved = (rec or {}).get("resolved") or (None if f.is_pattern else f.path)
    if rec is None:
        remote = hs.resolve(f)
        resolved = remote.path
        size = size if size is not None else remote.size
        if sha is None and remote.sha256 is not None:
            sha, where = remote.sha256, f"the Hub's LFS sha256 at commit {hs.commit()}"
    dest, label, downloaded = root / resolved, hs.label(f), False
    if not dest.exists():
        if hs.offline:
            raise FetchError(
                f"{label}: not in the download cache and JUDGELAB_OFFLINE is set, so it is not "
                "fetched (point JUDGELAB_MIRROR at a staged copy, or unset JUDGELAB_OFFLINE)"
            )
        dest.parent.mkdir(parents=True, exist_ok=True)
        with lockfile.locked(dest.with_name(dest.name + ".lck")):
            downloaded = not dest.exists()  # else another process placed it meanwhile
            if downloaded:
                _download_into(hs, hs.prefix + resolved, dest, sha, size, where, label)
    actual = lockfile.check(dest, label, sha, size, where)
    if rec is None:
        url = file_url(hs.repo, hs.commit(), hs.prefix + resolved)
        extra = {"resolved": resolved, "commit": hs.commit()}
        lockfile.record_file(source, f, actual, dest.stat().st_size, url, **extra)
    return dest, downloaded


def _download_into(
    hs: HubSource, path: str, dest: Path, sha: str | None, size: int | None, where: str, label: str
) -> None:
    commit = hs.commit()
    staging = paths.benchmarks() / STAGING / hs.source.name
    staged = download(hs.repo, path, commit, staging, label=label, timeout=hs.timeout)
    try:
        lockfile.check(staged, f"{label} (downloaded at commit {commit})", sha, size, where)
    except ChecksumError:
        staged.unlink(missing_ok=True)
        raise
    os.replace(staged, dest)
