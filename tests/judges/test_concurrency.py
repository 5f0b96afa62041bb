"""Concurrency and durability: two judge processes on one cache and table; crashes mid-write."""

from __future__ import annotations

import os
import subprocess

import pandas as pd
import pytest

from judgelab.core import schema, tables
from judgelab.data import catalog
from judgelab.judges import runner, table
from judgelab.judges import spec as spec_mod
from judgelab.judges.cache import RequestCache, default_path
from judgelab.testing.items import write_pairwise_items
from judgelab.testing.judge_cli import judge_command, write_loopback_spec
from judgelab.testing.openai_server import OpenAIServer, canonical_key

N_ITEMS = 80  # x 2 orders = 160 requests
TIMING = ["latency_s", "created_at"]


def _items_file(tmp_path):
    return write_pairwise_items(tmp_path / "items.jsonl", N_ITEMS, benchmark="twobench")


@pytest.mark.timeout(300)
def test_two_judge_processes_share_cache_and_table(tmp_path, monkeypatch):
    monkeypatch.setenv("JL_TWO_KEY", "sk-" + "two-0123456789abcdef")
    items_file = _items_file(tmp_path)
    with OpenAIServer(latency_s=0.005) as server:
        spec_file = write_loopback_spec(
            tmp_path / "judge.yaml",
            server.url,
            api_key_env="JL_TWO_KEY",
            concurrency=4,
            timeout_s=10,
        )
        cmd = judge_command(spec_file, "--benchmark", str(items_file), "--no-progress")
        procs = [
            subprocess.Popen(
                cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=os.environ
            )
            for _ in range(2)
        ]
        outs = [p.communicate(timeout=180) for p in procs]
        counts = server.counts
    for p, (out, err) in zip(procs, outs, strict=True):
        assert p.returncode == 0, err[-2000:]
        assert "locked" not in err and "0 failed" in out

    spec = spec_mod.load(spec_file)
    items = catalog.load_items(str(items_file))
    planned = table.plan(items, spec).requests
    # The cache holds every answer once and stays consistent.
    with RequestCache(default_path()) as cache:
        assert cache._conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert set(cache.keys()) == {p.key for p in planned}
        rebuilt = runner.build_from_cache(items, spec, cache=cache).judgments
    # The table both wrote is readable, complete, and what the cache says.
    written = tables.read_judgments(runner.judgments_path("twobench", spec.judge_id))
    assert len(written) == 2 * N_ITEMS and written["valid"].all()
    pd.testing.assert_frame_equal(written, rebuilt)
    # Both processes ran at once, and each request was asked once (issue 32 item 6: a key
    # the other run is fetching is waited for and read, never requested again).
    received = [counts[canonical_key(p.payload())] for p in planned]
    assert set(received) == {1}
    # The same table as one process alone on a fresh cache (timing aside).
    with RequestCache(tmp_path / "alone.sqlite") as alone_cache, OpenAIServer() as alone_srv:
        alone_spec = spec_mod.from_dict({**_spec_dict(spec_file), "base_url": alone_srv.url})
        alone = runner.run(
            items, alone_spec, cache=alone_cache, progress=False, write_tables=False
        ).judgments
    cols = [c for c in written.columns if c not in [*TIMING, "judge", "request_key"]]
    pd.testing.assert_frame_equal(alone[cols], written[cols])
    print(f"\ntwo processes: {sum(received)} requests received for {len(planned)} planned")


def _spec_dict(path):
    import yaml

    return yaml.safe_load(path.read_text())


def _judgments(n: int, output: str) -> pd.DataFrame:
    return schema.new_judgments(
        [
            {"benchmark": "b", "split": "s", "item_id": f"i{k}", "judge": "j", "output": output}
            | {"valid": True}
            for k in range(n)
        ]
    )


@pytest.mark.parametrize("when", ["mid_file", "before_rename"])
def test_crash_during_table_write_keeps_the_previous_table(tmp_path, monkeypatch, when):
    target = tmp_path / "j.parquet"
    old = _judgments(5, "old")
    tables.write_judgments(old, target)
    real_write, real_replace = tables.pq.write_table, tables.os.replace

    def half_then_disk_full(table, where, **kw):
        real_write(table, where, **kw)
        data = open(where, "rb").read()
        open(where, "wb").write(data[: len(data) // 2])
        raise OSError(28, "No space left on device")

    def crash_before_rename(src, dst):
        raise OSError(5, "Input/output error")

    if when == "mid_file":
        monkeypatch.setattr(tables.pq, "write_table", half_then_disk_full)
    else:
        monkeypatch.setattr(tables.os, "replace", crash_before_rename)
    with pytest.raises(OSError):
        tables.write_judgments(_judgments(50, "new"), target)
    monkeypatch.setattr(tables.pq, "write_table", real_write)
    monkeypatch.setattr(tables.os, "replace", real_replace)
    pd.testing.assert_frame_equal(tables.read_judgments(target), old)
    assert [p.name for p in tmp_path.iterdir()] == ["j.parquet"]  # no temp file left behind


@pytest.mark.timeout(300)
def test_two_judge_processes_on_disjoint_splits_keep_every_row(tmp_path, monkeypatch):
    """Each process requests only its split; the table ends with both splits' verdicts.

    Build + write happen under the table's lock, so whichever process writes last rebuilds from
    a cache that holds the other's answers too.
    """
    monkeypatch.setenv("JL_TWO_KEY", "sk-" + "two-0123456789abcdef")
    path = write_pairwise_items(
        tmp_path / "items.jsonl", N_ITEMS, benchmark="splitbench", splits=("a", "b")
    )
    with OpenAIServer(latency_s=0.005) as server:
        spec_file = write_loopback_spec(
            tmp_path / "judge.yaml",
            server.url,
            api_key_env="JL_TWO_KEY",
            concurrency=4,
            timeout_s=10,
        )
        procs = [
            subprocess.Popen(
                judge_command(
                    spec_file, "--benchmark", str(path), "--split", split, "--no-progress"
                ),
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                env=os.environ,
            )
            for split in ("a", "b")
        ]
        outs = [p.communicate(timeout=180) for p in procs]
    for p, (_, err) in zip(procs, outs, strict=True):
        assert p.returncode == 0, err[-2000:]
    spec = spec_mod.load(spec_file)
    written = tables.read_judgments(runner.judgments_path("splitbench", spec.judge_id))
    assert len(written) == 2 * N_ITEMS and written["valid"].all()
    assert set(written["split"]) == {"a", "b"}
