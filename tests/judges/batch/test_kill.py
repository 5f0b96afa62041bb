"""kill -9 between submit and collect: a fresh process collects from the registry."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

from judgelab.core import paths, tables
from judgelab.data import catalog
from judgelab.judges import spec as spec_mod
from judgelab.judges.batch import Registry, backend
from judgelab.judges.cache import RequestCache, default_path
from judgelab.judges.store import judgments_path
from judgelab.testing.batch_server import BatchPlan, BatchServer
from judgelab.testing.items import write_pairwise_items
from judgelab.testing.judge_cli import write_loopback_spec

N_ITEMS = 12  # x 2 orders = 24 requests


def _batch(*args):
    return [sys.executable, "-m", "judgelab.cli.batch", *map(str, args)]


def test_kill_9_after_submit_then_a_fresh_process_collects(tmp_path, key_env):
    items = write_pairwise_items(tmp_path / "items.jsonl", N_ITEMS, benchmark="killbatch")
    with BatchServer(BatchPlan(polls=1), api_key=key_env) as server:
        server.hold()  # the batch stays in progress while the submitter waits on it
        spec = write_loopback_spec(tmp_path / "judge.yaml", server.url, api_key_env="JL_BATCH_KEY")
        common = ("--judge", spec, "--benchmark", items)
        proc = subprocess.Popen(
            _batch("submit", *common, "--wait", "--poll-s", "0.05"),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=os.environ.copy(),
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and proc.poll() is None:
            entries = Registry().entries()
            if entries and entries[0].state == "in_progress":
                break
            time.sleep(0.02)
        assert proc.poll() is None, proc.communicate()
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        assert proc.returncode == -signal.SIGKILL
        (entry,) = Registry().entries()
        assert entry.batch_id == "batch_000000" and not entry.collected
        assert len(entry.keys) == 2 * N_ITEMS
        assert not default_path().exists() or len(RequestCache(default_path())) == 0

        server.hold(False)
        collect = subprocess.run(
            _batch("collect", *common), capture_output=True, text=True, timeout=120
        )
        assert collect.returncode == 0, collect.stderr
        assert f"answers stored     {2 * N_ITEMS} new" in collect.stdout
        items_df = catalog.load_items(str(items))
        with RequestCache(default_path()) as cache:  # a further submit sends nothing
            again = backend.submit_missing(items_df, spec_mod.load(spec), cache=cache)
        assert again.submitted == [] and len(again.work.cached) == 2 * N_ITEMS
        assert set(server.received.values()) == {1} and len(server.received) == 2 * N_ITEMS
        assert len(server.batches) == 1
    table = tables.read(judgments_path("killbatch", json_judge(collect.stdout)), "judgments")
    assert len(table) == 2 * N_ITEMS and table["valid"].all()
    registry = json.loads(Registry().path(entry.local_id).read_text())
    assert registry["collected"] and registry["result"]["stored"] == 2 * N_ITEMS
    assert (paths.cache() / "batches").is_dir()


def json_judge(stdout: str) -> str:
    """Return the judge id from the table path a collect printed."""
    line = next(x for x in stdout.splitlines() if x.startswith("table"))
    return line.split()[-1].rsplit("/", 1)[-1].removesuffix(".parquet")
