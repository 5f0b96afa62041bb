"""Shared fixtures: every test runs with judgelab's output root in a temporary folder."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

from judgelab.core import threads
from judgelab.reporting import notebook_stack

notebook_stack.prepare()  # before any test module imports nbformat or papermill

ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = (ROOT.parent / "shared" / "data").resolve()
# Read once: the autouse fixture removes it from each test's environment.
_MIRROR_AT_START = os.environ.get("JUDGELAB_MIRROR")

_PATH_VARS = (
    "JUDGELAB_DATA",
    "JUDGELAB_ITEMS",
    "JUDGELAB_JUDGMENTS",
    "JUDGELAB_BENCHMARKS",
    "JUDGELAB_CACHE",
    "JUDGELAB_FIGURES",
    "JUDGELAB_REPORTS",
    "JUDGELAB_SAMPLES",
    "JUDGELAB_PROJECT",
    "JUDGELAB_MIRROR",
    "JUDGELAB_OFFLINE",
    "JUDGELAB_SOURCES",
)


# `-n auto` (pyproject addopts) starts one xdist worker per usable CPU, at most this many: many
# tests start their own kernels, servers or worker processes, so more workers mostly add load.
MAX_XDIST_WORKERS = 4


def _usable_cpus() -> int:
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


# The workers (and the kernels and subprocesses their tests start) share the cores: each gets
# its share of BLAS threads, set here in the controller before any worker starts (core.threads).
threads.cap(threads.per_job(min(_usable_cpus(), MAX_XDIST_WORKERS), _usable_cpus()))


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """Return the worker count for `-n auto`: the usable CPUs, capped at MAX_XDIST_WORKERS.

    `PYTEST_XDIST_AUTO_NUM_WORKERS` still overrides it (None defers to xdist, which reads it).
    """
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None
    return max(1, min(_usable_cpus(), MAX_XDIST_WORKERS))


@pytest.fixture(autouse=True)
def judgelab_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """Point every judgelab output directory at a fresh temporary folder.

    The mirror, offline and extra-registry variables are removed too: a test that wants real
    data asks for the `mirror` fixture.
    """
    home = tmp_path_factory.mktemp("judgelab_home")
    monkeypatch.setenv("JUDGELAB_HOME", str(home))
    for var in _PATH_VARS:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    return home


@pytest.fixture(autouse=True)
def close_figs():
    """Close matplotlib figures after each test."""
    yield
    import matplotlib.pyplot as plt

    plt.close("all")


@pytest.fixture()
def rng() -> np.random.Generator:
    """A seeded random generator."""
    return np.random.default_rng(sum(map(ord, "judgelab")))


def mirror_dir() -> Path | None:
    """Return the real-data mirror (JUDGELAB_MIRROR, else ../shared/data) if it exists."""
    path = Path(_MIRROR_AT_START) if _MIRROR_AT_START else SHARED_DATA
    return path if path.is_dir() else None


@pytest.fixture()
def mirror(monkeypatch: pytest.MonkeyPatch) -> Path:
    """The real-data mirror; skips the test with a clear reason when it is absent."""
    path = mirror_dir()
    if path is None:
        pytest.skip("real data not available: set JUDGELAB_MIRROR or place ../shared/data")
    monkeypatch.setenv("JUDGELAB_MIRROR", str(path))
    return path


TINY_REGISTRY = """name: tinypairs
kind: corpus
title: "Tiny pairwise corpus"
licence: MIT
homepage: https://example.org
origin: {type: url, base: "http://127.0.0.1:9/"}
mirror_dir: tiny
importer: "judgelab.data.importers.mapping:import_mapped"
options:
  mapping:
    benchmark: tinypairs
    item_id: id
    question: q
    response_1: o1
    response_2: o2
    gold: label
    swapped: swap
    judge: {column: judge}
    verdict: {column: w, map: {"A": "A", "B": "B", "tie": "tie"}}
files:
  - {path: j.csv}
"""
TINY_CSV = (
    "id,q,o1,o2,label,swap,w,judge\n"
    "1,hi,good,bad,1,0,A,GPT-4\n1,hi,good,bad,1,1,A,GPT-4\n"
    "2,yo,x,y,2,0,junk,GPT-4\n2,yo,x,y,2,0,tie,Llama\n"
)


@pytest.fixture()
def tiny_registry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A one-file registry source `tinypairs` staged in a tmp mirror (JUDGELAB_MIRROR set)."""
    reg = tmp_path / "reg"
    reg.mkdir()
    (reg / "tinypairs.yaml").write_text(TINY_REGISTRY)
    mirror = tmp_path / "mirror"
    (mirror / "tiny").mkdir(parents=True)
    (mirror / "tiny/j.csv").write_text(TINY_CSV)
    monkeypatch.setenv("JUDGELAB_SOURCES", str(reg))
    monkeypatch.setenv("JUDGELAB_MIRROR", str(mirror))
    return mirror


# Smaller sizes, same code path, for the project notebooks run on the samples: 15_calibration's
# default smoke run over every family took 93 s of the suite (two families at R = 2 run the same
# cells); 17_study_design's 200 replays per plan took 272 s; the card's 1000 draws per measure
# are 100 here (the browser and leaderboard tests read the same run).
SMOKE_OVERRIDES = {
    "14_judge_report_card": {"n_boot": 100},
    "15_calibration": {"reps": 2, "families": ["pairwise", "grounding"]},
    "17_study_design": {"verify_reps": 20, "check_reps": 2},
}


def _shared_root(tmp_path_factory: pytest.TempPathFactory, worker_id: str) -> Path:
    """A folder every xdist worker of this session sees (the workers' basetemp parent)."""
    base = tmp_path_factory.getbasetemp()
    return (base if worker_id == "master" else base.parent) / "sample_runs"


@pytest.fixture(scope="session")
def sample_run(tmp_path_factory: pytest.TempPathFactory, worker_id: str):
    """Return `get(notebook)`: the project notebook run offline on the samples, once a session.

    The first test to ask executes it (params/<nb>/default.yaml plus SMOKE_OVERRIDES) in its
    own JUDGELAB_HOME under a folder all xdist workers share, holding a lock; every later ask,
    from any worker, reads the recorded result. Tests only read what the run wrote.
    """
    from dataclasses import asdict

    from judgelab.core import atomic, locks
    from judgelab.reporting import pipeline

    root = _shared_root(tmp_path_factory, worker_id)

    def get(notebook: str) -> pipeline.RunResult:
        home = root / notebook
        record = home / "result.json"
        with locks.file_lock(root / f"{notebook}.lock"):
            if record.exists():
                return pipeline.RunResult(**json.loads(record.read_text(encoding="utf-8")))
            with pytest.MonkeyPatch.context() as mp:
                mp.setenv("JUDGELAB_HOME", str(home))
                for var in _PATH_VARS:
                    mp.delenv(var, raising=False)
                mp.setenv("JUDGELAB_OFFLINE", "1")
                mp.setenv("MPLBACKEND", "Agg")
                result = pipeline.run_notebook(
                    notebook,
                    params_file=ROOT / "params" / notebook / "default.yaml",
                    overrides=SMOKE_OVERRIDES.get(notebook),
                )
            atomic.write_text(record, json.dumps(asdict(result), default=str))
            return result

    return get
