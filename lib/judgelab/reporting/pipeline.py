"""Execute notebooks with papermill, export HTML, and index every run.

`run_notebook` executes `notebooks/<nb>.ipynb` with a params file (and `-p` overrides) into
`reports/<nb>/<run>.ipynb` and `.html`; figures land in `figures/<nb>/<run>/`. A JSON record
of each run (parameters, status, failing cell, seconds, figures) sits beside it, and
`write_index` turns all records into `reports/index.html`.
"""

from __future__ import annotations

import contextlib
import html
import json
import os
import re
import shutil
import sys
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from judgelab.core import paths, tables
from judgelab.errors import ParamsError as ParamsError

NOTEBOOK_RE = re.compile(r"^\d\d_[a-z0-9_]+$")
SECRET_NAME_RE = re.compile(r"(api_?key|secret|password|passwd|token)$", re.IGNORECASE)
SECRET_VALUE_RE = re.compile(r"sk-[A-Za-z0-9_-]{16,}")


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

    @property
    def ok(self) -> bool:
        """Return True when the notebook executed without error."""
        return self.status == "ok"


def list_notebooks() -> list[str]:
    """Return the stems of the committed notebooks, in order."""
    return sorted(p.stem for p in paths.notebooks().glob("*.ipynb") if NOTEBOOK_RE.match(p.stem))


def notebook_path(notebook: str) -> Path:
    """Return the path of a notebook given its stem (or path); raise if it does not exist."""
    stem = Path(notebook).stem
    path = paths.notebooks() / f"{stem}.ipynb"
    if not path.exists():
        raise FileNotFoundError(
            f"notebook {notebook!r}: {path} does not exist (known: {', '.join(list_notebooks())})"
        )
    return path


def declared_parameters(notebook: str) -> dict[str, dict[str, Any]]:
    """Return the parameters a notebook declares (papermill.inspect_notebook)."""
    import papermill

    return papermill.inspect_notebook(str(notebook_path(notebook)))


def params_files(notebook: str | None = None, *, run: str | None = None) -> list[Path]:
    """Return the params files `params/<nb>/<run>.yaml`, optionally filtered."""
    root = paths.params()
    pattern = f"{notebook or '*'}/{run or '*'}.yaml"
    found = [p for p in root.glob(pattern) if NOTEBOOK_RE.match(p.parent.name)]
    return sorted(found, key=lambda p: (p.parent.name, p.stem))


def _check_secrets(params: dict[str, Any], where: str) -> None:
    secret_values = {
        v
        for k, v in os.environ.items()
        if v and len(v) >= 8 and re.search(r"(KEY|TOKEN|SECRET|PASSWORD)$", k)
    }
    for key, value in params.items():
        if SECRET_NAME_RE.search(str(key)):
            raise ParamsError(
                f"{where}: key '{key}' looks like a credential; credentials come from "
                "environment variables only (name the variable, e.g. api_key_env: OPENAI_API_KEY)"
            )
        text = json.dumps(value, default=str)
        if SECRET_VALUE_RE.search(text) or any(s in text for s in secret_values):
            raise ParamsError(
                f"{where}: key '{key}' holds what looks like a secret; credentials come from "
                "environment variables only and never enter parameters"
            )


def load_params(path: str | os.PathLike[str], notebook: str | None = None) -> dict[str, Any]:
    """Read a params YAML file; check it is a mapping of keys the notebook declares."""
    p = Path(path)
    try:
        text = tables.read_utf8(p)
    except tables.NotUTF8 as exc:
        raise ParamsError(str(exc)) from None
    except OSError as exc:
        raise ParamsError(f"{p}: cannot read params file ({exc})") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f", line {mark.line + 1}" if mark is not None else ""
        raise ParamsError(f"{p}{line}: invalid YAML ({getattr(exc, 'problem', exc)})") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ParamsError(
            f"{p}: expected a mapping of parameter names to values, got {type(data).__name__}"
        )
    # Secrets first: a credential in a params file is the error to report, declared or not.
    _check_secrets(data, str(p))
    if notebook is not None:
        check_declared(data, notebook, where=str(p))
    return data


def check_declared(params: dict[str, Any], notebook: str, *, where: str) -> None:
    """Raise `ParamsError` if `params` holds a key the notebook's parameters cell lacks."""
    declared = declared_parameters(notebook)
    unknown = [k for k in params if k not in declared]
    if unknown:
        raise ParamsError(
            f"{where}: key '{unknown[0]}' is not a parameter of notebook {notebook} "
            f"(declared: {', '.join(sorted(declared))})"
        )


def parse_overrides(pairs: list[str]) -> dict[str, Any]:
    """Parse `key=value` overrides; values are read as YAML (`n=3` → 3, `x=[a, b]` → list)."""
    out: dict[str, Any] = {}
    for pair in pairs:
        if "=" not in pair:
            raise ParamsError(f"-p {pair!r}: expected key=value")
        key, value = pair.split("=", 1)
        key = key.strip()
        if not key.isidentifier():
            raise ParamsError(f"-p {pair!r}: '{key}' is not a valid parameter name")
        try:
            out[key] = yaml.safe_load(value) if value else ""
        except yaml.YAMLError:
            out[key] = value
    return out


@contextlib.contextmanager
def _kernel_env() -> Iterator[None]:
    """Environment for the kernel: this interpreter first on PATH, inline figures.

    The kernel inherits the environment; a venv need not be activated, and an `MPLBACKEND=Agg`
    set for headless runs must not stop figures from showing in the executed notebook.
    """
    saved = {
        k: os.environ.get(k) for k in ("PATH", "MPLBACKEND", "PYDEVD_DISABLE_FILE_VALIDATION")
    }
    bindir = str(Path(sys.executable).parent)
    path = os.environ.get("PATH", "")
    if bindir not in path.split(os.pathsep):
        os.environ["PATH"] = bindir + os.pathsep + path
    os.environ["MPLBACKEND"] = "module://matplotlib_inline.backend_inline"
    os.environ["PYDEVD_DISABLE_FILE_VALIDATION"] = "1"
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def _export_html(ipynb: Path, target: Path) -> None:
    import nbformat
    from nbconvert import HTMLExporter
    from nbconvert.preprocessors import TagRemovePreprocessor

    nb = nbformat.read(ipynb, as_version=4)
    templates = Path(str(resources.files("judgelab") / "resources" / "nbconvert"))
    exporter = HTMLExporter(template_name="judgelab", extra_template_basedirs=[str(templates)])
    # The defaults cell is long and superseded by the injected cell, which shows what ran.
    exporter.register_preprocessor(
        TagRemovePreprocessor(remove_input_tags={"parameters"}, enabled=True), enabled=True
    )
    body, _ = exporter.from_notebook_node(nb)
    tables.write_text(target, body)


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
    import papermill

    nb_path = notebook_path(notebook)
    stem = nb_path.stem
    params: dict[str, Any] = {}
    if params_file is not None:
        params.update(load_params(params_file, stem))
    if overrides:
        check_declared(overrides, stem, where="-p overrides")
        _check_secrets(overrides, "-p overrides")
        params.update(overrides)
    run_name = run or (Path(params_file).stem if params_file is not None else "default")
    if not re.match(r"^[A-Za-z0-9_.-]+$", run_name):
        raise ParamsError(f"run name {run_name!r}: use letters, digits, '_', '-', '.' only")
    if "run" in declared_parameters(stem):
        params["run"] = run_name

    out_dir = paths.reports() / stem
    out_dir.mkdir(parents=True, exist_ok=True)
    ipynb = out_dir / f"{run_name}.ipynb"
    html_path = out_dir / f"{run_name}.html"
    fig_dir = paths.figures() / stem / run_name
    if fig_dir.exists():
        shutil.rmtree(fig_dir)
    started = datetime.now(UTC)
    t0 = time.perf_counter()
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
                    "--IPKernelApp.log_level=ERROR",
                ],
            )
        except Exception as exc:  # papermill raises after writing the executed notebook
            error = _error_of(exc)
            if not tmp.exists() or tmp.stat().st_size == 0:
                tmp.write_text(json.dumps({"error": error}), encoding="utf-8")
    seconds = time.perf_counter() - t0
    html_out = None
    if html_export:
        try:
            _export_html(ipynb, html_path)
            html_out = str(html_path)
        except Exception as exc:  # a broken notebook must not stop the pipeline
            error = error or f"HTML export: {type(exc).__name__}: {exc}"
    figures = sorted(str(p) for p in fig_dir.glob("*")) if fig_dir.exists() else []
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
        figures=figures,
        error=error,
    )
    tables.write_text(
        out_dir / f"{run_name}.json", json.dumps(asdict(result), indent=2, default=str)
    )
    return result


def _run_params_file(f: Path) -> RunResult:
    """Run one params file; a rejected file becomes a failed run record, never an exception."""
    try:
        return run_notebook(f.parent.name, params_file=f)
    except (ParamsError, FileNotFoundError) as exc:
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
        # Recorded like any run, so reports/index.html marks it failed too.
        tables.write_text(
            paths.reports() / result.notebook / f"{result.run}.json",
            json.dumps(asdict(result), indent=2, default=str),
        )
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
    if jobs == 1 or len(files) < 2:
        for f in files:
            results.append(_run_params_file(f))
            report(results[-1])
    else:
        import concurrent.futures
        import multiprocessing

        context = multiprocessing.get_context("spawn")
        with concurrent.futures.ProcessPoolExecutor(jobs, mp_context=context) as pool:
            futures = {pool.submit(_run_params_file, f): f for f in files}
            for future in concurrent.futures.as_completed(futures):
                report(future.result())
            results = [future.result() for future in futures]
    write_index()
    return results


def _rel(path: str, base: Path) -> str:
    try:
        return os.path.relpath(path, base)
    except ValueError:
        return path


def load_records() -> list[dict[str, Any]]:
    """Return every run record under `reports/`."""
    records = []
    for p in sorted(paths.reports().glob("*/*.json")):
        try:
            rec = json.loads(p.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            continue
        if isinstance(rec, dict) and {"notebook", "run", "status"} <= set(rec):
            records.append(rec)
    return records


def write_index() -> Path:
    """Write `reports/index.html` linking every executed notebook, figure and parameter set."""
    base = paths.reports()
    base.mkdir(parents=True, exist_ok=True)
    rows = []
    for rec in load_records():
        status = html.escape(rec["status"])
        links = []
        if rec.get("html"):
            links.append(f'<a href="{html.escape(_rel(rec["html"], base))}">HTML</a>')
        if rec.get("ipynb"):
            links.append(f'<a href="{html.escape(_rel(rec["ipynb"], base))}">ipynb</a>')
        figs = " ".join(
            f'<a href="{html.escape(_rel(f, base))}">{html.escape(Path(f).name)}</a>'
            for f in rec.get("figures", [])
            if f.endswith(".png")
        )
        params = html.escape(yaml.safe_dump(rec.get("parameters", {}), sort_keys=True).strip())
        n_params = len(rec.get("parameters", {}))
        err = f'<div class="err">{html.escape(rec["error"])}</div>' if rec.get("error") else ""
        rows.append(
            f'<tr class="{status}"><td>{html.escape(rec["notebook"])}</td>'
            f'<td>{html.escape(rec["run"])}</td><td class="status">{status}{err}</td>'
            f"<td>{rec.get('seconds', 0):.1f}</td>"
            f"<td>{html.escape(rec.get('started_at', ''))}</td>"
            f"<td>{' · '.join(links)}</td><td>{figs}</td><td><details><summary>{n_params} "
            f"parameters</summary><pre>{params}</pre></details></td></tr>"
        )
    n_failed = sum(1 for r in load_records() if r["status"] != "ok")
    generated = datetime.now(UTC).isoformat(timespec="seconds")
    page = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>judgelab reports</title>
<style>
body {{ font-family: system-ui, sans-serif; margin: 2em; }}
table {{ border-collapse: collapse; width: 100%; }}
td, th {{ border: 1px solid #ccc; padding: 4px 8px; vertical-align: top; font-size: 13px; }}
tr.failed td.status {{ background: #fdd; font-weight: bold; }}
tr.ok td.status {{ background: #dfd; }}
pre {{ margin: 0; font-size: 11px; }}
.err {{ font-weight: normal; font-size: 11px; }}
</style></head><body>
<h1>judgelab reports</h1>
<p>{len(rows)} runs, {n_failed} failed. Generated {generated}.</p>
<table><thead><tr><th>notebook</th><th>run</th><th>status</th><th>seconds</th><th>started</th>
<th>report</th><th>figures</th><th>parameters</th></tr></thead>
<tbody>
{chr(10).join(rows)}
</tbody></table></body></html>
"""
    return tables.write_text(base / "index.html", page)
