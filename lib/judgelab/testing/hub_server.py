"""A loopback stand-in for the Hugging Face Hub, for download tests (127.0.0.1, a free port).

    with FakeHub() as server:
        sha = server.commit("org/ds", {"data/train-0-of-1-ab12.parquet": b"..."})  # on main
        monkeypatch.setenv("HF_ENDPOINT", server.url)
        server.gated["org/ds"] = "hf_..."   # requests without this Bearer token get 401
        server.override["data/x.parquet"] = b"x"  # serve other bytes than the listing says
        server.requests                     # [(method, path, sent a token?), ...]

It answers exactly what `huggingface_hub` asks (checked against 2.4):

- `GET /api/datasets/{repo}/revision/{rev}` -> `{"id", "sha"}` (`HfApi.dataset_info`);
- `GET /api/datasets/{repo}/tree/{rev}?recursive=...` -> files and folders, LFS files with
  their sha256 (`HfApi.list_repo_tree`);
- `HEAD|GET /datasets/{repo}/resolve/{rev}/{path}` -> `X-Repo-Commit`, `ETag`,
  `Content-Length` (and the body on GET) (`hf_hub_download`).

An unknown repo, revision or file answers 404 with the `X-Error-Code` the Hub sends
(`RepoNotFound`, `RevisionNotFound`, `EntryNotFound`); `status[path] = code` forces a status.
"""

from __future__ import annotations

import hashlib
import json
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import unquote, urlsplit

from judgelab.testing.loopback import LoopbackServer


def git_oid(body: bytes) -> str:
    """Return the git blob id of `body` (what the Hub reports as a file's `oid`)."""
    return hashlib.sha1(b"blob %d\0" % len(body) + body).hexdigest()  # noqa: S324


class FakeHub(LoopbackServer):
    """Serve dataset repositories (commits of `path -> bytes`, and branches) on loopback."""

    def __init__(self, *, lfs_suffixes: tuple[str, ...] = (".parquet",)):
        self.commits: dict[str, dict[str, dict[str, bytes]]] = {}
        self.branches: dict[str, dict[str, str]] = {}
        self.gated: dict[str, str] = {}
        self.status: dict[str, int] = {}
        self.override: dict[str, bytes] = {}
        self.lfs_suffixes = lfs_suffixes
        self.requests: list[tuple[str, str, bool]] = []
        super().__init__()

    def handler_class(self) -> type[BaseHTTPRequestHandler]:
        """Return the Hub handler bound to this server."""
        return _make_handler(self)

    @property
    def url(self) -> str:
        """Return `http://127.0.0.1:<port>` (no trailing slash, as `HF_ENDPOINT` is written)."""
        return f"http://127.0.0.1:{self.port}"

    def commit(self, repo: str, files: dict[str, bytes], *, branch: str = "main") -> str:
        """Add a commit holding exactly `files` to `repo`, move `branch` to it; return its id."""
        commits = self.commits.setdefault(repo, {})
        sha = hashlib.sha1(f"{repo}:{len(commits)}:{sorted(files)}".encode()).hexdigest()  # noqa: S324
        commits[sha] = dict(files)
        self.branches.setdefault(repo, {})[branch] = sha
        return sha

    def count(self, method: str, fragment: str = "") -> int:
        """Return how many `method` requests had `fragment` in their path."""
        return sum(1 for m, p, _ in self.requests if m == method and fragment in p)

    # ---------------------------------------------------------------- what a request sees

    def answer(self, method: str, raw_path: str, auth: str | None) -> tuple[int, dict, bytes]:
        """Return (status, headers, body) for one request (the handler sends it)."""
        parts = [unquote(p) for p in urlsplit(raw_path).path.strip("/").split("/")]
        path = "/".join(parts)
        self.requests.append((method, path, auth is not None))
        if path in self.status:
            return self.status[path], {}, b"forced\n"
        api = parts[:2] == ["api", "datasets"]
        if api and len(parts) >= 6 and parts[4] in ("revision", "tree"):
            repo, kind, rev, rest = f"{parts[2]}/{parts[3]}", parts[4], parts[5], parts[6:]
        elif parts[:1] == ["datasets"] and len(parts) >= 6 and parts[3] == "resolve":
            repo, kind, rev, rest = f"{parts[1]}/{parts[2]}", "resolve", parts[4], parts[5:]
        else:
            return 404, {}, b"no such route\n"
        if repo not in self.commits:
            return 404, {"X-Error-Code": "RepoNotFound"}, b"repository not found\n"
        if repo in self.gated and auth != f"Bearer {self.gated[repo]}":
            return 401, {"X-Error-Message": f"Access to dataset {repo} is restricted"}, b"gated\n"
        sha = self.branches[repo].get(rev, rev)
        if sha not in self.commits[repo]:
            return 404, {"X-Error-Code": "RevisionNotFound"}, b"revision not found\n"
        files = self.commits[repo][sha]
        if kind == "revision":
            return 200, _json_type(), json.dumps({"id": repo, "sha": sha}).encode()
        if kind == "tree":
            return 200, _json_type(), json.dumps(self._tree(files, "/".join(rest))).encode()
        name = "/".join(rest)
        if name not in files:
            return 404, {"X-Error-Code": "EntryNotFound", "X-Repo-Commit": sha}, b"no file\n"
        body = self.override.get(name, files[name])
        etag = hashlib.sha256(body).hexdigest() if self._is_lfs(name) else git_oid(body)
        return 200, {"X-Repo-Commit": sha, "ETag": f'"{etag}"'}, body

    def _is_lfs(self, name: str) -> bool:
        return name.endswith(self.lfs_suffixes)

    def _tree(self, files: dict[str, bytes], under: str) -> list[dict[str, Any]]:
        folders = {"/".join(p.split("/")[:i]) for p in files for i in range(1, p.count("/") + 1)}
        out: list[dict[str, Any]] = [
            {"type": "directory", "path": d, "oid": git_oid(d.encode())} for d in sorted(folders)
        ]
        for name, body in sorted(files.items()):
            entry: dict[str, Any] = {
                "type": "file",
                "path": name,
                "size": len(body),
                "oid": git_oid(body),
            }
            if self._is_lfs(name):
                sha = hashlib.sha256(body).hexdigest()
                entry["lfs"] = {"oid": sha, "size": len(body), "pointerSize": 134}
            out.append(entry)
        return [e for e in out if not under or e["path"].startswith(under.rstrip("/") + "/")]


def _json_type() -> dict[str, str]:
    return {"Content-Type": "application/json"}


def _make_handler(hub: FakeHub) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            """Keep test output quiet."""

        def do_GET(self) -> None:  # noqa: N802
            """Answer a GET (API call or file download)."""
            self._send("GET")

        def do_HEAD(self) -> None:  # noqa: N802
            """Answer a HEAD (file metadata): the GET's headers without the body."""
            self._send("HEAD")

        def _send(self, method: str) -> None:
            status, headers, body = hub.answer(
                method, self.path, self.headers.get("Authorization")
            )
            self.send_response(status)
            headers.setdefault("Content-Type", "application/octet-stream")
            for k, v in headers.items():
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if method == "GET":
                self.wfile.write(body)
            self.wfile.flush()

    return Handler
