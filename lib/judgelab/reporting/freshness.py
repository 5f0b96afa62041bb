"""Whether a run's inputs changed since its last successful run: `reproduce` skips it if not.

Measured in `make bench` (workload `figures`): a second `reproduce --runs default` with nothing
changed against a fresh one. A run's inputs are fingerprinted when it runs and kept in its
record (`reports/<nb>/<run>.json`, key `inputs`):

- `notebook`: the sha256 of `notebooks/<nb>.ipynb` as the run started;
- `parameters`: the effective parameters (the notebook's defaults under its params);
- `library`: one sha256 over judgelab's own files (every file of the package, by name and
  content) and `targets` one over the published numbers (`data/targets`), both read by
  notebooks though no run records them;
- `lock`: the sha256 of the environment lock (`provenance.lock_hash`);
- `data`: per source the run recorded reading (and the one it tried, when it fell back to a
  sample), the registry's revision and file hashes (`provenance.data_sources`) and every local
  file a load of it reads (imported tables and their manifest, the judgments tables of its
  benchmarks judge runs add to, a sample's files), each with size, mtime and sha256.

A check hashes only what is cheap or changed: the notebook and the lock, the library (about
3 MB) once per process while its files' sizes and mtimes stay, and a data file only when its
size or mtime differ from the record's (gigabytes of tables are never re-read to find them
unchanged); the source registry is parsed once per process while its files stay. A failed or
missing last run, a run from before fingerprints, or a missing report always reruns.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import judgelab
from judgelab.core import paths
from judgelab.reporting import provenance

INPUTS = "inputs"  # the record's key
LIBRARY = Path(judgelab.__file__).parent  # judgelab's own files: code, templates, registry
_IGNORED_PARTS = ("__pycache__",)
#: Per process: a folder's hash under the sizes and mtimes of its files; registry entries
#: under the registry's and the data lock's (a reproduce checks dozens of runs).
_TREES: dict[Path, tuple[Any, str]] = {}
_REGISTRY: dict[str, Any] = {}


@dataclass(frozen=True)
class Verdict:
    """Whether a run is unchanged (`fresh`), and why it is or must rerun."""

    fresh: bool
    why: str


def _stat(path: Path) -> tuple[str, int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return str(path), st.st_size, st.st_mtime_ns


def tree_hash(root: Path) -> str | None:
    """Return one sha256 over the files under `root` (names and bytes); None if it is absent.

    Memoised in this process while every file keeps its size and mtime.
    """
    if not root.is_dir():
        return None
    files = sorted(
        p
        for p in root.rglob("*")
        if p.is_file() and not any(part in _IGNORED_PARTS for part in p.parts)
    )
    key = [_stat(p) for p in files]
    if root in _TREES and _TREES[root][0] == key:
        return _TREES[root][1]
    h = hashlib.sha256()
    for p in files:
        h.update(p.relative_to(root).as_posix().encode() + b"\0")
        h.update(hashlib.sha256(p.read_bytes()).digest())
    _TREES[root] = (key, h.hexdigest())
    return _TREES[root][1]


def _registry_entries(names: list[str]) -> dict[str, Any]:
    """Return `provenance.data_sources`' entry of each name (None: not a registry source).

    Parsed once per process while the registry files, the data lock and the mirror stay.
    """
    from judgelab.data import lockfile, sources

    extra = os.environ.get("JUDGELAB_SOURCES", "")
    dirs = [sources.registry_dir(), *(Path(p) for p in extra.split(os.pathsep) if p)]
    files = [f for d in dirs if d.is_dir() for f in sorted(d.glob("*.yaml"))]
    key = [os.environ.get("JUDGELAB_MIRROR"), extra, *map(_stat, [*files, lockfile.lock_path()])]
    if _REGISTRY.get("key") != key:
        _REGISTRY.clear()
        _REGISTRY.update(key=key, entries={})
    entries = _REGISTRY["entries"]
    missing = [n for n in names if n not in entries]
    if missing:
        found = {e["source"]: e for e in provenance.data_sources({"sources": missing})}
        entries.update({n: _jsonable(found[n]) if n in found else None for n in missing})
    return {n: entries[n] for n in names}


def _file_sha(path: Path) -> str | None:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else None


def _jsonable(value: Any) -> Any:
    return json.loads(json.dumps(value, default=str, sort_keys=True))


def static_inputs(notebook: Path, effective: dict[str, Any]) -> dict[str, Any]:
    """Return the fingerprint of what a run reads before it starts (all but the data)."""
    root = paths.project()
    lock = provenance.lock_hash(root)
    return {
        "notebook": _file_sha(notebook),
        "parameters": _jsonable(effective),
        "library": tree_hash(LIBRARY),
        "targets": tree_hash(root / "data" / "targets"),
        "lock": lock["sha256"] if lock else None,
    }


def _source_files(name: str) -> list[Path]:
    """Every local file a load of source `name` reads (existing ones), for change detection."""
    from judgelab.data import catalog, ingest, manifests
    from judgelab.data.catalog.core import benchmark_judgments

    if catalog.is_sample(name):
        folder = catalog.items_path(name).parent
        return sorted(p for p in folder.glob("*") if p.is_file()) if folder.is_dir() else []
    try:
        where = [catalog.items_path(name), catalog.judgments_path(name), manifests.path_of(name)]
        imported = ingest.imported_files(name)
    except (ValueError, OSError):  # a label, not a source name
        return []
    benches = {f.stem for f in imported if f.parent == paths.items()}
    benches |= {f.parent.name for f in imported if f.parent.parent == paths.judgments()}
    files: list[Path] = []
    for p in [*where, *imported, *benchmark_judgments(sorted(benches))]:
        found = sorted(p.glob("*.parquet")) if p.is_dir() else [p]
        files += [f for f in found if f.is_file() and f not in files]
    return files


def _file_state(files: list[Path], known: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Return {shown path: {size, mtime_ns, sha256}}; a recorded sha256 is reused when unmoved."""
    from judgelab.data import lockfile

    out = {}
    for f in files:
        st = f.stat()
        shown = paths.shown(str(f))
        old = known.get(shown) or {}
        same = old.get("size") == st.st_size and old.get("mtime_ns") == st.st_mtime_ns
        sha = old.get("sha256") if same else lockfile.sha256_file(f)
        out[shown] = {"size": st.st_size, "mtime_ns": st.st_mtime_ns, "sha256": sha}
    return out


def source_names(data: list[dict[str, Any]]) -> list[str]:
    """Return the sources a run's provenance `data` names: those read and those tried."""
    names: list[str] = []
    for entry in data:
        for key in ("source", "requested"):
            value = entry.get(key)
            if isinstance(value, str) and value and value not in names:
                names.append(value)
    return names


def data_inputs(names: list[str], known: dict[str, Any] | None = None) -> dict[str, Any]:
    """Return the fingerprint of the data of sources `names` (see the module docstring).

    `known` is an earlier fingerprint: a file whose size and mtime it records unchanged is
    not hashed again.
    """
    known = known or {}
    registry = _registry_entries(names)
    out = {}
    for name in names:
        files = _file_state(_source_files(name), (known.get(name) or {}).get("files") or {})
        out[name] = {"registry": registry[name], "files": files}
    return out


def _params_change(old: dict[str, Any], new: dict[str, Any]) -> str:
    keys = sorted(k for k in set(old) | set(new) if old.get(k) != new.get(k))
    shown = [f"{k} {json.dumps(old.get(k))} → {json.dumps(new.get(k))}" for k in keys[:3]]
    more = f" and {len(keys) - 3} more" if len(keys) > 3 else ""
    return "parameters changed: " + ", ".join(shown) + more


def _data_change(old: dict[str, Any], new: dict[str, Any]) -> str | None:
    for name in old:
        before, now = old.get(name) or {}, new.get(name) or {}
        if before.get("registry") != now.get("registry"):
            return f"data changed: source {name}'s registry entry (revision, files or mirror)"
        then = {p: f.get("sha256") for p, f in (before.get("files") or {}).items()}
        current = {p: f.get("sha256") for p, f in (now.get("files") or {}).items()}
        for path in sorted(set(then) | set(current)):
            if path not in current:
                return f"data changed: {path} is gone"
            if path not in then:
                return f"data changed: {path} is new"
            if then[path] != current[path]:
                return f"data changed: {path}"
    return None


_STATIC = (
    ("notebook", "the notebook changed"),
    ("library", "the library code changed"),
    ("targets", "the published targets (data/targets) changed"),
    ("lock", "the environment lock (uv.lock) changed"),
)


def _last_run(record: dict[str, Any] | None, notebook: str, run: str) -> str | None:
    """Return why the last run of (notebook, run) cannot be reused as it is, None if it can."""
    if record is None:
        return "no earlier run"
    if record.get("status") != "ok":
        return "the last run failed"
    if not isinstance(record.get(INPUTS), dict):
        return "the last run recorded no input fingerprint"
    folder = paths.reports() / notebook
    wanted = ("ipynb", "html") if record.get("html") else ("ipynb",)
    missing = [f"{run}.{ext}" for ext in wanted if not (folder / f"{run}.{ext}").is_file()]
    if missing:
        return f"its report {missing[0]} is missing"
    return None


def data_after_run(notebook: str, run: str, data: list[dict[str, Any]]) -> dict[str, Any] | None:
    """Return the data fingerprint of a run that just read `data` (its provenance's list).

    Files the run's previous record fingerprinted with the same size and mtime keep their hash.
    None when it cannot be taken (the run is then never skipped): it must not fail the run.
    """
    known = ((read_record(notebook, run) or {}).get(INPUTS) or {}).get("data")
    try:
        return data_inputs(source_names(data), known if isinstance(known, dict) else None)
    except Exception:  # noqa: BLE001 - a registry or manifest that cannot be read
        return None


def read_record(notebook: str, run: str) -> dict[str, Any] | None:
    """Return the run record `reports/<nb>/<run>.json`, None when absent or unreadable."""
    try:
        record = json.loads((paths.reports() / notebook / f"{run}.json").read_text("utf-8"))
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) else None


def check(notebook: Path, run: str, effective: dict[str, Any]) -> Verdict:
    """Return whether run `run` of `notebook` with `effective` parameters can be skipped."""
    record = read_record(notebook.stem, run)
    why = _last_run(record, notebook.stem, run)
    if why is not None or record is None:
        return Verdict(False, why or "no earlier run")
    old = record[INPUTS]
    now = static_inputs(notebook, effective)
    if old.get("parameters") != now["parameters"]:
        return Verdict(False, _params_change(old.get("parameters") or {}, now["parameters"]))
    for key, what in _STATIC:
        if old.get(key) != now[key]:
            return Verdict(False, what)
    recorded = old.get("data")
    if not isinstance(recorded, dict):
        return Verdict(False, "the last run's data was not fingerprinted")
    try:
        changed = _data_change(recorded, data_inputs(list(recorded), recorded))
    except Exception as exc:  # noqa: BLE001 - unreadable now: run it, and say why
        return Verdict(False, f"its data could not be checked ({type(exc).__name__}: {exc})")
    if changed:
        return Verdict(False, changed)
    return Verdict(True, f"unchanged since {record.get('started_at')}")


__all__ = ["INPUTS", "Verdict", "check", "data_inputs", "source_names", "static_inputs"]
