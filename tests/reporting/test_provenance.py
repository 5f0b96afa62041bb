"""Provenance on every run (record, HTML footer, index) and `judgelab runs diff`."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from judgelab.cli import main as cli
from judgelab.reporting import pipeline, provenance
from judgelab.testing.notebooks import write_notebook


@pytest.fixture()
def project(tmp_path: Path, monkeypatch) -> Path:
    root = tmp_path / "proj"
    write_notebook(
        root / "notebooks" / "90_table.ipynb",
        'x: int = 1  # a number\nseed: int = 0  # a seed\nsource: str = "llmbar"  # a source\n'
        'run: str = "default"  # run name',
        [
            "import pandas as pd\nfrom judgelab.reporting import notebook\n"
            'out = notebook.outputs("90_table", run)\n'
            'out.table(pd.DataFrame({"k": ["a", "b"], "v": [x, 2 * x]}), "numbers")',
        ],
    )
    (root / "uv.lock").write_text("version = 1\n")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    subprocess.run(
        ["git", "-C", str(root), "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-q",
         "--allow-empty", "-m", "init"],
        check=True,
    )  # fmt: skip
    monkeypatch.setenv("JUDGELAB_PROJECT", str(root))
    return root


def test_every_run_records_its_provenance(project: Path, judgelab_home: Path):
    res = pipeline.run_notebook("90_table", overrides={"x": 3}, run="three")
    assert res.ok, res.error
    rec = json.loads((judgelab_home / "reports/90_table/three.json").read_text())
    prov = rec["provenance"]
    assert len(prov["code"]["commit"]) == 40 and prov["code"]["dirty"] is False
    assert prov["packages"]["pandas"] and prov["python"]
    assert prov["lock"]["file"] == "uv.lock" and len(prov["lock"]["sha256"]) == 64
    assert prov["seeds"] == {"seed": 0}
    (llmbar,) = prov["data"]
    assert llmbar["source"] == "llmbar" and llmbar["revision"]
    assert all(len(f["sha256"]) == 64 for f in llmbar["files"])
    html = Path(res.html).read_text()
    assert "jl-provenance" in html and prov["code"]["commit"][:12] in html
    index = (
        (judgelab_home / "reports/index.html").read_text()
        if (judgelab_home / "reports/index.html").exists()
        else ""
    )
    pipeline.write_index()
    index = (judgelab_home / "reports/index.html").read_text()
    assert prov["code"]["commit"][:10] in index


def test_outside_git_the_commit_is_none(tmp_path: Path):
    assert provenance.git_state(tmp_path) == {"commit": None, "dirty": None}
    assert provenance.lock_hash(tmp_path) is None


def test_runs_diff_names_params_and_moved_numbers(project: Path, capsys):
    assert pipeline.run_notebook("90_table", overrides={"x": 1}, run="one").ok
    assert pipeline.run_notebook("90_table", overrides={"x": 4}, run="four").ok
    assert cli.main(["runs", "diff", "90_table/one", "90_table/four"]) == 0
    out = capsys.readouterr().out
    assert "x: 1 → 4" in out
    assert "numbers.csv.v: 2 of 2 cells differ, max |Δ| 6" in out
    assert "packages: same" in out and "data: same" in out
    assert cli.main(["runs", "diff", "90_table/one", "90_table/none"]) == 2
    assert "no run record" in capsys.readouterr().err
