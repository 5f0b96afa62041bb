"""Submit / poll / collect against the loopback Batch API: the cache and table it gives."""

from __future__ import annotations

from collections import Counter

import pandas as pd
import pytest

from judgelab.core import paths, tables
from judgelab.errors import JudgeRunError
from judgelab.judges import runner, table
from judgelab.judges.batch import Registry, backend, ingest
from judgelab.judges.batch import openai_batches as api
from judgelab.judges.cache import RequestCache
from judgelab.testing.batch_server import BatchPlan, BatchServer
from judgelab.testing.openai_server import OpenAIServer

TIMING = ["latency_s", "created_at"]


def _until_done(items, spec, cache, rounds=6, **kw):
    """Run the batch back-end until nothing is pending; return the results of each round."""
    out = []
    for _ in range(rounds):
        res = backend.run_batch(
            items, spec, cache=cache, wait=True, poll_s=0.001, write_tables=False, **kw
        )
        out.append(res)
        if res.held == 0 and not (res.built.details["status"] == "pending").any():
            return out
    raise AssertionError(f"still pending after {rounds} rounds")


def test_online_and_batch_back_ends_give_identical_tables(cjb, make_spec, key_env, tmp_path):
    faults = BatchPlan(outcomes=("expired", "completed"), error_rate=0.25, drop_rate=0.1)
    with BatchServer(faults, api_key=key_env) as bserver:
        port = bserver.port
        spec = make_spec(bserver.url)
        with RequestCache(tmp_path / "batch.sqlite") as cache:
            rounds = _until_done(cjb, spec, cache, max_lines=10)
            batch_records = cache.get_many(cache.keys())
        received = bserver.received
    assert len(rounds) >= 2  # the failed, expired and dropped lines went again
    assert set(received) == set(batch_records) and max(received.values()) >= 2
    batch = rounds[-1].built
    with OpenAIServer(port=port, api_key=key_env) as oserver:  # the same base URL
        assert make_spec(oserver.url) == spec
        with RequestCache(tmp_path / "online.sqlite") as cache:
            online = runner.run(cjb, spec, cache=cache, progress=False, write_tables=False)
            online_records = cache.get_many(cache.keys())
    assert online.summary.answered == 32 and len(batch.judgments) == 32
    pd.testing.assert_frame_equal(
        online.judgments.drop(columns=TIMING), batch.judgments.drop(columns=TIMING)
    )
    pd.testing.assert_frame_equal(online.details, batch.details)
    assert set(online_records) == set(batch_records)
    for key, rec in online_records.items():  # same record shape, same answer
        other = batch_records[key]
        assert set(rec) == set(other)
        assert {k: v for k, v in rec.items() if k not in TIMING} == {
            k: v for k, v in other.items() if k not in TIMING
        }


def test_failed_and_expired_lines_and_only_those_are_resubmitted(
    cjb, make_spec, key_env, tmp_path
):
    plan = BatchPlan(outcomes=("expired", "completed"), error_rate=0.2, expire_done=0.6)
    with BatchServer(plan, api_key=key_env) as server, RequestCache(tmp_path / "c") as cache:
        spec = make_spec(server.url)
        reg = Registry()
        first = backend.submit_missing(cjb, spec, cache=cache, registry=reg)
        assert len(first.submitted) == 1 and len(first.submitted[0].keys) == 32
        report = backend.collect(spec, cache=cache, registry=reg)  # validating -> in_progress
        assert report.waiting and not report.collected
        report = backend.collect(spec, cache=cache, registry=reg)
        assert report.collected[0].state == "expired"
        failed = set(report.ingest.errors)
        assert 0 < len(failed) < 32 and report.ingest.stored == 32 - len(failed)
        assert len(cache) == 32 - len(failed)
        second = backend.submit_missing(cjb, spec, cache=cache, registry=reg)
        assert set(second.submitted[0].keys) == failed  # exactly the failed lines
        backend.collect(spec, cache=cache, registry=reg)
        backend.collect(spec, cache=cache, registry=reg)
        assert len(cache) == 32
        third = backend.submit_missing(cjb, spec, cache=cache, registry=reg)
        assert third.submitted == []  # cached keys are never submitted again
        counts = Counter(server.received.values())
    assert counts == Counter({1: 32 - len(failed), 2: len(failed)})


def test_collecting_twice_changes_nothing(cjb, make_spec, key_env, tmp_path):
    with BatchServer(BatchPlan(polls=1), api_key=key_env) as server:
        spec = make_spec(server.url)
        with RequestCache(tmp_path / "c") as cache:
            reg = Registry()
            backend.submit_missing(cjb, spec, cache=cache, registry=reg, max_lines=20)
            first = backend.collect(spec, cache=cache, registry=reg)
            assert len(first.collected) == 2 and first.ingest.stored == 32
            before = cache.get_many(cache.keys())
            again = backend.collect(spec, cache=cache, registry=reg)
            assert again.collected == [] and again.ingest.lines == 0
            # Ingesting the downloaded files again stores nothing new.
            for entry in reg.entries(spec.judge_id):
                requests = ingest.requests_of_input(
                    reg.path(entry.local_id, ".input.jsonl"), entry.endpoint
                )
                rep = ingest.ingest_file(
                    reg.path(entry.local_id, ".output.jsonl"), requests, cache
                )
                assert rep.stored == 0 and rep.already_cached == len(entry.keys)
            assert cache.get_many(cache.keys()) == before


def test_a_failed_batch_and_a_cancelled_one_release_their_keys(cjb, make_spec, key_env, tmp_path):
    plan = BatchPlan(outcomes=("failed", "completed"))
    with BatchServer(plan, api_key=key_env) as server, RequestCache(tmp_path / "c") as cache:
        spec = make_spec(server.url)
        reg = Registry()
        backend.submit_missing(cjb, spec, cache=cache, registry=reg)
        report = backend.collect(spec, cache=cache, registry=reg)
        assert report.collected[0].state == "failed" and report.missing == 32
        assert report.collected[0].errors  # the provider's validation errors are kept
        server.hold()  # the next batch runs until cancelled
        again = backend.submit_missing(cjb, spec, cache=cache, registry=reg)
        assert len(again.submitted[0].keys) == 32
        backend.collect(spec, cache=cache, registry=reg)
        cancelled = api.cancel(spec, api.open_client(spec), reg)
        assert [e.state for e in cancelled] == ["cancelling"]
        report = backend.collect(spec, cache=cache, registry=reg)
        assert report.collected[0].state == "cancelled"
        stored = report.ingest.stored
        assert 0 < stored < 32 and len(report.ingest.errors) == 32 - stored
        assert all("batch_cancelled" in e for e in report.ingest.errors.values())
        server.hold(False)
        last = backend.submit_missing(cjb, spec, cache=cache, registry=reg)
        assert set(last.submitted[0].keys) == set(report.ingest.errors)


class _DiesAfterCreate:
    """A client whose `batches.create` reaches the server, then the process 'dies'."""

    def __init__(self, client, where):
        self._client, self._where = client, where
        self.files, self.batches = self, self

    def create(self, **kw):
        target = self._client.files if "purpose" in kw else self._client.batches
        if self._where == "upload" and "purpose" in kw:
            raise KeyboardInterrupt
        out = target.create(**kw)
        if self._where == "create" and "purpose" not in kw:
            raise KeyboardInterrupt
        return out


@pytest.mark.parametrize("where", ["upload", "create"])
def test_a_submit_killed_midway_is_recovered_without_paying_twice(
    cjb, make_spec, key_env, tmp_path, where
):
    with BatchServer(BatchPlan(polls=1), api_key=key_env) as server:
        spec = make_spec(server.url)
        reg = Registry()
        with RequestCache(tmp_path / "c") as cache:
            dying = _DiesAfterCreate(api.open_client(spec), where)
            with pytest.raises(KeyboardInterrupt):
                backend.submit_missing(cjb, spec, cache=cache, registry=reg, client=dying)
            (entry,) = reg.entries(spec.judge_id)
            assert entry.state == ("uploading" if where == "upload" else "submitting")
            assert entry.holds
            report = backend.submit_missing(cjb, spec, cache=cache, registry=reg)
            if where == "create":  # the batch the server made is adopted, not made again
                assert report.submitted == [] and len(server.batches) == 1
                assert reg.entries(spec.judge_id)[0].batch_id == "batch_000000"
            else:  # never uploaded: released and submitted now
                assert reg.entries(spec.judge_id)[0].state == "abandoned"
                assert len(report.submitted) == 1 and len(server.batches) == 1
            backend.collect(spec, cache=cache, registry=reg)
            assert len(cache) == 32
        assert set(server.received.values()) == {1}


def test_the_key_is_never_written_and_a_wrong_key_is_refused_without_echo(
    cjb, make_spec, key_env, tmp_path, monkeypatch
):
    with BatchServer(BatchPlan(polls=1, error_rate=0.3), api_key=key_env) as server:
        spec = make_spec(server.url)
        _until_done(cjb, spec, None)
        monkeypatch.setenv("JL_BATCH_KEY", "sk-" + "wrong-0123456789abcdefgh")
        with pytest.raises(JudgeRunError) as info:
            backend.submit_missing(cjb, spec, cache=RequestCache(tmp_path / "c"))
    assert "wrong-0123456789" not in str(info.value) and "401" in str(info.value)
    written = [p for p in paths.home().rglob("*") if p.is_file()]
    written += [p for p in tmp_path.rglob("*") if p.is_file()]
    assert any(p.suffix == ".sqlite" for p in written) and any(
        "batches" in str(p) for p in written
    )
    for p in written:
        data = p.read_bytes()
        assert key_env.encode() not in data and b"wrong-0123456789" not in data, p


def test_batch_table_covers_the_plan(cjb, make_spec, key_env):
    with BatchServer(BatchPlan(polls=1), api_key=key_env) as server:
        spec = make_spec(server.url)
        (res,) = _until_done(cjb, spec, None)
    assert set(res.built.judgments["request_key"]) == set(table.plan(cjb, spec).keys)


def test_keys_in_a_running_batch_are_not_submitted_again(cjb, make_spec, key_env, tmp_path):
    with BatchServer(BatchPlan(polls=3), api_key=key_env) as server:
        spec = make_spec(server.url)
        with RequestCache(tmp_path / "c") as cache:
            first = backend.submit_missing(cjb, spec, cache=cache, limit=4)
            assert len(first.submitted[0].keys) == 8
            second = backend.submit_missing(cjb, spec, cache=cache)  # the first still runs
            assert second.work.in_flight == 8 and len(second.submitted[0].keys) == 24
            third = backend.submit_missing(cjb, spec, cache=cache)
            assert third.submitted == [] and third.work.in_flight == 32
            assert "in earlier batches 32" in third.format()
        assert set(server.received.values()) <= {1} and len(server.batches) == 2


def test_the_judge_backend_batch_helper_prices_runs_and_writes(cjb, make_spec, key_env):
    with BatchServer(BatchPlan(polls=1, error_rate=0.2), api_key=key_env) as server:
        spec = make_spec(server.url, price_in=1.0, price_out=2.0)
        text, code = backend.judge_batch(cjb, spec, dry_run=True)
        assert code == 0 and "to submit               32" in text and "0.5 x" in text
        assert server.batches == []
        text, code = backend.judge_batch(cjb, spec, wait=True, poll_s=0.001)
        assert code == 1 and "error lines" in text  # the failed lines: rerun to send them
        path = text.split("table              ")[1].split()[0]
        first = len(tables.read(path, "judgments"))
        assert 0 < first < 32
        text, code = backend.judge_batch(cjb, spec, wait=True, poll_s=0.001)
        assert code == 0 and len(tables.read(path, "judgments")) == 32


def test_rel3_7_wait_goes_on_past_a_broken_batch(cjb, make_spec, key_env, tmp_path):
    with BatchServer(BatchPlan(polls=1), api_key=key_env) as server:
        spec = make_spec(server.url)
        reg = Registry()
        with RequestCache(tmp_path / "c") as cache:
            first = backend.submit_missing(cjb, spec, cache=cache, registry=reg, limit=4)
            (gone,) = first.submitted
            server.forget(gone.batch_id)
            res = backend.run_batch(
                cjb, spec, cache=cache, registry=reg, wait=True, poll_s=0.01,
                max_wait_s=20, write_tables=False,
            )  # fmt: skip
            assert len(cache) == 32 - 8 and not set(gone.keys) & set(cache.keys())
        assert res.held == 8 and [e.label for e in res.submits[0].collected.broken] == [
            gone.batch_id
        ]
        assert "404" in reg.find(spec.judge_id, gone.batch_id).problem
        assert "batches broken     1" in res.format()
