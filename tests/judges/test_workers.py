"""Worker processes sharing one fetch (`spec.workers`): same answers, same table, none lost."""

from __future__ import annotations

import os

import pytest

from judgelab.data import catalog
from judgelab.judges import runner, workers
from judgelab.judges import spec as spec_mod
from judgelab.judges.cache import RequestCache
from judgelab.testing.judge_cli import loopback_spec_dict
from judgelab.testing.openai_server import FaultPlan, OpenAIServer

KEY = "sk-" + "test-SECRET-workers-0123456789"
TIMING = ["latency_s", "created_at"]


@pytest.fixture()
def server():
    with OpenAIServer(latency_s=0.002) as srv:
        yield srv


@pytest.fixture()
def items(monkeypatch):
    monkeypatch.setenv("JL_TEST_KEY", KEY)
    monkeypatch.setattr(workers, "MIN_PER_WORKER", 1)  # the sample is small: 32 requests
    return catalog.load_items("sample:contextualjudgebench")


def _spec(server, **kw):
    keys = {"concurrency": 4, "timeout_s": 5, "max_retries": 3, "backoff_s": 0.001, **kw}
    return spec_mod.from_dict(loopback_spec_dict(server.url, api_key_env="JL_TEST_KEY", **keys))


def _run(items, spec, path):
    with RequestCache(path) as cache:
        return runner.run(items, spec, cache=cache, progress=False, write_tables=False)


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_workers_ask_each_request_once_and_build_the_same_table(
    server, items, tmp_path, monkeypatch, method
):
    one = _run(items, _spec(server), tmp_path / "one.sqlite")
    server.reset()
    monkeypatch.setenv("JUDGELAB_WORKER_START", method)
    spec = _spec(server, workers=3)
    assert workers.worker_count(spec, 32) == 3
    many = _run(items, spec, tmp_path / "many.sqlite")
    s = many.summary
    assert (s.requested, s.answered, s.failed, s.rows) == (32, 32, 0, 32)
    assert sorted(server.counts.values()) == [1] * 32  # every request sent once, by one worker
    assert s.prompt_tokens == one.summary.prompt_tokens > 0  # the workers' counters add up
    a = one.judgments.drop(columns=TIMING).reset_index(drop=True)
    b = many.judgments.drop(columns=TIMING).reset_index(drop=True)
    assert a.equals(b)
    with RequestCache(tmp_path / "many.sqlite") as cache:
        assert len(cache) == 32 and KEY not in cache.path.read_bytes().decode("latin-1")
    again = _run(items, spec, tmp_path / "many.sqlite")  # all cached: no worker starts
    assert (again.summary.cache_hits, again.summary.requested) == (32, 0)


def test_worker_retries_are_counted_in_the_run(server, items, tmp_path, monkeypatch):
    monkeypatch.setenv("JUDGELAB_WORKER_START", "fork")
    server.set_faults(FaultPlan(rate=0.5, kinds=("500",), seed=1))
    s = _run(items, _spec(server, workers=2), tmp_path / "c.sqlite").summary
    assert (s.answered, s.failed) == (32, 0)
    assert s.retries == sum(n - 1 for n in server.counts.values()) > 0
    assert s.retry_reasons.get("500") == s.retries


def test_a_worker_that_dies_loses_nothing_stored_and_counts_the_rest_failed(
    server, items, tmp_path, monkeypatch
):
    real = workers.fetch

    async def dies_halfway(spec, shard, cache, **kw):
        if os.environ.get("JL_DIE") and shard is not None and len(shard) < 16:
            await real(spec, shard[: len(shard) // 2], cache, **kw)
            os._exit(3)  # killed: no reply, no clean-up
        return await real(spec, shard, cache, **kw)

    monkeypatch.setenv("JUDGELAB_WORKER_START", "fork")  # the patch is inherited
    monkeypatch.setenv("JL_DIE", "1")
    monkeypatch.setattr(workers, "fetch", dies_halfway)
    spec = _spec(server, workers=3)  # shards of 11, 11 and 10: all three die halfway
    s = _run(items, spec, tmp_path / "c.sqlite").summary
    assert s.answered == 5 + 5 + 5 and s.failed == 32 - 15
    assert all("exited (3)" in e for e in s.errors.values())
    monkeypatch.delenv("JL_DIE")
    again = _run(items, spec, tmp_path / "c.sqlite").summary  # the next run asks the rest
    assert (again.cache_hits, again.answered, again.failed) == (15, 17, 0)


def test_a_refused_key_stops_every_worker_with_one_clear_error(items, tmp_path, monkeypatch):
    monkeypatch.setenv("JUDGELAB_WORKER_START", "fork")
    with OpenAIServer(api_key="sk-the-right-one") as srv:
        with pytest.raises(runner.JudgeRunError, match="refused") as info:
            _run(items, _spec(srv, workers=2), tmp_path / "c.sqlite")
    assert KEY not in str(info.value)


def test_start_method_is_fork_only_where_safe(monkeypatch):
    monkeypatch.setenv("JUDGELAB_WORKER_START", "spawn")
    assert workers.start_method() == "spawn"
    monkeypatch.setenv("JUDGELAB_WORKER_START", "teleport")
    with pytest.raises(ValueError, match="JUDGELAB_WORKER_START"):
        workers.start_method()
    monkeypatch.delenv("JUDGELAB_WORKER_START")
    with OpenAIServer():  # another thread runs: forking could copy a held lock
        assert workers.start_method() == "spawn"


def test_workers_is_a_checked_spec_field_outside_the_judge_id():
    base = loopback_spec_dict("http://127.0.0.1:1/v1", api_key_env="JL_TEST_KEY")
    assert spec_mod.from_dict(base).workers == 1
    two = spec_mod.from_dict({**base, "workers": 2})
    assert two.workers == 2 and two.judge_id == spec_mod.from_dict(base).judge_id
    with pytest.raises(spec_mod.JudgeSpecError, match="workers"):
        spec_mod.from_dict({**base, "workers": 0})


def test_merge_adds_counters_and_unites_dicts():
    a = workers.FetchStats(requested=2, answered=1, failed=1, retries=1, cost_usd=0.5)
    a.retry_reasons, a.errors = {"timeout": 1}, {"k1": "boom"}
    b = workers.FetchStats(requested=3, answered=3, retries=2, cost_usd=0.25)
    b.retry_reasons = {"timeout": 1, "http_429": 1}
    m = workers.merge([a, b])
    assert (m.requested, m.answered, m.failed, m.retries, m.cost_usd) == (5, 4, 1, 3, 0.75)
    assert m.retry_reasons == {"timeout": 2, "http_429": 1} and m.errors == {"k1": "boom"}


def test_kill_9_of_the_run_stops_its_workers_too(tmp_path, monkeypatch):
    """An orphaned worker would keep paying for requests the rerun asks again."""
    import signal
    import subprocess
    import time

    from judgelab.testing.items import write_pairwise_items
    from judgelab.testing.judge_cli import judge_command, write_loopback_spec

    monkeypatch.setenv("JL_TEST_KEY", KEY)
    items = write_pairwise_items(tmp_path / "items.jsonl", 600, benchmark="orphans")
    with OpenAIServer(latency_s=0.05) as srv:
        spec = write_loopback_spec(
            tmp_path / "judge.yaml",
            srv.url,
            api_key_env="JL_TEST_KEY",
            concurrency=8,
            workers=2,
        )
        cmd = judge_command(spec, "--benchmark", str(items), "--no-progress")
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while srv.total < 40:
            assert proc.poll() is None and time.monotonic() < deadline, "no progress"
            time.sleep(0.02)
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        time.sleep(1.0)  # the workers' last answers arrive and are stored
        after = srv.total
        time.sleep(1.0)
        assert srv.total == after < 1200, "orphaned workers kept requesting"
