"""Batch line formats: OpenAI / vLLM and Anthropic input lines, output lines into records."""

from __future__ import annotations

import json

import pytest

from judgelab.judges import table
from judgelab.judges.batch import formats
from judgelab.judges.batch.formats import BatchFormatError, answer_from_line


def _planned(cjb, make_spec):
    spec = make_spec("http://127.0.0.1:9/v1", seed=7, n=2, top_p=0.9)
    return table.plan(cjb, spec).requests


def test_openai_line_is_the_online_payload_keyed_by_the_request_key(cjb, make_spec):
    for p in _planned(cjb, make_spec)[:6]:
        line = formats.openai_line(p)
        assert set(line) == {"custom_id", "method", "url", "body"}
        assert (line["method"], line["url"]) == ("POST", "/v1/chat/completions")
        assert line["custom_id"] == p.key and len(p.key) == 64
        assert line["body"] == p.payload() and line["body"]["model"] == "test-model"
        assert "endpoint" not in line["body"]


def test_anthropic_line_moves_system_out_and_keeps_the_64_hex_id(cjb, make_spec):
    planned = _planned(cjb, make_spec)
    p = planned[0]
    messages = [{"role": "system", "content": "Be fair."}, *p.request["messages"]]
    p = table.Planned(**{**p.__dict__, "request": {**p.request, "messages": messages}})
    line = formats.anthropic_line(p)
    assert line["custom_id"] == p.key and formats.ANTHROPIC_ID.match(line["custom_id"])
    params = line["params"]
    assert params["system"] == "Be fair." and params["model"] == "test-model"
    assert all(m["role"] != "system" for m in params["messages"])
    assert params["max_tokens"] == 1024 and params["top_p"] == 0.9 and "seed" not in params
    too_long = table.Planned(**{**p.__dict__, "key": "k" * 65})
    with pytest.raises(ValueError, match="custom_id"):
        formats.anthropic_line(too_long)


def _completion(content="**Result:** A", finish="stop"):
    return {
        "id": "chatcmpl-1",
        "model": "m-0613",
        "created": 1_700_000_000,
        "choices": [{"message": {"content": content}, "finish_reason": finish}],
        "usage": {"prompt_tokens": 11, "completion_tokens": 3},
    }


def test_an_answered_line_becomes_the_online_record_shape():
    line = {"id": "r", "custom_id": "k1", "response": {"status_code": 200, "body": _completion()}}
    cid, rec = answer_from_line(json.dumps(line), file="f", line=1)
    assert cid == "k1"
    assert set(rec) == {
        "content",
        "finish_reason",
        "prompt_tokens",
        "completion_tokens",
        "latency_s",
        "response_model",
        "response_id",
        "created_at",
    }
    assert (rec["content"], rec["prompt_tokens"], rec["response_model"]) == (
        "**Result:** A",
        11,
        "m-0613",
    )
    assert rec["created_at"].startswith("2023-11-14T22:13:20")


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ({"custom_id": "k", "response": {"status_code": 500, "body": {"error": {"message": "x"}}}},
         "HTTP 500: x"),
        ({"custom_id": "k", "response": None, "error": {"code": "batch_expired", "message": "m"}},
         "batch_expired: m"),
        ({"custom_id": "k", "response": {"status_code": 200, "body": {"choices": []}}},
         "no choices"),
        ({"custom_id": "k", "result": {"type": "expired"}}, "expired"),
    ],
)  # fmt: skip
def test_error_lines_are_messages_not_records(line, expected):
    cid, answer = answer_from_line(json.dumps(line), file="f", line=3)
    assert cid == "k" and isinstance(answer, str) and expected in answer


def test_an_answer_over_max_response_bytes_is_an_error():
    line = {"custom_id": "k", "response": {"status_code": 200, "body": _completion("x" * 5000)}}
    _, answer = answer_from_line(json.dumps(line), file="f", line=1, limit=1024)
    assert isinstance(answer, str) and "max_response_bytes=1024" in answer


def test_anthropic_results_map_stop_reason_and_usage():
    message = {
        "id": "msg_1",
        "model": "claude-x",
        "content": [{"type": "text", "text": "**Result:** "}, {"type": "text", "text": "B"}],
        "stop_reason": "max_tokens",
        "usage": {"input_tokens": 20, "output_tokens": 4},
    }
    text = json.dumps({"custom_id": "k", "result": {"type": "succeeded", "message": message}})
    _, rec = answer_from_line(text, file="f", line=1)
    assert rec["content"] == "**Result:** B" and rec["finish_reason"] == "length"
    assert (rec["prompt_tokens"], rec["completion_tokens"]) == (20, 4)


@pytest.mark.parametrize(
    ("text", "problem"),
    [("{not json", "not JSON"), ("[1]", "expected a JSON object"), ('{"id": 1}', "custom_id")],
)
def test_a_malformed_line_names_file_and_line(text, problem):
    with pytest.raises(BatchFormatError, match=rf"out\.jsonl, line 7: .*{problem}"):
        answer_from_line(text, file="out.jsonl", line=7)
