"""What made a run: code, versions, environment lock, data revisions, parameters and seeds.

`collect(params)` returns the provenance every run record carries (and its HTML shows in a
collapsible footer):

- `code`: the git commit of the project and whether the work tree was dirty (None outside
  a git checkout), and the judgelab version;
- `python` and the versions of the packages that move numbers (`PACKAGES`);
- `lock`: the sha256 of the environment lock file (`uv.lock`) when there is one;
- `data`: for every parameter value that names a registry source, its origin revision (and
  the commit a Hugging Face revision is pinned to), whether it was read from the mirror, and
  the sha256 and size of each file as the registry or the lock file records them (what every
  fetch is verified against, so no file is re-hashed per run);
- `seeds`: the parameters whose name contains `seed`.

Secrets never appear: parameters are checked for them before a run starts, and nothing here
reads the environment beyond `JUDGELAB_MIRROR`'s presence.
"""

from __future__ import annotations

import hashlib
import html
import json
import platform
import subprocess
from importlib import metadata
from pathlib import Path
from typing import Any

from judgelab import __version__
from judgelab.core import paths

PACKAGES = (
    "numpy",
    "pandas",
    "scipy",
    "statsmodels",
    "pyarrow",
    "polars",
    "matplotlib",
    "seaborn",
    "krippendorff",
    "papermill",
    "nbconvert",
    "huggingface_hub",
    "openai",
)
LOCK_FILES = ("uv.lock",)


def git_state(root: Path) -> dict[str, Any]:
    """Return {commit, dirty} of the checkout at `root` (None values outside git)."""

    def git(*args: str) -> str | None:
        try:
            out = subprocess.run(
                ["git", "-C", str(root), *args], capture_output=True, text=True, timeout=10
            )
        except (OSError, subprocess.SubprocessError):
            return None
        return out.stdout.strip() if out.returncode == 0 else None

    commit = git("rev-parse", "HEAD")
    status = git("status", "--porcelain", "--untracked-files=no") if commit else None
    return {"commit": commit, "dirty": None if status is None else bool(status)}


def versions() -> dict[str, str | None]:
    """Return the installed version of each of `PACKAGES` (None when not installed)."""
    out: dict[str, str | None] = {}
    for name in PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def lock_hash(root: Path) -> dict[str, str] | None:
    """Return {file, sha256} of the environment lock file at `root`, or None."""
    for name in LOCK_FILES:
        p = root / name
        if p.is_file():
            return {"file": name, "sha256": hashlib.sha256(p.read_bytes()).hexdigest()}
    return None


def _names(params: dict[str, Any]) -> list[str]:
    found: list[str] = []
    for value in params.values():
        values = value if isinstance(value, list) else [value]
        found += [v for v in values if isinstance(v, str) and v not in found]
    return found


def _origin(origin: dict[str, Any]) -> str:
    return f"{origin.get('type')}:{origin.get('repo') or origin.get('base')}"


def data_sources(params: dict[str, Any]) -> list[dict[str, Any]]:
    """Return the revision and file hashes of every registry source a parameter names."""
    from judgelab.data import fetch, hub, lockfile, sources

    try:
        registry = sources.load_registry()
        records = lockfile.read_lock()
    except Exception:  # noqa: BLE001 - provenance must never fail a run
        return []
    out = []
    for name in _names(params):
        src = registry.get(name)
        if src is None:
            continue
        files = []
        for f in src.files:
            rec = records.get(f"{src.name}/{f.path}", {})
            files.append(
                {
                    "path": rec.get("resolved") or f.path,
                    "sha256": f.sha256 or rec.get("sha256"),
                    "size": f.size or rec.get("size"),
                }
            )
        out.append(
            {
                "source": name,
                "origin": _origin(src.origin),
                "revision": src.origin.get("revision"),
                "pinned_commit": hub.pinned(src),
                "mirror": fetch.mirror_root(src) is not None,
                "files": files,
            }
        )
    return out


def _files(paths_: list[Path]) -> list[dict[str, Any]]:
    """Return {path, sha256, size} of each existing file (path shown relative, never absolute)."""
    from judgelab.data import lockfile

    out = []
    for p in paths_:
        for f in sorted(p.glob("*.parquet")) if p.is_dir() else [p]:
            if f.is_file():
                size = f.stat().st_size
                sha = lockfile.sha256_file(f)
                out.append({"path": paths.shown(str(f)), "sha256": sha, "size": size})
    return out


def data_read(folder: Path) -> list[dict[str, Any]] | None:
    """Return the data a run actually read, from what its notebook recorded in `folder`.

    Each source the notebook showed (`notebook.record_source`: the fallback sample when it
    fell back, every report card's source) with the source it tried, whether it is a sample,
    and its files with their sha256: a registry source's as the registry and lock record
    them, a sample's or a local table's hashed here. None when the run recorded nothing.
    """
    from judgelab.data import catalog

    try:
        recorded = json.loads((folder / "data_read.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    out = []
    for e in recorded.get("sources", []):
        name = str(e.get("source"))
        entry = {k: e.get(k) for k in ("source", "requested", "sample", "reason")}
        registry = [] if catalog.is_sample(name) else data_sources({"source": name})
        if registry:
            entry.update({k: v for k, v in registry[0].items() if k != "source"})
        else:
            try:
                where = [catalog.items_path(name), catalog.judgments_path(name)]
            except ValueError:  # a label, not a source name
                where = []
            entry["files"] = _files(where)
        out.append(entry)
    return out


def collect(params: dict[str, Any], *, root: Path | None = None) -> dict[str, Any]:
    """Return the provenance of a run with `params` (see the module docstring)."""
    root = root or paths.project()
    return {
        "code": {"judgelab": __version__, **git_state(root)},
        "python": platform.python_version(),
        "packages": versions(),
        "lock": lock_hash(root),
        "data": data_sources(params),
        "seeds": {k: v for k, v in params.items() if "seed" in k.lower()},
    }


def footer_html(record: dict[str, Any]) -> str:
    """Return a collapsible HTML footer with a run's provenance, parameters and wall time."""
    prov = record.get("provenance") or {}
    code = prov.get("code") or {}
    commit = (code.get("commit") or "no git")[:12]
    dirty = " (dirty)" if code.get("dirty") else ""
    summary = (
        f"Provenance · judgelab {code.get('judgelab', '?')} · commit {commit}{dirty} · "
        f"{record.get('seconds', 0):.1f} s"
    )
    body = json.dumps(
        {"parameters": record.get("parameters", {}), **prov}, indent=1, sort_keys=True
    )
    return (
        '<details class="jl-provenance" style="margin:2em 1em;font-size:12px">'
        f"<summary>{html.escape(summary)}</summary><pre>{html.escape(body)}</pre></details>"
    )


__all__ = ["PACKAGES", "collect", "data_sources", "footer_html", "git_state", "lock_hash"]
