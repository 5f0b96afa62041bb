"""Stopping notebook runs cleanly: one run per (notebook, run), signals, workers that die.

- `run_lock` holds an advisory lock on `reports/<nb>/.<run>.lock` for the whole of a run; a
  second run of the same notebook under the same name is refused (`RunInProgress`) instead of
  removing the figures and the report the first one is writing.
- `stop_on_signals` turns SIGTERM (like Ctrl-C's SIGINT) into `KeyboardInterrupt`, so every
  `finally` runs: temporary notebooks are removed, locks released, kernels shut down.
  `exit_status()` is then 128 + the signal number (130 for SIGINT, 143 for SIGTERM).
- `worker_init` makes a `reproduce --jobs N` worker die with its parent (even on kill -9 of
  the parent; Linux `PR_SET_PDEATHSIG`, elsewhere a watcher thread), and stop cleanly on a
  signal; its kernel polls the worker and exits with it. `stop_workers` ends a pool's workers.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from judgelab.core import locks, paths
from judgelab.errors import RunInProgress

_received: int | None = None  # the signal that stopped this process, if any
_in_job = False  # a worker is executing a notebook (else a signal just ends it)


@contextlib.contextmanager
def run_lock(notebook: str, run: str, *, wait: bool = False) -> Iterator[None]:
    """Hold the lock of one (notebook, run); raise `RunInProgress` when another holds it.

    With `wait` (`reproduce`), a lock another process holds is waited for, saying so on
    stderr; one this process holds is still refused (waiting for it would never end). The
    lock file stays (an empty hidden file); the lock dies with the process that holds it, so
    a killed run never blocks the next one.
    """
    lock = paths.reports() / notebook / f".{run}.lock"
    with contextlib.ExitStack() as held:
        try:
            held.enter_context(locks.file_lock(lock, wait=False))
        except locks.LockBusy as busy:
            if not wait or busy.holder == str(os.getpid()):
                raise RunInProgress(
                    f"{notebook} [{run}] is already running (process {busy.holder}); wait for "
                    f"it to finish, or give this run another name with --run"
                ) from None
            print(f"{notebook} [{run}]: waiting for process {busy.holder}", file=sys.stderr)
            held.enter_context(locks.file_lock(lock, wait=True))
        yield


def _interrupt(signum: int, frame: Any) -> None:
    global _received
    if _received is None:
        _received = signum
    if signum == signal.SIGTERM:  # a second SIGTERM must not cut the cleanup short
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    # the kernel got the signal too: nbclient's "Kernel died …" and asyncio's "Task exception
    # was never retrieved" are the shutdown's noise, not news (the CLI prints one line)
    logging.disable(logging.CRITICAL)
    raise KeyboardInterrupt(signal.Signals(signum).name)


@contextlib.contextmanager
def stop_on_signals() -> Iterator[None]:
    """Within the block, SIGTERM raises `KeyboardInterrupt` in the main thread, as SIGINT does."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    global _received
    _received = None
    previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)  # logging stays off: the process is ending


def exit_status() -> int:
    """Return the exit status after an interruption: 128 + the signal (130 for Ctrl-C)."""
    return 128 + (_received or signal.SIGINT)


def signal_name() -> str:
    """Return the name of the signal that stopped this process ("SIGINT" when none)."""
    return signal.Signals(_received or signal.SIGINT).name


def _die_with_parent(parent_pid: int) -> None:
    """Have the kernel send this process SIGTERM when its parent dies (kill -9 included)."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, int(signal.SIGTERM), 0, 0, 0)  # 1 = PR_SET_PDEATHSIG
    else:  # pragma: no cover - a watcher where the kernel cannot do it

        def watch() -> None:
            while os.getppid() == parent_pid:
                time.sleep(1.0)
            os.kill(os.getpid(), signal.SIGTERM)

        threading.Thread(target=watch, daemon=True).start()
    if os.getppid() != parent_pid:  # the parent died before the line above took effect
        os._exit(128 + signal.SIGTERM)


def _worker_signal(signum: int, frame: Any) -> None:
    if not _in_job:  # idle: nothing to clean up
        os._exit(128 + signum)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _interrupt(signum, frame)


def worker_init(parent_pid: int) -> None:
    """Initialise a pool worker: die with the parent, stop cleanly on SIGTERM or SIGINT."""
    signal.signal(signal.SIGTERM, _worker_signal)
    signal.signal(signal.SIGINT, _worker_signal)
    _die_with_parent(parent_pid)


def in_worker(fn: Callable[..., Any], *args: Any) -> Any:
    """Run `fn(*args)` in a pool worker; on a signal, clean up (finally blocks) and exit."""
    global _in_job
    _in_job = True
    try:
        return fn(*args)
    except KeyboardInterrupt:
        sys.stderr.flush()
        os._exit(exit_status())  # the pool must not hand this worker another notebook
    finally:
        _in_job = False


def stop_workers(pool: Any, grace_s: float = 20.0) -> None:
    """Cancel what has not started, SIGTERM the running workers, and wait for them to exit.

    A worker removes its temporary notebook and stops its kernel; one still alive after
    `grace_s` seconds is killed.
    """
    processes = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for p in processes:
        with contextlib.suppress(OSError, ValueError, AttributeError):
            p.terminate()
    deadline = time.monotonic() + grace_s
    for p in processes:
        with contextlib.suppress(OSError, ValueError, AttributeError, AssertionError):
            p.join(max(0.0, deadline - time.monotonic()))
            if p.is_alive():
                p.kill()
                p.join(5)
