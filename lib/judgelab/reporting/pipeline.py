"""Execute notebooks with papermill, export HTML, and index every run.

`run_notebook` executes `notebooks/<nb>.ipynb` with a params file (and `-p` overrides) into
`reports/<nb>/<run>.ipynb` and `.html`; figures land in `figures/<nb>/<run>/`. A JSON record
of each run (parameters, status, failing cell, seconds, figures) sits beside it, and
`write_index` turns all records into `reports/index.html`.
"""

from __future__ import annotations

import ast
import contextlib
import json
import os
import shutil
import sys
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from judgelab.core import paths, tables
from judgelab.core.names import check_inside, safe_name
from judgelab.errors import ParamsError as ParamsError
from judgelab.errors import RunInProgress as RunInProgress
from judgelab.errors import UnsafeNameError
from judgelab.reporting import findings, provenance, stopping
from judgelab.reporting.html_export import declared_title, export_report
from judgelab.reporting.index import load_records as load_records
from judgelab.reporting.index import write_index
from judgelab.reporting.params import NOTEBOOK_RE as NOTEBOOK_RE
from judgelab.reporting.params import (
    check_declared,
    check_secrets,
    declared_parameters,
    load_params,
    notebook_path,
    params_files,
)
from judgelab.reporting.params import list_notebooks as list_notebooks
from judgelab.reporting.params import parse_overrides as parse_overrides


@dataclass
class RunResult:
    """What one notebook execution produced."""

    notebook: str
    run: str
    status: str  # ok | failed
    seconds: float
    started_at: str
    parameters: dict[str, Any]
    params_file: str | None
    ipynb: str
    html: str | None
    figures: list[str] = field(default_factory=list)
    error: str | None = None
    #: Code, versions, lock, data revisions and seeds (`reporting.provenance`).
    provenance: dict[str, Any] = field(default_factory=dict)
    #: Every parameter's value in the run: the notebook's defaults overridden by `parameters`.
    effective_parameters: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """Return True when the notebook executed without error."""
        return self.status == "ok"


# A headless run says so (JUDGELAB_HEADLESS): widgets that need a live kernel show a note.
_KERNEL_VARS = {
    "MPLBACKEND": "module://matplotlib_inline.backend_inline",
    "PYDEVD_DISABLE_FILE_VALIDATION": "1",
    "JUDGELAB_HEADLESS": "1",
}


@contextlib.contextmanager
def _kernel_env() -> Iterator[None]:
    """Environment for the kernel: this interpreter first on PATH, inline figures.

    The kernel inherits the environment; a venv need not be activated, and an `MPLBACKEND=Agg`
    set for headless runs must not stop figures from showing in the executed notebook.
    """
    saved = {k: os.environ.get(k) for k in (*_KERNEL_VARS, "PATH")}
    bindir = str(Path(sys.executable).parent)
    path = os.environ.get("PATH", "")
    if bindir not in path.split(os.pathsep):
        os.environ["PATH"] = bindir + os.pathsep + path
    os.environ.update(_KERNEL_VARS)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def _error_of(exc: Exception) -> str:
    cell = getattr(exc, "cell_index", None)
    count = getattr(exc, "exec_count", None)
    ename = getattr(exc, "ename", type(exc).__name__)
    evalue = getattr(exc, "evalue", str(exc))
    where = f"cell {cell} of the executed notebook" if cell is not None else "notebook"
    if count is not None:
        where += f" (execution count {count})"
    first_line = (getattr(exc, "source", "") or "").strip().splitlines()[:1]
    if first_line:
        where += f" `{first_line[0][:80]}`"
    return f"{where}: {ename}: {evalue}"


def _resolve_run(
    stem: str,
    params_file: str | os.PathLike[str] | None,
    overrides: dict[str, Any] | None,
    run: str | None,
) -> tuple[dict[str, Any], str]:
    """Return the checked parameters of a run and its name.

    The run name (`run`, else the params file stem) is checked first, before anything is read
    or written: it becomes `reports/<nb>/<run>.*` and `figures/<nb>/<run>/`.
    """
    if run is not None:
        run_name = safe_name("run", run, where="--run")
    elif params_file is not None:
        run_name = safe_name("params file", Path(params_file).stem, where=str(params_file))
    else:
        run_name = "default"
    params: dict[str, Any] = {}
    if params_file is not None:
        params.update(load_params(params_file, stem))
    if overrides:
        check_declared(overrides, stem, where="-p overrides")
        check_secrets(overrides, "-p overrides")
        params.update(overrides)
    if "run" in declared_parameters(stem):
        params["run"] = run_name
    return params, run_name


# A kernel that dies before its first reply never ran a cell: jupyter_client picks free ports,
# then the kernel binds them, and another process (a second kernel, a loopback server) can take
# one in between ("Address already in use"). Such a start is tried again, a cell error never is.
KERNEL_START_TRIES = 3
_KERNEL_START_FAILURE = "Kernel died before replying to kernel_info"


def _execute(nb_path: Path, ipynb: Path, params: dict[str, Any], timeout_s: int) -> str | None:
    """Execute a notebook into `ipynb` (atomically); return the error text, None when ok."""
    for attempt in range(1, KERNEL_START_TRIES + 1):
        error = _execute_once(nb_path, ipynb, params, timeout_s)
        if error is None or _KERNEL_START_FAILURE not in error:
            return error
        if attempt < KERNEL_START_TRIES:
            print(
                f"{nb_path.stem}: the kernel did not start ({error}); "
                f"starting it again (try {attempt + 1} of {KERNEL_START_TRIES})",
                file=sys.stderr,
            )
    return f"{error} (after {KERNEL_START_TRIES} kernel starts)"


def _execute_once(
    nb_path: Path, ipynb: Path, params: dict[str, Any], timeout_s: int
) -> str | None:
    """One papermill execution into `ipynb` (atomically); the error text, None when ok."""
    import papermill

    error = None
    with tables.atomic_path(ipynb, suffix=".ipynb") as tmp, _kernel_env():
        try:
            papermill.execute_notebook(
                str(nb_path),
                str(tmp),
                parameters=params,
                cwd=str(paths.project()),
                kernel_name="python3",
                progress_bar=False,
                log_output=False,
                execution_timeout=timeout_s,
                # `run: str = ...` on a cell's first line would otherwise be read as %run.
                extra_arguments=[
                    "--InteractiveShell.automagic=False",
                    # A stopped run closes the kernel's sockets mid-reply; its log would then
                    # print a traceback after the one-line "interrupted" (cell errors go to
                    # the notebook, not this log).
                    "--IPKernelApp.log_level=CRITICAL",
                ],
            )
        except Exception as exc:  # papermill raises after writing the executed notebook
            error = _error_of(exc)
            if not tmp.exists() or tmp.stat().st_size == 0:
                tmp.write_text(json.dumps({"error": error}), encoding="utf-8")
    return error


def _clear_figures(stem: str, run_name: str) -> Path:
    """Remove the figures of an earlier run `figures/<nb>/<run>/` and return that folder.

    Only a real folder strictly inside `figures/<nb>/` is removed; a name or link that would
    reach `figures/<nb>/` itself, or anything outside it, is refused before any deletion.
    """
    parent = paths.figures() / safe_name("notebook", stem)
    fig_dir = parent / safe_name("run", run_name)
    if fig_dir.is_symlink():
        raise UnsafeNameError(f"{fig_dir} is a link; refusing to remove what it points to")
    if fig_dir.exists():
        shutil.rmtree(check_inside(fig_dir, parent))
    return fig_dir


def run_notebook(
    notebook: str,
    *,
    params_file: str | os.PathLike[str] | None = None,
    overrides: dict[str, Any] | None = None,
    run: str | None = None,
    html_export: bool = True,
    timeout_s: int = 1200,
) -> RunResult:
    """Execute one notebook with papermill and export it; never raises on a cell error.

    The run name is `run`, else the params file stem, else "default". The notebook receives
    its params plus `run`. A cell error marks the result `failed` (with the failing cell) and
    still writes the executed notebook and its HTML, so the error can be read.
    """
    nb_path = notebook_path(notebook)
    stem = nb_path.stem
    params, run_name = _resolve_run(stem, params_file, overrides, run)
    with stopping.run_lock(stem, run_name):  # a second run of the same name is refused
        return _run_locked(nb_path, params, run_name, params_file, html_export, timeout_s)


def _run_locked(
    nb_path: Path,
    params: dict[str, Any],
    run_name: str,
    params_file: str | os.PathLike[str] | None,
    html_export: bool,
    timeout_s: int,
) -> RunResult:
    """The body of `run_notebook`, run while holding the lock of (notebook, run)."""
    stem = nb_path.stem
    out_dir = paths.reports() / stem
    out_dir.mkdir(parents=True, exist_ok=True)
    ipynb = out_dir / f"{run_name}.ipynb"
    html_path = out_dir / f"{run_name}.html"
    fig_dir = _clear_figures(stem, run_name)
    started = datetime.now(UTC)
    effective = effective_parameters(stem, params)
    prov = provenance.collect(effective)
    t0 = time.perf_counter()
    error = _execute(nb_path, ipynb, params, timeout_s)
    seconds = time.perf_counter() - t0
    read = provenance.data_read(fig_dir)  # what the notebook really read, fallbacks included
    prov["data"] = prov["data"] if read is None else read
    html_out = None
    if html_export:
        # the parameters cells are left out of the page: every value the run used is here
        footer = provenance.footer_html(
            {"parameters": effective, "provenance": prov, "seconds": seconds}
        )
        try:
            export_report(
                ipynb,
                html_path,
                footer=footer,
                header=findings.header_html(fig_dir, prov),
                title=declared_title(fig_dir),
            )
            html_out = str(html_path)
        except Exception as exc:  # a broken notebook must not stop the pipeline
            error = error or f"HTML export: {type(exc).__name__}: {exc}"
    result = RunResult(
        notebook=stem,
        run=run_name,
        status="failed" if error else "ok",
        seconds=round(seconds, 2),
        started_at=started.isoformat(timespec="seconds"),
        parameters=params,
        params_file=str(params_file) if params_file is not None else None,
        ipynb=str(ipynb),
        html=html_out,
        figures=sorted(str(p) for p in fig_dir.glob("*")) if fig_dir.exists() else [],
        error=error,
        provenance=prov,
        effective_parameters=effective,
    )
    _write_record(result)
    return result


def effective_parameters(notebook: str, params: dict[str, Any]) -> dict[str, Any]:
    """Return the notebook's declared defaults overridden by `params` (what the run used)."""
    out: dict[str, Any] = {}
    try:
        declared = declared_parameters(notebook)
    except Exception:  # noqa: BLE001 - provenance must never fail a run
        declared = {}
    for name, spec in declared.items():
        with contextlib.suppress(ValueError, SyntaxError, TypeError):
            out[name] = ast.literal_eval(str(spec.get("default")))
    return {**out, **params}


def _write_record(result: RunResult) -> None:
    """Write the JSON run record beside the executed notebook (read by the index)."""
    tables.write_text(
        paths.reports() / result.notebook / f"{result.run}.json",
        json.dumps(asdict(result), indent=2, default=str),
    )


def _run_params_file(f: Path) -> RunResult:
    """Run one params file; a rejected file becomes a failed run record, never an exception."""
    try:
        return run_notebook(f.parent.name, params_file=f)
    except (ParamsError, UnsafeNameError, FileNotFoundError, RunInProgress) as exc:
        result = RunResult(
            notebook=f.parent.name,
            run=f.stem,
            status="failed",
            seconds=0.0,
            started_at=datetime.now(UTC).isoformat(timespec="seconds"),
            parameters={},
            params_file=str(f),
            ipynb="",
            html=None,
            error=str(exc),
        )
        if not isinstance(exc, RunInProgress):  # that record is the running one's
            _write_record(result)  # recorded like any run: the index marks it failed too
        return result


def default_jobs() -> int:
    """Return how many notebooks run at once by default: one per CPU core, at most 4."""
    return max(1, min(4, os.cpu_count() or 1))


def reproduce(
    *,
    runs: list[str] | None = None,
    notebooks: list[str] | None = None,
    echo: Any = None,
    jobs: int = 1,
) -> list[RunResult]:
    """Run every params file (optionally only some runs / notebooks), then write the index.

    A run name in `runs` also selects its dotted variants: "default" runs `default.yaml` and
    every `default.<name>.yaml` (e.g. one report card per default judge). With `jobs > 1`,
    that many notebooks execute at once, each in its own worker process and kernel; results
    come back in params-file order whatever order they finish in.
    """
    if jobs < 1:
        raise ValueError(f"jobs must be at least 1, got {jobs}")
    files = [
        f
        for f in params_files()
        if (runs is None or any(f.stem == r or f.stem.startswith(r + ".") for r in runs))
        and (notebooks is None or f.parent.name in notebooks)
    ]

    def report(result: RunResult) -> None:
        if echo:
            tail = "" if result.ok else f" — {result.error}"
            echo(
                f"{result.notebook} [{result.run}]: {result.status} in {result.seconds:.1f}s{tail}"
            )

    results: list[RunResult] = []
    try:
        if jobs == 1 or len(files) < 2:
            for f in files:
                results.append(_run_params_file(f))
                report(results[-1])
        else:
            results = _run_parallel(files, jobs, report)
    finally:  # a signal stops the runs; the index still shows every run that finished
        write_index()
    return results


def _run_parallel(files: list[Path], jobs: int, report: Any) -> list[RunResult]:
    """Run params files in `jobs` worker processes (each with its own kernel).

    Workers die with this process, even on kill -9; on a signal or an error here, running
    workers are stopped (their temporary notebooks removed) before the error propagates.
    """
    import concurrent.futures
    import multiprocessing

    context = multiprocessing.get_context("spawn")
    pool = concurrent.futures.ProcessPoolExecutor(
        jobs, mp_context=context, initializer=stopping.worker_init, initargs=(os.getpid(),)
    )
    try:
        futures = [pool.submit(stopping.in_worker, _run_params_file, f) for f in files]
        for future in concurrent.futures.as_completed(futures):
            report(future.result())
        return [future.result() for future in futures]
    except BaseException:
        stopping.stop_workers(pool)
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
