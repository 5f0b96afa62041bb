import json
import subprocess
import sys
from pathlib import Path

import pytest

from judgelab import __version__
from judgelab.cli import main as cli
from judgelab.core import schema, tables

ROOT = Path(__file__).resolve().parents[2]


def test_help_and_version(capsys):
    out = subprocess.run(
        [sys.executable, "-m", "judgelab", "--help"], capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0
    for cmd in ("run", "reproduce", "data"):
        assert cmd in out.stdout
    out = subprocess.run(
        [sys.executable, "-m", "judgelab", "--version"], capture_output=True, text=True, timeout=60
    )
    assert out.stdout.strip() == f"judgelab {__version__}"


def test_data_validate_ok(capsys):
    code = cli.main(
        ["data", "validate", str(ROOT / "data/samples/contextualjudgebench/items.jsonl")]
    )
    assert code == 0
    out = capsys.readouterr().out
    assert out.startswith("ok: ") and "16 rows" in out and "8 splits" in out


def test_data_validate_bad_parquet(tmp_path: Path, capsys):
    df = schema.new_judgments(
        [
            {
                "benchmark": "b",
                "split": "s",
                "item_id": "1",
                "judge": "j",
                "valid": True,
                "chosen": "pos",
            }
        ]
    )
    path = tables.write_judgments(df, tmp_path / "judgments.parquet")
    assert cli.main(["data", "validate", str(path)]) == 0
    assert "1 judges, 0 invalid" in capsys.readouterr().out
    import pyarrow as pa
    import pyarrow.parquet as pq

    bad = df.copy()
    bad["order"] = bad["order"].astype("int64") + 5
    pq.write_table(pa.Table.from_pandas(bad, preserve_index=False), tmp_path / "judgments.parquet")
    assert cli.main(["data", "validate", str(path)]) == 2
    err = capsys.readouterr().err
    assert "judgments.parquet" in err and "column 'order'" in err and "row 0" in err


def test_data_validate_jsonl_row_is_line(tmp_path: Path, capsys):
    f = tmp_path / "items.jsonl"
    f.write_text(
        '{"benchmark": "b", "split": "s", "item_id": "1", "task": "pairwise"}\n'
        '{"benchmark": "b", "split": "s", "item_id": "2", "task": "ranking"}\n'
    )
    assert cli.main(["data", "validate", str(f)]) == 2
    err = capsys.readouterr().err
    assert "items.jsonl" in err and "column 'task'" in err and "row 2" in err


HEAVY_CHECK = (
    "import contextlib, sys\nfrom judgelab.cli import main\n"
    "with contextlib.suppress(SystemExit):\n    main.main({argv!r})\n"
    "print('HEAVY', sorted({{m.split('.')[0] if m.startswith('matplotlib') else m "
    "for m in sys.modules if m.startswith(('matplotlib', 'scipy.stats', 'seaborn'))}}))"
)


@pytest.mark.parametrize(
    "argv",
    [
        ["--help"],
        ["data", "list"],
        ["probe", "--list"],
        ["judge", "--list-templates"],
        ["runs", "list"],
        ["plan", "rate", "--width", "0.1", "--p", "0.8", "--icc", "0.3", "--cluster-size", "5"],
    ],
    ids=lambda a: "-".join(a[:2]),
)
def test_i34_6_listing_and_planning_import_no_plotting_or_scipy_stats(argv, tmp_path):
    code = HEAVY_CHECK.format(argv=argv)
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=tmp_path
    )
    heavy = [line for line in done.stdout.splitlines() if line.startswith("HEAVY")]
    assert heavy == ["HEAVY []"], (heavy, done.stderr[-2000:])


LEAN_CHECK = (
    "import contextlib, io, sys\nfrom judgelab.cli import main\nout = io.StringIO()\n"
    "with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):\n"
    "    main.main({argv!r})\n"
    "print('LOADED', sorted({{m.split('.')[0] for m in sys.modules}} & {heavy!r}))\n"
    "print(out.getvalue())"
)
#: What a listing must not import: the numeric, table and plotting stacks (seconds each).
NOT_FOR_LISTINGS = {"pandas", "numpy", "pyarrow", "scipy", "matplotlib", "seaborn", "polars"}


def lean_run(argv: list[str], cwd: Path) -> tuple[str, str]:
    """Run `main(argv)` in a fresh interpreter (this test's environment); return the heavy
    packages it loaded (as printed: "[]" for none) and what it printed."""
    code = LEAN_CHECK.format(argv=argv, heavy=NOT_FOR_LISTINGS)
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=cwd
    )
    head, _, printed = done.stdout.partition("\n")
    assert head.startswith("LOADED "), done.stderr[-2000:]
    return head.split(" ", 1)[1], printed


@pytest.mark.parametrize(
    "argv",
    [
        ["--help"],
        ["data", "list"],
        ["probe", "--list"],
        ["plan", "--help"],
        ["data", "--help"],
        ["judge", "--list-templates"],
        ["runs", "list"],
    ],
    ids=lambda a: "-".join(a),
)
def test_i34_6_listing_commands_import_no_pandas_numpy_or_pyarrow(argv, tmp_path):
    assert lean_run(argv, tmp_path)[0] == "[]"


def test_i34_6_runs_list_of_recorded_runs_imports_no_pandas(judgelab_home, tmp_path):
    record = {
        "notebook": "92_two",
        "run": "three",
        "status": "ok",
        "seconds": 4.2,
        "started_at": "2025-01-01T00:00:00",
        "parameters": {"x": 3, "run": "three"},
    }
    (judgelab_home / "reports" / "92_two").mkdir(parents=True)
    (judgelab_home / "reports" / "92_two" / "three.json").write_text(json.dumps(record))
    loaded, printed = lean_run(["runs", "list"], tmp_path)
    assert loaded == "[]"
    assert printed.split()[:5] == ["92_two/three", "ok", "2025-01-01T00:00:00", "4", "s"]
    assert "x=3" in printed


def _clusters_of(printed: str, source: str) -> str:
    return next(line.split() for line in printed.splitlines() if line.startswith(source))[-2]


def test_i34_6_data_list_counts_clusters_once_per_state_of_the_tables(tiny_registry, tmp_path):
    assert cli.main(["data", "import", "tinypairs"]) == 0
    loaded, printed = lean_run(["data", "list"], tmp_path)  # first count: reads the table
    assert "pandas" in loaded and _clusters_of(printed, "tinypairs") == "2"
    loaded, printed = lean_run(["data", "list"], tmp_path)  # unchanged: remembered
    assert loaded == "[]" and _clusters_of(printed, "tinypairs") == "2"
    assert cli.main(["data", "import", "tinypairs", "--limit", "1"]) == 0  # table rewritten
    loaded, printed = lean_run(["data", "list"], tmp_path)
    assert "pandas" in loaded and _clusters_of(printed, "tinypairs") == "1"
