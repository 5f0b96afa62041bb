"""kill -9 of a `judgelab judge` run, then a rerun: nothing lost, nothing paid twice."""

from __future__ import annotations

import os
import signal
import subprocess
import time

import pandas as pd

from judgelab.core import tables
from judgelab.data import catalog
from judgelab.judges import runner, table
from judgelab.judges import spec as spec_mod
from judgelab.judges.cache import RequestCache, default_path
from judgelab.testing.items import write_pairwise_items
from judgelab.testing.judge_cli import judge_command, write_loopback_spec
from judgelab.testing.openai_server import OpenAIServer, canonical_key

N_ITEMS = 60  # x 2 orders = 120 requests
CONCURRENCY = 3


def _items_file(tmp_path):
    return write_pairwise_items(tmp_path / "items.jsonl", N_ITEMS, benchmark="killbench")


def _judge_cmd(spec_file, items_file):
    return judge_command(spec_file, "--benchmark", str(items_file), "--no-progress")


def test_kill_9_mid_run_then_rerun_loses_nothing_and_pays_once(tmp_path, monkeypatch):
    monkeypatch.setenv("JL_TEST_KEY", "sk-" + "test-kill-0123456789")
    items_file = _items_file(tmp_path)
    with OpenAIServer(latency_s=0.05) as server:
        spec_file = write_loopback_spec(
            tmp_path / "judge.yaml",
            server.url,
            api_key_env="JL_TEST_KEY",
            concurrency=CONCURRENCY,
            timeout_s=5,
        )
        proc = subprocess.Popen(
            _judge_cmd(spec_file, items_file),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=os.environ.copy(),
        )
        deadline = time.monotonic() + 60
        while server.total < 30 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.01)
        assert proc.poll() is None, "the run finished before it could be killed"
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        assert proc.returncode == -signal.SIGKILL

        with RequestCache(default_path()) as cache:
            stored_before = set(cache.keys())
        received_before = server.total
        assert 0 < len(stored_before) <= received_before < 2 * N_ITEMS

        rerun = subprocess.run(
            _judge_cmd(spec_file, items_file), capture_output=True, text=True, timeout=120
        )
        assert rerun.returncode == 0, rerun.stderr
        assert f"cache hits         {len(stored_before)}" in rerun.stdout

        counts = server.counts
        spec = spec_mod.load(spec_file)
        items = catalog.load_items(str(items_file))
        planned = table.plan(items, spec).requests
        with RequestCache(default_path()) as cache:
            assert len(cache) == 2 * N_ITEMS  # nothing lost
            assert set(cache.keys()) == {p.key for p in planned}
        # What the server counted for each planned request (its key: the body it received).
        received = {p.key: counts[canonical_key(p.payload())] for p in planned}
        # No duplicate request for any answer stored before the kill; only requests in flight
        # at the kill, or answered with their commit pending (at most two per worker), may
        # have been sent twice.
        assert all(received[k] == 1 for k in stored_before)
        duplicates = sum(n - 1 for n in received.values())
        assert duplicates <= 2 * CONCURRENCY
        assert server.total == 2 * N_ITEMS + duplicates
        print(
            f"killed after {received_before} received / {len(stored_before)} stored; "
            f"rerun sent {server.total - received_before}; duplicates {duplicates}"
        )

        # The table is a pure function of the cache: rebuilding gives the written table, and
        # it matches a clean, uninterrupted run (timing columns aside).
        written = tables.read_judgments(runner.judgments_path("killbench", spec.judge_id))
        with RequestCache(default_path()) as cache:
            rebuilt = runner.build_from_cache(items, spec, cache=cache).judgments
        pd.testing.assert_frame_equal(rebuilt, written)
        assert len(written) == 2 * N_ITEMS and written["valid"].all()
        with RequestCache(tmp_path / "clean.sqlite") as clean_cache:
            clean = runner.run(items, spec, cache=clean_cache, progress=False, write_tables=False)
        timing = ["latency_s", "created_at"]
        pd.testing.assert_frame_equal(
            clean.judgments.drop(columns=timing), rebuilt.drop(columns=timing)
        )
