"""`judgelab run` with params and overrides, `judgelab runs list` and `runs diff` (issue 34)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from judgelab.cli import main as cli
from judgelab.testing.notebooks import write_notebook


@pytest.fixture()
def project(tmp_path: Path, monkeypatch) -> Path:
    root = tmp_path / "proj"
    write_notebook(
        root / "notebooks" / "92_two.ipynb",
        'x: int = 1  # a number\ny: int = 1  # another number\nrun: str = "default"  # run name',
        [
            "import pandas as pd\nfrom judgelab.reporting import notebook\n"
            'out = notebook.outputs("92_two", run)\n'
            'out.table(pd.DataFrame({"judge": ["a", "b", "c"], "v": [x, y, 7]}), "numbers")',
        ],
    )
    (root / "params" / "92_two").mkdir(parents=True)
    (root / "params" / "92_two" / "default.yaml").write_text("y: 6\n")
    monkeypatch.setenv("JUDGELAB_PROJECT", str(root))
    return root


def _record(home: Path, run: str) -> dict:
    return json.loads((home / "reports" / "92_two" / f"{run}.json").read_text())


def test_i34_5_p_on_top_of_default(project: Path, judgelab_home: Path, capsys):
    assert cli.main(["run", "92_two", "-p", "x=3", "--run", "three"]) == 0
    rec = _record(judgelab_home, "three")
    # y comes from params/92_two/default.yaml, x from -p, run from --run.
    assert rec["parameters"] == {"y": 6, "x": 3, "run": "three"}
    assert rec["params_file"].endswith("params/92_two/default.yaml")
    assert "-p" in cli.build_parser()._subparsers._group_actions[0].choices["run"].format_help()


def _two_runs(project: Path) -> None:
    from judgelab.reporting import pipeline

    default = project / "params" / "92_two" / "default.yaml"
    assert pipeline.run_notebook("92_two", params_file=default, html_export=False).ok
    res = pipeline.run_notebook(
        "92_two", params_file=default, overrides={"x": 3}, run="three", html_export=False
    )
    assert res.ok, res.error


def test_i34_5_runs_diff_effective_values_and_rows(project: Path, capsys):
    _two_runs(project)
    assert cli.main(["runs", "diff", "92_two/default", "92_two/three"]) == 0
    out = capsys.readouterr().out
    # x was not set in the default run: its effective value is the notebook's default, 1.
    assert "x: 1 (notebook default) → 3" in out and "None" not in out
    assert "numbers.csv.v: 1 of 3 cells differ, max |Δ| 2" in out
    assert "numbers.csv: rows that differ (by judge): a" in out


def test_i34_5_runs_list(project: Path, capsys):
    _two_runs(project)
    assert cli.main(["runs", "list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    rows = [line.split() for line in lines if line.startswith("92_two/")]
    assert [r[:2] for r in rows] == [["92_two/default", "ok"], ["92_two/three", "ok"]]
    (three,) = [line for line in lines if line.startswith("92_two/three")]
    assert "x=3" in three
