"""Execute notebooks with papermill, export HTML, and index every run.

`run_notebook` executes `notebooks/<nb>.ipynb` with a params file (and `-p` overrides) into
`reports/<nb>/<run>.ipynb` and `.html`; figures land in `figures/<nb>/<run>/`. A JSON record
of each run (parameters, status, failing cell, seconds, figures, fingerprinted inputs) sits
beside it, and `write_index` turns all records into `reports/index.html`. `reproduce` runs
every params file whose inputs changed since its last successful run (`freshness`), with
progress on stderr (`progress`); the kernel side is `execution`.
"""

from __future__ import annotations

import ast
import contextlib
import json
import math
import os
import shutil
import time
from dataclasses import asdict, dataclass, field, fields
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from judgelab.core import paths, tables, threads
from judgelab.core.names import check_inside, safe_name
from judgelab.errors import ParamsError as ParamsError
from judgelab.errors import RunInProgress as RunInProgress
from judgelab.errors import UnsafeNameError
from judgelab.reporting import findings, freshness, provenance, stopping
from judgelab.reporting import progress as progress_
from judgelab.reporting.execution import execute as _execute
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
    #: What the run read, fingerprinted (`reporting.freshness`): `reproduce` skips it unchanged.
    inputs: dict[str, Any] = field(default_factory=dict)
    #: Why `reproduce` ran it ("parameters changed: …") or skipped it ("unchanged since …").
    why: str = ""
    skipped: bool = False

    @property
    def ok(self) -> bool:
        """Return True when the notebook executed without error."""
        return self.status == "ok"

    @classmethod
    def from_record(cls, record: dict[str, Any], **changes: Any) -> RunResult:
        """Return the result a run record `reports/<nb>/<run>.json` holds (with `changes`)."""
        known = {f.name for f in fields(cls)}
        return cls(**{**{k: v for k, v in record.items() if k in known}, **changes})


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
    skip_unchanged: bool = False,
    progress: bool = False,
    warm: bool = False,
) -> RunResult:
    """Execute one notebook with papermill and export it; never raises on a cell error.

    The run name is `run`, else the params file stem, else "default". The notebook receives
    its params plus `run`. A cell error marks the result `failed` (with the failing cell) and
    still writes the executed notebook and its HTML, so the error can be read. With
    `skip_unchanged` (`reproduce`), a run whose inputs are unchanged since its last successful
    run is not executed (`skipped`, its record kept), and one of the same name running in
    another process is waited for, then checked. With `progress`, cells are counted on stderr.
    With `warm` (`reproduce`), a notebook in `warm_kernel.SHARED` reuses this process's kernel
    for it, reset to a fresh kernel's state between runs.
    """
    nb_path = notebook_path(notebook)
    stem = nb_path.stem
    params, run_name = _resolve_run(stem, params_file, overrides, run)
    # a second run of the same name is refused (or, within `reproduce`, waited for)
    with stopping.run_lock(stem, run_name, wait=skip_unchanged):
        why = ""
        if skip_unchanged:
            verdict = freshness.check(nb_path, run_name, effective_parameters(stem, params))
            if verdict.fresh:
                return skipped_result(stem, run_name, verdict.why)
            why = verdict.why
        return _run_locked(
            nb_path, params, run_name, params_file, html_export, timeout_s, progress, why, warm
        )


def skipped_result(notebook: str, run: str, why: str) -> RunResult:
    """Return the recorded result of a run `reproduce` skips (`why`: unchanged since when)."""
    record = freshness.read_record(notebook, run) or {}
    return RunResult.from_record(record, why=why, skipped=True)


def _run_locked(
    nb_path: Path,
    params: dict[str, Any],
    run_name: str,
    params_file: str | os.PathLike[str] | None,
    html_export: bool,
    timeout_s: int,
    progress: bool = False,
    why: str = "",
    warm: bool = False,
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
    inputs = freshness.static_inputs(nb_path, effective)  # as the run starts
    t0 = time.perf_counter()
    error = _execute(nb_path, ipynb, params, timeout_s, progress, warm)
    seconds = time.perf_counter() - t0
    read = provenance.data_read(fig_dir)  # what the notebook really read, fallbacks included
    prov["data"] = prov["data"] if read is None else read
    inputs["data"] = freshness.data_after_run(stem, run_name, prov["data"])
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
        inputs=inputs,
        why=why,
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


def _run_params_file(f: Path, force: bool = False) -> RunResult:
    """Run one params file (unless unchanged); a rejected file becomes a failed run record."""
    try:
        result = run_notebook(f.parent.name, params_file=f, skip_unchanged=not force, warm=True)
        if force:
            result.why = "forced (--force)"
        return result
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


def _unchanged(f: Path) -> RunResult | None:
    """Return the recorded result of params file `f`'s run when its inputs are unchanged."""
    stem = f.parent.name
    try:
        nb_path = notebook_path(stem)
        params, run_name = _resolve_run(stem, f, None, None)
    except (ParamsError, UnsafeNameError, FileNotFoundError):
        return None  # running it records why
    verdict = freshness.check(nb_path, run_name, effective_parameters(stem, params))
    return skipped_result(stem, run_name, verdict.why) if verdict.fresh else None


def _line(result: RunResult) -> str:
    """Return the line `reproduce` prints for one result: what happened, and why."""
    name = f"{result.notebook} [{result.run}]"
    if result.skipped:
        return f"{name}: skipped, {result.why}"
    tail = "" if result.ok else f" — {result.error}"
    why = f" (ran: {result.why})" if result.why else ""
    return f"{name}: {result.status} in {result.seconds:.1f}s{why}{tail}"


def reproduce(
    *,
    runs: list[str] | None = None,
    notebooks: list[str] | None = None,
    echo: Any = None,
    jobs: int = 1,
    force: bool = False,
    progress: Any = None,
) -> list[RunResult]:
    """Run every params file (optionally only some runs / notebooks), then write the index.

    A run name in `runs` also selects its dotted variants: "default" runs `default.yaml` and
    every `default.<name>.yaml` (e.g. one report card per default judge). A run whose inputs
    are unchanged since its last successful run is skipped, its record and index row kept
    (`reporting.freshness`); `force` runs everything. With `jobs > 1`, that many notebooks
    execute at once, each in its own worker process and kernel; results come back in
    params-file order whatever order they finish in. Each result's line goes to `echo`, and,
    with N of M, elapsed and ETA, to the `progress` stream (e.g. `sys.stderr`).
    """
    if jobs < 1:
        raise ValueError(f"jobs must be at least 1, got {jobs}")
    files = [
        f
        for f in params_files()
        if (runs is None or any(f.stem == r or f.stem.startswith(r + ".") for r in runs))
        and (notebooks is None or f.parent.name in notebooks)
    ]
    done = {} if force else {f: r for f in files if (r := _unchanged(f)) is not None}
    todo = [f for f in files if f not in done]
    for result in done.values():
        if echo:
            echo(_line(result))
        if progress:
            print(_line(result), file=progress, flush=True)
    expected = {
        str(f): (freshness.read_record(f.parent.name, f.stem) or {}).get("seconds") for f in todo
    }
    bar = progress_.Progress(expected, jobs=jobs, stream=progress)

    def report(f: Path, result: RunResult) -> None:
        line = bar.step(str(f), _line(result))
        if echo:
            echo(line)

    try:
        if jobs == 1 or len(todo) < 2:
            for f in todo:
                done[f] = _run_params_file(f, force)
                report(f, done[f])
        else:
            done.update(_run_parallel(longest_first(todo, expected), jobs, report, force))
    finally:  # a signal stops the runs; the index still shows every run that finished
        bar.close()
        write_index()
    return [done[f] for f in files]


def _worker_init(parent_pid: int, blas_threads: int) -> None:
    """Initialise a worker: stop with the parent; its kernels get their share of the cores."""
    stopping.worker_init(parent_pid)
    threads.cap(blas_threads)


def longest_first(files: list[Path], expected: dict[str, float | None]) -> list[Path]:
    """Order runs for parallel workers so the longest start first (no idle core at the end).

    Known durations (the last run's seconds) longest first; a run never timed before goes
    first when it is a notebook's main run (it may be long) and last when it is a dotted
    variant (`default.<name>.yaml`, e.g. one of the 39 per-judge cards: short, many).
    """

    def key(f: Path) -> float:
        seconds = expected.get(str(f))
        if seconds is not None:
            return -float(seconds)
        return 0.0 if "." in f.stem else -math.inf

    return sorted(files, key=key)


def _run_parallel(files: list[Path], jobs: int, report: Any, force: bool) -> dict[Path, RunResult]:
    """Run params files in `jobs` worker processes (each with its own kernel).

    Workers die with this process, even on kill -9; on a signal or an error here, running
    workers are stopped (their temporary notebooks removed) before the error propagates.
    """
    import concurrent.futures
    import multiprocessing

    context = multiprocessing.get_context("spawn")
    pool = concurrent.futures.ProcessPoolExecutor(
        jobs,
        mp_context=context,
        initializer=_worker_init,
        initargs=(os.getpid(), threads.per_job(jobs)),
    )
    try:
        futures = {pool.submit(stopping.in_worker, _run_params_file, f, force): f for f in files}
        for future in concurrent.futures.as_completed(futures):
            report(futures[future], future.result())
        return {f: future.result() for future, f in futures.items()}
    except BaseException:
        stopping.stop_workers(pool)
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
