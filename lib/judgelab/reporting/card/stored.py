"""A judge's card measures kept on disk: per-judge cards 21 -> 18 s CPU each (issue 34, item 6).

Measured on one real-data card (`llmbar:GPT-4.Vanilla`, venv with bytecode; 35 -> 28 s
without bytecode, where the measures' lazy imports are skipped too); `make bench`, workload
`figures`, times the whole `make figures`.

`make figures` cards every judge twice (the comparison card of all judges, then one card per
judge) with the same tables and options; a judge's rows do not depend on which other judges
are carded with it. `collect` therefore keeps each judge's rows under
`paths.cache()/card_measures/<key>.parquet` and reads them back instead of computing them
again. The key is a sha256 over what the rows are computed from: the judge and its source
label, the card's options, the source's items and judgments tables as loaded (their content,
not their files), judgelab's own code (`freshness.tree_hash`) and the environment lock; a
change in any of them computes the rows again. Files are written atomically; two runs that
compute the same rows at once write the same bytes. `JUDGELAB_CARD_CACHE=0` turns it off.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pandas as pd

from judgelab.analyses.registry import CardOptions
from judgelab.core import paths, tables
from judgelab.reporting import freshness, provenance

FOLDER = "card_measures"
OFF_ENV = "JUDGELAB_CARD_CACHE"


def enabled() -> bool:
    """False when `JUDGELAB_CARD_CACHE` is `0` (every card computes its measures)."""
    return os.environ.get(OFF_ENV, "1").strip() != "0"


def table_digest(df: pd.DataFrame) -> str:
    """sha256 of a table's columns, dtypes and row contents (index included)."""
    h = hashlib.sha256()
    h.update(json.dumps([[str(c), str(t)] for c, t in df.dtypes.items()]).encode())
    h.update(pd.util.hash_pandas_object(df, index=True).to_numpy().tobytes())
    return h.hexdigest()


def key(*, source: str, judge: str, items: str, judgments: str, options: CardOptions) -> str:
    """The cache key of one judge's rows (`items`, `judgments`: `table_digest`s)."""
    parts: dict[str, Any] = {
        "source": source,
        "judge": judge,
        "items": items,
        "judgments": judgments,
        "options": asdict(options),
        "library": freshness.tree_hash(freshness.LIBRARY),
        "lock": provenance.lock_hash(paths.project()),
    }
    text = json.dumps(parts, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def path_of(digest: str) -> Path:
    """Where the rows of key `digest` are kept."""
    return paths.cache() / FOLDER / f"{digest}.parquet"


def read(digest: str) -> pd.DataFrame | None:
    """The rows kept under `digest`, or None (none kept, or unreadable: computed again)."""
    p = path_of(digest)
    if not enabled() or not p.is_file():
        return None
    try:
        return pd.read_parquet(p)
    except (OSError, ValueError):
        return None


def write(digest: str, rows: pd.DataFrame) -> None:
    """Keep `rows` under `digest` (atomically; a cache that cannot be written is skipped)."""
    if not enabled():
        return
    try:
        with tables.atomic_path(path_of(digest), suffix=".parquet") as tmp:
            rows.to_parquet(tmp, index=False)
    except OSError:
        return


__all__ = ["enabled", "key", "path_of", "read", "table_digest", "write"]
