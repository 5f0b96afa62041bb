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


# --- issue 32 (Reliability III): items 12 and 15 ---------------------------------------------


def _answered(path, failed):
    """Return (index, parsed line) of the output lines that are answers."""
    lines = path.read_text().splitlines()
    return [(i, json.loads(x)) for i, x in enumerate(lines) if json.loads(x)["custom_id"]
            not in failed]  # fmt: skip


def _with_content(obj, content):
    out = json.loads(json.dumps(obj))
    out["response"]["body"]["choices"][0]["message"]["content"] = content
    return out


def test_rel3_12_an_output_line_over_the_cap_is_a_counted_error_line(
    recorded, tmp_path, monkeypatch
):
    _, work, path, failed = recorded
    requests = {p.key: p.request for p in work.plan.requests}
    lines = path.read_text().splitlines()
    cap = max(len(x.encode()) for x in lines) + 50
    monkeypatch.setenv("JUDGELAB_MAX_LINE_BYTES", str(cap))
    (i, over), (j, at) = _answered(path, failed)[:2]
    for k, obj, size in ((i, over, cap + 1), (j, at, cap)):  # just over, and at the cap
        text = obj["response"]["body"]["choices"][0]["message"]["content"]
        pad = size - len(json.dumps(obj).encode())
        lines[k] = json.dumps(_with_content(obj, text + " " * pad))
        assert len(lines[k].encode()) == size
    big = tmp_path / "big.jsonl"
    big.write_text("\n".join(lines) + "\n")
    with RequestCache(tmp_path / "c") as cache:
        report = ingest.ingest_file(big, requests, cache)
        assert (report.lines, report.stored) == (32, 29)
        assert over["custom_id"] not in cache and at["custom_id"] in cache
        assert over["custom_id"] not in report.seen  # it was never parsed: missing, sent again
    assert len(report.errors) == 2 and report.error_lines == 3
    assert report.unreadable == [
        f"{big}, line {i + 1}: line longer than {cap:,} bytes, the limit per JSON-lines record "
        "(refused before parsing; set JUDGELAB_MAX_LINE_BYTES to raise it)"
    ]
    assert f"line {i + 1}" in report.format()
    # A request shard with an over-long line is refused, naming the file and line.
    (shard,) = export.write_shards(work.todo, tmp_path / "in")
    monkeypatch.setenv("JUDGELAB_MAX_LINE_BYTES", "100")
    with pytest.raises(BatchFormatError, match=r"requests-00000\.jsonl, line 1: line longer"):
        ingest.requests_of_input(shard, work.todo[0].request["endpoint"])


@pytest.mark.slow
def test_rel3_12_a_huge_line_is_skipped_in_bounded_memory(recorded, tmp_path, monkeypatch):
    import tracemalloc

    _, work, path, failed = recorded
    requests = {p.key: p.request for p in work.plan.requests}
    (_, obj), (_, nxt) = _answered(path, failed)[:2]
    head, tail = json.dumps(_with_content(obj, "@")).split("@")
    huge = tmp_path / "huge.jsonl"
    with open(huge, "w") as fh:  # a 64 MiB answer, then a small one
        fh.write(head)
        for _ in range(64):
            fh.write("x" * 2**20)
        fh.write(tail + "\n" + json.dumps(nxt) + "\n")
    monkeypatch.setenv("JUDGELAB_MAX_LINE_BYTES", str(2**20))
    with RequestCache(tmp_path / "c") as cache:
        tracemalloc.start()
        try:
            report = ingest.ingest_file(huge, requests, cache)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    assert (report.lines, report.stored, report.error_lines) == (2, 1, 1)
    assert "huge.jsonl, line 1: line longer than 1,048,576 bytes" in report.unreadable[0]
    assert peak < 8 * 2**20, f"peak {peak / 2**20:.1f} MiB"


def test_rel3_15_conflicting_answers_for_one_custom_id_are_counted(recorded, tmp_path):
    _, work, path, failed = recorded
    requests = {p.key: p.request for p in work.plan.requests}
    (_, obj), (_, other_obj) = _answered(path, failed)[:2]
    cid, first = obj["custom_id"], obj["response"]["body"]["choices"][0]["message"]["content"]
    changed = _with_content(obj, first + " (changed my mind)")
    dup = tmp_path / "dup.jsonl"
    rows = [obj, other_obj, obj, changed]  # line 3 repeats line 1, line 4 contradicts it
    dup.write_text("".join(json.dumps(x) + "\n" for x in rows))
    with RequestCache(tmp_path / "c") as cache:
        report = ingest.ingest_file(dup, requests, cache)
        assert (report.stored, report.already_cached, len(report.conflicts)) == (2, 1, 1)
        assert cache.get(cid)["content"] == first  # the first is kept
        assert report.conflicts[cid] == (
            f"{dup}, line 4: another answer than the first one (line 1), which is kept"
        )
        text = report.format()
        assert "conflicting answers 1 (the first answer is kept;" in text
        assert f"CONFLICT {cid}" in text
        # Against what is cached: the cached answer stays, the conflict is named.
        late = tmp_path / "late.jsonl"
        late.write_text(json.dumps(changed) + "\n" + json.dumps(other_obj) + "\n")
        again = ingest.ingest_file(late, requests, cache)
        assert (again.stored, again.already_cached, len(again.conflicts)) == (0, 1, 1)
        assert again.conflicts[cid] == (
            f"{late}, line 1: another answer than the cached one, which is kept"
        )
        assert cache.get(cid)["content"] == first
        # Ingesting the original again is idempotent: no conflict.
        same = ingest.ingest_file(path, requests, cache)
        assert not same.conflicts and same.stored == 28 and same.already_cached == 2


def test_rel3_15_an_answer_stored_meanwhile_by_another_writer_is_compared(recorded, tmp_path):
    _, work, path, failed = recorded
    requests = {p.key: p.request for p in work.plan.requests}
    (_, obj), (_, other_obj) = _answered(path, failed)[:2]
    cid = obj["custom_id"]
    theirs = {"content": "their answer", "finish_reason": "stop"}

    class Raced(RequestCache):
        """A cache another writer fills between ingest's read and its write."""

        def put_many(self, rows):
            with RequestCache(self.path) as other:  # a second connection to the same file
                other.put_many([(cid, requests[cid], theirs)])
            return super().put_many(rows)

    f = tmp_path / "two.jsonl"
    f.write_text(json.dumps(obj) + "\n" + json.dumps(other_obj) + "\n")
    with Raced(tmp_path / "c") as cache:
        report = ingest.ingest_file(f, requests, cache)
        assert cache.get(cid)["content"] == "their answer"  # the first stored is kept
    assert (report.stored, report.already_cached) == (1, 0)
    assert list(report.conflicts) == [cid] and "line 1" in report.conflicts[cid]
