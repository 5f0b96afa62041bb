"""Issue 19 regressions for notebook runs: signals, locks, file modes and the index.

Items 11 (workers die with `reproduce`), 13 (one run per notebook and run name), 20a (SIGTERM
of `run` cleans up), 22 (files honour the umask), 23 (a malformed run record is skipped).
"""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import nbformat
import pytest

from judgelab.cli import main as cli
from judgelab.core import tables
from judgelab.reporting import pipeline, stopping
from judgelab.testing.notebooks import write_notebook

_on_linux = pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="reads /proc")


def linux_only(fn):  # noqa: ANN001, ANN201 - a subprocess and its kernels: seconds each
    return pytest.mark.slow(_on_linux(fn))


SLOW_BODY = [
    "import time\nimport matplotlib.pyplot as plt\nfrom judgelab.reporting import figures\n"
    "ax = plt.figure().gca()\nax.plot([0, 1])\n"
    "figures.save(ax, 'line', notebook=NB, run=run)",
    "time.sleep(120)",
]


@pytest.fixture()
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """One quick notebook (90) and two that save a figure, then sleep two minutes (91, 92)."""
    root = tmp_path / "proj"
    write_notebook(root / "notebooks" / "90_quick.ipynb", 'run: str = "default"', ["x = 1"])
    for nb in ("91_slow", "92_slow"):
        write_notebook(root / "notebooks" / f"{nb}.ipynb", 'run: str = "default"', SLOW_BODY)
        body = nbformat.read(root / "notebooks" / f"{nb}.ipynb", as_version=4)
        body.cells[1].source = f"NB = {nb!r}\n" + body.cells[1].source
        nbformat.write(body, root / "notebooks" / f"{nb}.ipynb")
    for nb in ("90_quick", "91_slow", "92_slow"):
        (root / "params" / nb).mkdir(parents=True)
        (root / "params" / nb / "default.yaml").write_text("")
    monkeypatch.setenv("JUDGELAB_PROJECT", str(root))
    return root


def descendants(pid: int) -> set[int]:
    """Every live descendant of `pid` (Linux /proc)."""
    found: set[int] = set()
    todo = [pid]
    while todo:
        current = todo.pop()
        for children in Path(f"/proc/{current}/task").glob("*/children"):
            try:
                kids = [int(k) for k in children.read_text().split()]
            except OSError:
                continue
            for kid in kids:
                if kid not in found:
                    found.add(kid)
                    todo.append(kid)
    return found


def alive(pids: set[int]) -> set[int]:
    """The pids of `pids` still running (a zombie counts as gone)."""
    out = set()
    for pid in pids:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if state not in ("Z", "X"):
            out.add(pid)
    return out


def kernels(pid: int) -> set[int]:
    out = set()
    for kid in descendants(pid):
        try:
            if b"ipykernel" in Path(f"/proc/{kid}/cmdline").read_bytes():
                out.add(kid)
        except OSError:
            pass
    return out


def wait_for(condition: Callable[[], object], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.2)


def hidden_temps(home: Path) -> list[Path]:
    return [p for p in (home / "reports").rglob(".*") if ".tmp" in p.name]


@pytest.fixture()
def spawn(judgelab_home: Path) -> Iterator[Callable[..., subprocess.Popen]]:
    """Start `python -m judgelab ARGS`; whatever it leaves running is killed at the end."""
    started: list[tuple[subprocess.Popen, set[int]]] = []

    def start(*args: str) -> subprocess.Popen:
        proc = subprocess.Popen(
            [sys.executable, "-m", "judgelab", *args],
            env=dict(os.environ),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        started.append((proc, set()))
        return proc

    start.seen = started  # type: ignore[attr-defined]
    yield start
    for proc, pids in started:
        for pid in alive(pids | descendants(proc.pid)) | {proc.pid}:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        proc.communicate(timeout=30)


@linux_only
def test_issue19_11_workers_and_kernels_die_with_a_killed_reproduce(project, spawn):
    proc = spawn("reproduce", "--jobs", "2", "--notebooks", "91_slow,92_slow")
    wait_for(lambda: len(kernels(proc.pid)) >= 2, 120, "two kernels executing")
    tree = descendants(proc.pid)
    spawn.seen[-1][1].update(tree)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    wait_for(lambda: not alive(tree), 30, f"workers and kernels {sorted(alive(tree))} to exit")


@linux_only
def test_issue19_11_sigterm_of_reproduce_stops_and_writes_the_index(
    project, spawn, judgelab_home: Path
):
    proc = spawn("reproduce", "--jobs", "2")
    record = judgelab_home / "reports" / "90_quick" / "default.json"
    wait_for(
        lambda: record.exists() and len(kernels(proc.pid)) >= 2, 120, "90 done, 91 and 92 running"
    )
    tree = descendants(proc.pid)
    spawn.seen[-1][1].update(tree)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 143, err
    assert err.strip().splitlines()[-1].startswith("interrupted (SIGTERM)")
    assert "Traceback" not in err
    index = (judgelab_home / "reports" / "index.html").read_text()
    assert "90_quick" in index and "91_slow" not in index
    assert not hidden_temps(judgelab_home)
    wait_for(lambda: not alive(tree), 30, f"workers and kernels {sorted(alive(tree))} to exit")


@linux_only
def test_issue19_13_a_second_run_of_the_same_name_is_refused(
    project, spawn, judgelab_home: Path, capsys
):
    proc = spawn("run", "91_slow", "--run", "same")
    figure = judgelab_home / "figures" / "91_slow" / "same" / "line.png"
    wait_for(figure.exists, 120, "the first run's figure")
    spawn.seen[-1][1].update(descendants(proc.pid))
    with pytest.raises(pipeline.RunInProgress, match=r"91_slow \[same\] is already running"):
        pipeline.run_notebook("91_slow", run="same")
    assert figure.exists()  # the first run's outputs are untouched
    assert cli.main(["run", "91_slow", "--run", "same"]) == cli.EXIT_BAD_INPUT
    assert "already running" in capsys.readouterr().err
    assert figure.exists()
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=60)
    # Within `reproduce`, a locked run is reported failed without replacing the running
    # run's record; once the holder is gone the lock is free again.
    with stopping.run_lock("90_quick", "default"):
        result = pipeline._run_params_file(project / "params" / "90_quick" / "default.yaml")
    assert not result.ok and "already running" in (result.error or "")
    assert not (judgelab_home / "reports" / "90_quick" / "default.json").exists()
    assert pipeline.run_notebook("90_quick").ok


@linux_only
def test_issue19_20a_sigterm_of_run_removes_the_temp_notebook(project, spawn, judgelab_home: Path):
    proc = spawn("run", "91_slow")
    figure = judgelab_home / "figures" / "91_slow" / "default" / "line.png"
    wait_for(figure.exists, 120, "the run to be executing")
    assert hidden_temps(judgelab_home)  # the executing notebook is written to a temp file
    tree = descendants(proc.pid)
    spawn.seen[-1][1].update(tree)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 143
    assert err.strip().splitlines() == [
        "interrupted (SIGTERM): stopped; temporary files removed"
    ], err
    assert not hidden_temps(judgelab_home)
    wait_for(lambda: not alive(tree), 30, "the kernel to exit")


@pytest.mark.parametrize("umask", [0o022, 0o027])
def test_issue19_22_written_files_honour_the_umask(project, judgelab_home: Path, umask: int):
    old = os.umask(umask)
    try:
        written = [tables.write_text(judgelab_home / "t.txt", "x")]
        with tables.atomic_path(judgelab_home / "t.parquet") as tmp:
            tmp.write_bytes(b"x")
        written.append(judgelab_home / "t.parquet")
        result = pipeline.run_notebook("90_quick")
        assert result.ok, result.error
        written += [Path(result.ipynb), Path(result.html or "")]
        written.append(Path(result.ipynb).with_suffix(".json"))
        written.append(pipeline.write_index())
    finally:
        os.umask(old)
    modes = {p.name: oct(stat.S_IMODE(p.stat().st_mode)) for p in written}
    assert modes == {p.name: oct(0o666 & ~umask) for p in written}


def test_issue19_23_a_malformed_run_record_is_skipped_with_a_warning(judgelab_home: Path, capsys):
    nb = judgelab_home / "reports" / "90_quick"
    nb.mkdir(parents=True)
    good = {"notebook": "90_quick", "run": "good", "status": "ok", "seconds": 1.5}
    (nb / "good.json").write_text(json.dumps(good))
    bad = {
        "broken": "{not json",
        "latin1": b'{"notebook": "caf\xe9"}',
        "list": "[1, 2]",
        "missing": json.dumps({"notebook": "90_quick", "run": "missing"}),
        "status": json.dumps({**good, "run": "status", "status": 5}),
        "seconds": json.dumps({**good, "run": "seconds", "seconds": "abc"}),
        "figures": json.dumps({**good, "run": "figures", "figures": "x.png"}),
        "error": json.dumps({**good, "run": "error", "status": "failed", "error": 3}),
        "params": json.dumps({**good, "run": "params", "parameters": [1]}),
    }
    for name, body in bad.items():
        path = nb / f"{name}.json"
        path.write_bytes(body) if isinstance(body, bytes) else path.write_text(body)
    with pytest.warns(UserWarning) as caught:
        index = pipeline.write_index().read_text()
    assert "1 runs, 0 failed" in index and ">good<" in index
    warned = " ".join(str(w.message) for w in caught)
    for name in bad:
        assert f"{name}.json: skipped in the index" in warned
    assert cli.main(["index"]) == 0
    err = capsys.readouterr().err
    assert "warning: " in err and "status.json: skipped in the index" in err


def test_folders_that_are_no_notebooks_hold_no_run_records(judgelab_home: Path, recwarn):
    nb = judgelab_home / "reports" / "90_quick"
    nb.mkdir(parents=True)
    good = {"notebook": "90_quick", "run": "good", "status": "ok", "seconds": 1.5}
    (nb / "good.json").write_text(json.dumps(good))
    calibration = judgelab_home / "reports" / "calibration"  # `make calibrate`'s results
    calibration.mkdir()
    (calibration / "meta.json").write_text(json.dumps({"reps": 10, "seconds": 2054.4}))
    index = pipeline.write_index().read_text()
    assert "1 runs, 0 failed" in index
    assert not [w for w in recwarn if "skipped in the index" in str(w.message)]
