"""Issue 19 (5, 6, 9, 24, 20b): the runner keeps its tables, bounds its waits, stops cleanly.

Every test talks to a loopback server only (`judgelab.testing.openai_server`).
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from dataclasses import replace

import pandas as pd
import pytest

from judgelab.cli import judge as cli_judge
from judgelab.core import tables
from judgelab.data import catalog
from judgelab.errors import JudgeSpecError
from judgelab.judges import runner
from judgelab.judges import spec as spec_mod
from judgelab.judges.cache import RequestCache, default_path
from judgelab.testing.items import write_pairwise_items
from judgelab.testing.judge_cli import judge_command, loopback_spec_dict, write_loopback_spec
from judgelab.testing.openai_server import FaultPlan, OpenAIServer

KEY = "sk-" + "test-RELIABLE-0123456789abcdef"
N_ITEMS = 6  # x 2 orders = 12 rows


@pytest.fixture()
def key_env(monkeypatch):
    monkeypatch.setenv("JL_TEST_KEY", KEY)


@pytest.fixture()
def items(tmp_path):
    path = write_pairwise_items(tmp_path / "items.jsonl", N_ITEMS, benchmark="relbench")
    return catalog.load_items(str(path))


def _spec(server, **kw):
    keys = {"concurrency": 2, "timeout_s": 2.0, "max_retries": 2, "backoff_s": 0.001, **kw}
    return spec_mod.from_dict(loopback_spec_dict(server.url, api_key_env="JL_TEST_KEY", **keys))


def _table(spec):
    return tables.read(runner.judgments_path("relbench", spec.judge_id), "judgments")


def test_issue19_5_partial_run_never_shrinks_the_table(tmp_path, key_env, items):
    with OpenAIServer() as server:
        spec = _spec(server)
        with RequestCache(tmp_path / "a.sqlite") as cache:
            full = runner.run(items, spec, cache=cache, progress=False)
            assert len(full.judgments) == 2 * N_ITEMS
            # `judge --order 0` after a full run: the order-1 rows stay.
            one = runner.run(items, replace(spec, orders=(0,)), cache=cache, progress=False)
        assert len(_table(spec)) == 2 * N_ITEMS
        assert len(one.judgments) == 2 * N_ITEMS
        # `--limit 1` with a cache that no longer holds the other answers: rows stay too.
        with RequestCache(tmp_path / "b.sqlite") as other:
            runner.run(items, spec, limit=1, cache=other, progress=False)
        after = _table(spec)
    assert len(after) == 2 * N_ITEMS
    cols = ["split", "item_id", "order", "verdict"]
    assert after[cols].equals(full.judgments[cols])  # same rows, same order
    details = pd.read_parquet(runner.details_path("relbench", spec.judge_id))
    assert (details["status"] == "answered").sum() == 2 * N_ITEMS


def test_issue19_6_two_specs_sharing_an_id_are_refused(tmp_path, key_env, items):
    with OpenAIServer() as server:
        first = _spec(server, id="shared-judge")
        second = _spec(server, id="shared-judge", model="other-model")
        with RequestCache(tmp_path / "c.sqlite") as cache:
            runner.run(items, first, cache=cache, progress=False)
            asked = server.total
            with pytest.raises(JudgeSpecError) as err:
                runner.run(items, second, cache=cache, progress=False)
            with pytest.raises(JudgeSpecError):
                runner.dry_run(items, second, cache=cache)
        assert server.total == asked  # refused before any request was paid for
    msg = str(err.value)
    assert "shared-judge" in msg and "'test-model'" in msg and "'other-model'" in msg
    assert set(_table(first)["model"]) == {"test-model"}  # the first judge's table is intact


def test_issue19_9_retry_after_is_capped_and_announced(tmp_path, key_env, items, capsys):
    faults = FaultPlan(rate=1.0, kinds=("429",), attempts=1, retry_after_s=99999)
    with OpenAIServer(faults=faults) as server:
        spec = _spec(server, max_retry_after_s=5.0, concurrency=12)
        t0 = time.monotonic()
        with RequestCache(tmp_path / "d.sqlite") as cache:
            result = runner.run(items, spec, cache=cache, progress=False)
        took = time.monotonic() - t0
    assert result.summary.failed == 0 and result.summary.answered == 2 * N_ITEMS
    assert result.summary.retries == 2 * N_ITEMS
    assert took < 30  # ~5 s (the cap), not 300 s per retry
    err = capsys.readouterr().err
    assert "waiting 5 s before retry 1 of 2" in err
    assert "the server asked 99999 s, capped by max_retry_after_s" in err
    assert KEY not in err


def test_issue19_9_run_deadline_stops_requesting(tmp_path, key_env, items, capsys):
    faults = FaultPlan(rate=1.0, kinds=("429",), attempts=100, retry_after_s=99999)
    with OpenAIServer(faults=faults) as server:
        spec_file = write_loopback_spec(
            tmp_path / "judge.yaml",
            server.url,
            api_key_env="JL_TEST_KEY",
            concurrency=2,
            max_retries=5,
            max_retry_after_s=60,
        )
        t0 = time.monotonic()
        argv = ["--judge", str(spec_file), "--benchmark", str(tmp_path / "items.jsonl")]
        code = cli_judge.main([*argv, "--no-progress", "--deadline-s", "0.5"])
        took = time.monotonic() - t0
    assert code == cli_judge.EXIT_INCOMPLETE
    assert took < 20
    out = capsys.readouterr().out
    assert f"{2 * N_ITEMS} request(s) failed" in out
    assert "run deadline of 0.5 s passed" in out
    # Without faults, a deadline in mid-run leaves the rest unrequested (the next run asks).
    with OpenAIServer(latency_s=0.2) as server:
        spec = _spec(server, concurrency=1, deadline_s=0.5)
        with RequestCache(tmp_path / "f.sqlite") as cache:
            result = runner.run(
                catalog.load_items(str(tmp_path / "items.jsonl")),
                spec,
                cache=cache,
                progress=False,
            )
    s = result.summary
    assert 0 < s.answered < 2 * N_ITEMS and s.answered + s.failed == 2 * N_ITEMS
    assert server.total == s.answered
    assert any(e.startswith("not requested: the run deadline") for e in s.errors.values())


def test_issue19_24_a_key_with_a_carriage_return_is_named_malformed(tmp_path, monkeypatch, items):
    monkeypatch.setenv("JL_TEST_KEY", KEY + "\r")
    with OpenAIServer() as server:
        with RequestCache(tmp_path / "e.sqlite") as cache:
            with pytest.raises(JudgeSpecError) as err:
                runner.run(items, _spec(server), cache=cache, progress=False)
        assert server.total == 0
    msg = str(err.value)
    assert "JL_TEST_KEY" in msg and "malformed" in msg and "carriage return" in msg
    assert KEY not in msg and KEY[:12] not in msg


def test_issue19_20b_ctrl_c_of_judge_exits_130_with_one_line(tmp_path, key_env):
    items_file = write_pairwise_items(tmp_path / "items.jsonl", 40, benchmark="intbench")
    with OpenAIServer(latency_s=0.1) as server:
        spec_file = write_loopback_spec(
            tmp_path / "judge.yaml", server.url, api_key_env="JL_TEST_KEY", concurrency=2
        )
        proc = subprocess.Popen(
            judge_command(spec_file, "--benchmark", str(items_file), "--no-progress"),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=os.environ.copy(),
        )
        deadline = time.monotonic() + 60
        while server.total < 6 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.01)
        assert proc.poll() is None, "the run finished before it could be interrupted"
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("interrupted:"), err
    assert "Traceback" not in err
    with RequestCache(default_path()) as cache:
        assert len(cache) >= 4  # the answers received before Ctrl-C are kept
