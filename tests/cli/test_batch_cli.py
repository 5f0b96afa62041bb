"""`judgelab batch export|submit|status|collect|cancel|ingest` against the loopback fakes."""

from __future__ import annotations

import argparse
import json
import os
import shutil

import pytest

from judgelab.cli import batch as cli_batch
from judgelab.core import paths, tables
from judgelab.judges.batch import Registry
from judgelab.testing.batch_server import BatchPlan, BatchServer
from judgelab.testing.items import write_pairwise_items
from judgelab.testing.judge_cli import write_loopback_spec

KEY = "sk-" + "cli-SECRET-0123456789abcdef"
N = 6  # items; 12 requests


@pytest.fixture()
def setup(tmp_path, monkeypatch):
    monkeypatch.setenv("JL_CLI_KEY", KEY)
    items = write_pairwise_items(tmp_path / "items.jsonl", N, benchmark="clibench")
    with BatchServer(BatchPlan(polls=1), api_key=KEY) as server:
        spec = write_loopback_spec(
            tmp_path / "judge.yaml",
            server.url,
            api_key_env="JL_CLI_KEY",
            price_in=2.0,
            price_out=8.0,
        )
        yield server, ["--judge", str(spec), "--benchmark", str(items)], tmp_path


def _run(args, capsys):
    code = cli_batch.main([str(a) for a in args])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_export_dry_run_and_shards(setup, capsys):
    _, common, tmp = setup
    code, out, _ = _run(["export", *common, "--dry-run"], capsys)
    assert code == 0 and "to submit               12" in out and "0.5 x the spec's prices" in out
    code, out, _ = _run(["export", *common, "--dry-run", "--batch-price-in", "1"], capsys)
    assert "the batch price given and 0.5 x the spec's other price" in out
    # 12 requests x 1024 max tokens x $4 / 1M (half of $8) + prompt tokens x $1 / 1M
    tokens = int(out.split("est. prompt tokens")[1].split()[0])
    assert f"<= ${(tokens * 1 + 12 * 1024 * 4) / 1e6:.4f}" in out
    code, out, _ = _run(["export", *common, "--out", tmp / "x", "--max-lines", "5"], capsys)
    assert code == 0 and "12 exported (openai)" in out
    files = sorted((tmp / "x").glob("requests-*.jsonl"))
    assert [len(f.read_text().splitlines()) for f in files] == [5, 5, 2]
    code, out, _ = _run(["export", *common, "--out", tmp / "a", "--format", "anthropic"], capsys)
    line = json.loads((tmp / "a" / "requests-00000.jsonl").read_text().splitlines()[0])
    assert code == 0 and set(line) == {"custom_id", "params"}


def test_submit_status_collect_then_table(setup, capsys):
    server, common, tmp = setup
    code, out, _ = _run(["submit", *common, "--max-lines", "8"], capsys)
    assert code == 0 and "submitted now      12 request(s) in 2 batch(es)" in out
    judge = ["--judge", common[1]]
    code, out, _ = _run(["status", *judge], capsys)
    assert code == 0 and "2 batch(es), 2 not collected" in out
    assert "batch_000000: completed, 8 requests, not collected" in out
    code, out, _ = _run(["collect", *common], capsys)
    assert code == 0 and "answers stored     12 new" in out and "judgment rows      12" in out
    table_path = out.split("table              ")[1].split()[0]
    assert len(tables.read(table_path, "judgments")) == 12
    code, out, _ = _run(["submit", *common], capsys)
    assert "submitted now      0 request(s)" in out
    code, out, _ = _run(["status", *judge, "--offline"], capsys)
    assert "collected {'stored': 8" in out and "collected {'stored': 4" in out
    assert len(server.batches) == 2


def test_cancel_then_collect_keeps_what_was_answered(setup, capsys):
    server, common, _ = setup
    server.hold()
    assert _run(["submit", *common], capsys)[0] == 0
    judge = ["--judge", common[1]]
    code, out, _ = _run(["cancel", *judge], capsys)
    assert code == 0 and "cancel asked for 1 batch(es)" in out and "cancelling" in out
    code, out, _ = _run(["collect", *judge], capsys)
    assert code == 1  # some lines were cancelled: incomplete, the next submit sends them
    assert "batch_000000: cancelled" in out and "batch_cancelled" in out
    code, out, err = _run(["cancel", *judge, "--batch", "nope"], capsys)
    assert code == 2 and "no batch 'nope'" in err


def test_ingest_exit_codes_name_the_file_and_line(setup, capsys):
    _, common, tmp = setup
    _run(["export", *common, "--out", tmp / "in"], capsys)
    lines = [json.loads(x) for x in (tmp / "in" / "requests-00000.jsonl").read_text().splitlines()]
    out_lines = []
    for n, line in enumerate(lines):
        body = {
            "id": f"c{n}",
            "model": "test-model",
            "created": 1,
            "choices": [{"message": {"content": "**Result:** A"}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 5, "completion_tokens": 2},
        }
        response = {"status_code": 200, "request_id": "r", "body": body}
        out_lines.append({"id": f"v{n}", "custom_id": line["custom_id"], "response": response})
    out_lines[0] = {
        "id": "v0",
        "custom_id": lines[0]["custom_id"],
        "error": "engine died",
        "response": {"status_code": 400, "request_id": "r", "body": None},
    }
    good = tmp / "out.jsonl"
    good.write_text("".join(json.dumps(x) + "\n" for x in out_lines))
    code, out, _ = _run(["ingest", good, *common], capsys)
    assert code == 1 and "answers stored     11 new" in out and "engine died" in out
    assert "judgment rows      11 (1 pending)" in out
    broken = tmp / "broken.jsonl"
    broken.write_text(json.dumps(out_lines[1]) + "\n{oops\n")
    code, _, err = _run(["ingest", broken, *common], capsys)
    assert code == 2 and "broken.jsonl, line 2: not JSON" in err
    code, _, err = _run(["ingest", tmp / "missing.jsonl", *common], capsys)
    assert code == 2 and "missing.jsonl" in err


def test_bad_input_exits_2_with_a_message(setup, capsys, tmp_path):
    _, common, tmp = setup
    code, _, err = _run(
        ["export", "--judge", tmp / "nope.yaml", *common[2:], "--out", tmp], capsys
    )
    assert code == 2 and "nope.yaml" in err
    bad = tmp / "bad.jsonl"
    bad.write_text('{"benchmark": "b"\n')
    code, _, err = _run(["export", common[0], common[1], "--benchmark", bad, "--out", tmp], capsys)
    assert code == 2 and "bad.jsonl" in err
    code, _, err = _run(["submit", *common, "--split", "nosuch"], capsys)
    assert code == 2 and "unknown split" in err
    code, _, err = _run(["export", *common, "--split", "nosuch", "--out", tmp / "o"], capsys)
    assert code == 2 and "unknown split" in err and not (tmp / "o").exists()
    code, _, err = _run(["export", *common], capsys)
    assert code == 2 and "--out DIR is required" in err
    assert not paths.cache().exists()  # refused before the cache was opened
    code, _, err = _run(["export", *common, "--out", tmp, "--dry-run", "--discount", "2"], capsys)
    assert code == 2 and "discount" in err
    assert Registry().entries() == []  # nothing was submitted
    for p in tmp.rglob("*"):
        assert not p.is_file() or KEY.encode() not in p.read_bytes()


def test_judge_backend_batch_once_wired(setup, capsys):
    from judgelab.cli import judge as cli_judge

    sub = argparse.ArgumentParser().add_subparsers()
    cli_judge.register(sub)
    if "--backend" not in sub.choices["judge"].format_help():
        pytest.skip("`judgelab judge --backend batch` is wired by the lead in cli/judge.py")
    _, common, _ = setup
    args = [*common, "--backend", "batch", "--wait", "--poll-s", "0.01", "--no-progress"]
    code = cli_judge.main([str(a) for a in args])
    out = capsys.readouterr().out
    assert code == 0 and "judgment rows      12 (0 pending)" in out


# --- issue 32 (Reliability III): items 7, 8, 10, 17 ------------------------------------------


def test_rel3_7_a_broken_batch_does_not_stop_the_others(setup, capsys):
    server, common, _ = setup
    judge = ["--judge", common[1]]
    code, out, _ = _run(["submit", *common, "--max-lines", "4"], capsys)
    assert code == 0 and "submitted now      12 request(s) in 3 batch(es)" in out
    reg = Registry()
    gone, lost, good = reg.entries()  # oldest first
    server.forget(gone.batch_id)  # the provider answers 404 for it
    reg.path(lost.local_id, ".input.jsonl").unlink()  # its shard is gone
    for _ in range(2):  # rerunning the same command goes on with the others
        code, out, err = _run(["collect", *common], capsys)
        assert code == 1, err
        assert "batches broken     2" in out
        assert f"{gone.batch_id}: NotFoundError" in out and "404" in out
        assert f"{lost.batch_id}: input shard" in out and "abandon" in out
        assert "judgment rows      4 (8 pending)" in out
    assert "answers stored     4 new" not in out  # the second time, nothing new
    # The paid answers of the batch whose shard is gone are kept on disk.
    kept = reg.path(lost.local_id, ".output.jsonl")
    assert kept.exists() and len(kept.read_text().splitlines()) == 4
    code, out, _ = _run(["status", *judge, "--offline"], capsys)
    assert "3 batch(es), 2 not collected, 2 broken" in out
    assert out.count("BROKEN: ") == 2
    code, out, _ = _run(["submit", *common], capsys)  # held by the broken ones: none sent
    assert code == 0 and "submitted now      0 request(s)" in out
    assert "in earlier batches 8" in out
    code, out, _ = _run(["abandon", gone.batch_id, *judge], capsys)
    assert code == 0 and f"{gone.batch_id}: abandoned" in out
    code, out, _ = _run(["abandon", lost.batch_id], capsys)  # --judge is optional
    assert code == 0 and "4 request(s) may be submitted again" in out
    code, out, _ = _run(["submit", *common], capsys)
    assert code == 0 and "submitted now      8 request(s) in 1 batch(es)" in out
    code, out, _ = _run(["collect", *common], capsys)
    assert code == 0 and "answers stored     8 new" in out and "(0 pending)" in out
    code, out, _ = _run(["status", *judge, "--offline"], capsys)
    assert "4 batch(es), 0 not collected, 0 broken" in out
    assert out.count(": abandoned, 4 requests") == 2  # kept on disk for the record
    assert Registry().held_keys(good.judge) == set()


def test_rel3_7_abandon_refuses_a_healthy_batch_without_force(setup, capsys):
    server, common, _ = setup
    server.hold()
    judge = ["--judge", common[1]]
    assert _run(["submit", *common], capsys)[0] == 0
    (entry,) = Registry().entries()
    code, _, err = _run(["abandon", entry.batch_id, *judge], capsys)
    assert code == 2 and "not broken" in err and "--force" in err
    assert Registry().held_keys(entry.judge) == set(entry.keys)
    code, _, err = _run(["abandon", "batch_nope"], capsys)
    assert code == 2 and "no batch 'batch_nope'" in err
    code, out, _ = _run(["abandon", entry.local_id, "--force"], capsys)
    assert code == 0 and "abandoned" in out
    assert Registry().held_keys(entry.judge) == set()
    code, _, err = _run(["abandon", entry.local_id], capsys)
    assert code == 2 and "already" in err


def _escape_registry(tmp, capsys, common):
    """Submit one batch, then point its registry entry's local_id outside the home."""
    assert _run(["submit", *common], capsys)[0] == 0
    reg = Registry()
    (entry,) = reg.entries()
    outside = tmp / "outside"
    outside.mkdir()
    evil = os.path.relpath(outside / "X", reg.root)
    assert evil.startswith("../")
    shard = reg.path(entry.local_id, ".input.jsonl")
    shutil.copy(shard, outside / "X.input.jsonl")  # so the old code got as far as writing
    record = reg.path(entry.local_id)
    data = json.loads(record.read_text())
    return reg, record, data, evil, outside


def test_rel3_8_registry_ids_come_from_the_file_name(setup, capsys):
    _, common, tmp = setup
    reg, record, data, evil, outside = _escape_registry(tmp, capsys, common)
    record.write_text(json.dumps(data | {"local_id": evil}))
    code, out, err = _run(["collect", *common], capsys)
    assert sorted(p.name for p in outside.iterdir()) == ["X.input.jsonl"]  # nothing written
    assert code == 2 and str(record) in err and "batch id" in err, out
    assert "does not match its file name" in err
    code, _, err = _run(["status", "--judge", common[1], "--offline"], capsys)
    assert code == 2 and str(record) in err
    # An unsafe file name is refused too (the id is the file name).
    record.write_text(json.dumps(data))
    bad = record.with_name("b x.json")
    record.rename(bad)
    code, _, err = _run(["collect", *common], capsys)
    assert code == 2 and str(bad) in err and "batch id name 'b x'" in err
    bad.rename(record)
    code, out, _ = _run(["collect", *common], capsys)  # the intact registry collects
    assert code == 0 and "answers stored     12 new" in out


def test_rel3_10_export_prefix_is_one_name_and_removes_only_its_shards(setup, capsys):
    _, common, tmp = setup
    out_dir = tmp / "x"
    assert _run(["export", *common, "--out", out_dir, "--prefix", "other"], capsys)[0] == 0
    assert _run(["export", *common, "--out", out_dir, "--max-lines", "5"], capsys)[0] == 0
    for prefix in ("*", "../up", "re[q]"):
        code, _, err = _run(["export", *common, "--out", out_dir, "--prefix", prefix], capsys)
        assert code == 2 and "--prefix" in err and f"shard prefix name '{prefix}'" in err
    names = sorted(p.name for p in out_dir.iterdir())
    assert names == ["other-00000.jsonl"] + [f"requests-0000{i}.jsonl" for i in range(3)]
    assert not (tmp / "up-00000.jsonl").exists()
    assert _run(["export", *common, "--out", out_dir, "--max-lines", "8"], capsys)[0] == 0
    names = sorted(p.name for p in out_dir.iterdir())  # requests-00002 was stale
    assert names == ["other-00000.jsonl", "requests-00000.jsonl", "requests-00001.jsonl"]


def test_rel3_17_offline_status_counts_what_it_lists(setup, capsys):
    server, common, _ = setup
    server.hold()
    assert _run(["submit", *common, "--max-lines", "5"], capsys)[0] == 0
    code, out, _ = _run(["status", "--judge", common[1], "--offline"], capsys)
    assert code == 0 and "3 batch(es), 3 not collected" in out
    assert out.count("not collected") == 4  # the header and each of the three
    code, out, _ = _run(["status", "--judge", common[1]], capsys)
    assert code == 0 and "3 batch(es), 3 not collected" in out
