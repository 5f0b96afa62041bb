"""Smoke-sized runs of `bench/tables.py` (issue 24): the code runs, no timing is asserted."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pandas as pd

from judgelab.analyses import pairwise

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench import tables as bench  # noqa: E402


def test_generated_judgments_scan_to_the_pandas_numbers(tmp_path):
    folder = tmp_path / "synthetic"
    rows = bench.write_judgments(folder, 300, 2, 2, chunk=128)  # three row groups a file
    assert sorted(p.name for p in folder.iterdir()) == ["judge-00.parquet", "judge-01.parquet"]
    df = pd.concat([pd.read_parquet(p) for p in sorted(folder.iterdir())], ignore_index=True)
    assert len(df) == rows and 2 * 2 * 300 - 40 < rows <= 2 * 2 * 300  # a few second orders lack
    assert df["chosen"].isna().any() and (df["chosen"] == "tie").any()
    res = bench.scan_child(str(folder), n_boot=10)
    want = pairwise.pairwise_rates(pairwise.item_outcomes(df), n_boot=10)
    ca = want[(want["aggregation"] == "pooled") & (want["metric"] == "ca")]["value"]
    assert res["ca_pooled"] == [round(float(v), 6) for v in ca]
    assert res["rates_rows"] == len(want) and res["peak_rss_mb"] > 0


def test_import_files_and_child(tmp_path):
    paths = bench.write_import_files(tmp_path / "imp", 500, chunk=200)
    assert paths["csv"].read_text().count("\n") == 501  # header + rows
    assert paths["jsonl"].read_text().count("\n") == 500
    for path in paths.values():
        res = bench.import_child(str(path))
        assert res["rows"] == 500 and res["items"] == 250 and 0 < res["valid"] < 500
        assert res["rows_per_s"] > 0 and (path.parent / "out" / "judgments.parquet").is_file()


def test_main_smoke_in_a_child(tmp_path, capsys):
    out, gen = tmp_path / "tables.json", tmp_path / "gen"
    gen.mkdir()
    argv = ["--smoke", "--only", "scan", "--repeat", "1", "--out", str(out), "--tmp", str(gen)]
    assert bench.main(argv) == 0
    res = json.loads(out.read_text())
    assert res["scan"]["wall_s"]["n"] == 1 and res["scan"]["rows"] > 0
    assert "scan" in capsys.readouterr().out and res["table"]
    assert list(gen.iterdir()) == []  # the generated parquet files are removed
