"""A registry source over tiny hand-made files, and a JSON-lines writer, for importer tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from judgelab.data.sources import Source, SourceFile


def tiny_source(name: str, files: list[str], importer: str, **options: Any) -> Source:
    """Return a registry source named `name` whose `files` are read by `importer`."""
    return Source(
        name=name,
        kind="benchmark",
        title=name,
        licence="MIT",
        homepage="https://x.org",
        origin={"type": "url", "base": "http://127.0.0.1:9/"},
        mirror_dir=name,
        importer=importer,
        files=[SourceFile(f) for f in files],
        options=options,
    )


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    """Write `rows` as JSON lines to `path` (creating its folder) and return it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path
