"""The source registry: one YAML per public source in `resources/sources/<name>.yaml`.

A registry entry says where a source comes from (a pinned GitHub commit or Hugging Face
revision), which files it has (with sha256 and size when known), where a pre-staged copy
lives under `JUDGELAB_MIRROR`, and which importer turns it into tables::

    name: llmbar
    kind: corpus                  # corpus (ships judge outputs) | benchmark (items only)
    title: "LLMBar (Zeng et al. 2024): ..."
    licence: MIT
    homepage: https://github.com/princeton-nlp/LLMBar
    origin: {type: github, repo: princeton-nlp/LLMBar, revision: 9006..., prefix: "Dataset/"}
    mirror_dir: llmbar
    importer: "judgelab.data.importers.llmbar:import_llmbar"
    description: "optional free text"
    cluster: question             # the resampling unit (see below); default item
    options: {}                   # optional importer-specific settings
    files:
      - {path: LLMBar/Natural/dataset.json, sha256: "<hex>", size: 12345}
      - {path: x.json, origin_path: "results/m/a/annotations.json", sha256: null, size: null}

`path` is relative to `mirror_dir` (and to the download cache folder); the download URL is
the origin base + `prefix` + (`origin_path` or `path`). A null sha256 means nobody here has
seen the file: the first verified download records it in a lock file (see `judgelab.data.fetch`).

Hugging Face sources go through `judgelab.data.hub`: a branch `revision` (e.g. `main`) is
pinned to its commit on first download, and a `path` may be a glob (`data/train-*.parquet`,
`*` never crosses a `/`) that must match exactly one file of the repository at that commit;
the file keeps its resolved name locally (`fetch.local_path` finds it). Globs need a
`huggingface` origin (the only one that can list files) and no `origin_path`.

`cluster` declares which items are dependent (DESIGN §8): a rule of
`judgelab.core.clusters` (`item`, `question`, `context`, `meta.<key>`), or a list of rules
tried in order per item (the first that yields a value wins, e.g. `[meta.question_idx,
question]` when only some splits carry the key). The importer writes the items table's
`cluster` column from it (`ingest.import_source`); every bootstrap resamples these units.

Besides `github` and `huggingface`, an origin may be `{type: url, base: "https://host/dir/"}`
(any plain HTTP(S) folder: a lab file server, or the loopback server the tests start).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import quote

import yaml

from judgelab.core import yamlsafe
from judgelab.core.cluster_rules import parse_cluster
from judgelab.core.names import relative_path_problem
from judgelab.errors import ChoiceError, check_choice
from judgelab.errors import RegistryError as RegistryError
from judgelab.errors import UnknownSourceError as UnknownSourceError

KINDS = ("corpus", "benchmark")
ORIGIN_TYPES = ("github", "huggingface", "url")
_REQUIRED = ("name", "kind", "title", "licence", "homepage", "origin", "mirror_dir", "importer")
_OPTIONAL = ("files", "description", "options", "cluster")
_FILE_KEYS = ("path", "origin_path", "sha256", "size")
_ORIGIN_KEYS = ("type", "repo", "revision", "prefix", "base")
_NAME = re.compile(r"^[a-z0-9][a-z0-9_\-]*$")
_IMPORTER = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$")
_SHA256 = re.compile(r"^[0-9a-f]{64}$")
GLOB_CHARS = "*?["


@dataclass(frozen=True)
class SourceFile:
    """One file of a source, relative to its mirror folder / download cache folder."""

    path: str
    origin_path: str | None = None
    sha256: str | None = None
    size: int | None = None

    @property
    def is_pattern(self) -> bool:
        """True when `path` is a glob resolved against the origin's file list (Hugging Face)."""
        return any(c in self.path for c in GLOB_CHARS)


@dataclass(frozen=True)
class Source:
    """One registry entry (see the module docstring for the YAML format)."""

    name: str
    kind: str
    title: str
    licence: str
    homepage: str
    origin: dict[str, Any]
    mirror_dir: str
    importer: str
    files: list[SourceFile] = field(default_factory=list)
    description: str = ""
    options: dict[str, Any] = field(default_factory=dict)
    registry_file: str = field(default="", compare=False)
    cluster: tuple[str, ...] = ("item",)

    @property
    def size(self) -> int | None:
        """Total size in bytes, or None when any file's size is unknown."""
        sizes = [f.size for f in self.files]
        return None if any(s is None for s in sizes) else sum(sizes)  # type: ignore[misc]


def registry_dir() -> Path:
    """Return the folder of the packaged registry YAMLs."""
    return Path(str(resources.files("judgelab") / "resources" / "sources"))


def _fail(file: Path, key: str, problem: str) -> RegistryError:
    return RegistryError(f"{file}: key '{key}': {problem}")


def _check_choice(file: Path, key: str, value: Any, options: tuple[str, ...]) -> None:
    """Raise `RegistryError` naming the file and `key` when `value` is not one of `options`."""
    try:
        check_choice(key, value, options)
    except ChoiceError as exc:
        raise _fail(file, key, str(exc)) from None


def _check_rel_path(file: Path, key: str, value: Any) -> str:
    problem = relative_path_problem(value)
    if problem is not None:
        raise _fail(file, key, problem)
    return value


def _parse_file(yaml_file: Path, index: int, entry: Any) -> SourceFile:
    where = f"files[{index}]"
    if isinstance(entry, str):
        entry = {"path": entry}
    if not isinstance(entry, dict):
        raise _fail(yaml_file, where, f"must be a mapping, got {type(entry).__name__}")
    unknown = sorted(set(entry) - set(_FILE_KEYS))
    if unknown:
        raise _fail(yaml_file, f"{where}.{unknown[0]}", f"unknown key (allowed: {_FILE_KEYS})")
    path = _check_rel_path(yaml_file, f"{where}.path", entry.get("path"))
    origin_path = entry.get("origin_path")
    if origin_path is not None:
        origin_path = _check_rel_path(yaml_file, f"{where}.origin_path", origin_path)
    sha = entry.get("sha256")
    if sha is not None and (not isinstance(sha, str) or not _SHA256.match(sha)):
        raise _fail(
            yaml_file, f"{where}.sha256", f"must be 64 lowercase hex digits or null: {sha!r}"
        )
    size = entry.get("size")
    if size is not None and (isinstance(size, bool) or not isinstance(size, int) or size < 0):
        raise _fail(
            yaml_file, f"{where}.size", f"must be a non-negative integer or null: {size!r}"
        )
    return SourceFile(path=path, origin_path=origin_path, sha256=sha, size=size)


def _parse_files(yaml_file: Path, files_raw: Any, origin_type: str) -> list[SourceFile]:
    if not isinstance(files_raw, list):
        raise _fail(yaml_file, "files", "must be a list")
    files = [_parse_file(yaml_file, i, e) for i, e in enumerate(files_raw)]
    seen: set[str] = set()
    for i, f in enumerate(files):
        if f.is_pattern and (origin_type != "huggingface" or f.origin_path is not None):
            raise _fail(
                yaml_file,
                f"files[{i}].path",
                f"glob {f.path!r} needs a huggingface origin (which lists files) and no "
                "origin_path",
            )
        if f.path in seen:
            raise _fail(yaml_file, f"files[{i}].path", f"duplicate path {f.path!r}")
        seen.add(f.path)
    return files


def parse_source(yaml_file: Path) -> Source:
    """Read and validate one registry YAML; raise `RegistryError` naming the file and key."""
    yaml_file = Path(yaml_file)
    try:
        raw = yamlsafe.load(yaml_file.read_text(encoding="utf-8"), source=str(yaml_file))
    except yamlsafe.YamlError as exc:
        raise RegistryError(str(exc)) from None
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise RegistryError(f"{yaml_file}: not valid YAML: {exc}") from exc
    if not isinstance(raw, dict):
        raise RegistryError(f"{yaml_file}: must be a mapping of keys, got {type(raw).__name__}")
    unknown = sorted(set(raw) - set(_REQUIRED) - set(_OPTIONAL))
    if unknown:
        raise _fail(yaml_file, unknown[0], f"unknown key (allowed: {_REQUIRED + _OPTIONAL})")
    for key in _REQUIRED:
        if raw.get(key) in (None, ""):
            raise _fail(yaml_file, key, "missing (required)")
    for key in ("name", "kind", "title", "licence", "homepage", "mirror_dir", "importer"):
        if not isinstance(raw[key], str):
            raise _fail(yaml_file, key, f"must be a string, got {type(raw[key]).__name__}")
    if not _NAME.match(raw["name"]):
        raise _fail(yaml_file, "name", f"must be lowercase [a-z0-9_-], got {raw['name']!r}")
    if raw["name"] != yaml_file.stem:
        raise _fail(yaml_file, "name", f"{raw['name']!r} must equal the file stem")
    _check_choice(yaml_file, "kind", raw["kind"], KINDS)
    if not _IMPORTER.match(raw["importer"]):
        raise _fail(
            yaml_file, "importer", f"must be 'package.module:function': {raw['importer']!r}"
        )
    _check_rel_path(yaml_file, "mirror_dir", raw["mirror_dir"])
    origin = raw["origin"]
    if not isinstance(origin, dict):
        raise _fail(yaml_file, "origin", "must be a mapping")
    unknown = sorted(set(origin) - set(_ORIGIN_KEYS))
    if unknown:
        raise _fail(yaml_file, f"origin.{unknown[0]}", f"unknown key (allowed: {_ORIGIN_KEYS})")
    _check_choice(yaml_file, "origin.type", origin.get("type"), ORIGIN_TYPES)
    needed = ("base",) if origin["type"] == "url" else ("repo", "revision")
    for key in needed:
        if not isinstance(origin.get(key), str) or not origin[key]:
            raise _fail(yaml_file, f"origin.{key}", "missing (required)")
    prefix = origin.get("prefix") or ""
    if not isinstance(prefix, str):
        raise _fail(yaml_file, "origin.prefix", "must be a string")
    origin = {**origin, "prefix": prefix}
    files = _parse_files(yaml_file, raw.get("files") or [], origin["type"])
    options = raw.get("options") or {}
    if not isinstance(options, dict):
        raise _fail(yaml_file, "options", "must be a mapping")
    description = raw.get("description") or ""
    if not isinstance(description, str):
        raise _fail(yaml_file, "description", "must be a string")
    try:
        cluster = parse_cluster(raw.get("cluster"))
    except ValueError as exc:
        raise _fail(yaml_file, "cluster", str(exc)) from None
    return Source(
        name=raw["name"],
        kind=raw["kind"],
        title=raw["title"],
        licence=raw["licence"],
        homepage=raw["homepage"],
        origin=origin,
        mirror_dir=raw["mirror_dir"],
        importer=raw["importer"],
        files=files,
        description=description.strip(),
        options=options,
        registry_file=str(yaml_file),
        cluster=cluster,
    )


#: Per process: each registry file's entry under the file's size and mtime. A listing, a
#: notebook's loads and a `reproduce` read the registry many times; each file is parsed once
#: (`make bench`, workload `listing`). Entries are frozen dataclasses shared by the callers.
_PARSED: dict[Path, tuple[tuple[int, int], Source]] = {}


def _parsed(yaml_file: Path) -> Source:
    """`parse_source(yaml_file)`, parsed again only when the file's size or mtime changed."""
    st = yaml_file.stat()
    stamp = (st.st_size, st.st_mtime_ns)
    hit = _PARSED.get(yaml_file)
    if hit is not None and hit[0] == stamp:
        return hit[1]
    src = parse_source(yaml_file)
    _PARSED[yaml_file] = (stamp, src)
    return src


def load_registry(*, extra_dirs: Iterable[Path] = ()) -> dict[str, Source]:
    """Read every registry YAML (packaged ones, then `extra_dirs`), keyed by source name.

    Args:
        extra_dirs: Further folders of `<name>.yaml` files (tests, user-defined sources);
            `JUDGELAB_SOURCES` (a path list separated by os.pathsep) adds more.

    Raises:
        RegistryError: A YAML is malformed, or two files define the same name.
    """
    import os

    dirs = [registry_dir(), *map(Path, extra_dirs)]
    env = os.environ.get("JUDGELAB_SOURCES")
    if env:
        dirs += [Path(p).expanduser() for p in env.split(os.pathsep) if p]
    out: dict[str, Source] = {}
    for d in dirs:
        if not d.is_dir():
            continue
        for yaml_file in sorted(d.glob("*.yaml")):
            src = _parsed(yaml_file)
            if src.name in out:
                raise _fail(
                    yaml_file,
                    "name",
                    f"{src.name!r} already defined in {out[src.name].registry_file}",
                )
            out[src.name] = src
    return dict(sorted(out.items()))


def get_source(name: str, *, extra_dirs: Iterable[Path] = ()) -> Source:
    """Return the registry entry `name`; raise `UnknownSourceError` listing known names."""
    registry = load_registry(extra_dirs=extra_dirs)
    if name not in registry:
        known = ", ".join(registry) or "(none)"
        raise UnknownSourceError(f"unknown source {name!r}; known sources: {known}")
    return registry[name]


def file_url(source: Source, file: SourceFile) -> str:
    """Return the public download URL of one file (pinned GitHub raw or HF resolve URL)."""
    o = source.origin
    rel = quote(o.get("prefix", "") + (file.origin_path or file.path), safe="/")
    if o["type"] == "url":
        return f"{o['base'].rstrip('/')}/{rel}"
    if o["type"] == "github":
        return f"https://raw.githubusercontent.com/{o['repo']}/{o['revision']}/{rel}"
    return f"https://huggingface.co/datasets/{o['repo']}/resolve/{o['revision']}/{rel}"
