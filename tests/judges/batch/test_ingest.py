"""Ingest of `vllm run-batch` output (a recorded file in vLLM's documented format)."""

from __future__ import annotations

import json

import pytest

from judgelab.judges.batch import BatchFormatError, backend, export, ingest
from judgelab.judges.cache import RequestCache
from judgelab.testing.openai_server import default_responder

URL = "http://127.0.0.1:8000/v1"  # where `vllm serve` would listen; only part of the key here


def _vllm_ok(line, n):
    """An answered line as vLLM's BatchRequestOutput serialises it."""
    body = line["body"]
    content = default_responder(body)
    return {
        "id": f"vllm-{n:032x}",
        "custom_id": line["custom_id"],
        "response": {
            "status_code": 200,
            "request_id": f"vllm-batch-{n:032x}",
            "body": {
                "id": f"chatcmpl-{n:032x}",
                "object": "chat.completion",
                "created": 1_760_000_000,
                "model": body["model"],
                "choices": [
                    {
                        "index": 0,
                        "message": {
                            "role": "assistant",
                            "content": content,
                            "tool_calls": [],
                            "reasoning_content": None,
                        },
                        "logprobs": None,
                        "finish_reason": "stop",
                        "stop_reason": None,
                    }
                ],
                "usage": {
                    "prompt_tokens": 120 + n,
                    "total_tokens": 130 + n,
                    "completion_tokens": 10,
                    "prompt_tokens_details": None,
                },
                "prompt_logprobs": None,
            },
        },
        "error": None,
    }


def _vllm_error(line, n, error):
    """An error line as vLLM writes it (status 400, no body, the error beside it)."""
    response = {"status_code": 400, "request_id": f"vllm-batch-{n:032x}", "body": None}
    return {
        "id": f"vllm-{n:032x}",
        "custom_id": line["custom_id"],
        "response": response,
        "error": error,
    }


@pytest.fixture()
def recorded(cjb, make_spec, tmp_path):
    """Export the sample's requests; write a vLLM output file for them (2 errors, reversed)."""
    spec = make_spec(URL, api_key_env=None)
    with RequestCache(tmp_path / "c") as cache:
        work = export.pending(cjb, spec, cache)
    (shard,) = export.write_shards(work.todo, tmp_path / "in")
    lines = [json.loads(x) for x in shard.read_text().splitlines()]
    out = [_vllm_ok(line, n) for n, line in enumerate(lines)]
    out[3] = _vllm_error(lines[3], 3, "This model's maximum context length is 4096 tokens.")
    err = {"error": {"message": "bad temperature", "type": "BadRequestError", "code": 400}}
    out[7] = _vllm_error(lines[7], 7, err)
    path = tmp_path / "out.jsonl"
    path.write_text("".join(json.dumps(o) + "\n" for o in reversed(out)))
    return spec, work, path, {lines[3]["custom_id"], lines[7]["custom_id"]}


def test_vllm_output_lands_in_the_cache_and_the_table(cjb, recorded, tmp_path):
    spec, work, path, failed = recorded
    requests = {p.key: p.request for p in work.plan.requests}
    with RequestCache(tmp_path / "c") as cache:
        report = ingest.ingest_file(path, requests, cache)
        assert (report.lines, report.stored, report.already_cached) == (32, 30, 0)
        assert set(report.errors) == failed and not report.unknown
        messages = sorted(report.errors.values())
        assert messages == sorted(
            [
                "This model's maximum context length is 4096 tokens.",
                "HTTP 400: BadRequestError: bad temperature",
            ]
        )
        again = ingest.ingest_file(path, requests, cache)  # idempotent
        assert (again.stored, again.already_cached) == (0, 30)
        built, written = backend.write_table(cjb, spec, cache)
    assert len(built.judgments) == 30 and built.judgments["valid"].all()
    pending = built.details[built.details["status"] == "pending"]
    assert set(pending["request_key"]) == failed and len(written) == 1
    row = built.judgments.iloc[0]
    assert row["prompt_tokens"] >= 120 and row["completion_tokens"] == 10
    # The failed keys are exported again, and only they.
    with RequestCache(tmp_path / "c") as cache:
        assert {p.key for p in export.pending(cjb, spec, cache).todo} == failed


def test_unknown_ids_and_bad_lines_are_reported_never_stored(recorded, tmp_path):
    _, work, path, _ = recorded
    requests = {p.key: p.request for p in work.plan.requests}
    lines = path.read_text().splitlines()
    stranger = json.loads(lines[0]) | {"custom_id": "f" * 64}
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join([lines[0], json.dumps(stranger), "", lines[1][:40], lines[2]]) + "\n")
    with RequestCache(tmp_path / "c") as cache:
        with pytest.raises(BatchFormatError, match=r"bad\.jsonl, line 4: not JSON"):
            ingest.ingest_file(bad, requests, cache)
        assert len(cache) == 1  # the line before the bad one is kept (a checked answer)
        bad.write_text("\n".join([lines[0], json.dumps(stranger)]) + "\n")
        report = ingest.ingest_file(bad, requests, cache)
        assert report.unknown == ["f" * 64] and "f" * 64 not in cache
        binary = tmp_path / "bin.jsonl"
        binary.write_bytes(b'{"custom_id": "\xff"}\n')
        with pytest.raises(BatchFormatError, match=r"bin\.jsonl, line 1: not UTF-8"):
            ingest.ingest_file(binary, requests, cache)


def test_an_input_file_whose_ids_are_not_the_request_keys_is_refused(recorded, tmp_path):
    _, work, _, _ = recorded
    (shard,) = export.write_shards(work.todo, tmp_path / "in2")
    assert len(ingest.requests_of_input(shard, work.todo[0].request["endpoint"])) == 32
    with pytest.raises(BatchFormatError, match="line 1: custom_id is not the key"):
        ingest.requests_of_input(shard, "http://elsewhere/v1")
