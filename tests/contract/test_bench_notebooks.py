"""Smoke-sized `bench/notebooks.py` (issue 38): notebooks 02 and 03 run on a generated source."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench import notebooks as bench  # noqa: E402


def test_generated_source_is_a_valid_file_import(tmp_path):
    env = bench.make_home(tmp_path, 400)
    items = pd.read_parquet(Path(env["JUDGELAB_DATA"]) / "items" / "synthetic.parquet")
    assert len(items) == 40 and items["cluster"].nunique() == 4
    judged = sorted((Path(env["JUDGELAB_DATA"]) / "judgments" / "synthetic").iterdir())
    assert [p.name for p in judged] == [f"judge-{j:02d}.parquet" for j in range(bench.JUDGES)]
    assert "model" in pd.read_parquet(judged[0]).columns  # every judgments column is written


@pytest.mark.parametrize("notebook", bench.NOTEBOOKS)
def test_notebook_runs_and_is_measured(tmp_path, notebook):
    res = bench.bench_notebook(bench.SMOKE_ROWS, notebook=notebook, tmp_root=str(tmp_path))
    assert res["rows"] == bench.SMOKE_ROWS and res["wall_s"] > 0 and res["notebook"] == notebook
    assert res["peak_rss_mb"] > 100  # the CLI and its kernel, summed


def test_measured_cpu_counts_the_grandchildren(tmp_path):
    """The CPU seconds include a process the child starts (the kernel `judgelab run` starts)."""
    burn = "import time\nx = 0\nfor i in range(2 * 10**6): x += i\nprint(time.process_time())"
    child = f"import subprocess, sys; subprocess.run([sys.executable, '-c', {burn!r}])"
    got = bench.run_measured([sys.executable, "-c", child], dict(os.environ), timeout_s=60)
    assert got["returncode"] == 0
    assert got["cpu_s"] >= float(got["log"].split()[-1])  # at least the grandchild's own
