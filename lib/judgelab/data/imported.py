"""What has been imported: where each import's manifest lives and which files it lists.

The reading side of `judgelab.data.manifests` (which merges imports into the tables and
re-exports these), kept free of the table stack: `judgelab data list` asks every source
whether it is imported without importing pandas (`make bench`, workload `listing`).
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

from judgelab.core import atomic, paths
from judgelab.core.names import safe_name


def folder() -> Path:
    """Return the folder of the manifests (`paths.items()/.imports`)."""
    return paths.items() / ".imports"


def path_of(name: str) -> Path:
    """Return the manifest file of import `name`."""
    return folder() / f"{safe_name('source', name)}.json"  # issue 19 (3)


def read(name: str) -> dict[str, Any]:
    """Return the manifest of `name` ({} when there is none or it is unreadable)."""
    p = path_of(name)
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def files(name: str) -> list[str]:
    """Return the table files the last import of `name` wrote (empty if never imported)."""
    listed = read(name).get("files")
    return [str(f) for f in listed] if isinstance(listed, list) else []


def kind_of(file: str | Path) -> str:
    """`items` for a table in `paths.items()`, else `judgments`."""
    return "items" if Path(file).parent == paths.items() else "judgments"


def is_imported(name: str) -> bool:
    """Return True when an earlier import of `name` wrote tables that all still exist."""
    listed = files(name)
    return bool(listed) and all(Path(f).exists() for f in listed)


def items_files(name: str) -> list[Path]:
    """The items tables the last import of `name` wrote that are on disk now."""
    listed = (Path(f) for f in files(name))
    return [f for f in listed if f.parent == paths.items() and f.exists()]


# --- the number of clusters, remembered per table state ----------------------------------
#: `make bench`, workload `listing`: `data list` counts an imported source's clusters without
#: reading its tables while they are unchanged, so it imports no pandas (0.4 s of CPU for the
#: whole listing instead of 3.4 s).
COUNTS_FILE = "cluster_counts.json"


def _counts_path() -> Path:
    return paths.cache() / COUNTS_FILE


def _state(tables: list[Path]) -> list[list[Any]]:
    """Each table's path, size and mtime: a table rewritten since has another state."""
    out: list[list[Any]] = []
    for f in tables:
        st = f.stat()
        out.append([str(f), st.st_size, st.st_mtime_ns])
    return out


def _counts() -> dict[str, Any]:
    try:
        data = json.loads(_counts_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def recorded_clusters(name: str, tables: list[Path]) -> int | None:
    """The number of clusters counted over `tables` as they are now, None if never counted."""
    try:
        state = _state(tables)
    except OSError:
        return None
    entry = _counts().get(name)
    if not isinstance(entry, dict) or entry.get("tables") != state:
        return None
    n = entry.get("n")
    return n if isinstance(n, int) and not isinstance(n, bool) else None


def record_clusters(name: str, tables: list[Path], n: int) -> None:
    """Remember that `tables`, as they are now, hold `n` clusters of import `name`.

    Best effort: a cache that cannot be written is only not remembered. Two listings at once
    may each keep only their own entries; a lost entry is counted again.
    """
    with contextlib.suppress(OSError):
        counts = _counts()
        counts[name] = {"tables": _state(tables), "n": int(n)}
        atomic.write_text(_counts_path(), json.dumps(counts, indent=1, sort_keys=True))


__all__ = [
    "files",
    "folder",
    "is_imported",
    "items_files",
    "kind_of",
    "path_of",
    "read",
    "record_clusters",
    "recorded_clusters",
]
