"""Issue 19, items 2, 12, 14: imports never lose data, and one catalog sees every table."""

from __future__ import annotations

import errno
import json
from pathlib import Path

import pytest

from judgelab.cli import main as cli
from judgelab.core import paths, tables
from judgelab.data import catalog
from judgelab.data import ingest as imports
from judgelab.reporting import card

ROOT = Path(__file__).resolve().parents[2]


def _pointwise(path: Path, rows: list[tuple[str, str, str]]) -> Path:
    """Write a JSONL file of (item id, answer, verdict) rows, gold 'Correct' throughout."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "".join(
            json.dumps({"qid": q, "q": f"question {q}", "ans": a, "gold": "Correct", "v": v})
            + "\n"
            for q, a, v in rows
        )
    )
    return path


def _mapping(path: Path, benchmark: str, judge: str) -> Path:
    path.write_text(
        f"benchmark: {benchmark}\ntask: pointwise\nitem_id: qid\nquestion: q\nresponse: ans\n"
        f"gold: gold\nverdict: v\njudge: {judge}\n"
    )
    return path


def _judgments(benchmark: str, judge: str):
    return tables.read_judgments(paths.judgments() / benchmark / f"{judge}.parquet")


def test_issue19_2_same_stem_imports_keep_each_others_tables(tmp_path):
    one = _pointwise(tmp_path / "a" / "data.jsonl", [("q1", "4", "Correct")])
    two = _pointwise(tmp_path / "b" / "data.jsonl", [("q9", "5", "Incorrect")])
    imports.import_mapped_file(one, _mapping(tmp_path / "m1.yaml", "alpha", "j1"))
    imports.import_mapped_file(two, _mapping(tmp_path / "m2.yaml", "beta", "j2"))
    # the second import (same stem "data", another benchmark) left the first's tables alone
    assert tables.read_items(paths.items() / "alpha.parquet").item_id.tolist() == ["q1"]
    assert _judgments("alpha", "j1").item_id.tolist() == ["q1"]
    assert _judgments("beta", "j2").item_id.tolist() == ["q9"]
    # and a re-import of the first file still replaces only its own rows
    _pointwise(one, [("q1", "4", "Incorrect")])
    imports.import_mapped_file(one, _mapping(tmp_path / "m1.yaml", "alpha", "j1"))
    assert _judgments("alpha", "j1").verdict.tolist() == ["Incorrect"]
    assert _judgments("beta", "j2").item_id.tolist() == ["q9"]


def test_issue19_12_two_files_into_one_benchmark_merge(tmp_path):
    first = _pointwise(tmp_path / "first.jsonl", [("q1", "4", "Correct"), ("q2", "6", "Correct")])
    second = _pointwise(tmp_path / "second.jsonl", [("q3", "8", "Correct")])
    imports.import_mapped_file(first, _mapping(tmp_path / "m1.yaml", "mine", "j1"))
    imports.import_mapped_file(second, _mapping(tmp_path / "m2.yaml", "mine", "j2"))
    items = tables.read_items(paths.items() / "mine.parquet")
    assert sorted(items.item_id) == ["q1", "q2", "q3"]  # merged by key, not replaced
    for judge in ("j1", "j2"):  # no judgment points at an item that no longer exists
        assert set(_judgments("mine", judge).item_id) <= set(items.item_id)
    loaded = catalog.load_source("mine")
    assert sorted(loaded.judgments.judge.unique()) == ["j1", "j2"]


def test_issue19_12_clash_with_other_data_is_refused_naming_it(tmp_path, capsys):
    first = _pointwise(tmp_path / "first.jsonl", [("q1", "4", "Correct")])
    other = _pointwise(tmp_path / "other.jsonl", [("q1", "five", "Correct")])
    mapping = _mapping(tmp_path / "m.yaml", "mine", "j1")
    imports.import_mapped_file(first, mapping)
    before = (paths.items() / "mine.parquet").read_bytes()
    assert cli.main(["data", "import-file", str(other), "--mapping", str(mapping)]) == 2
    err = capsys.readouterr().err
    assert "q1" in err and "mine.parquet" in err and "different content" in err
    assert (paths.items() / "mine.parquet").read_bytes() == before


def test_issue19_12_full_disk_writes_all_or_nothing(tmp_path, monkeypatch):
    first = _pointwise(tmp_path / "first.jsonl", [("q1", "4", "Correct")])
    mapping = _mapping(tmp_path / "m.yaml", "mine", "j1")
    imports.import_mapped_file(first, mapping)
    items_file = paths.items() / "mine.parquet"
    old = {p: p.read_bytes() for p in (items_file, paths.judgments() / "mine" / "j1.parquet")}
    real, calls = tables.pq.write_table, []

    def second_write_fails(*args, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(*args, **kwargs)

    monkeypatch.setattr(tables.pq, "write_table", second_write_fails)
    _pointwise(first, [("q1", "4", "Incorrect"), ("q2", "7", "Correct")])
    with pytest.raises(OSError, match="No space left"):
        imports.import_mapped_file(first, mapping)
    monkeypatch.setattr(tables.pq, "write_table", real)
    assert {p: p.read_bytes() for p in old} == old  # the old tables are intact
    leftovers = [  # the lock files beside the tables (issue 32, 1) stay, as the runner's do
        p.name
        for p in paths.data().rglob("*")
        if p.name.startswith(".mine") and p.suffix != ".lock"
    ]
    assert leftovers == [] and not list(paths.judgments().rglob("*.tmp"))
    assert tables.read_items(items_file).item_id.tolist() == ["q1"]


def test_issue19_14_card_sees_runner_written_judgments(tiny_registry, capsys):
    imports.import_source("tinypairs")
    spec = ROOT / "params" / "judges" / "offline-always-a.yaml"
    assert cli.main(["judge", "--judge", str(spec), "--benchmark", "tinypairs"]) == 0
    capsys.readouterr()
    runner_files = [
        p for p in (paths.judgments() / "tinypairs").glob("*.parquet") if p.stem != "GPT-4"
    ]
    runner_ids = {p.stem for p in runner_files} - {"Llama"}
    assert len(runner_ids) == 1
    (judge,) = runner_ids
    loaded = catalog.load_source("tinypairs")
    counts = loaded.judgments.judge.value_counts()
    assert counts[judge] == len(_judgments("tinypairs", judge))  # seen, counted once
    assert counts["GPT-4"] == 3  # imported judgments are not double counted
    sources = card.load_sources([f"tinypairs:{judge}"])
    assert card.card_keys(sources) == [card.CardKey("tinypairs", judge)]


def test_the_judge_command_does_not_import_scipy_matplotlib_or_the_reports():
    """`judgelab judge` (and --help) start without the analysis stack (issue 24: ≤ 0.3 s)."""
    import subprocess
    import sys

    code = (
        "import sys; from judgelab.cli import main, judge; main.build_parser();"
        "from judgelab import judges; from judgelab.errors import ParamsError;"
        "from judgelab.reporting import stopping;"
        "bad = [m for m in ('scipy', 'matplotlib', 'statsmodels', 'nbconvert', 'papermill',"
        " 'judgelab.reporting.pipeline', 'judgelab.reporting.calibration') if m in sys.modules];"
        "print(bad)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]", out.stdout
