"""Download and mirror tests against a loopback server the tests start (no internet)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from judgelab.core import paths
from judgelab.data import fetch
from judgelab.data.sources import Source, SourceFile
from judgelab.testing.static_server import StaticServer

BODY = b'{"a": 1}\n' * 300  # 2,700 bytes
SHA = hashlib.sha256(BODY).hexdigest()


def _source(base: str, files: list[SourceFile], name: str = "demo") -> Source:
    return Source(
        name=name,
        kind="benchmark",
        title="demo",
        licence="MIT",
        homepage="https://example.org",
        origin={"type": "url", "base": base, "prefix": "pre/"},
        mirror_dir="demo_mirror",
        importer="judgelab.data.importers.seeds:import_contextualjudgebench",
        files=files,
    )


@pytest.fixture()
def server():
    with StaticServer({"pre/d/x.json": BODY}) as s:
        yield s


def test_download_verifies_and_never_downloads_twice(server):
    src = _source(server.base_url, [SourceFile("d/x.json", sha256=SHA, size=len(BODY))])
    root = fetch.ensure_local(src)
    assert root == paths.benchmarks() / "demo"
    assert (root / "d/x.json").read_bytes() == BODY
    assert not (root / "d/x.json.part").exists()
    assert fetch.is_cached(src)
    fetch.ensure_local(src)
    assert server.count("pre/d/x.json") == 1  # the second call only re-checked the hash


def test_404_names_the_url(server):
    src = _source(server.base_url, [SourceFile("d/missing.json", sha256=SHA, size=1)])
    with pytest.raises(fetch.FetchError, match=r"HTTP 404.*pre/d/missing\.json"):
        fetch.ensure_local(src)
    assert not fetch.is_cached(src)


def test_connection_refused_names_the_url():
    with StaticServer() as s:
        base = s.base_url
    src = _source(base, [SourceFile("d/x.json", sha256=SHA)])
    with pytest.raises(fetch.FetchError, match=r"cannot connect to http://127\.0\.0\.1"):
        fetch.ensure_local(src, timeout=5)


def test_truncated_body_then_resume_with_range(server):
    src = _source(server.base_url, [SourceFile("d/x.json", sha256=SHA, size=len(BODY))])
    server.truncate["pre/d/x.json"] = 1000
    with pytest.raises(fetch.FetchError, match="truncated body.*got 1000 of 2700 bytes"):
        fetch.ensure_local(src)
    dest = paths.benchmarks() / "demo" / "d" / "x.json"
    assert not dest.exists()
    assert (dest.parent / "x.json.part").stat().st_size == 1000
    del server.truncate["pre/d/x.json"]
    fetch.ensure_local(src)
    assert dest.read_bytes() == BODY
    # The second request asked only for the missing tail: bytes 1000..2699.
    assert server.requests[-1] == ("pre/d/x.json", "bytes=1000-")


def test_resume_when_server_ignores_range_restarts(server):
    src = _source(server.base_url, [SourceFile("d/x.json", sha256=SHA, size=len(BODY))])
    server.truncate["pre/d/x.json"] = 500
    with pytest.raises(fetch.FetchError):
        fetch.ensure_local(src)
    del server.truncate["pre/d/x.json"]
    server.honour_range = False  # answers 200 + whole body: the .part must be rewritten
    fetch.ensure_local(src)
    assert (paths.benchmarks() / "demo/d/x.json").read_bytes() == BODY


def test_checksum_mismatch_deletes_part_and_names_hashes(server):
    wrong = b"tampered\n"
    server.override["pre/d/x.json"] = wrong
    src = _source(server.base_url, [SourceFile("d/x.json", sha256=SHA)])
    with pytest.raises(fetch.ChecksumError) as info:
        fetch.ensure_local(src)
    msg = str(info.value)
    assert "d/x.json" in msg and SHA in msg and hashlib.sha256(wrong).hexdigest() in msg
    folder = paths.benchmarks() / "demo" / "d"
    assert not (folder / "x.json").exists() and not (folder / "x.json.part").exists()


def test_size_mismatch_is_reported(server):
    src = _source(server.base_url, [SourceFile("d/x.json", sha256=SHA, size=99)])
    with pytest.raises(fetch.ChecksumError, match="expected 99 bytes.*got 2700"):
        fetch.ensure_local(src)


def test_lock_file_records_first_download_then_rejects_change(server):
    src = _source(server.base_url, [SourceFile("d/x.json")])
    fetch.ensure_local(src)
    lock = json.loads(fetch.lock_path().read_text())
    assert lock["files"]["demo/d/x.json"]["sha256"] == SHA
    assert lock["files"]["demo/d/x.json"]["size"] == 2700
    # Upstream changes and the cached copy is gone: the new download must match the lock.
    (paths.benchmarks() / "demo/d/x.json").unlink()
    server.override["pre/d/x.json"] = b"X" * 2700  # same size, other bytes: the hash decides
    with pytest.raises(fetch.ChecksumError, match=f"expected {SHA} \\(lock file"):
        fetch.ensure_local(src)


def test_mirror_read_writes_nothing(tmp_path, monkeypatch):
    mirror = tmp_path / "mirror"
    (mirror / "demo_mirror/d").mkdir(parents=True)
    (mirror / "demo_mirror/d/x.json").write_bytes(BODY)
    monkeypatch.setenv("JUDGELAB_MIRROR", str(mirror))
    src = _source("http://127.0.0.1:9/", [SourceFile("d/x.json", sha256=SHA, size=2700)])
    assert fetch.ensure_local(src) == mirror / "demo_mirror"
    assert fetch.in_mirror(src)
    assert sorted(p.name for p in mirror.rglob("*")) == ["d", "demo_mirror", "x.json"]
    assert not paths.benchmarks().exists()


def test_mirror_hash_mismatch_and_missing_file(tmp_path, monkeypatch):
    mirror = tmp_path / "mirror"
    (mirror / "demo_mirror/d").mkdir(parents=True)
    (mirror / "demo_mirror/d/x.json").write_bytes(b"other bytes")
    monkeypatch.setenv("JUDGELAB_MIRROR", str(mirror))
    src = _source("http://127.0.0.1:9/", [SourceFile("d/x.json", sha256=SHA)])
    with pytest.raises(fetch.ChecksumError, match=r"mirror file d/x\.json: sha256 mismatch"):
        fetch.ensure_local(src)
    src2 = _source("http://127.0.0.1:9/", [SourceFile("d/gone.json", sha256=SHA)])
    with pytest.raises(fetch.FetchError, match=r"d/gone\.json: missing from the mirror"):
        fetch.ensure_local(src2)
    assert not fetch.in_mirror(src2)


def test_hf_token_is_sent_only_to_huggingface_and_not_redirected(monkeypatch):
    monkeypatch.setenv("HF_TOKEN", "secret-token")
    req = fetch._request("https://huggingface.co/datasets/a/b/resolve/main/x", start=0)
    assert req.unredirected_hdrs["Authorization"] == "Bearer secret-token"
    assert "Authorization" not in req.headers
    other = fetch._request("http://127.0.0.1:1/x", start=5)
    assert "Authorization" not in other.unredirected_hdrs
    assert other.headers["Range"] == "bytes=5-"


def test_cached_file_changed_after_verification_is_an_error(server):
    src = _source(server.base_url, [SourceFile("d/x.json", sha256=SHA)])
    root = fetch.ensure_local(src)
    Path(root / "d/x.json").write_bytes(b"edited by hand")
    with pytest.raises(fetch.ChecksumError, match="sha256 mismatch"):
        fetch.ensure_local(src)


def test_git_lfs_pointer_is_refused_not_cached(server):
    pointer = b"version https://git-lfs.github.com/spec/v1\noid sha256:abc\nsize 550000000\n"
    server.files["pre/d/big.jsonl"] = pointer
    src = _source(server.base_url, [SourceFile("d/big.jsonl")])  # hash unknown: trust on first use
    with pytest.raises(fetch.FetchError, match=r"Git LFS pointer, not the file"):
        fetch.ensure_local(src)
    assert not (paths.benchmarks() / "demo" / "d" / "big.jsonl").exists()
    assert not fetch.lock_path().exists() or "big.jsonl" not in fetch.lock_path().read_text()
