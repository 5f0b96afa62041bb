"""Issue 34 item 6: `reproduce` skips runs whose inputs are unchanged; progress on stderr.

Most tests execute notebooks with a stand-in for papermill (`fake_kernel`: it writes the
executed notebook and what the run read, and counts executions), so each takes a second or
two; the concurrent test starts two real `judgelab reproduce` processes with real kernels.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from judgelab.cli import main as cli
from judgelab.reporting import freshness, pipeline, progress
from judgelab.testing.notebooks import write_notebook

#: The sources each notebook records reading (what `notebook.record_source` writes).
READS: dict[str, list[str]] = {"90_reads": ["sample:tiny"]}
SAMPLE_ITEMS = '{"item_id": "1", "benchmark": "tiny", "question": "q", "answer_a": "a"}\n'


@pytest.fixture()
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, judgelab_home: Path) -> Path:
    """Notebooks 90 (reads sample:tiny, two runs), 91 (fails once asked to) and 92 (no data)."""
    root = tmp_path / "proj"
    for nb in ("90_reads", "91_flaky", "92_plain"):
        write_notebook(
            root / "notebooks" / f"{nb}.ipynb", 'x: int = 1\nrun: str = "default"', ["y = x"]
        )
        (root / "params" / nb).mkdir(parents=True)
        (root / "params" / nb / "default.yaml").write_text("x: 2\n")
    (root / "params" / "90_reads" / "seven.yaml").write_text("x: 7\n")
    (root / "data" / "samples" / "tiny").mkdir(parents=True)
    (root / "data" / "samples" / "tiny" / "items.jsonl").write_text(SAMPLE_ITEMS)
    (root / "data" / "targets").mkdir(parents=True)
    (root / "data" / "targets" / "t.csv").write_text("a,b\n1,2\n")
    library = tmp_path / "lib"
    library.mkdir()
    (library / "code.py").write_text("X = 1\n")
    monkeypatch.setattr(freshness, "LIBRARY", library)
    monkeypatch.setenv("JUDGELAB_PROJECT", str(root))
    return root


@pytest.fixture()
def executed(monkeypatch: pytest.MonkeyPatch, judgelab_home: Path) -> list[str]:
    """Stand in for the kernel: record each execution as `<nb> [<run>]`; 91 fails on x == 2.

    Each notebook records reading the sources `READS` names.
    """
    calls: list[str] = []

    def fake_execute(
        nb_path: Path, ipynb: Path, params: dict, timeout_s: int, *rest
    ) -> str | None:
        run = params.get("run", "default")
        calls.append(f"{nb_path.stem} [{run}]")
        ipynb.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(nb_path, ipynb)
        if READS.get(nb_path.stem):
            folder = judgelab_home / "figures" / nb_path.stem / run
            folder.mkdir(parents=True, exist_ok=True)
            read = [
                {"source": s, "requested": s, "sample": "sample:" in s}
                for s in READS[nb_path.stem]
            ]
            (folder / "data_read.json").write_text(json.dumps({"sources": read}))
        if nb_path.stem == "91_flaky" and params.get("x") == 2:
            return "cell 2 of the executed notebook: RuntimeError: flaky"
        return None

    monkeypatch.setattr(pipeline, "_execute", fake_execute)
    return calls


ALL = ["90_reads [default]", "90_reads [seven]", "91_flaky [default]", "92_plain [default]"]


def _reproduce(**kw) -> tuple[list[pipeline.RunResult], str]:
    stream = io.StringIO()
    results = pipeline.reproduce(progress=stream, **kw)
    return results, stream.getvalue()


def test_i34_6_second_reproduce_skips_every_unchanged_run(project, executed, judgelab_home):
    (project / "params" / "91_flaky" / "default.yaml").write_text("x: 3\n")
    first, _ = _reproduce()
    assert executed == ALL and all(r.ok for r in first)
    assert {r.why for r in first} == {"no earlier run"}
    index_before = (judgelab_home / "reports" / "index.html").read_text()
    executed.clear()
    second, printed = _reproduce()
    assert executed == []
    assert [r.skipped for r in second] == [True] * 4
    assert [(r.notebook, r.run, r.status) for r in second] == [
        (r.notebook, r.run, r.status) for r in first
    ]
    started = {r.run: r.started_at for r in first if r.notebook == "90_reads"}
    assert f"90_reads [seven]: skipped, unchanged since {started['seven']}" in printed
    # A skipped run keeps its index row (and its report).
    index_after = (judgelab_home / "reports" / "index.html").read_text()
    assert index_after.count('href="90_reads/seven.html"') == 1
    assert "4 runs, 0 failed" in index_before and "4 runs, 0 failed" in index_after


def test_i34_6_a_params_change_reruns_exactly_that_run(project, executed):
    (project / "params" / "91_flaky" / "default.yaml").write_text("x: 3\n")
    _reproduce()
    executed.clear()
    (project / "params" / "90_reads" / "seven.yaml").write_text("x: 8\n")
    results, printed = _reproduce()
    assert executed == ["90_reads [seven]"]
    rerun = next(r for r in results if not r.skipped)
    assert rerun.why == "parameters changed: x 7 → 8"
    assert (
        "[1/1] 90_reads [seven]: ok in" in printed
        and "(ran: parameters changed: x 7 → 8)" in printed
    )
    assert "[1/1]" in printed and printed.count(": skipped, unchanged since ") == 3
    # A comment or key order is no change: the effective parameters are compared.
    executed.clear()
    (project / "params" / "90_reads" / "seven.yaml").write_text("# eight now\nx: 8\n")
    _reproduce(notebooks=["90_reads"])
    assert executed == []


def test_i34_6_data_and_library_changes_rerun_the_runs_they_affect(project, executed):
    _reproduce()
    executed.clear()
    items = project / "data" / "samples" / "tiny" / "items.jsonl"
    items.write_text(SAMPLE_ITEMS.replace('"q"', '"q2"'))
    results, _ = _reproduce()
    assert executed == ["90_reads [default]", "90_reads [seven]", "91_flaky [default]"]
    reads = [r for r in results if r.notebook == "90_reads"]
    assert {r.why for r in reads} == {"data changed: ./data/samples/tiny/items.jsonl"}
    # Touched, same bytes: the stat differs, the recorded sha256 does not: no rerun.
    executed.clear()
    os.utime(items, (1_000_000_000, 1_000_000_000))
    _reproduce(notebooks=["90_reads", "92_plain"])
    assert executed == []
    # Library code and the published targets concern every run.
    (freshness.LIBRARY / "code.py").write_text("X = 2\n")
    results, _ = _reproduce(notebooks=["90_reads", "92_plain"])
    assert executed == ["90_reads [default]", "90_reads [seven]", "92_plain [default]"]
    assert {r.why for r in results} == {"the library code changed"}
    executed.clear()
    (project / "data" / "targets" / "t.csv").write_text("a,b\n1,3\n")
    results, _ = _reproduce(notebooks=["92_plain"])
    assert results[0].why == "the published targets (data/targets) changed"
    # ... and so do the notebook itself and the environment lock.
    nb = project / "notebooks" / "92_plain.ipynb"
    body = nbformat.read(nb, as_version=4)
    body.cells[1].source = "y = x + 1"
    nbformat.write(body, nb)
    assert _reproduce(notebooks=["92_plain"])[0][0].why == "the notebook changed"
    (project / "uv.lock").write_text("version = 1\n")
    assert _reproduce(notebooks=["92_plain"])[0][0].why == "the environment lock (uv.lock) changed"


def test_i34_6_a_judge_run_adding_a_table_reruns_the_runs_that_read_its_benchmark(
    project, executed, judgelab_home, monkeypatch
):
    """Tables on disk (items, every judgments table of the benchmark) are the data read."""
    data = judgelab_home / "data"
    (data / "items").mkdir(parents=True)
    (data / "items" / "mybench.parquet").write_bytes(b"items v1")
    (data / "judgments" / "mybench").mkdir(parents=True)
    (data / "judgments" / "mybench" / "judge1.parquet").write_bytes(b"judge 1")
    monkeypatch.setitem(READS, "92_plain", ["mybench"])
    first, _ = _reproduce(notebooks=["92_plain", "90_reads"])
    files = first[-1].provenance["data"][0]["files"]
    assert [f["path"] for f in files] == [
        "$JUDGELAB_DATA/items/mybench.parquet",
        "$JUDGELAB_DATA/judgments/mybench/judge1.parquet",
    ]
    executed.clear()
    (data / "judgments" / "mybench" / "judge2.parquet").write_bytes(b"judge 2")
    results, _ = _reproduce(notebooks=["92_plain", "90_reads"])
    assert executed == ["92_plain [default]"]
    assert results[-1].why == (
        "data changed: $JUDGELAB_DATA/judgments/mybench/judge2.parquet is new"
    )
    executed.clear()
    (data / "items" / "mybench.parquet").write_bytes(b"items v2")
    results, _ = _reproduce(notebooks=["92_plain"])
    assert results[0].why == "data changed: $JUDGELAB_DATA/items/mybench.parquet"
    assert _reproduce(notebooks=["92_plain"])[0][0].skipped

    # Data that cannot be looked at now runs the notebook (and never fails it).
    def unreadable(name):
        raise OSError("disk gone")

    real = freshness._source_files
    monkeypatch.setattr(freshness, "_source_files", unreadable)
    results, _ = _reproduce(notebooks=["92_plain"])
    assert results[0].ok and results[0].why == "its data could not be checked (OSError: disk gone)"
    monkeypatch.setattr(freshness, "_source_files", real)
    results, _ = _reproduce(notebooks=["92_plain"])
    assert results[0].why == "the last run's data was not fingerprinted"


def test_i34_6_force_and_failed_or_missing_runs_always_rerun(project, executed, judgelab_home):
    first, _ = _reproduce()
    assert [r.ok for r in first] == [True, True, False, True]
    executed.clear()
    results, printed = _reproduce()
    assert executed == ["91_flaky [default]"]  # the failed run, alone
    assert "91_flaky [default]: failed in" in printed and "(ran: the last run failed)" in printed
    executed.clear()
    (judgelab_home / "reports" / "92_plain" / "default.html").unlink()
    results, _ = _reproduce(notebooks=["92_plain"])
    assert executed == ["92_plain [default]"]
    assert results[0].why == "its report default.html is missing"
    executed.clear()
    results, _ = _reproduce(force=True)
    assert executed == ALL and {r.why for r in results} == {"forced (--force)"}
    # A record from before fingerprints (no `inputs`) reruns too.
    record = judgelab_home / "reports" / "92_plain" / "default.json"
    rec = json.loads(record.read_text())
    del rec["inputs"]
    record.write_text(json.dumps(rec))
    executed.clear()
    results, _ = _reproduce(notebooks=["92_plain"])
    assert executed == ["92_plain [default]"]
    assert results[0].why == "the last run recorded no input fingerprint"


def test_i34_6_cli_reproduce_says_what_it_skipped_and_force(project, executed, capsys):
    """`--jobs 1`: the stand-in kernel is this process's (a worker would start real ones)."""
    assert cli.main(["reproduce", "--jobs", "1", "--notebooks", "90_reads,92_plain"]) == 0
    out, err = capsys.readouterr()
    assert "3 ok (0 of them skipped, unchanged), 0 failed" in out
    assert "[3/3] 92_plain [default]: ok in" in err and "elapsed" in err and "ETA 0:00" in err
    assert cli.main(["reproduce", "--jobs", "1", "--notebooks", "90_reads,92_plain"]) == 0
    out, err = capsys.readouterr()
    assert "3 ok (3 of them skipped, unchanged), 0 failed" in out
    assert err.count(": skipped, unchanged since ") == 3 and "[1/" not in err
    executed.clear()
    assert cli.main(["reproduce", "--jobs", "1", "--notebooks", "92_plain", "--force"]) == 0
    assert executed == ["92_plain [default]"]


def test_i34_6_progress_counts_runs_with_elapsed_and_an_eta_weighed_by_last_seconds(
    monkeypatch,
):
    now = [100.0]
    monkeypatch.setattr(progress.time, "monotonic", lambda: now[0])
    stream = io.StringIO()
    bar = progress.Progress({"a": 10.0, "b": 30.0, "c": None}, jobs=2, stream=stream)
    assert bar.eta_s() == pytest.approx((10 + 30 + 20) / 2)  # unknown: the mean of the known
    now[0] = 120.0  # "a" (10 expected seconds) took 20 s: twice as slow as expected
    line = bar.step("a", "nb_a [default]: ok in 20.0s")
    assert line == "[1/3] nb_a [default]: ok in 20.0s · elapsed 0:20 · ETA 1:40"
    assert stream.getvalue() == line + "\n"
    now[0] = 180.0
    bar.step("b", "b")
    assert bar.eta_s() == pytest.approx(20 * 80 / 40)
    assert progress.Progress({"x": None}).eta_s() is None  # nothing known yet, nothing printed


def test_i34_6_card_and_run_progress_counts_cells(capsys, monkeypatch):
    stream = io.StringIO()
    opts = progress.cell_bar("14_judge_report_card", stream)
    from tqdm import tqdm

    bar = tqdm(total=3, **opts)
    for _ in range(3):
        bar.update(1)
    bar.close()
    lines = stream.getvalue().splitlines()
    assert lines[0].startswith("14_judge_report_card: cell 0 of 3 · elapsed 00:00 · ETA")
    assert lines[-1].startswith("14_judge_report_card: cell 3 of 3 · elapsed")
    assert "\r" not in stream.getvalue()  # plain lines off a terminal
    seen = {}
    monkeypatch.setattr(pipeline, "run_notebook", lambda *a, **kw: seen.update(kw) or _Failed())
    monkeypatch.setattr(pipeline, "write_index", lambda: None)
    assert cli.main(["card", "llmbar:GPT-4.Vanilla"]) == 1
    assert seen["progress"] is True


class _Failed:
    ok, html, error = False, None, "stand-in"


@pytest.mark.slow
def test_i34_6_two_concurrent_reproduces_run_each_notebook_once(tmp_path, monkeypatch):
    """Two real `judgelab reproduce` processes at once: each run executes once, none fails."""
    root = tmp_path / "proj"
    body = [
        "import os\nwith open(os.environ['JUDGELAB_HOME'] + '/executions.log', 'a') as f:\n"
        "    f.write(f'{NB} {run}\\n')"
    ]
    for nb in ("90_a", "91_b"):
        write_notebook(
            root / "notebooks" / f"{nb}.ipynb", f'run: str = "default"\nNB = "{nb}"', body
        )
        (root / "params" / nb).mkdir(parents=True)
        (root / "params" / nb / "default.yaml").write_text("")
    for attempt in range(2):
        home = tmp_path / f"home{attempt}"
        home.mkdir()
        env = dict(os.environ, JUDGELAB_PROJECT=str(root), JUDGELAB_HOME=str(home))
        cmd = [sys.executable, "-m", "judgelab", "reproduce", "--jobs", "1"]
        procs = [
            subprocess.Popen(
                cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
            )
            for _ in range(2)
        ]
        outs = [p.communicate(timeout=300) for p in procs]
        assert [p.returncode for p in procs] == [0, 0], outs
        log = sorted((home / "executions.log").read_text().splitlines())
        assert log == ["90_a default", "91_b default"], outs
        err = "".join(e for _, e in outs)
        assert err.count(": ok in") == 2 and err.count("skipped, unchanged since") == 2, err
        third = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
        assert third.returncode == 0 and "2 ok (2 of them skipped" in third.stdout
        assert (home / "executions.log").read_text().count("\n") == 2


def test_i34_6_a_run_with_progress_counts_its_cells_on_stderr(project, capsys):
    """A real kernel: papermill's bar, as `judgelab card` shows it, one line per cell here."""
    result = pipeline.run_notebook("92_plain", html_export=False, progress=True)
    assert result.ok, result.error
    out, err = capsys.readouterr()
    lines = [line for line in err.splitlines() if line.startswith("92_plain: cell ")]
    # the injected parameters cell, the defaults cell, the body cell
    assert [line.split(" · ")[0] for line in lines] == [
        f"92_plain: cell {n} of 3" for n in range(4)
    ]
    assert all(" · elapsed " in line and " · ETA " in line for line in lines)
    assert out == ""
