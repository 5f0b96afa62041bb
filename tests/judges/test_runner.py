"""The runner against a loopback OpenAI-compatible server (never the internet)."""

from __future__ import annotations

import math
import time
from pathlib import Path

import pandas as pd
import pytest

from judgelab.cli import judge as cli_judge
from judgelab.core import schema, tables
from judgelab.data import catalog
from judgelab.judges import clients, runner, table
from judgelab.judges import spec as spec_mod
from judgelab.judges.cache import RequestCache
from judgelab.testing.judge_cli import loopback_spec_dict, write_loopback_spec
from judgelab.testing.openai_server import TRANSPORT_FAULTS, FaultPlan, OpenAIServer

KEY = "sk-" + "test-SECRET-0123456789abcdef"
TIMING = ["latency_s", "created_at"]


@pytest.fixture()
def server():
    with OpenAIServer(latency_s=0.002) as srv:
        yield srv


@pytest.fixture(params=list(clients.CLIENTS))
def client(request):
    """Both HTTP clients must behave the same under every fault."""
    return request.param


@pytest.fixture()
def key_env(monkeypatch):
    monkeypatch.setenv("JL_TEST_KEY", KEY)


@pytest.fixture()
def cjb():
    return catalog.load_items("sample:contextualjudgebench")


def _spec(server, **kw):
    keys = {"concurrency": 4, "timeout_s": 0.5, "max_retries": 6, "backoff_s": 0.001, **kw}
    return spec_mod.from_dict(loopback_spec_dict(server.url, api_key_env="JL_TEST_KEY", **keys))


def _run(items, spec, cache_path, **kw):
    with RequestCache(cache_path) as cache:
        return runner.run(items, spec, cache=cache, progress=False, **kw)


def test_identical_tables_with_and_without_transport_faults(
    server, client, key_env, cjb, tmp_path
):
    spec = _spec(server, client=client)
    clean = _run(cjb, spec, tmp_path / "clean.sqlite", write_tables=False)
    assert clean.summary.answered == 32 and clean.summary.retries == 0  # 16 pairs x 2 orders
    server.reset()
    # 60% of requests fail on their first attempt with one of the six transport faults;
    # "timeout" hangs 1 s, past the 0.5 s client timeout.
    server.set_faults(FaultPlan(rate=0.6, kinds=TRANSPORT_FAULTS, hang_s=1.0, seed=3))
    faulty = _run(cjb, spec, tmp_path / "faulty.sqlite", write_tables=False)
    s = faulty.summary
    assert (s.answered, s.failed, s.rows, s.pending) == (32, 0, 32, 0)
    assert s.retries == sum(1 for n in server.counts.values() if n == 2) > 0
    assert set(s.retry_reasons) == {"429", "500", "timeout", "malformed", "connection"}
    a = clean.judgments.drop(columns=TIMING)
    b = faulty.judgments.drop(columns=TIMING)
    pd.testing.assert_frame_equal(a, b)
    assert clean.judgments["valid"].all()


def test_retry_after_is_honoured_and_retries_are_ours(server, client, key_env, tmp_path):
    items = schema.new_items(
        [
            {
                "benchmark": "b",
                "split": "s",
                "item_id": "1",
                "task": "pairwise",
                "question": "q",
                "context": "c",
                "response_pos": "p",
                "response_neg": "n",
            }
        ]
    )
    server.set_faults(FaultPlan(rate=1.0, kinds=("429",), retry_after_s=0.4))
    t0 = time.monotonic()
    res = _run(
        items,
        _spec(server, backoff_s=0.0, client=client),
        tmp_path / "c.sqlite",
        write_tables=False,
    )
    waited = time.monotonic() - t0
    assert res.summary.retries == 2 and res.summary.retry_reasons == {"429": 2}
    # Each of the 2 requests (2 orders) was received exactly twice: the client library itself
    # did not retry (max_retries=0 there), and our retry waited the server's 0.4 s.
    assert sorted(server.counts.values()) == [2, 2]
    assert waited >= 0.4


def test_failures_are_not_cached_counted_and_retried_next_run(
    server, client, key_env, cjb, tmp_path
):
    server.set_faults(FaultPlan(rate=1.0, kinds=("500",), attempts=10))
    spec = _spec(server, max_retries=2, client=client)
    first = _run(cjb, spec, tmp_path / "c.sqlite", write_tables=False)
    assert (first.summary.failed, first.summary.answered, first.summary.rows) == (32, 0, 0)
    assert all(n == 3 for n in server.counts.values())  # 1 try + 2 retries each
    assert "failed; rerun" in first.summary.format()
    server.set_faults(FaultPlan())
    second = _run(cjb, spec, tmp_path / "c.sqlite", write_tables=False)
    assert (second.summary.cache_hits, second.summary.answered, second.summary.rows) == (0, 32, 32)


def test_answer_faults_are_cached_kept_invalid_and_counted(server, client, key_env, cjb, tmp_path):
    server.set_faults(FaultPlan(rate=1.0, kinds=("empty_content", "length"), seed=1))
    res = _run(cjb, _spec(server, client=client), tmp_path / "c.sqlite", write_tables=False)
    assert all(n == 1 for n in server.counts.values())  # real answers: never re-asked
    j, d = res.judgments, res.details
    assert len(j) == 32 and res.summary.retries == 0
    empty = j["output"] == ""
    assert empty.any() and not j.loc[empty, "valid"].any()
    truncated = d["note"].str.startswith("truncated (finish_reason=length)")
    assert truncated.any() and (d.loc[truncated, "finish_reason"] == "length").all()
    assert int(truncated.sum() + empty.sum()) == 32
    assert res.summary.invalid == int((~j["valid"]).sum()) >= int(empty.sum())
    assert j["chosen"][~j["valid"]].isna().all()


def test_wrong_key_stops_the_run_clearly(server, client, key_env, cjb, tmp_path):
    server.set_faults(FaultPlan(rate=1.0, kinds=("401",)))
    with pytest.raises(runner.JudgeRunError, match=r"refused.*\$JL_TEST_KEY"):
        _run(cjb, _spec(server, client=client), tmp_path / "c.sqlite")
    assert server.total <= 4  # stops after the in-flight requests of 4 workers


def test_self_consistency_samples_are_distinct_requests_and_reuse_sample_0(
    server, key_env, cjb, tmp_path
):
    items = cjb.head(2)
    cache = tmp_path / "c.sqlite"
    single = _run(items, _spec(server, temperature=0.7), cache, write_tables=False)
    assert single.summary.answered == 4  # 2 pairs x 2 orders
    sc = _run(items, _spec(server, temperature=0.7, n=3), cache, write_tables=False)
    # 2 pairs x 2 orders x 3 samples = 12 rows; sample 0 is the single run's request (4 hits).
    assert (sc.summary.planned, sc.summary.cache_hits, sc.summary.answered) == (12, 4, 8)
    assert sorted(sc.judgments["sample"].unique()) == [0, 1, 2]
    assert len(server.counts) == 12 and set(server.counts.values()) == {1}
    s0 = sc.judgments[sc.judgments["sample"] == 0]["request_key"].tolist()
    assert s0 == single.judgments["request_key"].tolist()


def test_every_response_is_cached_before_parsing(server, key_env, cjb, tmp_path, monkeypatch):
    from judgelab.judges import templates

    broken = templates.REGISTRY["cjb.workflow"]

    def boom(output, item, cond):
        raise RuntimeError("parser bug")

    monkeypatch.setitem(
        templates.REGISTRY, "cjb.workflow", broken.__class__(**{**broken.__dict__, "parse": boom})
    )
    res = _run(cjb, _spec(server), tmp_path / "c.sqlite", write_tables=False)
    assert len(res.judgments) == 32 and not res.judgments["valid"].any()
    assert res.judgments["output"].str.contains(r"\*\*Result:\*\*").all()  # raw output kept
    assert res.details["note"].str.startswith("parser error: RuntimeError").all()
    with RequestCache(tmp_path / "c.sqlite") as c:
        assert len(c) == 32


def test_partial_runs_never_shrink_the_table(server, key_env, cjb, tmp_path):
    spec = _spec(server)
    cache = tmp_path / "c.sqlite"
    a = _run(cjb, spec, cache, limit=3)
    assert a.summary.answered == 6 and len(a.judgments) == 6
    b = _run(cjb, spec, cache, splits=["conciseness_qa"], limit=1)
    assert b.summary.answered == 2
    (path,) = b.paths
    assert len(tables.read_judgments(path)) == 8  # 6 earlier + 2 new, rebuilt from the cache
    with pytest.raises(ValueError, match=r"unknown split\(s\) \['nope'\]"):
        _run(cjb, spec, cache, splits=["nope"])


def test_dry_run_counts_and_estimates_without_calling(server, key_env, cjb, tmp_path):
    spec = _spec(server, price_in=2.0, price_out=10.0, max_tokens=100)
    cache = tmp_path / "c.sqlite"
    _run(cjb, spec, cache, limit=4, write_tables=False)  # 4 pairs x 2 orders cached
    server.reset()
    with RequestCache(cache) as c:
        est = runner.dry_run(cjb, spec, cache=c)
    assert server.total == 0
    assert (est.planned, est.cached, est.to_request) == (32, 8, 24)
    plan = table.plan(cjb, spec)
    uncached = plan.requests[8:]
    # One user message per request: ceil(chars / 4) + 4 (message) + 3 (reply priming).
    expected = sum(math.ceil(len(r.request["messages"][0]["content"]) / 4) + 7 for r in uncached)
    assert est.prompt_tokens == expected
    assert est.max_completion_tokens == 24 * 100
    assert est.cost_usd == pytest.approx((expected * 2.0 + 2400 * 10.0) / 1e6)


def test_cli_dry_run_and_run(server, key_env, cjb, tmp_path, capsys):
    spec_file = write_loopback_spec(
        tmp_path / "judge.yaml", server.url, api_key_env="JL_TEST_KEY", price_in=1, price_out=1
    )
    args = ["--judge", str(spec_file), "--benchmark", "sample:contextualjudgebench"]
    assert cli_judge.main([*args, "--dry-run", "--limit", "2"]) == 0
    out = capsys.readouterr().out
    assert "requests planned        4" in out and "already cached          0" in out
    assert server.total == 0
    assert cli_judge.main([*args, "--no-progress", "--order", "0"]) == 0
    out = capsys.readouterr().out
    assert "requests made      16 (16 answered, 0 failed)" in out
    assert cli_judge.main(["--judge", "nope", "--benchmark", "sample:contextualjudgebench"]) == 2
    assert "no judge spec named 'nope'" in capsys.readouterr().err


def test_api_key_is_written_nowhere(server, key_env, cjb, tmp_path, judgelab_home: Path):
    # Exercise success, retries, failures and the CLI, then scan every file under the
    # JUDGELAB_HOME tmp dir (tables, details, the sqlite db and its WAL) for the key.
    server.set_faults(FaultPlan(rate=0.5, kinds=("429", "500", "truncated_json"), seed=7))
    spec_file = write_loopback_spec(
        tmp_path / "judge.yaml",
        server.url,
        api_key_env="JL_TEST_KEY",
        template="cjb.structured",
        backoff_s=0.001,
    )
    assert (
        cli_judge.main(
            [
                "--judge",
                str(spec_file),
                "--benchmark",
                "sample:contextualjudgebench",
                "--no-progress",
            ]
        )
        == 0
    )
    server.set_faults(FaultPlan(rate=1.0, kinds=("500",), attempts=10))
    _run(cjb, _spec(server, template="cjb.criteria", max_retries=1), None)
    files = [p for p in judgelab_home.rglob("*") if p.is_file()]
    assert any(p.suffix == ".sqlite" for p in files) and any(p.suffix == ".parquet" for p in files)
    needle = KEY.encode()
    leaks = [str(p) for p in files if needle in p.read_bytes()]
    assert leaks == []


def test_a_failing_cache_write_stops_the_run_and_keeps_what_was_stored(
    server, key_env, cjb, tmp_path, monkeypatch
):
    import sqlite3

    calls = []
    real = RequestCache.write_rows

    def fail_after_two(self, rows):
        calls.append(1)
        if len(calls) > 2:
            raise sqlite3.OperationalError("disk I/O error")
        return real(self, rows)

    monkeypatch.setattr(RequestCache, "write_rows", fail_after_two)
    # issue 19 item 17: the real error, said by the run (not a rollback error or traceback)
    with pytest.raises(runner.JudgeRunError, match="disk I/O error. 2 answers were stored"):
        _run(cjb, _spec(server, concurrency=1), tmp_path / "c.sqlite", write_tables=False)
    monkeypatch.setattr(RequestCache, "write_rows", real)
    with RequestCache(tmp_path / "c.sqlite") as cache:
        assert len(cache) == 2  # one answer per commit with one worker: both kept
