"""The one inter-process lock: exclusive across real processes, released on exit or kill."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from judgelab.core import locks

HOLD = """
import sys, time
from judgelab.core import locks
with locks.file_lock(sys.argv[1]):
    print("held", flush=True)
    time.sleep(float(sys.argv[2]))
"""


def _holder(lock: Path, seconds: float) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(lock), str(seconds)], stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
    return proc


def test_lock_file_for_is_hidden_beside_target(tmp_path: Path) -> None:
    assert locks.lock_file_for(tmp_path / "a.parquet") == tmp_path / ".a.parquet.lock"


def test_busy_lock_names_the_holding_process(tmp_path: Path) -> None:
    lock = tmp_path / "x.lock"
    proc = _holder(lock, 30)
    try:
        with pytest.raises(locks.LockBusy) as err, locks.file_lock(lock, wait=False):
            pass
        assert err.value.holder == str(proc.pid)
    finally:
        proc.kill()
        proc.wait()
    with locks.file_lock(lock, wait=False):  # a killed holder releases it
        pass


def test_waiting_lock_waits_for_the_other_process(tmp_path: Path) -> None:
    lock = tmp_path / "x.lock"
    proc = _holder(lock, 0.5)
    t0 = time.monotonic()
    with locks.file_lock(lock):
        waited = time.monotonic() - t0
    proc.wait()
    assert waited > 0.2


def test_locked_targets_takes_every_lock(tmp_path: Path) -> None:
    a, b = tmp_path / "a.parquet", tmp_path / "b.parquet"
    with locks.locked_targets([b, a]):
        for t in (a, b):
            with (
                pytest.raises(locks.LockBusy),
                locks.file_lock(locks.lock_file_for(t), wait=False),
            ):
                pass
    assert os.path.exists(locks.lock_file_for(a))
