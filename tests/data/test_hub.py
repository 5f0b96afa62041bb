"""Hugging Face sources through `huggingface_hub`, against a loopback stand-in for the Hub.

`HF_ENDPOINT` points at the `FakeHub` the fixture starts on 127.0.0.1; nothing here touches
the network. Covered: `main` pinned to its commit and kept when `main` moves, globs resolved
to hashed names (and read by importers), zero or several matches, gated data with and
without `HF_TOKEN`, 404s, a refused connection, offline mode, and a mirror holding a glob.
"""

from __future__ import annotations

import hashlib
import io
import json
import shutil

import pandas as pd
import pytest

from judgelab.core import paths
from judgelab.data import fetch, ingest, sources
from judgelab.data.sources import Source, SourceFile
from judgelab.testing.hub_server import FakeHub

REPO = "org/bench"
HASHED = "data/train-00000-of-00001-fe1905b6732c3660.parquet"
V1 = b"PAR1 first release " * 40
V2 = b"PAR1 second release, other bytes " * 30
TOKEN = "hf_" + "FakeToken0123456789abcdefXYZ"


def _source(*files: SourceFile, revision: str = "main", repo: str = REPO) -> Source:
    return Source(
        name="hfdemo",
        kind="benchmark",
        title="demo",
        licence="MIT",
        homepage="https://example.org",
        origin={"type": "huggingface", "repo": repo, "revision": revision, "prefix": ""},
        mirror_dir="hfdemo",
        importer="judgelab.data.importers.seeds:import_bffbench",
        files=list(files),
    )


GLOB = SourceFile("data/train-*.parquet")


@pytest.fixture()
def hub(monkeypatch):
    monkeypatch.delenv("HF_TOKEN", raising=False)
    with FakeHub() as server:
        monkeypatch.setenv("HF_ENDPOINT", server.url)
        yield server


def _lock() -> dict:
    return json.loads(fetch.lock_path().read_text())


def test_main_is_pinned_and_a_moved_main_is_not_followed(hub):
    first = hub.commit(REPO, {HASHED: V1, "README.md": b"v1"})
    src = _source(GLOB)
    root = fetch.ensure_local(src)
    assert (root / HASHED).read_bytes() == V1
    lock = _lock()
    assert lock["sources"]["hfdemo"] == {"repo": REPO, "revision": "main", "sha": first}
    rec = lock["files"]["hfdemo/data/train-*.parquet"]
    assert (rec["resolved"], rec["commit"], rec["size"]) == (HASHED, first, len(V1))
    assert rec["sha256"] == hashlib.sha256(V1).hexdigest()
    assert fetch.is_cached(src) and fetch.pinned(src) == first
    assert fetch.local_path(src, GLOB, root) == root / HASHED

    # A cached source is checked locally: not one request.
    seen = len(hub.requests)
    fetch.ensure_local(src)
    assert len(hub.requests) == seen

    # Upstream `main` moves: the same path now holds other bytes (as FaithEval's did).
    hub.commit(REPO, {HASHED: V2, "README.md": b"v2"})
    shutil.rmtree(root)  # e.g. another machine that shares the lock file
    fetch.ensure_local(src)
    assert (root / HASHED).read_bytes() == V1  # the pinned commit's bytes, not main's
    assert hub.count("GET", "revision/main") == 1  # resolved once, on the first download
    assert hub.count("GET", f"resolve/{first}/{HASHED}") == 2
    assert not list((paths.benchmarks() / ".hf-cache").rglob("*.parquet"))  # nothing left staged


def test_glob_resolves_to_the_hashed_name_and_the_importer_reads_it(hub, tmp_path, monkeypatch):
    buf = io.BytesIO()
    frame = pd.DataFrame(
        {"question_id": ["q1"], "turns": [["How much?", "And now?"]], "references": [["1", "2"]]}
    )
    frame.to_parquet(buf)
    hub.commit(REPO, {HASHED: buf.getvalue(), "data/other.csv": b"x"})
    reg = tmp_path / "reg"
    reg.mkdir()
    (reg / "hfbench.yaml").write_text(
        "name: hfbench\nkind: benchmark\ntitle: t\nlicence: MIT\nhomepage: https://x.org\n"
        f'origin: {{type: huggingface, repo: {REPO}, revision: main, prefix: ""}}\n'
        'mirror_dir: hfbench\nimporter: "judgelab.data.importers.seeds:import_bffbench"\n'
        "files:\n  - {path: data/train-*.parquet}\n"
    )
    monkeypatch.setenv("JUDGELAB_SOURCES", str(reg))
    report = ingest.import_source("hfbench")
    assert report.n_items == 2  # one item per turn
    assert (paths.benchmarks() / "hfbench" / HASHED).is_file()


@pytest.mark.parametrize(
    ("pattern", "message"),
    [
        ("data/test-*.parquet", r"matches 0; files: README\.md, data/train-00000-of-00002-a"),
        ("data/train-*.parquet", r"matches 2; matches: data/train-00000-of-00002-a\.parquet, "),
        ("data/exact.parquet", r"no such file at that commit; files: README\.md"),
    ],
)
def test_a_glob_must_match_exactly_one_file(hub, pattern, message):
    hub.commit(
        REPO,
        {
            "data/train-00000-of-00002-a.parquet": V1,
            "data/train-00001-of-00002-b.parquet": V2,
            "README.md": b"r",
        },
    )
    with pytest.raises(fetch.FetchError, match=message) as info:
        fetch.ensure_local(_source(SourceFile(pattern)))
    assert f"source 'hfdemo': Hugging Face dataset {REPO} at 'main'" in str(info.value)
    assert f"file {pattern}" in str(info.value)
    assert not (paths.benchmarks() / "hfdemo" / "data").exists()


def test_a_commit_revision_is_used_as_is(hub):
    sha = hub.commit(REPO, {HASHED: V1})
    hub.commit(REPO, {HASHED: V2})  # main moved on
    src = _source(GLOB, revision=sha)
    fetch.ensure_local(src)
    assert (paths.benchmarks() / "hfdemo" / HASHED).read_bytes() == V1
    assert hub.count("GET", "/revision/") == 0
    assert "sources" not in _lock() and fetch.pinned(src) == sha


def test_gated_dataset_needs_hf_token_which_is_written_nowhere(hub, monkeypatch, judgelab_home):
    hub.commit(REPO, {HASHED: V1})
    hub.gated[REPO] = TOKEN
    src = _source(GLOB)
    with pytest.raises(fetch.FetchError) as info:
        fetch.ensure_local(src)
    msg = str(info.value)
    assert "source 'hfdemo'" in msg and REPO in msg and "'main'" in msg
    assert "HTTP 401" in msg and "set HF_TOKEN" in msg
    monkeypatch.setenv("HF_TOKEN", "hf_" + "WrongToken0123456789abcdef")
    with pytest.raises(fetch.FetchError, match="HF_TOKEN was not accepted") as wrong:
        fetch.ensure_local(src)
    assert "WrongToken" not in str(wrong.value)

    monkeypatch.setenv("HF_TOKEN", TOKEN)
    root = fetch.ensure_local(src)
    assert (root / HASHED).read_bytes() == V1
    assert all(sent for _, _, sent in hub.requests[-3:])  # listing, HEAD and GET carried it
    other = hub.commit(REPO, {HASHED: V1, "README.md": b"r"}, branch="other")
    hub.status[f"datasets/{REPO}/resolve/{other}/README.md"] = 401
    with pytest.raises(fetch.FetchError) as later:  # a failure while the token is set
        fetch.ensure_local(_source(GLOB, SourceFile("README.md"), revision="other"))
    files = [p for p in judgelab_home.rglob("*") if p.is_file()]
    assert fetch.lock_path() in files and len(files) > 3
    leaks = [str(p) for p in files if TOKEN.encode() in p.read_bytes()]
    assert leaks == [] and TOKEN not in str(later.value)


def test_not_found_names_repo_revision_and_file(hub):
    hub.commit(REPO, {HASHED: V1})
    with pytest.raises(fetch.FetchError, match=r"org/nothing at 'main': repository not found"):
        fetch.ensure_local(_source(GLOB, repo="org/nothing"))
    with pytest.raises(fetch.FetchError, match=r"at 'v9': revision not found \(HTTP 404\)"):
        fetch.ensure_local(_source(GLOB, revision="v9"))
    sha = hub.commit(REPO, {HASHED: V1, "README.md": b"r"})
    hub.status[f"datasets/{REPO}/resolve/{sha}/README.md"] = 404
    with pytest.raises(fetch.FetchError, match=r"file README\.md: .*HTTP 404"):
        fetch.ensure_local(_source(SourceFile("README.md"), revision=sha))


def test_connection_refused_is_a_fetch_error(monkeypatch):
    with FakeHub() as server:
        url = server.url
    monkeypatch.setenv("HF_ENDPOINT", url)
    with pytest.raises(fetch.FetchError, match=rf"{REPO} at 'main': cannot connect to {url}"):
        fetch.ensure_local(_source(GLOB), timeout=5)


def test_download_that_fails_its_hash_leaves_nothing_in_place(hub):
    hub.commit(REPO, {HASHED: V1})
    hub.override[HASHED] = b"X" * len(V1)  # served bytes differ from the listed LFS sha256
    with pytest.raises(fetch.ChecksumError, match=r"sha256 mismatch.*the Hub's LFS sha256"):
        fetch.ensure_local(_source(GLOB))
    assert not (paths.benchmarks() / "hfdemo" / HASHED).exists()
    assert not list((paths.benchmarks() / ".hf-cache").rglob("*.parquet"))
    assert "files" not in _lock() or not _lock()["files"]


def test_offline_forbids_the_hub_but_reads_the_cache(hub, monkeypatch):
    hub.commit(REPO, {HASHED: V1})
    src = _source(GLOB)
    monkeypatch.setenv("JUDGELAB_OFFLINE", "1")
    with pytest.raises(fetch.FetchError, match="not pinned to a commit.*JUDGELAB_OFFLINE"):
        fetch.ensure_local(src)
    assert hub.requests == []
    monkeypatch.delenv("JUDGELAB_OFFLINE")
    root = fetch.ensure_local(src)
    monkeypatch.setenv("JUDGELAB_OFFLINE", "1")
    n = len(hub.requests)
    assert fetch.ensure_local(src) == root and len(hub.requests) == n
    (root / HASHED).unlink()
    with pytest.raises(fetch.FetchError, match="not in the download cache and JUDGELAB_OFFLINE"):
        fetch.ensure_local(src)
    assert len(hub.requests) == n


def test_mirror_with_a_glob(tmp_path, monkeypatch):
    mirror = tmp_path / "mirror"
    (mirror / "hfdemo/data").mkdir(parents=True)
    monkeypatch.setenv("JUDGELAB_MIRROR", str(mirror))
    src = _source(GLOB)
    assert not fetch.in_mirror(src)
    with pytest.raises(fetch.FetchError, match=r"train-\*\.parquet: missing from the mirror"):
        fetch.ensure_local(src)
    (mirror / "hfdemo" / HASHED).write_bytes(V1)
    root = fetch.ensure_local(src)
    assert root == mirror / "hfdemo" and fetch.in_mirror(src)
    assert fetch.local_path(src, GLOB, root) == root / HASHED
    assert not paths.benchmarks().exists()  # nothing written anywhere
    (mirror / "hfdemo/data/train-00001-of-00001-other.parquet").write_bytes(V2)
    with pytest.raises(fetch.FetchError, match="it matches 2: data/train-00000"):
        fetch.ensure_local(src)
    assert not fetch.in_mirror(src)


def test_data_fetch_shows_the_pinned_commit(hub, tmp_path, monkeypatch, capsys):
    from judgelab.cli import main as cli

    sha = hub.commit(REPO, {HASHED: V1})
    (tmp_path / "hfdemo.yaml").write_text(
        "name: hfdemo\nkind: benchmark\ntitle: t\nlicence: MIT\nhomepage: https://x.org\n"
        f'origin: {{type: huggingface, repo: {REPO}, revision: main, prefix: ""}}\n'
        'mirror_dir: hfdemo\nimporter: "judgelab.data.importers.seeds:import_bffbench"\n'
        "files:\n  - {path: data/train-*.parquet}\n"
    )
    monkeypatch.setenv("JUDGELAB_SOURCES", str(tmp_path))
    assert cli.main(["data", "fetch", "hfdemo"]) == 0
    out = capsys.readouterr().out
    assert f"-> {HASHED} (downloaded at commit {sha})" in out
    assert f"({REPO} main = commit {sha})" in out
    # `data list` prints `fetch.pinned(s)[:12]` in its last column (slow: it reads every source)
    assert fetch.pinned(sources.get_source("hfdemo")) == sha
