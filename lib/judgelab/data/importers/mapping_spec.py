r"""The YAML mapping of the generic importer: which column of a data file holds what.

A field is either a column name, a constant, or a dict `{column: NAME, map: {raw: value}}` /
`{value: CONSTANT}`. A bare string means a *column* for the per-row fields and a *constant*
for `benchmark`, `task`, `split`, `judge`, `model`, `prompt` and `condition` (write
`{column: ...}` to read those from a column)::

    benchmark: my_eval              # constant, required
    task: pairwise                  # pairwise | pointwise | qa (default pairwise)
    split: {column: subset}         # default "default"
    item_id: id                     # default: c + a hash of the item text (one item per text)
    judge: {column: judge_name}     # default "imported"; a safe name (ASCII letters, digits,
                                    # _-.:+=), never rewritten: `map:` other values to one
    model: gpt-4o                   # optional; prompt, condition likewise
    question: instruction
    context: passage                # optional text fields: question, context, reference
    # pairwise responses, either two slots in the file's own order ...
    response_1: output_a
    response_2: output_b
    gold: {column: label, map: {"1": "1", "2": "2", "tie": "tie"}}   # -> "1" | "2" | "tie"
    swapped: {column: swap}         # truthy: response_2 was shown first (as A); default false
    # ... or already canonical: response_pos / response_neg (+ order: 0/1 column or constant)
    verdict: {column: winner, map: {"[[A]]": "A", "[[B]]": "B", "[[C]]": "tie"}}
    output: judgment_text           # raw judge output (default: the raw verdict value)
    sample: run                     # default 0
    meta: [category, source]        # extra columns kept in items.meta
    cluster: context                # resampling unit: a rule (item | question | context |
                                    # meta.<key>, or a list tried in order) or
                                    # {column: doc_id} (items with one value are one unit);
                                    # default item (every item independent)
    # pointwise / qa: response, gold (the label), verdict (the judge's label)

Shapes (docs/importing.md has a worked example of each):

- *Paths*: any column may be a path into nested records, `judgments[1].decision`,
  `scores.response_a` (`judgelab.data.importers.fieldpath`).
- *Both orders in one row*: `explode: judgments` makes one row per list element; the
  element is read at `judgments` (`judgments.decision`) and its 0-based position is the
  pseudo-column `_index` (e.g. `swapped: {column: _index, map: {0: false, 1: true}}`).
- *Constants from the file name*: `judge: {filename: 'outputs_(.+)\.jsonl'}` takes the
  regex's first group (or the group named `value`) from each file's name; several files (a
  glob) are one import. The pseudo-column `_file` holds the file name.
- *One record over several files*: `join: {files: {ab: out_ab.jsonl, ba: out_ba.jsonl},
  on: line}` (or `on: KEY`, or `on: {left: KEY, right: KEY}`) pairs each record with its
  output in every file (paths relative to the data file, inside its folder: no `..`, no
  absolute path, no link leading out); the output is read at `joined`
  (`joined.verdict`) and the file's name at `_join`.
- *Per-judgment fields*: `judgment_meta: [run, score]` (or `{name: path}`) is kept on each
  judgment (`judgments.judgment_meta`); item `meta` must agree between an item's rows.
- *Optional paths*: `{column: eval.reason, optional: true}` reads null where the path is
  absent (from some or every record); without it a path absent everywhere is an error.
- *Constants from the path*: `judge: {path: 'evaluators/([^/]+)/[^/]+/result\.json$'}`
  searches the file's path (`/` separators), not only its name.
- *A join that adds columns*: `join: {files: {gpt35: a.jsonl, vicuna: b.jsonl}, on: KEY,
  adds: columns}` puts every file's row beside the record at `joined.<name>`
  (`joined.gpt35.text`); every record must have a row in every file.
- *One value a line*: a `.txt` file's lines are the column `txt_column: NAME`.
- *Both orders under named keys*: `explode: {path: "results[-1]", keys: ["swap = False",
  "swap = True"]}` makes one record per key; the key's name is the pseudo-column `_key`.
- *A tool's own log*: `reader: inspect` (or `promptfoo`, `promptfoo-select-best`,
  `lm-eval`) has the tool's converter (`judgelab.data.bridges`) turn each file into flat
  records first; `--from TOOL` imports with the mapping shipped for it.
- Inside `{...}` quote a path with brackets (`{column: "judgments[1].decision"}`): unquoted,
  YAML reads `[` as a list.

`parse_mapping(raw)` validates the mapping's content and `load_mapping(path)` reads it from a
YAML file; errors (`SourceFormatError`) name the file and the mapping key.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from judgelab.core import schema, tables, yamlsafe
from judgelab.core.names import relative_path_problem, safe_name
from judgelab.data import clustering
from judgelab.data.importers import fieldpath
from judgelab.data.importers.base import SourceFormatError
from judgelab.errors import ChoiceError, check_choice

CONSTANT_FIELDS = ("benchmark", "task", "split", "judge", "model", "prompt", "condition")
COLUMN_FIELDS = (
    "item_id",
    "question",
    "context",
    "reference",
    "response",
    "response_1",
    "response_2",
    "response_pos",
    "response_neg",
    "model_1",
    "model_2",
    "gold",
    "verdict",
    "output",
    "swapped",
    "order",
    "sample",
)
SHAPE_FIELDS = ("explode", "join", "judgment_meta", "txt_column", "reader")
ALL_FIELDS = (*CONSTANT_FIELDS, *COLUMN_FIELDS, "meta", "cluster", *SHAPE_FIELDS)
#: Pseudo-columns every record has (file name) or gets (list position, key name, joined file).
PSEUDO_COLUMNS = ("_file", "_index", "_key", "_join")
#: What a join adds: a record per output row (orders), or the output rows as columns.
JOIN_ADDS = ("rows", "columns")
PAIRWISE_VERDICTS = ("A", "B", "1", "2", "pos", "neg", "tie")


@dataclass(frozen=True)
class Field:
    """One mapped field: a column path (+ value map), a constant, or a file name/path capture.

    `optional`: a column path absent from some or every record reads as null (else a path
    that resolves in no record is an error). `path`: a capture from the file's path (with
    `/` separators, as given or as the glob matched it), not only its name.
    """

    column: str | None = None
    value: Any = None
    map: dict[str, Any] | None = None
    filename: re.Pattern[str] | None = None
    path: re.Pattern[str] | None = None
    optional: bool = False

    @property
    def capture(self) -> re.Pattern[str] | None:
        """The file name or file path pattern this field captures from (None: neither)."""
        return self.filename if self.filename is not None else self.path


@dataclass(frozen=True)
class Join:
    """Output files joined to each record: `{name: path}`, the key (None: by line), and more.

    `adds`: `rows` (one record per output row, at `joined`) or `columns` (every file's row
    beside the record, at `joined.<name>`).
    """

    files: dict[str, str]
    left: str | None = None
    right: str | None = None
    adds: str = "rows"


@dataclass(frozen=True)
class Explode:
    """One record per element: of the list at `path`, or (`keys`) of the named keys there."""

    path: str
    keys: tuple[str, ...] | None = None


def _fail_mapping(where: str, key: str, problem: str) -> SourceFormatError:
    return SourceFormatError(where, f"mapping key '{key}': {problem}")


def normalise(value: Any) -> str:
    """Return a raw cell as the text a value map is keyed by.

    >>> normalise(True), normalise(2.0), normalise(" A ")
    ('true', '2', 'A')
    """
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value).strip()


def _path(where: str, key: str, path: Any) -> str:
    try:
        fieldpath.parse(path)
    except ValueError as exc:
        raise _fail_mapping(where, key, str(exc)) from None
    return path


def _paths(where: str, key: str, spec: Any) -> dict[str, str]:
    """Return `{name: path}` of `meta` / `judgment_meta` (a path list names itself)."""
    if isinstance(spec, str):
        spec = [spec]
    if isinstance(spec, list) and all(isinstance(c, str) for c in spec):
        spec = {c: c for c in spec}
    if not isinstance(spec, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in spec.items()
    ):
        raise _fail_mapping(where, key, "must be a list of columns or a mapping name: column")
    return {name: _path(where, key, p) for name, p in spec.items()}


def _filename_pattern(where: str, key: str, pattern: Any) -> re.Pattern[str]:
    try:
        rx = re.compile(str(pattern))
    except re.error as exc:
        raise _fail_mapping(where, key, f"filename pattern {pattern!r}: {exc}") from None
    if rx.groups < 1:
        raise _fail_mapping(where, key, f"filename pattern {pattern!r} needs a (capture group)")
    return rx


def _explode(spec: Any, where: str) -> Explode:
    """Return the `explode` option: a list path, or `{path: P, keys: [K, ...]}`."""
    if isinstance(spec, str):
        return Explode(_path(where, "explode", spec))
    keys = spec.get("keys") if isinstance(spec, dict) else None
    if (
        not isinstance(spec, dict)
        or set(spec) != {"path", "keys"}
        or not isinstance(spec["path"], str)
        or not isinstance(keys, list)
        or not keys
        or not all(isinstance(k, str) and k for k in keys)
        or len(set(keys)) != len(keys)
    ):
        raise _fail_mapping(
            where,
            "explode",
            "must be the path of a list column, or {path: P, keys: [KEY, ...]} "
            "(distinct key names, quoted when they hold spaces or '=')",
        )
    return Explode(_path(where, "explode", spec["path"]), tuple(keys))


def _field(key: str, spec: Any, where: str) -> Any:
    """Return one mapped field: meta paths, a column, a constant or a shape option."""
    if key in ("meta", "judgment_meta"):
        return _paths(where, key, spec)
    if key == "cluster":
        return _cluster_field(spec, where)
    if key == "explode":
        return _explode(spec, where)
    if key == "join":
        return _join(spec, where)
    if key == "txt_column":
        if not isinstance(spec, str) or not spec.strip():
            raise _fail_mapping(where, key, "must be the column name of a .txt file's lines")
        return spec
    if key == "reader":
        from judgelab.data.bridges import READERS  # the bridges read through this module

        if spec not in READERS:
            raise _fail_mapping(
                where, key, f"unknown reader {spec!r} (one of: {', '.join(READERS)})"
            )
        return spec
    if isinstance(spec, dict):
        return _dict_field(key, spec, where)
    if key in CONSTANT_FIELDS or not isinstance(spec, str):
        return Field(value=spec)
    return Field(column=_path(where, key, spec))


def _dict_field(key: str, spec: dict[Any, Any], where: str) -> Field:
    """Return a field given as a dict: one of column/value/filename/path, + map, + optional."""
    extra = sorted(
        map(str, set(spec) - {"column", "value", "map", "filename", "path", "optional"})
    )
    given = [k for k in ("column", "value", "filename", "path") if k in spec]
    if extra or len(given) != 1:
        raise _fail_mapping(
            where, key, "a dict needs exactly one of column/value/filename/path (+ map, optional)"
        )
    vmap = spec.get("map")
    if vmap is not None and not isinstance(vmap, dict):
        raise _fail_mapping(where, key, "map must be a mapping of raw value: value")
    vmap = None if vmap is None else {normalise(k): v for k, v in vmap.items()}
    optional = spec.get("optional", False)
    if not isinstance(optional, bool):
        raise _fail_mapping(where, key, f"optional must be true or false, got {optional!r}")
    column = spec.get("column")
    if column is not None:
        _path(where, key, column)
    elif optional:
        raise _fail_mapping(where, key, "optional applies to a column only")
    return Field(
        column=column,
        value=spec.get("value"),
        map=vmap,
        filename=_filename_pattern(where, key, spec["filename"]) if "filename" in spec else None,
        path=_filename_pattern(where, key, spec["path"]) if "path" in spec else None,
        optional=optional,
    )


def _join(spec: Any, where: str) -> Join:
    """Return the `join` option: output files by name, aligned by line or joined on a key."""
    if isinstance(spec, dict) and True in spec:  # YAML 1.1 reads a bare `on:` key as True
        spec = {("on" if k is True else k): v for k, v in spec.items()}
    if not isinstance(spec, dict) or set(spec) - {"files", "on", "adds"} or "files" not in spec:
        raise _fail_mapping(
            where,
            "join",
            "must be {files: {name: path, ...}, on: line | KEY, adds: rows | columns}",
        )
    adds = spec.get("adds", "rows")
    if adds not in JOIN_ADDS:
        raise _fail_mapping(where, "join.adds", f"{adds!r} is not one of {JOIN_ADDS}")
    files = spec["files"]
    if (
        not isinstance(files, dict)
        or not files
        or not all(isinstance(k, str) and isinstance(v, str) for k, v in files.items())
    ):
        raise _fail_mapping(where, "join", "files must map a name to a file path")
    for name, rel in files.items():
        problem = relative_path_problem(rel)
        if problem is not None:  # issue 32 (11): the data file's folder, as every input path
            raise _fail_mapping(
                where, f"join.files.{name}", f"{problem} (outside the data file's folder)"
            )
    on = spec.get("on", "line")
    if on == "line":
        return Join(dict(files), adds=adds)
    if isinstance(on, str):
        return Join(dict(files), _path(where, "join", on), _path(where, "join", on), adds)
    if isinstance(on, dict) and set(on) == {"left", "right"}:
        left, right = (_path(where, "join", on[k]) for k in ("left", "right"))
        return Join(dict(files), left, right, adds)
    raise _fail_mapping(where, "join", "on must be line, a key path or {left: KEY, right: KEY}")


def _cluster_field(spec: Any, where: str) -> Field:
    """Return the `cluster` field: `Field(column=...)` or `Field(value=(rule, ...))`."""
    if isinstance(spec, dict):
        if set(spec) != {"column"} or not isinstance(spec["column"], str):
            raise _fail_mapping(where, "cluster", "a dict must be {column: NAME}")
        return Field(column=spec["column"])
    try:
        return Field(value=clustering.parse_cluster(spec))
    except ValueError as exc:
        raise _fail_mapping(where, "cluster", str(exc)) from None


def _check_pairwise(out: dict[str, Any], where: str) -> None:
    """Check that a pairwise mapping names its responses one way and its verdicts well."""
    pair_slots = {"response_1", "response_2"} & set(out)
    pos_slots = {"response_pos", "response_neg"} & set(out)
    if not (
        pair_slots == {"response_1", "response_2"} or pos_slots == {"response_pos", "response_neg"}
    ):
        raise _fail_mapping(
            where,
            "response_1",
            "pairwise needs response_1+response_2 or response_pos+response_neg",
        )
    if pair_slots and pos_slots:
        raise _fail_mapping(where, "response_pos", "give either slots 1/2 or pos/neg, not both")
    if pos_slots and "gold" in out:
        raise _fail_mapping(where, "gold", "with response_pos/neg the gold is pos by definition")
    if "swapped" in out and "order" in out:
        raise _fail_mapping(where, "order", "give either swapped or order, not both")
    vmap = out.get("verdict", Field()).map
    if vmap:
        bad = [v for v in vmap.values() if v is not None and str(v) not in PAIRWISE_VERDICTS]
        if bad:
            raise _fail_mapping(
                where, "verdict", f"map value {bad[0]!r} is not one of {PAIRWISE_VERDICTS} or null"
            )


def parse_mapping(raw: Any, *, where: str = "mapping") -> dict[str, Any]:
    """Validate a mapping (the YAML's content); return `{field: Field | list}`."""
    if not isinstance(raw, dict):
        raise SourceFormatError(where, "the mapping must be a YAML mapping of field: column")
    unknown = sorted(set(raw) - set(ALL_FIELDS))
    if unknown:
        raise _fail_mapping(where, unknown[0], f"unknown field (allowed: {', '.join(ALL_FIELDS)})")
    if not raw.get("benchmark"):
        raise _fail_mapping(where, "benchmark", "missing (required)")
    out: dict[str, Any] = {key: _field(key, spec, where) for key, spec in raw.items()}
    bench = out["benchmark"]
    if isinstance(bench, Field) and bench.column is None:  # a constant becomes a file name
        safe_name("benchmark", str(bench.value), where=f"{where}, mapping key 'benchmark'")
    judge = out.get("judge")
    if isinstance(judge, Field) and judge.column is None and judge.capture is None:
        if judge.map is None and judge.value is not None:  # so does the judge (issue 32, 16)
            safe_name("judge", str(judge.value), where=f"{where}, mapping key 'judge'")
    task = out.get("task", Field(value="pairwise"))
    if task.column is None:
        try:
            check_choice("task", task.value, schema.TASKS)
        except ChoiceError as exc:
            raise _fail_mapping(where, "task", str(exc)) from None
    if task.value == "pairwise":
        _check_pairwise(out, where)
    return out


def load_mapping(path: str | Path) -> dict[str, Any]:
    """Read and validate a mapping YAML; errors name the file and the key."""
    return parse_mapping(read_raw(path), where=str(path))


def mapping_fields(mapping: str | Path | dict[str, Any]) -> dict[str, Any]:
    """Return the validated fields of a mapping: a YAML path or its parsed content."""
    return load_mapping(mapping) if isinstance(mapping, (str, Path)) else parse_mapping(mapping)


def digest(mapping: str | Path | dict[str, Any]) -> str:
    """Return a short digest of a mapping's content (a YAML path or its parsed content).

    Two mappings that read the same (comments, key order and layout aside) digest alike:
    a file import is named by its files *and* this digest (`judgelab.data.manifests`).
    """
    raw = read_raw(mapping) if isinstance(mapping, (str, Path)) else mapping
    text = json.dumps(_canonical(raw), sort_keys=True, default=str, ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()[:8]


def _canonical(value: Any) -> Any:
    """`value` with every mapping key as text naming its type (YAML keys may be 0, true…)."""
    if isinstance(value, dict):
        return {f"{type(k).__name__}:{k}": _canonical(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_canonical(v) for v in value]
    return value


def read_raw(path: str | Path) -> Any:
    """Return the content of a mapping YAML, unvalidated; errors name the file (and line)."""
    p = Path(path)
    try:
        raw = yamlsafe.load(tables.read_utf8(p), source=str(p))
    except yamlsafe.YamlError as exc:
        raise SourceFormatError(exc.file, exc.problem, line=exc.line) from None
    except FileNotFoundError:
        raise SourceFormatError(str(p), "mapping file not found") from None
    except tables.NotUTF8 as exc:
        raise SourceFormatError(exc.file, exc.problem, line=exc.line) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        raise SourceFormatError(str(p), f"not valid YAML ({exc})", line=line) from None
    return raw


__all__ = [
    "ALL_FIELDS",
    "COLUMN_FIELDS",
    "CONSTANT_FIELDS",
    "PAIRWISE_VERDICTS",
    "PSEUDO_COLUMNS",
    "SHAPE_FIELDS",
    "JOIN_ADDS",
    "Explode",
    "Field",
    "Join",
    "digest",
    "load_mapping",
    "mapping_fields",
    "normalise",
    "parse_mapping",
]
