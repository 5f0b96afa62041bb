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


def user_capped() -> bool:
    """Return whether the environment already sets a thread cap (the user's choice wins)."""
    return any(os.environ.get(var) for var in THREAD_VARS)


def cap(threads: int) -> bool:
    """Cap this process's BLAS threads and its children's at `threads`; False: user's cap kept.

    Children (kernels, subprocesses) read the environment when they start; this process's
    already loaded BLAS is limited through threadpoolctl.
    """
    if user_capped():
        return False
    for var in THREAD_VARS:
        os.environ[var] = str(threads)
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=threads)
    return True


__all__ = ["THREAD_VARS", "cap", "per_job", "user_capped"]
