"""Ray Data back-end (`judgelab[ray]`): exported shards through a local Ray, into the cache.

The output-line tests run everywhere; the Ray tests skip (with the reason) where the extra is
not installed, and share one local Ray instance (2 CPUs, no dashboard).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

from judgelab.judges import runner
from judgelab.judges.batch import backend, export, formats, ingest, ray_run
from judgelab.judges.cache import RequestCache
from judgelab.testing.judge_cli import loopback_spec_dict
from judgelab.testing.openai_server import FaultPlan, OpenAIServer

KEY = "sk-" + "batch-SECRET-0123456789abcdef"  # conftest's key_env: Ray workers get it too
TIMING = ["latency_s", "created_at"]
COMPLETION = {
    "id": "chatcmpl-1",
    "created": 1_700_000_000,
    "model": "test-model",
    "choices": [{"message": {"content": "[[A]]"}, "finish_reason": "stop"}],
    "usage": {"prompt_tokens": 12, "completion_tokens": 3},
}


# --- output lines (no Ray needed) -------------------------------------------------------------


def test_output_lines_are_what_ingest_reads():
    ok = ray_run.line_from_result("k1", 200, json.dumps(COMPLETION), "")
    assert ok["response"]["status_code"] == 200 and ok["error"] is None
    cid, record = formats.answer_from_line(json.dumps(ok), file="out", line=1)
    assert cid == "k1" and record["content"] == "[[A]]" and record["completion_tokens"] == 3
    assert record["response_id"] == "chatcmpl-1"

    http_error = ray_run.line_from_result("k2", 500, '{"error": {"message": "boom"}}', "")
    assert formats.answer_from_line(json.dumps(http_error), file="out", line=2) == (
        "k2",
        "HTTP 500: boom",
    )
    not_json = ray_run.line_from_result("k3", 502, "<html>bad gateway</html>", "")
    assert formats.answer_from_line(json.dumps(not_json), file="out", line=3)[1] == (
        "HTTP 502: <html>bad gateway</html>"
    )
    dropped = ray_run.line_from_result("k4", 0, "", "ServerDisconnectedError")
    assert dropped["response"] is None
    assert formats.answer_from_line(json.dumps(dropped), file="out", line=4)[1] == (
        "request_failed: ServerDisconnectedError"
    )
    cut = ray_run.line_from_result("k5", 200, json.dumps(COMPLETION)[:40], "")
    message = formats.answer_from_line(json.dumps(cut), file="out", line=5)[1]
    assert isinstance(message, str) and message.startswith(
        "request_failed: HTTP 200 answer is not JSON"
    )
    ids = {ray_run.output_line("k", error="x")["id"] for _ in range(3)}
    assert len(ids) == 3  # every line has its own id


def test_vllm_engine_rows_map_to_ingestible_lines():
    body = {"model": "m", "messages": [{"role": "user", "content": "U"}], "max_tokens": 9}
    body |= {"temperature": 0.0, "seed": 3}
    row = {"custom_id": "k", "body": json.dumps(body)}
    assert ray_run._engine_row(row) == {
        "messages": body["messages"],
        "sampling_params": {"temperature": 0.0, "max_tokens": 9, "seed": 3},
    }
    done = {**row, "generated_text": "[[B]]", "num_input_tokens": 7, "num_generated_tokens": 2}
    line = ray_run._engine_line(done)["line"]
    cid, record = formats.answer_from_line(line, file="out", line=1)
    assert cid == "k" and record["content"] == "[[B]]" and record["response_model"] == "m"
    assert (record["prompt_tokens"], record["completion_tokens"]) == (7, 2)
    failed = {**row, "__inference_error__": "CUDA out of memory"}
    assert ray_run._line_of_row(failed)["error"]["message"] == "CUDA out of memory"


def test_settings_and_missing_extra_give_clear_errors(monkeypatch):
    with pytest.raises(ValueError, match="unknown Ray engine 'tpu'"):
        ray_run.RaySettings(engine="tpu")
    with pytest.raises(ValueError, match="concurrency must be >= 1"):
        ray_run.RaySettings(concurrency=0)
    monkeypatch.setitem(sys.modules, "ray", None)  # as if the extra were not installed
    with pytest.raises(ImportError, match=r"pip install 'judgelab\[ray\]'"):
        ray_run.import_ray()


def test_input_of_another_endpoint_is_refused_before_anything_runs(cjb, make_spec, tmp_path):
    spec = make_spec("http://127.0.0.1:9/v1")
    with RequestCache(tmp_path / "c") as cache:
        (shard,) = export.write_shards(export.pending(cjb, spec, cache).todo, tmp_path / "in")
    other = make_spec("http://127.0.0.1:10/v1")
    with pytest.raises(formats.BatchFormatError, match="line 1: custom_id is not the key"):
        ray_run.read_inputs([shard], other)
    assert len(ray_run.read_inputs([shard, shard], spec)) == 32  # a repeat is sent once


# --- on a local Ray instance ------------------------------------------------------------------


@pytest.fixture(scope="module")
def local_ray():
    """One local Ray (2 CPUs, no dashboard) for the module; the key is in its environment."""
    pytest.importorskip(
        "ray.data.llm", reason="the Ray back-end needs the extra: pip install 'judgelab[ray]'"
    )
    import ray

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("JL_BATCH_KEY", KEY)  # workers inherit the driver's environment
        mp.setenv("RAY_USAGE_STATS_ENABLED", "0")
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
        try:
            yield ray
        finally:
            ray.shutdown()


def _exported(spec, items, tmp_path: Path) -> list[Path]:
    with RequestCache(tmp_path / "export.sqlite") as cache:
        work = export.pending(items, spec, cache)
    return export.write_shards(work.todo, tmp_path / "in", max_lines=6)


@pytest.mark.slow
def test_ray_output_gives_the_online_runner_table(local_ray, cjb, make_spec, key_env, tmp_path):
    with OpenAIServer(api_key=key_env) as server:
        spec = make_spec(server.url, orders=[0])  # 16 requests, in 3 shards
        files = _exported(spec, cjb, tmp_path)
        out = tmp_path / "out.jsonl"
        settings = ray_run.RaySettings(concurrency=2, batch_size=4, progress=False)
        report = ray_run.run(files, spec, out, settings)
        assert (report.requests, report.answered, report.errors) == (16, 16, 0)
        assert server.total == 16  # each request sent once
        with RequestCache(tmp_path / "online.sqlite") as cache:
            online = runner.run(cjb, spec, cache=cache, progress=False, write_tables=False)
            online_records = cache.get_many(cache.keys())
    lines = out.read_text().splitlines()
    assert len(lines) == 16 and KEY not in out.read_text()
    requests = {}
    for f in files:
        requests.update(ingest.requests_of_input(f, spec.endpoint_id))
    with RequestCache(tmp_path / "ray.sqlite") as cache:
        got = ingest.ingest_file(out, requests, cache)
        assert (got.lines, got.stored, len(got.errors), len(got.unknown)) == (16, 16, 0, 0)
        ray_records = cache.get_many(cache.keys())
        built = runner.build_from_cache(cjb, spec, cache=cache)
    assert online.summary.answered == 16 and len(built.judgments) == 16
    pd.testing.assert_frame_equal(
        online.judgments.drop(columns=TIMING), built.judgments.drop(columns=TIMING)
    )
    pd.testing.assert_frame_equal(online.details, built.details)
    assert set(online_records) == set(ray_records)
    for key, rec in online_records.items():
        assert {k: v for k, v in rec.items() if k not in TIMING} == {
            k: v for k, v in ray_records[key].items() if k not in TIMING
        }


@pytest.mark.slow
def test_cli_server_errors_become_error_lines_never_cached(
    local_ray, cjb, make_spec, key_env, tmp_path, capsys
):
    from judgelab.cli import batch as cli

    faults = FaultPlan(rate=0.3, kinds=("500", "drop"), attempts=99)
    with OpenAIServer(api_key=key_env, faults=faults) as server:
        spec_dict = loopback_spec_dict(server.url, api_key_env="JL_BATCH_KEY", orders=[1])
        spec_path = tmp_path / "judge.yaml"
        spec_path.write_text(yaml.safe_dump(spec_dict))
        files = _exported(make_spec(server.url, orders=[1]), cjb, tmp_path)
        out = tmp_path / "out.jsonl"
        argv = [*map(str, files), "--judge", str(spec_path), "--out", str(out)]
        argv += ["--benchmark", "sample:contextualjudgebench", "--order", "1"]
        code = cli.main(["ray", *argv, "--max-retries", "1", "--batch-size", "4", "--ingest"])
        sent = server.total
    printed = capsys.readouterr()
    assert code == cli.EXIT_INCOMPLETE, printed.err
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    failed = {x["custom_id"] for x in lines if x["error"] or x["response"]["status_code"] != 200}
    assert len(lines) == 16 and 0 < len(failed) < 16
    assert sent == 16 + len(failed)  # the failed ones were retried once, the others not
    assert f"error lines        {len(failed)} " in printed.out, printed.out
    assert f"judgment rows      {16 - len(failed)} ({len(failed)} pending)" in printed.out
    with backend.opened(None) as cache:
        cached = cache.present([x["custom_id"] for x in lines])
    assert cached == {x["custom_id"] for x in lines} - failed
    assert KEY not in out.read_text() and KEY not in printed.out + printed.err
    logs = Path(local_ray._private.worker._global_node.get_session_dir_path())
    for path in logs.rglob("*"):
        if path.is_file() and path.stat().st_size < 50_000_000:
            assert KEY.encode() not in path.read_bytes(), path
    assert os.environ["JL_BATCH_KEY"] == KEY


@pytest.mark.slow
def test_a_failed_run_keeps_what_came_back_and_names_no_key(
    local_ray, cjb, make_spec, key_env, tmp_path, monkeypatch
):
    spec = make_spec("http://127.0.0.1:9/v1", orders=[0])
    files = _exported(spec, cjb, tmp_path)
    last = json.loads(files[-1].read_text().splitlines()[-1])["custom_id"]

    def failing(spec, settings):
        def line(row):
            if row["custom_id"] == last:  # after the other blocks: fail with the key in it
                import time

                time.sleep(3)
                raise RuntimeError("boom " + os.environ["JL_BATCH_KEY"])
            out = ray_run.output_line(row["custom_id"], status_code=200, body=COMPLETION)
            return {"line": json.dumps(out)}

        return lambda ds: ds.map(line)

    monkeypatch.setattr(ray_run, "http_processor", failing)
    out = tmp_path / "out.jsonl"
    settings = ray_run.RaySettings(batch_size=4, progress=False)
    with pytest.raises(ray_run.JudgeRunError, match="the Ray run failed") as info:
        ray_run.run(files, spec, out, settings)
    assert KEY not in str(info.value) and not out.exists()
    partial = tmp_path / "out.jsonl.partial"
    assert f"answers that came back are in {partial}" in str(info.value)
    kept = [json.loads(x) for x in partial.read_text().splitlines()]
    assert 0 < len(kept) < 16 and last not in {x["custom_id"] for x in kept}
    requests = {}
    for f in files:
        requests.update(ingest.requests_of_input(f, spec.endpoint_id))
    with RequestCache(tmp_path / "c.sqlite") as cache:
        got = ingest.ingest_file(partial, requests, cache)
    assert got.stored == len(kept) and not got.errors
