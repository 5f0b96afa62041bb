"""Cap the BLAS/OpenMP threads of processes that run side by side (one per core).

numpy's OpenBLAS starts one thread per core in every process. When `jobs` processes (notebook
kernels of `judgelab reproduce`, calibration workers, test workers) already share the cores,
each process's threads compete with the others' and spin while they wait: on a 2-core machine
notebook 09 took 174 s of CPU with two BLAS threads per kernel and 88 s with one (`make bench`).
So, like joblib's workers, each of `jobs` processes gets cores // jobs threads. A cap the user
set in the environment (e.g. `OPENBLAS_NUM_THREADS`) is left alone.
"""

from __future__ import annotations

import functools
import itertools
import os
import sys
import threading
import warnings
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any, TypeVar

T = TypeVar("T")
R = TypeVar("R")

#: The variables BLAS and OpenMP runtimes read at start (children inherit them).
THREAD_VARS = (
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS",
    "NUMEXPR_NUM_THREADS",
)


def per_job(jobs: int, cpus: int | None = None) -> int:
    """Return the threads each of `jobs` processes sharing `cpus` cores gets (at least 1)."""
    cpus = cpus if cpus is not None else (os.cpu_count() or 1)
    return max(1, cpus // max(1, jobs))


#: Set by `cap` beside the variables it sets, to the value it set: a later `cap` (a `reproduce`
#: worker under a `judgelab` command) may change them; a cap the user set carries no mark.
MARK = "JUDGELAB_BLAS_THREADS"
#: BLAS threads of a `judgelab` command that starts no kernel (`cap_command`).
COMMAND_THREADS = 1
#: Commands whose notebook kernels get their share of the cores as before: all of them for
#: `run` and `card`, cores // jobs for `reproduce`'s workers.
KERNEL_COMMANDS = frozenset({"run", "card", "reproduce"})


def user_capped() -> bool:
    """Return whether the environment already sets a thread cap (the user's choice wins)."""
    ours = os.environ.get(MARK)
    return any(os.environ.get(var) and os.environ[var] != ours for var in THREAD_VARS)


def cap(threads: int) -> bool:
    """Cap this process's BLAS threads and its children's at `threads`; False: user's cap kept.

    Children (kernels, subprocesses) read the environment when they start; this process's
    already loaded BLAS (numpy imported) is limited through threadpoolctl.
    """
    if user_capped():
        return False
    for var in THREAD_VARS:
        os.environ[var] = str(threads)
    os.environ[MARK] = str(threads)
    if "numpy" in sys.modules:
        from threadpoolctl import threadpool_limits

        threadpool_limits(limits=threads)
    return True


def cap_command(command: str | None) -> bool:
    """Cap a `judgelab` command's BLAS threads at `COMMAND_THREADS`, kernel commands aside.

    A command's matrices are small (`plan`'s 800 replay tests: 1999 × G weights, G ≈ 800), and
    OpenBLAS threads spin while they wait for a core: on the shared 2-core machine `judgelab
    plan position-bias --pilot llmbar` took 25 s of CPU with two threads, 4.7 s with one
    (load 5, issue 34 item 6). Set before numpy loads; False where the user's cap is kept or
    the command starts notebook kernels (`KERNEL_COMMANDS`).
    """
    if command in KERNEL_COMMANDS:
        return False
    return cap(COMMAND_THREADS)


def share() -> int:
    """Return the cores this process may use: its cap (`cap`, or the user's), else all it sees."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    cores = cores or 1
    for var in (MARK, *THREAD_VARS):
        value = os.environ.get(var, "")
        if value.isdigit() and int(value) > 0:
            return min(cores, int(value))
    return cores


def ordered_map(
    fn: Callable[[T], R], items: Iterable[T], *, workers: int | None = None
) -> list[R]:
    """Return `[fn(x) for x in items]`, computed in `workers` threads (`share()`), in order.

    For independent pieces of numeric work that release the GIL (one judge's GLM fits: the
    numpy and BLAS work of statsmodels' Newton steps, CR2): two judges fit at once on two
    cores, each on one BLAS thread. A threaded BLAS gains nothing on these 2·10^6 × 3 designs
    (measured: the same wall time and 1.7× the CPU) and would compete with the other thread.
    `items` is read as work is taken (at most `workers` pieces wait or run), so a generator
    of large pieces (one judge's rows each) holds no more of them than the threads work on.
    One worker (a one-core share) or one piece: a plain loop (a pool costs ~1 ms a call).
    `fn` must not use `warnings.catch_warnings` outside `caught_warnings` (the warnings
    module's state is one for all threads).
    """
    n = workers if workers is not None else share()
    items = iter(items)
    head = list(itertools.islice(items, 2))
    if n <= 1 or len(head) < 2:  # one core, or one piece: no threads to start
        return [fn(x) for x in itertools.chain(head, items)]
    items = itertools.chain(head, items)
    from threadpoolctl import threadpool_limits

    def piece(x: T) -> R:
        try:
            return fn(x)
        finally:
            release_freed()

    out: list[R] = []
    with threadpool_limits(1, user_api="blas"), ThreadPoolExecutor(n) as pool:
        pending: deque[Any] = deque()
        for x in items:
            pending.append(pool.submit(piece, x))
            if len(pending) >= n:
                out.append(pending.popleft().result())
        out.extend(f.result() for f in pending)
    release_freed()  # and what this thread freed of the pieces
    return out


def release_freed() -> None:
    """Hand the memory this process freed back to the system (glibc's `malloc_trim`).

    glibc gives each thread that allocates its own arena and keeps what is freed there for
    reuse: after `ordered_map`'s threads fit judge after judge (2·10^6-row arrays), the
    kernel's resident memory grew by what every thread ever held at once (notebook 03 at 10^7
    rows: 1.3 -> 2.1 GB). Trimming after each piece keeps it at what is in use. Elsewhere
    than glibc (musl, macOS), nothing.
    """
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@functools.cache
def _malloc_trim() -> Any:
    import ctypes
    import ctypes.util

    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim
    except (OSError, AttributeError):
        return None


_WARNINGS = threading.RLock()


@contextmanager
def caught_warnings(*, record: bool = False) -> Iterator[list[warnings.WarningMessage] | None]:
    """`warnings.catch_warnings`, one thread at a time (`ordered_map`'s threads may use it).

    The warnings module keeps one filter list and one `showwarning` for the process; two
    threads inside `catch_warnings` at once would restore each other's state on the way out
    (leaving every later warning ignored or recorded into a list nobody reads).
    """
    with _WARNINGS, warnings.catch_warnings(record=record) as caught:
        yield caught


__all__ = [
    "COMMAND_THREADS",
    "KERNEL_COMMANDS",
    "MARK",
    "THREAD_VARS",
    "cap",
    "cap_command",
    "caught_warnings",
    "ordered_map",
    "per_job",
    "release_freed",
    "share",
    "user_capped",
]
