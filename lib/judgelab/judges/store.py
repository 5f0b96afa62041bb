"""Where a judge's tables live, and writing them: one judgments file per benchmark and judge.

`judgments_path(benchmark, judge)` is `paths.judgments()/<benchmark>/<judge>.parquet`, its
diagnostics `.../details/<judge>.parquet`. `write` replaces both atomically; `table_lock`
holds an exclusive lock on a judge's tables while the runner rebuilds and writes them, so
two processes judging different splits of one judge never lose each other's rows.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import pandas as pd

from judgelab.core import paths, tables
from judgelab.judges.rows import Built


def judgments_path(benchmark: str, judge_id: str) -> Path:
    """Return `paths.judgments()/<benchmark>/<judge>.parquet`."""
    return paths.judgments() / benchmark / f"{judge_id}.parquet"


def details_path(benchmark: str, judge_id: str) -> Path:
    """Return `paths.judgments()/<benchmark>/details/<judge>.parquet` (diagnostics)."""
    return paths.judgments() / benchmark / "details" / f"{judge_id}.parquet"


def benchmarks(items: pd.DataFrame) -> list[str]:
    """Return the benchmarks of `items`, sorted."""
    return sorted(items["benchmark"].astype(str).unique())


def existing_conditions(items: pd.DataFrame, judge_id: str) -> list[str]:
    """Return the conditions already present in this judge's tables for these benchmarks.

    A table that cannot be read counts as having none (the rebuild replaces it).
    """
    found: list[str] = []
    for bench in benchmarks(items):
        p = judgments_path(bench, judge_id)
        if p.exists():
            with contextlib.suppress(Exception):
                conds = tables.read(p, "judgments", columns=["condition"])["condition"]
                found += [c for c in conds.astype(str).unique() if "candidate=" not in c]
    return list(dict.fromkeys(found))


@contextlib.contextmanager
def table_lock(items: pd.DataFrame, judge_id: str) -> Iterator[None]:
    """Hold an exclusive lock on this judge's table of every benchmark in `items`."""
    with contextlib.ExitStack() as stack:
        for bench in benchmarks(items):
            path = judgments_path(bench, judge_id)
            path.parent.mkdir(parents=True, exist_ok=True)
            fh = stack.enter_context(open(path.with_name(f".{path.name}.lock"), "a"))
            try:
                import fcntl
            except ImportError:  # pragma: no cover - not POSIX: no inter-process lock
                continue
            fcntl.flock(fh, fcntl.LOCK_EX)
            stack.callback(fcntl.flock, fh, fcntl.LOCK_UN)
        yield


def write(built: Built, judge_id: str) -> list[Path]:
    """Write one judgments table (and its details) per benchmark, atomically."""
    written = []
    for bench in benchmarks(built.judgments):
        part = built.judgments[built.judgments["benchmark"] == bench].reset_index(drop=True)
        written.append(tables.write_judgments(part, judgments_path(bench, judge_id)))
        det = built.details[built.details["benchmark"] == bench].reset_index(drop=True)
        with tables.atomic_path(details_path(bench, judge_id)) as tmp:
            det.to_parquet(tmp, index=False)
    return written


__all__ = ["details_path", "existing_conditions", "judgments_path", "table_lock", "write"]
