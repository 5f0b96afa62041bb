"""Issue 32 (Reliability III), the runner's items 3, 5, 6, 9 and 18.

Every test talks to a loopback server only (`judgelab.testing.openai_server`).
"""

from __future__ import annotations

import functools
import json
import os
import re
import signal
import subprocess
import sys
import time

import pandas as pd
import pytest

from judgelab.cli import judge as cli_judge
from judgelab.core import secrets, tables
from judgelab.data import catalog
from judgelab.judges import clients, runner, table
from judgelab.judges import spec as spec_mod
from judgelab.judges.cache import RequestCache, request_key
from judgelab.judges.claims import Claims
from judgelab.testing import openai_server
from judgelab.testing.items import write_pairwise_items
from judgelab.testing.judge_cli import judge_command, loopback_spec_dict, write_loopback_spec
from judgelab.testing.openai_server import FaultPlan, OpenAIServer

KEY = "sk-" + "test-REL3-runner-0123456789abcdef"
N_ITEMS = 10  # x 2 orders = 20 requests


@pytest.fixture()
def key_env(monkeypatch):
    monkeypatch.setenv("JL_REL3_KEY", KEY)


@pytest.fixture()
def items(tmp_path):
    path = write_pairwise_items(tmp_path / "items.jsonl", N_ITEMS, benchmark="rel3")
    return catalog.load_items(str(path))


def _spec(server, **kw):
    keys = {"concurrency": 4, "timeout_s": 5.0, "max_retries": 2, "backoff_s": 0.001, **kw}
    return spec_mod.from_dict(loopback_spec_dict(server.url, api_key_env="JL_REL3_KEY", **keys))


# --- 3: bytes past Content-Length are never the next request's answer ---------------------


@pytest.mark.parametrize("client", ["aiohttp", "openai"])  # "streams" cached 8 of 20 wrong
def test_rel3_3_bytes_past_content_length_are_never_another_requests_answer(
    tmp_path, key_env, items, client
):
    faults = FaultPlan(rate=0.3, kinds=("extra_bytes",), seed=3)
    with OpenAIServer(faults=faults) as server:
        spec = _spec(server, client=client)
        planned = table.plan(items, spec).requests
        assert any(faults.fault_for(openai_server.canonical_key(p.payload()), 0) for p in planned)
        with RequestCache(tmp_path / "c.sqlite") as cache:
            res = runner.run(items, spec, cache=cache, progress=False, write_tables=False)
            stored = cache.get_many(p.key for p in planned)
    expected = {p.key: openai_server.default_responder(p.payload()) for p in planned}
    wrong = {k for k, r in stored.items() if r["content"] != expected[k]}
    assert len(stored) == 2 * N_ITEMS and res.summary.failed == 0
    assert wrong == set(), f"{len(wrong)} of {len(stored)} answers cached under another key"


def test_rel3_3_a_spec_naming_the_removed_streams_client_is_refused_with_the_alternatives():
    spec = {"endpoint": "openai-compatible", "model": "m", "template": "cjb.workflow"}
    with pytest.raises(spec_mod.JudgeSpecError) as err:
        spec_mod.from_dict({**spec, "client": "streams"}, source="judge.yaml")
    message = str(err.value)
    assert "judge.yaml" in message and "key 'client'" in message
    assert "'streams' was removed" in message and "'aiohttp'" in message
    assert "'openai'" in message
    assert clients.CLIENTS == ("aiohttp", "openai")
    for name in clients.CLIENTS:
        assert spec_mod.from_dict({**spec, "client": name}).client == name


# --- 5: a content that is not text is kept flagged, never fatal, and evictable ------------


def _content_faults():
    return FaultPlan(rate=0.4, kinds=("non_text_content",), seed=5)


def _odd_keys(planned, faults):
    return {
        p.key for p in planned if faults.fault_for(openai_server.canonical_key(p.payload()), 0)
    }


def test_rel3_5_non_text_content_online_is_flagged_and_good_answers_reach_the_table(
    tmp_path, key_env
):
    items_file = write_pairwise_items(tmp_path / "items.jsonl", N_ITEMS, benchmark="rel3")
    items = catalog.load_items(str(items_file))
    faults = _content_faults()
    with OpenAIServer(faults=faults) as server:
        spec_file = write_loopback_spec(
            tmp_path / "judge.yaml", server.url, api_key_env="JL_REL3_KEY", backoff_s=0.001
        )
        spec = spec_mod.load(spec_file)
        planned = table.plan(items, spec).requests
        odd = _odd_keys(planned, faults)
        assert 0 < len(odd) < len(planned)
        cmd = judge_command(spec_file, "--benchmark", str(items_file), "--no-progress")
        first = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        assert first.returncode == 0, first.stderr[-2000:]
        assert f"flagged answers    {len(odd)}" in first.stdout
        assert "content is a " in first.stdout and "not text" in first.stdout
        again = runner.run(items, spec, progress=False)  # the same cache, read back
        assert again.summary.requested == 0 and server.total == len(planned)  # paid once
        evicting = runner.run(items, spec, progress=False, evict_invalid=True)
        assert evicting.summary.evicted == len(odd)
        assert server.total == len(planned) + len(odd)  # the evicted ones only, asked again
    written = tables.read_judgments(runner.judgments_path("rel3", spec.judge_id))
    assert len(written) == len(planned)
    by_key = written.set_index("request_key")
    good = [p.key for p in planned if p.key not in odd]
    assert by_key.loc[good, "valid"].all()
    expected = {p.key: openai_server.default_responder(p.payload()) for p in planned}
    assert all(by_key.loc[k, "output"] == expected[k] for k in good)
    assert not by_key.loc[sorted(odd), "valid"].any()
    assert by_key.loc[sorted(odd), "output"].isna().all()


def test_rel3_5_non_text_content_from_a_batch_output_is_flagged_and_evictable(tmp_path):
    from judgelab.judges.batch.ingest import ingest_lines

    requests = {}
    lines = []
    for i, odd in enumerate([None, 42, ["A"], {"verdict": "A"}]):
        request = {
            "endpoint": "http://h/v1",
            "model": "m",
            "messages": [{"role": "user", "content": str(i)}],
        }
        key = request_key(request)
        requests[key] = request
        body = openai_server.completion(request, "A" if odd is None else odd, "stop")
        lines.append(
            (i + 1, json.dumps({"custom_id": key, "response": {"status_code": 200, "body": body}}))
        )
    with RequestCache(tmp_path / "c.sqlite") as cache:
        report = ingest_lines(lines, requests, cache, file="out.jsonl")
        assert report.stored == 4 and not report.errors
        flagged = cache.invalid(requests)
        assert len(flagged) == 3 and all("not text" in p[0] for p in flagged.values())
        stored = cache.get_many(requests)
        assert sorted(str(r["content"]) for r in stored.values()) == ["A", "None", "None", "None"]
        assert {r.get("content_invalid") for r in stored.values()} == {
            None,
            "42",
            '["A"]',
            '{"verdict":"A"}',
        }
        assert cache.evict(flagged) == 3 and len(cache) == 1


def test_rel3_5_an_old_entry_with_non_text_content_builds_and_is_evicted(tmp_path, key_env, items):
    with OpenAIServer() as server:
        spec = _spec(server)
        planned = table.plan(items, spec).requests
        with RequestCache(tmp_path / "c.sqlite") as cache:
            runner.run(items, spec, cache=cache, progress=False, write_tables=False)
            bad = planned[0].key
            cache.evict([bad])  # what an older version stored, unchecked
            cache.put(bad, planned[0].request, {"content": 42, "finish_reason": "stop"})
            res = runner.run(items, spec, cache=cache, progress=False)
            assert len(res.judgments) == 2 * N_ITEMS and res.summary.requested == 0
            row = res.judgments.set_index("request_key").loc[bad]
            assert not row["valid"] and pd.isna(row["output"])
            again = runner.run(items, spec, cache=cache, progress=False, evict_invalid=True)
            assert again.summary.evicted == 1 and again.summary.answered == 1
            assert res.judgments["valid"].sum() == 2 * N_ITEMS - 1
            assert again.judgments["valid"].all()


# --- 18: Azure Functions / API Management key shapes in a base_url query -----------------

AZURE_KEYS = ("code", "subscription-key", "x-api-key", "Subscription-Key", "x-functions-key")


@pytest.mark.parametrize("name", AZURE_KEYS)
def test_rel3_18_base_url_with_an_azure_key_query_is_refused_and_scrubbed(name):
    url = f"https://fn.example.net/api?x=1&{name}=Zm9vYmFyMTIzNDU2"
    with pytest.raises(spec_mod.JudgeSpecError, match="base_url.*literal API key"):
        spec_mod.from_dict(
            {
                "endpoint": "openai-compatible",
                "model": "m",
                "template": "cjb.workflow",
                "base_url": url,
            }
        )
    assert secrets.scrub(f"HTTP 401 for {url}") == f"HTTP 401 for {url.split(name)[0]}{name}=***"


# --- 6: two runs on one cache and benchmark pay each request once --------------------------


def _started_together(cmds, env):
    procs = [
        subprocess.Popen(c, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        for c in cmds
    ]
    return [(p, *p.communicate(timeout=120)) for p in procs]


def test_rel3_6_two_judge_processes_started_together_pay_each_request_once(tmp_path, key_env):
    items_file = write_pairwise_items(tmp_path / "items.jsonl", 100, benchmark="rel3")
    waited = 0
    with OpenAIServer(latency_s=0.03) as server:
        spec_file = write_loopback_spec(
            tmp_path / "judge.yaml", server.url, api_key_env="JL_REL3_KEY", concurrency=4
        )
        cmd = judge_command(spec_file, "--benchmark", str(items_file), "--no-progress")
        for attempt in range(2):  # a fresh cache and table each time (more: the fault soak)
            env = {**os.environ, "JUDGELAB_HOME": str(tmp_path / f"home{attempt}")}
            server.reset()
            done = _started_together([cmd, cmd], env)
            for proc, out, err in done:
                assert proc.returncode == 0, err[-2000:]
                assert (
                    "judgment rows      200 (0 invalid verdicts, raw output kept; 0 pending)"
                    in out
                )
            made = [int(re.search(r"requests made +(\d+)", out).group(1)) for _, out, _ in done]
            assert server.total == 200 and sum(made) == 200, (attempt, server.total, made)
            waited += sum("from another run" in out for _, out, _ in done)
    assert waited, "the two runs never overlapped: the test proved nothing"


HOLDER = """
import sys, time
from judgelab.judges.cache import RequestCache
from judgelab.judges.claims import Claims
with RequestCache(sys.argv[1]) as cache, Claims(cache) as claims:
    print(len(claims.take(sys.argv[2:]).mine), flush=True)
    time.sleep(120)
"""


def test_rel3_6_claims_hold_while_their_run_lives_and_free_when_it_is_killed(tmp_path):
    keys = [f"k{i}" for i in range(5)]
    path = tmp_path / "c.sqlite"
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(path), *keys[:3]], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout.readline().strip() == "3"
        with RequestCache(path) as cache, Claims(cache) as claims:
            cache.put("k0", {"q": 0}, {"content": "A"})  # the holder stored one answer
            got = claims.take(keys)
            assert got.answered == {"k0"} and sorted(got.mine) == ["k3", "k4"]
            assert got.busy == {"k1": holder.pid, "k2": holder.pid}
            holder.send_signal(signal.SIGKILL)
            holder.wait(10)
            t0 = time.monotonic()
            later = claims.take(["k1", "k2"])  # no lease to wait out
            assert sorted(later.mine) == ["k1", "k2"] and not later.busy
            assert time.monotonic() - t0 < 1.0
        with RequestCache(path) as cache, Claims(cache) as other:  # released on exit
            assert sorted(other.take(keys).mine) == ["k1", "k2", "k3", "k4"]
        assert not list((tmp_path / ".c.sqlite.claims").iterdir())  # no lock file left
    finally:
        holder.kill()
        holder.wait(10)


# --- 9: keys held by batches not collected yet are reported and skipped -------------------


def test_rel3_9_online_run_skips_keys_held_by_uncollected_batches(tmp_path, key_env, capsys):
    from judgelab.judges.batch_registry import Entry, Registry

    items_file = write_pairwise_items(tmp_path / "items.jsonl", N_ITEMS, benchmark="rel3")
    items = catalog.load_items(str(items_file))
    with OpenAIServer() as server:
        spec_file = write_loopback_spec(
            tmp_path / "judge.yaml", server.url, api_key_env="JL_REL3_KEY"
        )
        spec = spec_mod.load(spec_file)
        keys = [p.key for p in table.plan(items, spec).requests]
        reg = Registry()  # 12 keys in a batch in progress; 2 in one collected (not held)
        new = functools.partial(Entry, provider="openai", judge=spec.judge_id)
        reg.save(new(reg.new_id(), endpoint=spec.endpoint_id, keys=keys[:12], state="in_progress"))
        reg.save(new(reg.new_id(), endpoint=spec.endpoint_id, keys=keys[12:14], collected=True))
        args = ["--judge", str(spec_file), "--benchmark", str(items_file), "--no-progress"]

        assert cli_judge.main([*args, "--dry-run"]) == 0
        dry = capsys.readouterr().out
        assert re.search(r"held by batches +12 ", dry) and re.search(r"to request +8\n", dry)
        assert cli_judge.main(args) == 0
        out = capsys.readouterr().out
        assert server.total == 8  # the 12 held keys were not requested
        assert re.search(r"held by batches +12 ", out) and "8 answered" in out
        assert "12 pending" in out
        assert cli_judge.main([*args, "--request-held"]) == 0
        assert server.total == 20 and "12 answered" in capsys.readouterr().out
