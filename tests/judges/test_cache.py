import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from judgelab.judges import cache


def test_request_key_is_stable_under_dict_order():
    a = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "temperature": 0}
    b = {"temperature": 0, "messages": [{"content": "hi", "role": "user"}], "model": "m"}
    assert cache.request_key(a) == cache.request_key(b)
    assert len(cache.request_key(a)) == 64


@pytest.mark.parametrize(
    "change",
    [
        {"model": "m2"},
        {"messages": [{"role": "user", "content": "hi!"}]},
        {"temperature": 0.7},
        {"max_tokens": 10},
    ],
)
def test_request_key_changes_with_any_field(change):
    base = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "temperature": 0}
    assert cache.request_key(base) != cache.request_key({**base, **change})


def test_request_key_refuses_credentials():
    with pytest.raises(ValueError, match=r"credential field"):
        cache.request_key({"model": "m", "api_key": "sk-secret"})


def test_put_get_first_answer_wins(tmp_path: Path):
    with cache.RequestCache(tmp_path / "c.sqlite") as c:
        req = {"model": "m", "messages": []}
        key = cache.request_key(req)
        assert c.get(key) is None
        assert c.put(key, req, {"text": "first"}) is True
        assert c.put(key, req, {"text": "second"}) is False
        assert c.get(key) == {"text": "first"}
        assert key in c and len(c) == 1
        assert c.get_many([key, "missing"]) == {key: {"text": "first"}}


def test_default_path_follows_env(judgelab_home: Path):
    assert cache.default_path() == judgelab_home / "data" / "cache" / "requests.sqlite"


def test_wal_mode(tmp_path: Path):
    with cache.RequestCache(tmp_path / "c.sqlite") as c:
        assert c._conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


WRITER = textwrap.dedent(
    """
    import sys
    from judgelab.judges.cache import RequestCache, request_key
    c = RequestCache(sys.argv[1])
    tag = sys.argv[2]
    for i in range(1000):
        req = {"model": tag, "messages": [{"role": "user", "content": str(i)}]}
        c.put(request_key(req), req, {"text": f"{tag}-{i}"})
    c.close()
    print("done")
    """
)


def test_two_processes_write_1000_entries_each(tmp_path: Path):
    db = tmp_path / "c.sqlite"
    script = tmp_path / "w.py"
    script.write_text(WRITER)
    procs = [
        subprocess.Popen(
            [sys.executable, str(script), str(db), tag],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for tag in ("p1", "p2")
    ]
    outs = [p.communicate(timeout=120) for p in procs]
    for p, (out, err) in zip(procs, outs, strict=True):
        assert p.returncode == 0, err
        assert out.strip() == "done"
        assert "locked" not in err
    with cache.RequestCache(db) as c:
        assert len(c) == 2000
        req = {"model": "p2", "messages": [{"role": "user", "content": "999"}]}
        assert c.get(cache.request_key(req)) == {"text": "p2-999"}


def test_request_texts_encode_once_and_match_the_separate_encodings():
    import json as _json

    canonical_json, request_texts = cache.canonical_json, cache.request_texts
    req = {
        "model": "m",
        "endpoint": "http://h:8000/v1",
        "messages": [{"role": "user", "content": 'é "quoted" \\ \n'}],
        "temperature": 0.0,
        "seed": 3,
    }
    text, body = request_texts(req)
    assert text == canonical_json(req)
    payload = {k: v for k, v in req.items() if k != "endpoint"}
    assert _json.loads(body) == payload and body == canonical_json(payload).encode("utf-8")
    # a key that sorts before "endpoint": the body is encoded on its own, still without it
    text, body = request_texts({**req, "aaa": 1})
    assert _json.loads(body) == {**payload, "aaa": 1}
    assert request_texts({"model": "m"})[1] == b'{"model":"m"}'


def test_a_request_given_as_text_is_stored_as_that_text(tmp_path):
    canonical_json = cache.canonical_json
    req = {"endpoint": "http://h/v1", "model": "m"}
    with cache.RequestCache(tmp_path / "c.sqlite") as c:
        assert c.put("k1", canonical_json(req), {"content": "x"})
        assert c.put("k2", req, {"content": "x"})
        rows = dict(c._conn.execute("SELECT key, request FROM requests").fetchall())
    assert rows["k1"] == rows["k2"] == canonical_json(req)
