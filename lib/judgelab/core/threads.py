"""Cap the BLAS/OpenMP threads of processes that run side by side (one per core).

numpy's OpenBLAS starts one thread per core in every process. When `jobs` processes (notebook
kernels of `judgelab reproduce`, calibration workers, test workers) already share the cores,
each process's threads compete with the others' and spin while they wait: on a 2-core machine
notebook 09 took 174 s of CPU with two BLAS threads per kernel and 88 s with one (`make bench`).
So, like joblib's workers, each of `jobs` processes gets cores // jobs threads. A cap the user
set in the environment (e.g. `OPENBLAS_NUM_THREADS`) is left alone.
"""

from __future__ import annotations

import os
import sys

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


__all__ = [
    "COMMAND_THREADS",
    "KERNEL_COMMANDS",
    "MARK",
    "THREAD_VARS",
    "cap",
    "cap_command",
    "per_job",
    "user_capped",
]
