"""The request phase: a cached rerun needs no key; a missing key fails at the first request."""

from __future__ import annotations

import pytest

from judgelab.data import catalog
from judgelab.judges import runner
from judgelab.judges import spec as spec_mod
from judgelab.judges.cache import RequestCache
from judgelab.testing.judge_cli import loopback_spec_dict
from judgelab.testing.openai_server import OpenAIServer

KEY = "sk-" + "test-SECRET-stream-0123456789"


@pytest.fixture()
def items():
    return catalog.load_items("sample:contextualjudgebench")


def _spec(url, **kw):
    return spec_mod.from_dict(loopback_spec_dict(url, api_key_env="JL_TEST_KEY", **kw))


def test_a_cached_rerun_needs_no_key_and_opens_no_connection(items, tmp_path, monkeypatch):
    monkeypatch.setenv("JL_TEST_KEY", KEY)
    with OpenAIServer() as srv:
        with RequestCache(tmp_path / "c.sqlite") as c:
            runner.run(items, _spec(srv.url), cache=c, progress=False, write_tables=False)
        url = srv.url
    monkeypatch.delenv("JL_TEST_KEY")  # and the server is gone
    with RequestCache(tmp_path / "c.sqlite") as c:
        again = runner.run(items, _spec(url), cache=c, progress=False, write_tables=False)
    s = again.summary
    assert (s.cache_hits, s.requested, s.failed, s.rows) == (32, 0, 0, 32)


def test_a_missing_key_fails_at_the_first_uncached_request(items, tmp_path, monkeypatch):
    monkeypatch.delenv("JL_TEST_KEY", raising=False)
    with pytest.raises(spec_mod.JudgeSpecError, match="JL_TEST_KEY"):
        with RequestCache(tmp_path / "c.sqlite") as c:
            runner.run(
                items, _spec("http://127.0.0.1:9/v1"), cache=c, progress=False, write_tables=False
            )
