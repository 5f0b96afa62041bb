"""A calibration run's finished jobs on disk, so a killed or budget-stopped run resumes.

`make calibrate` takes about an hour; killing it used to lose every replicate. Each job (the
checks sharing a generator × scenario × hypothesis × replicate range) is written, atomically,
the moment it finishes, to ``<folder>/<key>.parquet``. The key hashes the job and the library's
source code, so a rerun with the same code reuses the rows (replicate r of a cell is the same
draw whatever else ran) and any code change starts afresh.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pandas as pd

import judgelab
from judgelab.core import tables
from judgelab.reporting import freshness


class Journal:
    """Finished jobs of calibration runs, keyed by job and library code."""

    def __init__(self, folder: Path, code: str | None = None) -> None:
        self.folder = folder
        self.code = code or freshness.tree_hash(Path(judgelab.__file__).parent) or ""

    def path(self, job: Any) -> Path:
        """The file holding `job`'s rows."""
        spec = {
            "code": self.code,
            "checks": [c.name for c in job.checks],
            "generator": getattr(job.checks[0].simulate, "__qualname__", ""),
            "scenario": job.scenario.name,
            "hypothesis": job.hypothesis,
            "variants": list(job.variants),
            "rs": [min(job.rs), max(job.rs), len(job.rs)] if job.rs else [],
            "seed": job.seed,
        }
        digest = hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()
        return self.folder / f"{digest[:32]}.parquet"

    def load(self, job: Any) -> list[dict[str, Any]] | None:
        """`job`'s rows from an earlier run with the same code, or None."""
        path = self.path(job)
        if not path.exists():
            return None
        return pd.read_parquet(path).to_dict("records")

    def store(self, job: Any, rows: list[dict[str, Any]]) -> None:
        """Write `job`'s rows (atomically: a killed run leaves no half file)."""
        self.folder.mkdir(parents=True, exist_ok=True)
        with tables.atomic_path(self.path(job)) as tmp:
            pd.DataFrame(rows).to_parquet(tmp, index=False)
