"""Issue 19, items 4, 7, 8 and 17: the request cache never loses or poisons a paid answer.

Every test runs the runner against the loopback server (`judgelab.testing.openai_server`).
"""

from __future__ import annotations

import sqlite3
import threading

import pytest

from judgelab.cli import judge as cli_judge
from judgelab.data import catalog
from judgelab.judges import clients, runner
from judgelab.judges import spec as spec_mod
from judgelab.judges.cache import RequestCache, check_record
from judgelab.testing import openai_server
from judgelab.testing.judge_cli import loopback_spec_dict, write_loopback_spec
from judgelab.testing.openai_server import OpenAIServer

KEY = "sk-" + "test-SECRET-0123456789abcdef"
N = 32  # requests of sample:contextualjudgebench (16 pairs x 2 orders)


@pytest.fixture(autouse=True)
def key_env(monkeypatch):
    monkeypatch.setenv("JL_TEST_KEY", KEY)


@pytest.fixture(params=list(clients.CLIENTS))
def client(request):
    return request.param


@pytest.fixture()
def cjb():
    return catalog.load_items("sample:contextualjudgebench")


def _spec(server, **kw):
    keys = {"concurrency": 4, "timeout_s": 5.0, "max_retries": 2, "backoff_s": 0.001, **kw}
    return spec_mod.from_dict(loopback_spec_dict(server.url, api_key_env="JL_TEST_KEY", **keys))


def _run(items, spec, cache_path, **kw):
    with RequestCache(cache_path) as cache:
        return runner.run(items, spec, cache=cache, progress=False, **kw)


def _bad_usage(monkeypatch, value):
    """Make the loopback server send `value` as `usage.prompt_tokens`."""
    original = openai_server.completion

    def completion(body, content, finish):
        payload = original(body, content, finish)
        payload["usage"]["prompt_tokens"] = value
        return payload

    monkeypatch.setattr(openai_server, "completion", completion)
    return original


# -- item 4: a lone surrogate --------------------------------------------------------------


def test_issue19_4_lone_surrogate_answer_is_kept_flagged_and_costs_no_other(client, cjb, tmp_path):
    # Before: UnicodeEncodeError aborted the run and the group commit failed every waiter,
    # so none of the answers that arrived with it was cached (0 of 32).
    lock, calls = threading.Lock(), [0]

    def responder(body):
        with lock:
            calls[0] += 1
            first = calls[0] == 1
        return "**Result:** A \ud83d" if first else openai_server.default_responder(body)

    with OpenAIServer(responder=responder) as server:
        result = _run(cjb, _spec(server, client=client), tmp_path / "c.sqlite")
        s = result.summary
        assert (s.answered, s.failed, s.rows, s.pending) == (N, 0, N, 0)
        assert len(s.flagged) == 1 and "U+FFFD" in next(iter(s.flagged.values()))
        assert "FLAGGED" in s.format()
        with RequestCache(tmp_path / "c.sqlite") as cache:
            assert len(cache) == N
            stored = cache.get(next(iter(s.flagged)))
        assert stored["content"] == "**Result:** A \ufffd"
        assert stored["content_escaped"] == '"**Result:** A \\ud83d"'  # the original, escaped
        assert result.judgments["output"].str.contains("\ufffd").sum() == 1
        assert written_ok(result)
        server.reset()
        again = _run(cjb, _spec(server, client=client), tmp_path / "c.sqlite")
        assert (again.summary.cache_hits, again.summary.rows, server.total) == (N, N, 0)


def written_ok(result) -> bool:
    """The table with the repaired text was written (parquet refuses lone surrogates)."""
    return bool(result.paths) and all(p.exists() for p in result.paths)


def test_issue19_4_one_unencodable_entry_never_fails_the_others(tmp_path):
    # Before: put_many raised UnicodeEncodeError and stored none of the three entries.
    with RequestCache(tmp_path / "c.sqlite") as cache:
        entries = [(f"k{i}", {"q": i}, {"content": f"answer {i}"}) for i in range(3)]
        entries[1] = ("k1", {"q": 1}, {"content": "bad \ud83d"})
        assert cache.put_many(entries) == 3
        assert cache.get("k1") == {"content": "bad \ud83d"}  # lossless, JSON-escaped
        assert cache.get("k2") == {"content": "answer 2"}
        assert cache.invalid() == {"k1": [check_record(cache.get("k1"))[1][0]]}


# -- item 7: malformed usage -----------------------------------------------------------------


@pytest.mark.parametrize("bad", [-1, 12.5, 1e23, "abc"])
def test_issue19_7_malformed_usage_is_unknown_and_later_runs_work(monkeypatch, bad, cjb, tmp_path):
    # Before: -1 raised SchemaError, 12.5 and 1e23 TypeError, "abc" ValueError; the bad
    # usage was cached first, so every later run crashed the same way.
    original = _bad_usage(monkeypatch, bad)
    with OpenAIServer() as server:
        spec = _spec(server, price_in=1.0, price_out=1.0)
        first = _run(cjb, spec, tmp_path / "c.sqlite", write_tables=False)
        s = first.summary
        assert (s.answered, s.failed, s.rows) == (N, 0, N)
        assert len(s.flagged) == N and "invalid usage prompt_tokens" in s.format()
        assert first.judgments["prompt_tokens"].isna().all()  # unknown, not a wrong number
        assert first.judgments["completion_tokens"].notna().all()
        assert first.judgments["cost_usd"].isna().all()
        monkeypatch.setattr(openai_server, "completion", original)
        server.reset()
        later = _run(cjb, spec, tmp_path / "c.sqlite")
        assert (later.summary.rows, later.summary.cache_hits, server.total) == (N, N, 0)


def _store_old_bad_entries(cache_path, cjb, spec):
    """Cache a run's answers, then give each the usage an older version stored unchecked."""
    with RequestCache(cache_path) as cache:
        runner.run(cjb, spec, cache=cache, progress=False, write_tables=False)
        for key in cache.keys():
            record = cache.get(key)
            record["prompt_tokens"] = "abc"
            cache.evict([key])
            cache.put(key, {"k": key}, record)


def test_issue19_7_old_bad_entries_are_read_safely_and_can_be_evicted(cjb, tmp_path):
    # Before: a cache holding such entries crashed every run; there was no way to evict.
    path = tmp_path / "c.sqlite"
    with OpenAIServer() as server:
        spec = _spec(server)
        _store_old_bad_entries(path, cjb, spec)
        server.reset()
        kept = _run(cjb, spec, path, write_tables=False)
        assert (kept.summary.rows, server.total) == (N, 0)  # used as they are, not re-paid
        with RequestCache(path) as cache:
            assert len(cache.invalid()) == N
        evicted = _run(cjb, spec, path, write_tables=False, evict_invalid=True)
        assert (evicted.summary.evicted, evicted.summary.answered, server.total) == (N, N, N)
        assert "evicted            32" in evicted.summary.format()
        with RequestCache(path) as cache:
            assert cache.invalid() == {} and len(cache) == N


def test_issue19_7_cli_evict_invalid(monkeypatch, cjb, tmp_path, capsys):
    with OpenAIServer() as server:
        _store_old_bad_entries(RequestCache().path, cjb, _spec(server))
        spec_file = write_loopback_spec(
            tmp_path / "loop.yaml", server.url, api_key_env="JL_TEST_KEY", concurrency=4
        )
        args = ["--judge", str(spec_file), "--benchmark", "sample:contextualjudgebench"]
        assert cli_judge.main([*args, "--no-progress", "--evict-invalid", "--limit", "2"]) == 0
        assert "evicted            4 invalid cached answer(s)" in capsys.readouterr().out
    with RequestCache() as cache:
        assert len(cache.invalid()) == N - 4


# -- item 8: a response-size cap ---------------------------------------------------------------


def test_issue19_8_oversized_answer_fails_and_is_not_cached(client, cjb, tmp_path):
    # Before: no cap; a 3 MB answer was cached in full 32 times (96 MB).
    with OpenAIServer(responder=lambda body: "A" * 3_000_000) as server:
        spec = _spec(server, client=client, max_retries=0)
        assert spec.max_response_bytes == 2_000_000  # the default cap
        s = _run(cjb, spec, tmp_path / "c.sqlite", write_tables=False).summary
        assert (s.answered, s.failed, s.rows) == (0, N, 0)
        assert all("response too large" in e for e in s.errors.values())
        assert "32 request(s) failed" in s.format()
        with RequestCache(tmp_path / "c.sqlite") as cache:
            assert len(cache) == 0


def test_issue19_8_cap_is_a_spec_key(client, cjb, tmp_path):
    with OpenAIServer(responder=lambda body: "B" * 5000 + " **Result:** A") as server:
        small = _spec(server, client=client, max_response_bytes=4096)
        assert _run(cjb, small, tmp_path / "c.sqlite").summary.failed == N
        large = _spec(server, client=client, max_response_bytes=100_000)
        assert large.judge_id == small.judge_id  # the cap is not part of the judge or key
        assert _run(cjb, large, tmp_path / "c.sqlite").summary.answered == N
    with pytest.raises(spec_mod.JudgeSpecError, match="max_response_bytes"):
        _spec(server, max_response_bytes=10)


# -- item 17: disk full -------------------------------------------------------------------


def test_issue19_17_disk_full_is_said_and_committed_answers_kept(cjb, tmp_path):
    # Before: sqlite3.OperationalError "cannot rollback - no transaction is active".
    path = tmp_path / "c.sqlite"
    with OpenAIServer() as server:
        spec = _spec(server)
        with RequestCache(path) as cache:
            cache._conn.execute("PRAGMA max_page_count=12")  # a disk that fills up
            with pytest.raises(runner.JudgeRunError) as err:
                runner.run(cjb, spec, cache=cache, progress=False)
            kept = len(cache)
        message = str(err.value)
        assert "disk full" in message and "rollback" not in message
        assert f"{kept} answers were stored before stopping" in message
        assert 0 < kept < N
        server.reset()
        done = _run(cjb, spec, path)  # space freed: the rerun pays only for the rest
        assert (done.summary.cache_hits, done.summary.answered, server.total) == (
            kept,
            N - kept,
            N - kept,
        )


def test_issue19_17_failed_write_raises_its_own_error(tmp_path):
    with RequestCache(tmp_path / "c.sqlite") as cache:
        cache.put("a", {"q": 0}, {"content": "x"})
        pages = cache._conn.execute("PRAGMA page_count").fetchone()[0]
        cache._conn.execute(f"PRAGMA max_page_count={pages}")  # the disk is full now
        with pytest.raises(sqlite3.OperationalError, match="full"):
            cache.put_many([(f"k{i}", {"q": i}, {"content": "y" * 5000}) for i in range(50)])
        assert cache.get("a") == {"content": "x"} and len(cache) == 1
