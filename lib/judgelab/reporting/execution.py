"""Execute one notebook with papermill in a kernel of this interpreter (used by `pipeline`).

`execute` writes the executed notebook atomically and returns the error text (None when ok):
the failing cell, its execution count and first line. A kernel that dies before its first
reply is started again (`KERNEL_START_TRIES`); a cell error never is.

The executed notebook is written once, when the run ends (`ENGINE`): ~1 s of CPU a card saved.
papermill's own engine rewrites it after every cell's start and end, to a temporary file
nobody reads while it runs (a 2 MB report card written 47 times: 1.6 s under cProfile).
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from judgelab.core import paths, tables
from judgelab.reporting import notebook_stack, warm_kernel
from judgelab.reporting import progress as progress_

# A headless run says so (JUDGELAB_HEADLESS): widgets that need a live kernel show a note.
_KERNEL_VARS = {
    "MPLBACKEND": "module://matplotlib_inline.backend_inline",
    "PYDEVD_DISABLE_FILE_VALIDATION": "1",
    "JUDGELAB_HEADLESS": "1",
}
#: Allocators of the kernel's table libraries, unless the user set them (issue 38): polars'
#: jemalloc hands freed pages back after 200 ms (a background thread; its default keeps them
#: 10 s), and pyarrow allocates from jemalloc, not mimalloc, which kept freed pages too (where
#: this pyarrow has jemalloc: `_allocator_vars`). Notebook 02 at 10^7 rows: peak RSS 2.34 ->
#: 1.71 GB, no slower.
_ALLOCATOR_VARS = {
    "_RJEM_MALLOC_CONF": "background_thread:true,dirty_decay_ms:200,muzzy_decay_ms:0",
    "ARROW_DEFAULT_MEMORY_POOL": "jemalloc",
}


@contextlib.contextmanager
def _kernel_env() -> Iterator[None]:
    """Environment for the kernel: this interpreter first on PATH, inline figures, allocators.

    The kernel inherits the environment; a venv need not be activated, and an `MPLBACKEND=Agg`
    set for headless runs must not stop figures from showing in the executed notebook.
    """
    saved = {k: os.environ.get(k) for k in (*_KERNEL_VARS, *_ALLOCATOR_VARS, "PATH")}
    bindir = str(Path(sys.executable).parent)
    path = os.environ.get("PATH", "")
    if bindir not in path.split(os.pathsep):
        os.environ["PATH"] = bindir + os.pathsep + path
    os.environ.update(_KERNEL_VARS)
    for key, value in _allocator_vars().items():
        os.environ.setdefault(key, value)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def _allocator_vars() -> dict[str, str]:
    """`_ALLOCATOR_VARS`, less pyarrow's pool where this pyarrow has no jemalloc (some builds)."""
    import pyarrow as pa

    try:
        pa.jemalloc_memory_pool()
    except NotImplementedError:
        return {k: v for k, v in _ALLOCATOR_VARS.items() if k != "ARROW_DEFAULT_MEMORY_POOL"}
    return dict(_ALLOCATOR_VARS)


def error_of(exc: Exception) -> str:
    """Return where a failed execution stopped: cell, execution count, first line, error."""
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


# A kernel that dies before its first reply never ran a cell: jupyter_client picks free ports,
# then the kernel binds them, and another process (a second kernel, a loopback server) can take
# one in between ("Address already in use"). Such a start is tried again, a cell error never is.
KERNEL_START_TRIES = 3
_KERNEL_START_FAILURE = "Kernel died before replying to kernel_info"


def execute(
    nb_path: Path,
    ipynb: Path,
    params: dict[str, Any],
    timeout_s: int,
    progress: bool = False,
    warm: bool = False,
) -> str | None:
    """Execute a notebook into `ipynb` (atomically); return the error text, None when ok.

    With `progress`, its cells are counted on stderr (N of M, elapsed, ETA). With `warm`
    (`reproduce`'s workers), a notebook in `warm_kernel.SHARED` runs in this process's warm
    kernel for it, reset to a fresh kernel's state, instead of a new one.
    """
    for attempt in range(1, KERNEL_START_TRIES + 1):
        error = _execute_once(nb_path, ipynb, params, timeout_s, progress, warm)
        if error is None or _KERNEL_START_FAILURE not in error:
            return error
        if attempt < KERNEL_START_TRIES:
            print(
                f"{nb_path.stem}: the kernel did not start ({error}); "
                f"starting it again (try {attempt + 1} of {KERNEL_START_TRIES})",
                file=sys.stderr,
            )
    return f"{error} (after {KERNEL_START_TRIES} kernel starts)"


#: The papermill engine `execute` runs notebooks with (`_WriteOnce`).
ENGINE = "judgelab-write-once"


@functools.cache
def _write_once_engine() -> str:
    """Register `_WriteOnce` with papermill (once) and return its name."""
    notebook_stack.prepare()
    from papermill.engines import NBClientEngine, papermill_engines
    from papermill.iorw import write_ipynb

    class _WriteOnce(NBClientEngine):
        """papermill's nbclient engine, without its save after every cell's start and end.

        papermill itself writes the notebook when the run ends (and on a cell error); when the
        run stops otherwise (a timeout, a dead kernel) the cells run so far are written here.
        """

        @classmethod
        def execute_notebook(cls, nb, kernel_name, output_path=None, **kwargs):  # noqa: D102
            try:
                nb = super().execute_notebook(nb, kernel_name, output_path=None, **kwargs)
            except BaseException:
                if output_path:
                    write_ipynb(nb, output_path)
                raise
            _project_relative(nb.metadata.get("papermill", {}))
            return nb

    papermill_engines.register(ENGINE, _WriteOnce)
    return ENGINE


#: The kernel's command-line options: `run: str = ...` on a cell's first line would otherwise
#: be read as %run; a stopped run closes the kernel's sockets mid-reply, and its log would then
#: print a traceback after the one-line "interrupted" (cell errors go to the notebook).
KERNEL_ARGUMENTS = ["--InteractiveShell.automagic=False", "--IPKernelApp.log_level=CRITICAL"]


#: `core.atomic`'s temporary names: `.<name>.<random>.tmp<suffix>`.
_TEMPORARY = re.compile(r"^\.(?P<name>.+)\.[^.]+\.tmp(\.[^.]+)?$")


def _project_relative(meta: dict[str, Any]) -> None:
    """Record papermill's input and output paths relative to the project (no machine path).

    The output is written through a temporary file (`tables.atomic_path`); its final name is
    recorded.
    """
    root = paths.project()
    for key in ("input_path", "output_path"):
        value = meta.get(key)
        if not value:
            continue
        path = Path(str(value))
        match = _TEMPORARY.match(path.name)
        if match:
            path = path.with_name(match.group("name"))
        with contextlib.suppress(ValueError):
            path = path.resolve().relative_to(root.resolve())
        meta[key] = path.as_posix() if not path.is_absolute() else path.name


def _execute_once(
    nb_path: Path,
    ipynb: Path,
    params: dict[str, Any],
    timeout_s: int,
    progress: bool,
    warm: bool = False,
) -> str | None:
    """One papermill execution into `ipynb` (atomically); the error text, None when ok."""
    notebook_stack.prepare()
    import papermill

    error = None
    stem = nb_path.stem
    with tables.atomic_path(ipynb, suffix=".ipynb") as tmp, _kernel_env():
        try:
            km = (
                warm_kernel.acquire(stem, KERNEL_ARGUMENTS, str(paths.project())) if warm else None
            )
            papermill.execute_notebook(
                str(nb_path),
                str(tmp),
                parameters=params,
                cwd=str(paths.project()),
                kernel_name="python3",
                engine_name=_write_once_engine(),
                progress_bar=progress_.cell_bar(nb_path.stem) if progress else False,
                log_output=False,
                execution_timeout=timeout_s,
                extra_arguments=KERNEL_ARGUMENTS,
                km=km,
            )
        except BaseException as exc:  # papermill raises after writing the executed notebook
            if warm:
                warm_kernel.discard(stem)  # a failed run's kernel is not reused
            if not isinstance(exc, Exception):
                raise
            error = error_of(exc)
            if not tmp.exists() or tmp.stat().st_size == 0:
                tmp.write_text(json.dumps({"error": error}), encoding="utf-8")
    return error
