"""Smoke-sized runs of every `make bench` workload: the code runs, no timing is asserted."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import pytest

from judgelab.analyses import pairwise

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench import run as bench  # noqa: E402
from bench.reference_runner import run_reference  # noqa: E402


def _main(tmp_path: Path, *args: str) -> dict:
    out = tmp_path / "bench.json"
    assert bench.main(["--smoke", "--repeat", "1", "--out", str(out), *args]) == 0
    return json.loads(out.read_text())


def test_runner_and_cached_smoke(tmp_path, capsys):
    res = _main(tmp_path, "--only", "runner")
    r = res["runner"]
    cfg = bench.SIZES["smoke"]
    n = cfg["items"] * 2
    assert r["requests"] == n
    assert r["ideal_s"] == pytest.approx(math.ceil(n / cfg["concurrency"]) * 0.002)
    assert r["fresh"]["wall_s"]["n"] == 1 and r["fresh"]["wall_s"]["median"] > 0
    assert r["cached"]["per_request_us"]["median"] > 0
    for label, threads in (("defaults", 10), ("equal_concurrency", cfg["concurrency"])):
        ref = r["reference"][label]
        assert ref["threads"] == threads and ref["requests_measured"] == 2 * cfg["reference_items"]
        # the reference's wall is scaled from its measured share to all n requests
        assert ref["wall_full_s"]["median"] == pytest.approx(
            ref["wall_s"]["median"] * n / ref["requests_measured"]
        )
    for fresh in (r["fresh"], r["fresh_openai_sdk"]):  # both HTTP clients measured
        assert 0 < fresh["request_s"]["median"] <= fresh["wall_s"]["median"]
    assert r["efficiency"] == pytest.approx(r["ideal_s"] / r["fresh"]["request_s"]["median"])
    printed = capsys.readouterr().out
    assert "1 runner efficiency" in printed and "2 cached rerun" in printed
    assert json.loads((tmp_path / "bench.json").read_text())["table"]


def test_reference_runner_sends_orders_one_after_the_other():
    from judgelab.testing.openai_server import OpenAIServer

    bodies = [
        [{"model": "m", "messages": [{"role": "user", "content": f"q{i} o{o}"}]} for i in range(3)]
        for o in (0, 1)
    ]
    with OpenAIServer() as srv:
        res = run_reference(bodies, base_url=srv.url, api_key="sk-test", threads=2)
        assert (res.requests, res.answered, res.failed) == (6, 6, 0)
        assert srv.total == 6 and len(srv.counts) == 6


def test_metrics_smoke_keeps_texts_out_and_counts_rows(tmp_path):
    res = _main(tmp_path, "--only", "metrics")
    m = res["metrics"]
    cfg = bench.SIZES["smoke"]
    assert m["rows"] == cfg["metric_items"] * cfg["judges"] * 2
    assert m["text_columns_loaded"] == []  # only keys and verdicts are read
    assert m["full_read"]["rows"] == m["rows"]
    assert m["equal_b"]["n_boot"] == cfg["pandas_boot"] and m["equal_b"]["ratio"] > 0
    assert m["peak_rss_mb"]["max"] > 0


def test_metric_table_paths_agree_on_point_estimates(tmp_path):
    path = tmp_path / "j.parquet"
    assert bench.write_metric_table(path, 30, 2, 2) == 120
    chosen = bench.metrics_chosen(str(path), n_boot=5)
    assert chosen["rows"] == 120 and chosen["boards"] == len(pairwise.METRICS)
    full = bench.metrics_full_read(str(path))
    assert full["rows"] == 120
    assert bench.metrics_pandas(str(path), n_boot=2)["boards"] == 2


def test_import_is_skipped_with_a_message_without_mirror(tmp_path, monkeypatch):
    monkeypatch.setenv("JUDGELAB_MIRROR", str(tmp_path / "nowhere"))
    res = bench.bench_import(1)
    assert "mirror not found" in res["skipped"]
    rows = bench.table_rows({"import": res})
    assert rows[0][-1].startswith("SKIP: LLMBar mirror not found")


@pytest.mark.realdata
def test_import_smoke_on_the_mirror(mirror):
    res = bench.bench_import(1)
    assert res["items"] > 0 and res["judgments"] > 0
    assert res["wall_s"]["n"] == 1 and res["rows_per_s"] > 0


def test_figures_reads_run_records(tmp_path, monkeypatch):
    reports = tmp_path / "reports"
    monkeypatch.setenv("JUDGELAB_REPORTS", str(reports))
    assert "skipped" in bench.bench_figures("records", 10)
    for nb, secs, status in (("01_a", 2.5, "ok"), ("02_b", 4.0, "failed")):
        (reports / nb).mkdir(parents=True)
        rec = {"notebook": nb, "run": "default", "status": status, "seconds": secs}
        (reports / nb / "default.json").write_text(json.dumps(rec))
    (reports / "01_a" / "other.json").write_text(json.dumps(rec))  # not a default run
    res = bench.bench_figures("records", 10)
    assert [r["notebook"] for r in res["notebooks"]] == ["01_a", "02_b"]
    assert res["sum_seconds"] == 6.5 and res["failed"] == ["02_b"]
    rows = bench.table_rows({"figures": res})
    assert rows[-1][0] == "5 make figures (sum of records)" and rows[-1][-1] == "MISS"


def test_summary_and_table_format():
    assert bench.summarize([4.0, 1.0, 2.0, 3.0]) == {
        "n": 4,
        "median": 2.5,
        "min": 1.0,
        "max": 4.0,
    }
    text = bench.format_table([["x", "1", "2.000", "", "", "s", "", ""]])
    assert text.splitlines()[0].startswith("workload") and "2.000" in text


def test_scale_runner_smoke_measures_clients_and_workers_and_start_up(capsys):
    from bench import scale_runner

    configs = ["aiohttp:1:-uvloop", "aiohttp:2:-prebuild"]
    assert scale_runner.main(["--smoke", "--repeat", "1", "--configs", ",".join(configs)]) == 0
    res = json.loads(capsys.readouterr().out)
    r = res["runner_scale"]
    assert r["requests"] == 2 * scale_runner.SCALE_SMOKE["items"] and r["bare_wall_s"]["n"] == 1
    assert r["load_1min"]["n"] == 2
    for config in configs:
        one = r["by_config"][config]
        assert one["ratio_to_bare"]["median"] == pytest.approx(
            one["judgelab_wall_s"]["median"] / r["bare_wall_s"]["median"]
        )
        assert 0 < one["judgelab_request_s"]["median"] <= one["judgelab_wall_s"]["median"]
        assert one["after_request_phase_s"]["median"] == pytest.approx(
            one["judgelab_wall_s"]["median"] - one["judgelab_request_s"]["median"]
        )
        assert one["cpu_ms_per_request"]["median"] > 0
    with pytest.raises(ValueError, match="unknown mechanism 'streams'"):
        scale_runner.main(["--smoke", "--configs", "aiohttp:1:-streams"])
    s = res["startup"]
    assert s["help_s"]["n"] == 1 and s["cached_s"]["median"] > 0


@pytest.mark.slow
def test_i34_6_bench_rerun_skips_unchanged_and_reruns_one_changed(tmp_path):
    """Issue 34 item 6 in `make bench`, on two tiny notebooks (real kernels, real CLI)."""
    from bench import rerun

    from judgelab.testing.notebooks import write_notebook

    source = tmp_path / "src"
    for nb in ("90_a", "91_b"):
        write_notebook(
            source / "notebooks" / f"{nb}.ipynb", 'seed: int = 0\nrun: str = "x"', ["1"]
        )
        (source / "params" / nb).mkdir(parents=True)
        (source / "params" / nb / "default.yaml").write_text("seed: 0\n")
    res = rerun.measure(source, timeout_s=300, read=bench.read_records)
    assert res["fresh"]["returncode"] == 0, res["fresh"]["stderr_tail"]
    assert [r["notebook"] for r in res["fresh"]["notebooks"]] == ["90_a", "91_b"]
    assert res["unchanged"]["executed"] == [] and res["unchanged"]["returncode"] == 0
    one = res["one_params_change"]
    assert one["changed"] == {"file": "params/90_a/default.yaml", "key": "seed"}
    assert one["executed"] == ["90_a [default]"]
    assert "(ran: parameters changed: seed 0 → 1)" in one["stderr_tail"]
    rows = rerun.table_rows(res)
    assert rows[0][0] == "5 reproduce again, nothing changed" and rows[0][-1].endswith("(0 ran)")
    assert rows[1][-1] == "PASS (ran: 90_a [default])"


def test_i34_6_bench_table_shows_the_reruns_beside_the_fresh_run():
    fresh = {"mode": "run", "wall_s": 250.0, "sum_seconds": 240.0, "failed": []}
    fresh["notebooks"] = [{"notebook": "01_a", "status": "ok", "seconds": 240.0}]
    fresh["rerun"] = {
        "unchanged": {"wall_s": 9.5, "executed": [], "returncode": 0},
        "one_params_change": {
            "wall_s": 30.0,
            "executed": ["01_a [default]"],
            "returncode": 0,
            "changed": {"file": "params/01_a/default.yaml", "key": "seed"},
        },
    }
    rows = bench.table_rows({"figures": fresh})
    assert [r[0] for r in rows] == [
        "5   01_a (ok)",
        "5 make figures wall",
        "5 reproduce again, nothing changed",
        "5 params/01_a/default.yaml (seed+1)",
    ]
    assert rows[2][2] == "9.500" and rows[2][-1] == "PASS (0 ran)"
    assert rows[3][-1] == "PASS (ran: 01_a [default])"
    fresh["rerun"]["unchanged"].update(wall_s=16.0, executed=["01_a [default]"])
    assert bench.table_rows({"figures": fresh})[2][-1] == "MISS (1 ran)"


def test_i34_6_bench_listing_records_seconds_load_and_verdict():
    from bench import listing

    res = listing.measure(2, commands=(("--help", ("--help",), 1.0),))
    (r,) = res
    assert r["argv"] == ["--help"] and r["returncodes"] == [0, 0]
    assert len(r["wall_s"]) == 2 and all(w > 0 for w in r["wall_s"])
    assert len(r["load_1min"]) == 3  # before each run and after the last
    row = listing.table_rows([{**r, "wall_s": [0.5, 0.7], "median_s": 0.6}])[0]
    assert row[:7] == ["6 --help", "2", "0.600", "0.500", "0.700", "s", "<= 1 quiet"]
    assert row[7].startswith("PASS")
    slow = listing.table_rows([{**r, "wall_s": [2.0], "median_s": 2.0}])[0]
    assert slow[7].startswith("MISS")
    assert any(c[0] == "data list" for c in listing.COMMANDS)
    assert "listing" in bench.WORKLOADS
