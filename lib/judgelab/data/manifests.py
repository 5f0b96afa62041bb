"""What each import wrote, and merging one import into the tables on disk under their locks.

A manifest `paths.items()/.imports/<name>.json` lists the table files one import wrote and,
per file, the keys (short digests) of the rows it wrote there, with what the import was: a
registry source, or data files read with a mapping. A re-import replaces exactly its own
rows; rows of other imports and of judge runs are kept; a key they hold with other content
is refused.

Issue 32 (Reliability III):

- Every read-merge-write holds the lock of every table and manifest it touches
  (`core.locks`: the same lock the runner holds on a judgments table), from reading them to
  the atomic write (`commit`, `under_locks`). Two imports at once (or an import and a judge
  run) never lose each other's rows, and never both pass the clash check (items 1, 2).
- A file import is named by its data files, its benchmarks *and* its mapping's content
  (`file_import_name`): importing one file twice with two mappings (one per presentation
  order of its records) makes two imports merged by key, and re-importing with the same
  mapping replaces what it wrote. Rows another import wrote under the same keys with other
  content are refused, naming how many, of which table, written by which import, and how to
  proceed; with `replace`, the earlier imports of the same files that clash are superseded
  whole (their rows go, their manifests too), the others kept (item 4).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

import numpy as np
import pandas as pd

from judgelab.core import locks, paths, schema, tables
from judgelab.data.imported import files as files
from judgelab.data.imported import folder as folder
from judgelab.data.imported import kind_of as kind_of
from judgelab.data.imported import path_of as path_of
from judgelab.data.imported import read as read
from judgelab.data.importers import SourceFormatError

T = TypeVar("T")
Plan = list[tuple[Path, pd.DataFrame, str]]
Writes = list[tuple[Path, pd.DataFrame | str | None, str]]


_SLUG = re.compile(r"[^A-Za-z0-9._\-]+")


def _slug(text: str) -> str:
    """A derived file-name part (a data file's stem in a manifest's name), never a user name."""
    return _SLUG.sub("_", text).strip("_") or "file"


def file_import_name(
    data_files: list[Path], benchmarks: Iterable[str], mapping_digest: str | None = None
) -> str:
    """Name a file import by its benchmarks, its file(s) and (when given) its mapping.

    Two files that share a stem (in different folders, or into different benchmarks), or one
    file under two mappings, get different manifests, so neither import replaces the other's
    rows. The name without the digest (`file_import_base`) is shared by every import of the
    same files into the same benchmarks, whatever the mapping (`family`).
    """
    base = file_import_base(data_files, benchmarks)
    return base if mapping_digest is None else f"{base}.{mapping_digest}"


def file_import_base(data_files: list[Path], benchmarks: Iterable[str]) -> str:
    """The part of `file_import_name` that names the files and benchmarks only."""
    resolved = "\n".join(sorted(str(Path(f).resolve()) for f in data_files))
    where = hashlib.sha256(resolved.encode()).hexdigest()[:12]
    benches = "+".join(sorted(_slug(b) for b in benchmarks))[:60]
    stem = _slug(Path(data_files[0]).stem)[:30]
    if len(data_files) > 1:
        stem += f"+{len(data_files) - 1}"
    return f"file_{benches}.{stem}.{where}"


def family(base: str, name: str) -> list[str]:
    """Other imports of the same files into the same benchmarks (another mapping), sorted."""
    if not folder().is_dir():
        return []
    stems = (m.stem for m in folder().glob("*.json"))
    return sorted(s for s in stems if s != name and (s == base or s.startswith(base + ".")))


# --- manifests ---------------------------------------------------------------------------


def owned(name: str) -> dict[str, tuple[list[str], str]]:
    """Return {file: (keys this import wrote there, kind)} from the manifest `name`.

    A manifest of an older judgelab (files, no keys) owns every row of its files, as it did.
    """
    data = read(name)
    out = {}
    for f in files(name):
        kind = kind_of(f)
        keys = data.get("keys", {}).get(f)
        if keys is None and Path(f).exists():
            try:
                keys = list(ids(keys_of(tables.read(f, kind), kind)))
            except Exception:  # noqa: BLE001 - an unreadable table: owns nothing known
                keys = []
        out[f] = (list(keys or []), kind)
    return out


def describe(name: str) -> str:
    """Say what import `name` was, for messages: its source, or its files and mapping."""
    data = read(name)
    if "data_files" in data:
        mapping = data.get("mapping") or "a mapping given in code"
        return f"the import of {', '.join(data['data_files'])} with mapping {mapping} ({name})"
    if name.startswith("file_"):
        return f"an earlier import of the same file(s) ({name})"
    return f"the import of source {name!r}"


def owners(path: Path, row_ids: set[str]) -> Counter[str | None]:
    """Count, per import, how many of the rows `row_ids` of `path` it wrote (None: none did)."""
    counts: Counter[str | None] = Counter()
    left = set(row_ids)
    for m in sorted(folder().glob("*.json")) if folder().is_dir() else []:
        keys, _ = owned(m.stem).get(str(path), ([], ""))
        hit = left & set(keys)
        if hit:
            counts[m.stem] += len(hit)
            left -= hit
    if left:
        counts[None] += len(left)
    return counts


# --- row keys --------------------------------------------------------------------------


def rows_text(df: pd.DataFrame, kind: str, cols: list[str]) -> pd.Series:
    """Return one string per row of `df` (canonical dtypes) naming the values of `cols`.

    The row's values as a JSON list (`json.dumps`, not ASCII-escaped); built column by
    column when they are text needing no escape and integers (keys, as a rule).
    """
    if df.empty:
        return pd.Series([], dtype=object, index=df.index)
    canon = schema.coerce(df, schema.SPECS[kind])[cols]
    fast = _json_lists(canon)
    if fast is not None:
        return pd.Series(fast, dtype=object, index=df.index)
    canon = canon.astype(object)
    canon = canon.where(canon.notna(), None)
    text = [
        json.dumps(list(r), default=str, ensure_ascii=False)
        for r in canon.itertuples(index=False, name=None)
    ]
    return pd.Series(text, dtype=object, index=df.index)


_ESCAPED = r'["\\\x00-\x1f]'  # what `json.dumps` escapes when not ASCII-only


def _json_lists(canon: pd.DataFrame) -> np.ndarray | None:
    """`json.dumps(list(row), ensure_ascii=False)` of every row, column-wise (else None).

    None when a column is neither text nor integer, or a text needs escaping.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    text = pa.large_string()  # one type for every cell (a table may pass 2 GB of text)

    def lit(value: str) -> pa.Scalar:
        return pa.scalar(value, text)

    cells = []
    for col in canon.columns:
        s = canon[col]
        values = pa.array(s, from_pandas=True)
        if pd.api.types.is_integer_dtype(s.dtype):
            cell = pc.cast(values, text)
        elif pa.types.is_string(values.type) or pa.types.is_large_string(values.type):
            values = pc.cast(values, text)
            if pc.any(pc.match_substring_regex(values, _ESCAPED)).as_py():
                return None
            cell = pc.binary_join_element_wise(lit('"'), values, lit('"'), lit(""))
        else:
            return None
        cells.append(pc.fill_null(cell, lit("null")))
    joined = pc.binary_join_element_wise(*cells, lit(", "))
    rows = pc.binary_join_element_wise(lit("["), joined, lit("]"), lit(""))
    return rows.to_numpy(zero_copy_only=False)


def keys_of(df: pd.DataFrame, kind: str) -> pd.Series:
    """Return one string per row naming its key (the columns of the `kind` spec's key)."""
    return rows_text(df, kind, list(schema.SPECS[kind].key))


def ids(keys: pd.Series) -> pd.Series:
    """Return a short digest of each key: what a manifest records of the rows it owns."""
    return keys.map(lambda k: hashlib.blake2b(k.encode(), digest_size=8).hexdigest())


def _content(df: pd.DataFrame, kind: str) -> pd.Series:
    """Return one string per row naming its content (creation time aside), for clashes."""
    cols = [c.name for c in schema.SPECS[kind].columns if c.name in df.columns]
    return rows_text(df, kind, [c for c in cols if c != "created_at"])


# --- merging ---------------------------------------------------------------------------


class Clash(NamedTuple):
    """Rows of `path` that another writer holds under this import's keys, other content."""

    path: Path
    kind: str
    first_key: str
    row_ids: set[str]


def merge(
    path: Path, new: pd.DataFrame | None, kind: str, mine: set[str]
) -> tuple[pd.DataFrame, set[str], Clash | None]:
    """Merge this import's rows for `path` with the rows other writers put there.

    Rows this import wrote before (`mine`) are replaced; rows of other imports or of a judge
    run are kept, and an identical row stays theirs. Returns the table, the keys now owned,
    and the rows held by others with different content (None when there are none).
    """
    old = tables.read(path, kind) if path.exists() else None
    others = None if old is None else old[~ids(keys_of(old, kind)).isin(mine)]
    if new is None:
        new = (old if old is not None else pd.DataFrame()).iloc[0:0]
    if others is None or others.empty:
        return new.reset_index(drop=True), set(ids(keys_of(new, kind))), None
    other_keys, new_keys = keys_of(others, kind), keys_of(new, kind)
    both = new_keys.isin(set(other_keys))
    clash = None
    if both.any():
        theirs = dict(zip(other_keys, _content(others, kind), strict=True))
        differ = [k for k, c in zip(new_keys[both], _content(new[both], kind), strict=True)
                  if theirs[k] != c]  # fmt: skip
        if differ:
            clash = Clash(path, kind, differ[0], set(ids(pd.Series(differ, dtype=object))))
    merged = pd.concat([others, new[~both]], ignore_index=True)
    return merged, set(ids(new_keys[~both])), clash


def _referenced(bench: str, rewritten: dict[Path, pd.DataFrame]) -> set[str]:
    """Item keys that the judgments of `bench` refer to once this import is written."""
    refs: set[str] = set()
    judged = paths.judgments() / bench
    found = set(judged.glob("*.parquet")) if judged.is_dir() else set()
    for f in found | {p for p in rewritten if p.parent == judged}:
        df = rewritten[f] if f in rewritten else tables.read(f, "judgments")
        refs |= set(ids(rows_text(df, "judgments", list(schema.ITEMS.key))))
    return refs


def _merge_all(
    plan: Plan, mine_of: dict[str, tuple[list[str], str]]
) -> tuple[Writes, dict[str, list[str]], list[Clash]]:
    """Merge every table of one import; return the writes, the keys owned, the clashes."""
    new = {p: (df, k) for p, df, k in plan}
    kinds = {Path(p): k for p, (_, k) in mine_of.items()}
    kinds.update({p: k for p, (_, k) in new.items()})
    done: dict[Path, pd.DataFrame] = {}
    keep: dict[str, list[str]] = {}
    clashes: list[Clash] = []
    # judgments first: an item this import no longer has stays while judgments refer to it
    for path in sorted(kinds, key=lambda p: (kinds[p] != "judgments", str(p))):
        kind = kinds[path]
        mine = set(mine_of.get(str(path), ((), kind))[0])
        df, owned_keys, clash = merge(path, new.get(path, (None, kind))[0], kind, mine)
        clashes += [clash] if clash is not None else []
        if kind == "items":
            refs = _referenced(str(path.stem), done)
            dropped = mine - set(ids(keys_of(df, kind))) if path.exists() else set()
            kept = dropped & refs
            if kept:
                prev = tables.read(path, kind)
                df = pd.concat([df, prev[ids(keys_of(prev, kind)).isin(kept)]], ignore_index=True)
        done[path] = df
        if owned_keys:
            keep[str(path)] = sorted(owned_keys)
    writes: Writes = [(p, df if len(df) else None, kinds[p]) for p, df in done.items()]
    return [w for w in writes if w[1] is not None or w[0].exists()], keep, clashes


def transaction(
    plan: Plan, name: str, origin: str, *, earlier: Iterable[str] = (), replace: bool = False
) -> tuple[Writes, dict[str, list[str]], list[str]]:
    """Return the writes of one import merged with what is there, its keys, what it supersedes.

    `earlier` are the other imports of the same files (`family`): with `replace`, those
    whose rows clash are superseded whole; otherwise a clash is refused (`clash_error`).
    Call it holding the locks of every file it reads (`commit`).
    """
    earlier, superseded = list(earlier), []
    while True:
        mine_of = owned(name)
        for other in superseded:
            for f, (keys, kind) in owned(other).items():
                mine_of[f] = ([*mine_of.get(f, ([], kind))[0], *keys], kind)
        writes, keep, clashes = _merge_all(plan, mine_of)
        if not clashes:
            return writes, keep, superseded
        blame = [owners(c.path, c.row_ids) for c in clashes]
        by = {o for b in blame for o in b}
        if not replace or not by <= set(earlier) - set(superseded):
            raise clash_error(origin, clashes, blame, earlier, replace=replace)
        superseded += sorted(by)  # type: ignore[arg-type]  # None is not in `earlier`


def clash_error(
    origin: str,
    clashes: list[Clash],
    blame: list[Counter[str | None]],
    earlier: list[str],
    *,
    replace: bool,
) -> SourceFormatError:
    """The refusal of an import whose keys other writers hold with other content."""
    parts = []
    for clash, who in list(zip(clashes, blame, strict=True))[:3]:
        by = "; ".join(
            f"{n} written by {'a judge run (no import lists them)' if o is None else describe(o)}"
            for o, n in who.most_common(3)
        )
        parts.append(
            f"{len(clash.row_ids)} {clash.kind} rows of {clash.path} (first key "
            f"{clash.first_key}): {by}"
        )
    other_keys = {
        "items": "this import's items other ids (or another split)",
        "judgments": "this import's judgments another judge id or condition",
    }
    give = " and ".join(v for k, v in other_keys.items() if any(c.kind == k for c in clashes))
    keep_both = f"to keep both, give {give}, or import into another benchmark"
    if {o for who in blame for o in who} & set(earlier) and not replace:
        how = (
            "To replace the earlier import(s) of the same file(s) named here (all of their "
            f"rows), re-run with --replace; {keep_both}"
        )
    elif replace:
        how = f"--replace supersedes earlier imports of the same file(s) only; {keep_both}"
    else:
        how = keep_both[0].upper() + keep_both[1:]
    return SourceFormatError(
        origin,
        "rows already there have this import's keys but different content; refusing to "
        f"replace them (nothing was written): {' | '.join(parts)}. {how}.",
    )


# --- locking ---------------------------------------------------------------------------


def under_locks(targets: Callable[[], set[Path]], work: Callable[[], T]) -> T:
    """Run `work` holding the locks of every file `targets()` names (sorted: no deadlock).

    The targets are asked again under the locks (a manifest read before may have changed);
    when they grew, the locks are taken again with the new ones.
    """
    held = targets()
    while True:
        with locks.locked_targets(held):
            now = targets()
            if now <= held:
                return work()
        held |= now


def commit(
    plan: Plan, name: str, origin: str, record: dict[str, Any], *, base: str | None = None,
    replace: bool = False,
) -> dict[str, list[str]]:  # fmt: skip
    """Merge and write one import, all or nothing, holding the locks of what it touches.

    `record` is written into the manifest beside its files and keys; `base` names the
    import's files (`file_import_base`) so the earlier imports of the same files are found.
    Returns the keys the import owns per file.
    """

    def targets() -> set[Path]:
        out = {p for p, _, _ in plan}
        for m in [name, *(family(base, name) if base else [])]:
            out |= {path_of(m), *(Path(f) for f in files(m))}
        return out

    def work() -> dict[str, list[str]]:
        earlier = family(base, name) if base else []
        writes, keep, gone = transaction(plan, name, origin, earlier=earlier, replace=replace)
        manifest = {**record, "files": sorted(keep), "keys": keep}
        if gone:
            manifest["superseded"] = gone
        tables.write_all(
            [
                *writes,
                *((path_of(m), None, "text") for m in gone),
                (path_of(name), json.dumps(manifest, indent=1), "text"),
            ]
        )
        return keep

    return under_locks(targets, work)


def stage(
    name: str, record: dict[str, Any], targets: list[Path], owned: Callable[[Path], np.ndarray]
) -> Path:
    """Stage beside its target the manifest `commit` writes for an import owning `targets`.

    The same text as `commit`'s `json.dumps(..., indent=1)` with `keys` in `targets`' order;
    `owned(target)` gives a file's sorted row keys (ASCII bytes), asked one file at a time
    and written in blocks, so no key list is ever held as one text.
    """
    holder = {str(p): f"\x00{i}" for i, p in enumerate(targets)}
    text = json.dumps({**record, "files": sorted(holder), "keys": holder}, indent=1)
    tmp = tables.stage_path(path_of(name))
    block = 1 << 16
    with open(tmp, "wb") as fh:
        for i, target in enumerate(targets):
            head, text = text.split(f'"\\u0000{i}"', 1)
            fh.write(head.encode() + b'[\n   "')  # the text is ASCII (`json.dumps`)
            keys = owned(target)
            for at in range(0, len(keys), block):
                fh.write(b'",\n   "'.join(keys[at : at + block].tolist()))
                fh.write(b'",\n   "' if at + block < len(keys) else b'"\n  ]')
        fh.write(text.encode())
    tables.fsync_file(tmp)
    return tmp


__all__ = [
    "Clash",
    "clash_error",
    "commit",
    "describe",
    "family",
    "file_import_base",
    "file_import_name",
    "files",
    "folder",
    "ids",
    "keys_of",
    "kind_of",
    "merge",
    "owned",
    "owners",
    "path_of",
    "read",
    "rows_text",
    "stage",
    "transaction",
    "under_locks",
]
