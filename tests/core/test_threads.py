"""BLAS thread caps for processes that share the cores (`core.threads`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
import warnings
from concurrent.futures import ThreadPoolExecutor

import pytest

from judgelab.core import threads
from judgelab.reporting import pipeline

_PROBE = """
import json, os
from judgelab.core import threads
capped = threads.cap(int(os.environ["N"]))
from threadpoolctl import threadpool_info
blas = [p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"]
print(json.dumps({"capped": capped, "env": os.environ.get("OPENBLAS_NUM_THREADS"), "blas": blas}))
"""


def _probe(n: int, **env: str) -> dict:
    clean = {k: v for k, v in os.environ.items() if k not in (*threads.THREAD_VARS, threads.MARK)}
    out = subprocess.run(
        [sys.executable, "-c", "import numpy\n" + _PROBE],
        env={**clean, "N": str(n), **env},
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout)


@pytest.mark.parametrize(
    ("jobs", "cpus", "expected"), [(2, 2, 1), (1, 2, 2), (4, 16, 4), (3, 2, 1)]
)
def test_i34_6_each_job_gets_its_share_of_the_cores(jobs, cpus, expected):
    assert threads.per_job(jobs, cpus) == expected


def test_i34_6_a_cap_limits_the_loaded_blas_and_the_children():
    got = _probe(1)
    assert got["capped"] is True
    assert got["env"] == "1"  # kernels and subprocesses inherit it
    assert got["blas"] and all(n == 1 for n in got["blas"])  # numpy was imported first


def test_i34_6_a_cap_the_user_set_is_left_alone():
    got = _probe(1, OMP_NUM_THREADS="2")
    assert got["capped"] is False
    assert got["env"] is None


def test_i34_6_reproduce_workers_cap_their_kernels_threads(monkeypatch):
    for var in threads.THREAD_VARS:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(threads, "cap", lambda n: os.environ.update(OPENBLAS_NUM_THREADS=str(n)))
    monkeypatch.setattr(pipeline.stopping, "worker_init", lambda pid: None)
    pipeline._worker_init(os.getpid(), 3)
    assert os.environ["OPENBLAS_NUM_THREADS"] == "3"


_COMMAND = """
import json, os, sys
from judgelab.cli import main
main.main(sys.argv[1:])
from threadpoolctl import threadpool_info
blas = [p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"]
print(json.dumps({"env": os.environ.get("OPENBLAS_NUM_THREADS"), "blas": blas}), file=sys.stderr)
"""


def _command(args: list[str], **env: str) -> dict:
    """Run a `judgelab` command in a fresh interpreter; its BLAS threads when it ended."""
    clean = {k: v for k, v in os.environ.items() if k not in (*threads.THREAD_VARS, threads.MARK)}
    out = subprocess.run(
        [sys.executable, "-c", _COMMAND, *args],
        env={**clean, **env},
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stderr.strip().splitlines()[-1])


PLAN = ["plan", "rate", "--width", "0.1", "--p", "0.8", "--icc", "0.1", "--cluster-size", "3"]


def test_i34_6_a_command_caps_its_own_blas_threads():
    """`plan` spent 25 s of CPU with 2 spinning OpenBLAS threads on 2 busy cores, 4.7 s with 1."""
    got = _command(PLAN)
    assert got["env"] == "1"
    assert got["blas"] and all(n == 1 for n in got["blas"])


def test_i34_6_a_command_keeps_the_users_cap_and_kernel_commands_their_share():
    got = _command(PLAN, OPENBLAS_NUM_THREADS="2")
    assert got["env"] == "2" and all(n == 2 for n in got["blas"])
    assert threads.cap_command("reproduce") is False  # its workers cap their kernels
    assert threads.cap_command("run") is False and threads.cap_command("card") is False


def test_i34_6_a_reproduce_worker_may_change_a_cap_judgelab_set(monkeypatch):
    for var in (*threads.THREAD_VARS, threads.MARK):
        monkeypatch.delenv(var, raising=False)
    assert threads.cap(1) is True
    assert threads.cap(3) is True  # ours, not the user's: a worker gives its kernels 3
    assert os.environ["OPENBLAS_NUM_THREADS"] == "3"
    monkeypatch.setenv("OMP_NUM_THREADS", "5")  # the user's
    assert threads.cap(2) is False and os.environ["OMP_NUM_THREADS"] == "5"


def test_ordered_map_keeps_the_order_and_runs_pieces_at_once(monkeypatch):
    monkeypatch.setenv(threads.MARK, "2")  # a two-core share, whatever this machine has
    for var in threads.THREAD_VARS:
        monkeypatch.delenv(var, raising=False)
    assert threads.share() == min(2, len(os.sched_getaffinity(0)))
    running, most = [0], [0]
    lock = threading.Lock()

    def work(x: int) -> int:
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        time.sleep(0.02 * (5 - x))  # the first pieces finish last
        with lock:
            running[0] -= 1
        return x * x

    assert threads.ordered_map(work, range(5), workers=2) == [0, 1, 4, 9, 16]
    assert most[0] == 2  # two at once, never more


def test_ordered_map_takes_no_more_pieces_than_its_threads_work_on():
    taken, gate = [], threading.Event()

    def pieces():
        for i in range(6):
            taken.append(i)
            yield i

    def work(x: int) -> int:
        if x == 0:
            gate.wait(5)  # the first piece holds its thread while the pieces taken are counted
        return x

    with ThreadPoolExecutor(1) as side:
        done = side.submit(threads.ordered_map, work, pieces(), workers=2)
        time.sleep(0.2)
        assert taken == [0, 1]  # one a thread; the next waits until the first is done
        gate.set()
        assert done.result() == list(range(6))


def test_ordered_map_raises_a_pieces_error_and_one_worker_or_piece_is_this_thread():
    names = set()

    def work(x: int) -> int:
        names.add(threading.current_thread().name)
        if x == 2:
            raise ValueError("piece 2")
        return x

    with pytest.raises(ValueError, match="piece 2"):
        threads.ordered_map(work, range(4), workers=1)
    assert threads.ordered_map(work, iter([7]), workers=2) == [7]  # one piece: no pool
    assert threads.ordered_map(work, [], workers=2) == []
    assert names == {threading.current_thread().name}
    with pytest.raises(ValueError, match="piece 2"):
        threads.ordered_map(work, range(4), workers=2)


def test_caught_warnings_in_threads_at_once_each_catch_their_own_and_restore_the_state():
    before = (list(warnings.filters), warnings.showwarning)

    def catch(i: int) -> int:
        with threads.caught_warnings(record=True) as got:
            warnings.simplefilter("always")
            time.sleep(0.001)  # another thread would enter here without the lock
            warnings.warn(f"w{i}", UserWarning, stacklevel=1)
            return sum(1 for w in got if str(w.message) == f"w{i}")

    assert threads.ordered_map(catch, range(32), workers=4) == [1] * 32
    assert (list(warnings.filters), warnings.showwarning) == before


def test_release_freed_is_harmless_with_or_without_glibc():
    threads.release_freed()
