"""Anthropic Message Batches through the adapter, driven by a fake client (no SDK needed)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from judgelab.judges import table
from judgelab.judges.batch import Registry, backend
from judgelab.judges.batch import anthropic_batches as anth
from judgelab.judges.cache import RequestCache
from judgelab.testing.openai_server import default_responder

URL = "http://127.0.0.1:9/v1"


class FakeMessageBatches:
    """`client.messages.batches` of the SDK: create, retrieve, cancel, list, results."""

    def __init__(self, errored=()):
        self.created: list[list[dict]] = []
        self.state: dict[str, dict] = {}
        self.errored = set(errored)

    def create(self, *, requests):
        bid = f"msgbatch_{len(self.created):03d}"
        self.created.append(requests)
        self.state[bid] = {"id": bid, "processing_status": "in_progress",
                           "cancel_initiated_at": None, "polls": 0}  # fmt: skip
        return self._view(bid)

    def _view(self, bid):
        s = self.state[bid]
        n = len(self.created[int(bid.split("_")[1])])
        ended = s["processing_status"] == "ended"
        counts = {"processing": 0 if ended else n, "succeeded": n if ended else 0,
                  "errored": 0, "canceled": 0, "expired": 0}  # fmt: skip
        return {**s, "request_counts": counts}

    def retrieve(self, bid):
        s = self.state[bid]
        s["polls"] += 1
        if s["polls"] >= 2:
            s["processing_status"] = "ended"
        return self._view(bid)

    def cancel(self, bid):
        self.state[bid].update(processing_status="canceling", cancel_initiated_at="now")
        return self._view(bid)

    def list(self, limit=20):
        return [self._view(b) for b in self.state]

    def results(self, bid):
        for req in self.created[int(bid.split("_")[1])]:
            cid, params = req["custom_id"], req["params"]
            if cid in self.errored:
                err = {"type": "error", "error": {"type": "api_error", "message": "Internal"}}
                yield {"custom_id": cid, "result": {"type": "errored", "error": err}}
                continue
            text = default_responder(params)
            message = {"id": "msg_" + cid[:8], "type": "message", "role": "assistant",
                       "model": params["model"], "content": [{"type": "text", "text": text}],
                       "stop_reason": "end_turn",
                       "usage": {"input_tokens": 50, "output_tokens": 7}}  # fmt: skip
            yield {"custom_id": cid, "result": {"type": "succeeded", "message": message}}


def _client(errored=()):
    fake = FakeMessageBatches(errored)
    return anth.AnthropicBatches(SimpleNamespace(messages=SimpleNamespace(batches=fake))), fake


def test_anthropic_round_trip_fills_the_same_cache_keys(cjb, make_spec, tmp_path):
    spec = make_spec(URL)
    keys = table.plan(cjb, spec).keys
    client, fake = _client(errored=keys[:3])
    reg = Registry()
    with RequestCache(tmp_path / "c") as cache:
        first = backend.submit_missing(cjb, spec, cache=cache, client=client, registry=reg)
        (entry,) = first.submitted
        assert entry.provider == "anthropic" and entry.batch_id == "msgbatch_000"
        sent = fake.created[0]
        assert [r["custom_id"] for r in sent] == keys and all(len(k) == 64 for k in keys)
        assert "seed" not in sent[0]["params"] and sent[0]["params"]["max_tokens"] == 1024
        assert backend.collect(spec, cache=cache, client=client, registry=reg).waiting
        report = backend.collect(spec, cache=cache, client=client, registry=reg)
        assert report.ingest.stored == 29 and set(report.ingest.errors) == set(keys[:3])
        assert "api_error: Internal" in report.ingest.errors[keys[0]]
        rec = cache.get(keys[5])
        assert rec["finish_reason"] == "stop" and rec["prompt_tokens"] == 50
        again = backend.submit_missing(cjb, spec, cache=cache, client=client, registry=reg)
        assert [r["custom_id"] for r in fake.created[1]] == keys[:3]
        assert again.submitted[0].keys == keys[:3]
        built = backend.write_table(cjb, spec, cache)[0]
    by_key = {p.key: p for p in table.plan(cjb, spec).requests}
    for _, row in built.judgments.iterrows():  # the answers the online fake would give
        assert row["output"] == default_responder(by_key[row["request_key"]].payload())


def test_an_anthropic_cancel_maps_to_cancelled(cjb, make_spec, tmp_path):
    spec = make_spec(URL)
    client, fake = _client()
    reg = Registry()
    with RequestCache(tmp_path / "c") as cache:
        backend.submit_missing(cjb, spec, cache=cache, client=client, registry=reg, limit=2)
        from judgelab.judges.batch import openai_batches as api

        (entry,) = api.cancel(spec, client, reg)
        assert entry.state == "cancelling"
        fake.state[entry.batch_id]["processing_status"] = "ended"
        report = backend.collect(spec, cache=cache, client=client, registry=reg)
        assert report.collected[0].state == "cancelled"


def test_base_url_and_the_optional_sdk(make_spec):
    assert (
        anth.sdk_base_url(make_spec("https://api.anthropic.com/v1")) == "https://api.anthropic.com"
    )
    with pytest.raises(ValueError, match="api.anthropic.com"):
        anth.sdk_base_url(make_spec("https://api.openai.com/v1"))
    try:
        import anthropic
    except ImportError:
        with pytest.raises(ImportError, match=r"judgelab\[anthropic\]"):
            anth.open_client(make_spec("https://api.anthropic.com/v1"))
        pytest.skip("the optional anthropic SDK is not installed (judgelab[anthropic])")
    client = anth.open_client(make_spec("https://api.anthropic.com/v1"))
    assert isinstance(client._client, anthropic.Anthropic)


def test_cli_names_the_missing_extra(make_spec, tmp_path, capsys, key_env):
    try:
        import anthropic  # noqa: F401

        pytest.skip("the anthropic SDK is installed: nothing is missing")
    except ImportError:
        pass
    from judgelab.cli import batch as cli_batch
    from judgelab.testing.judge_cli import write_loopback_spec

    spec = write_loopback_spec(
        tmp_path / "a.yaml", "https://api.anthropic.com/v1", api_key_env="JL_BATCH_KEY"
    )
    code = cli_batch.main(["status", "--judge", str(spec), "--provider", "anthropic"])
    assert code == 2 and "judgelab[anthropic]" in capsys.readouterr().err
