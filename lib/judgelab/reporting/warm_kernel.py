"""One kernel kept warm for consecutive runs of the same notebook in a process (`reproduce`).

`make figures` runs notebook 14 once per default judge (39 report cards). A fresh kernel per
card pays its start and the analysis stack's imports every time (~2 of a card's ~6 s of CPU).
`reproduce`'s workers keep one kernel per such notebook (`SHARED`) and, before each run, reset
it to a fresh kernel's state: the user namespace and its output history emptied (`%reset -f`),
open figures closed, warnings that show once shown again, the run state of
`reporting.notebook` forgotten (its tables' script is emitted again), the execution count back
to 1. Imported modules stay — that is the point; their memos are keyed by file stat, not per
run. A run that fails, times out or kills the kernel shuts it down; the next starts afresh.
"""

from __future__ import annotations

import atexit
import contextlib
from typing import Any

from judgelab.reporting import notebook_stack

#: Notebooks whose runs in one `reproduce` worker share a kernel (many short runs each).
SHARED = frozenset({"14_judge_report_card"})

#: Puts a used kernel back into a fresh kernel's state (run as a one-cell notebook).
RESET = """\
get_ipython().run_line_magic("reset", "-f")


def _judgelab_reset():
    import sys

    if "matplotlib.pyplot" in sys.modules:
        sys.modules["matplotlib.pyplot"].close("all")
    if "judgelab.reporting.notebook" in sys.modules:
        sys.modules["judgelab.reporting.notebook"].forget_run()
    for module in list(sys.modules.values()):
        try:
            module.__dict__.get("__warningregistry__", {}).clear()  # shown once: again
        except Exception:
            pass


_judgelab_reset()
del _judgelab_reset
get_ipython().execution_count = 1  # the next run's first cell is 1, as in a fresh kernel
"""

_KERNELS: dict[str, Any] = {}


def _start(extra_arguments: list[str], cwd: str) -> Any:
    """Start a kernel the way nbclient would (an async manager, run on jupyter's loop)."""
    from jupyter_client.manager import AsyncKernelManager
    from jupyter_core.utils import run_sync

    km = AsyncKernelManager(kernel_name="python3")
    run_sync(km.start_kernel)(extra_arguments=extra_arguments, cwd=cwd)
    return km


def _reset(km: Any, timeout_s: int = 60) -> None:
    """Run `RESET` in the kernel (as a one-cell notebook); raise when it fails."""
    notebook_stack.prepare()
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(RESET)])
    client = NotebookClient(nb, km=km, kernel_name="python3", timeout=timeout_s)
    client.execute()
    with contextlib.suppress(Exception):
        client.kc.stop_channels()


def _alive(km: Any) -> bool:
    from jupyter_core.utils import run_sync

    return bool(run_sync(km.is_alive)())


def acquire(stem: str, extra_arguments: list[str], cwd: str) -> Any | None:
    """The warm kernel manager for `stem`, reset and ready; None when `stem` is not SHARED."""
    if stem not in SHARED:
        return None
    km = _KERNELS.get(stem)
    if km is not None:
        try:
            if not _alive(km):
                raise RuntimeError("kernel died")
            _reset(km)
            return km
        except Exception:  # noqa: BLE001 - a kernel that cannot be reset is replaced
            discard(stem)
    # Its execution count goes back to 1 on each reset: a history database would refuse that.
    km = _start([*extra_arguments, "--HistoryManager.enabled=False"], cwd)
    _KERNELS[stem] = km
    return km


def discard(stem: str) -> None:
    """Shut down `stem`'s warm kernel (after a failed run): the next run starts a fresh one."""
    km = _KERNELS.pop(stem, None)
    if km is not None:
        from jupyter_core.utils import run_sync

        with contextlib.suppress(Exception):
            run_sync(km.shutdown_kernel)(now=True)


@atexit.register
def close_all() -> None:
    """Shut down every warm kernel (a worker's exit; a killed worker's kernels exit alone)."""
    for stem in list(_KERNELS):
        discard(stem)
