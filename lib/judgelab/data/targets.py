"""The papers' published numbers as data: load, look up and compare reproductions.

Targets live in `data/targets/<paper>/<table>.csv`, one row per printed cell, with the
columns of `TARGET_COLUMNS`:

- `paper`: one of `PAPERS` (the folder name); `table`: the file stem (`table3`, `figure4`).
- `row`, `column`: the cell's labels as the paper prints them (text stays here, never in
  `value`); multi-level headers are joined with `" | "`.
- `value`: the number as printed; `unit`: one of `UNITS`; `n`: items behind the cell where
  known, else empty.
- `provenance`: the spec's tag plus section, e.g. `"P spec000 §6.2 Table 3"`.
- `note`: free text (`group=...`, `bold`, a significance mark, a label typo).

`data/targets/known_discrepancies.csv` lists, one row per discrepancy the specs record, the
cells where a paper is inconsistent with itself (`check` names the integrity test that
flags the cell; empty when the discrepancy is documented only).

`data/targets/peers/<artefact>.csv` holds *peer targets*: summary numbers that a public
corpus's authors ship beside their per-item data (a leaderboard CSV, a statistics file), in
the same columns, with `paper = "peers"` and a provenance naming the repository, commit and
file (`PEER_PROVENANCE`). They are loaded with `load_targets("peers")`; `paper=None` loads
the papers' targets only.

The folder is `$JUDGELAB_TARGETS` when set, else `<project>/data/targets`.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping
from pathlib import Path

import pandas as pd

from judgelab.core import paths
from judgelab.errors import ChoiceError, check_choice
from judgelab.errors import TargetError as TargetError

TARGET_COLUMNS = ("paper", "table", "row", "column", "value", "unit", "n", "provenance", "note")
KEY = ("paper", "table", "row", "column")
DISCREPANCY_COLUMNS = ("paper", "table", "row", "column", "check", "description", "source")
DISCREPANCY_FILE = "known_discrepancies.csv"

#: Paper id -> the number of its engineering spec in `../shared/spec/`.
PAPERS = {
    "contextualjudgebench": "000",
    "nofreelabels": "001",
    "contexteval": "002",
    "faitheval": "003",
    "ragas_romanian": "004",
}

#: The folder (and `paper` value) of the peer targets.
PEERS = "peers"

#: Units a target may carry (`pp` = percentage points, a difference of percents).
UNITS = frozenset(
    {"percent", "pp", "fraction", "kappa", "count", "tokens", "rank", "chars", "usd", "seconds"}
)

#: Provenance tags as the specs spell them.
PROVENANCE_TAGS = frozenset({"P", "PAPER", "D", "DERIVED", "R", "REPO"})

_PROVENANCE = re.compile(r"^(?P<tag>[A-Z]+) spec(?P<spec>\d{3}) §(?P<section>\d+(\.\d+)*) \S.*$")
#: Peer provenance: `REPO owner/repo@<commit> <path>` (a file of that repository at that
#: commit) or `README owner/repo@<commit> <where>` (a number quoted by the data README that
#: describes that snapshot, not found in the repository itself).
PEER_PROVENANCE = re.compile(r"^(?P<tag>REPO|README) [\w.-]+/[\w.-]+@[0-9a-f]{40} \S.*$")
_ABS_SLACK = 1e-9


def targets_dir() -> Path:
    """Return the folder holding the target CSVs."""
    value = os.environ.get("JUDGELAB_TARGETS")
    if value:
        return Path(value).expanduser().resolve()
    return paths.project() / "data" / "targets"


def _root(root: str | os.PathLike[str] | None) -> Path:
    return Path(root) if root is not None else targets_dir()


def target_files(
    paper: str | None = None,
    table: str | None = None,
    *,
    root: str | os.PathLike[str] | None = None,
) -> list[Path]:
    """Return the target CSVs, optionally restricted to one paper and/or one table.

    Raises:
        TargetError: the paper is unknown, or nothing matches.
    """
    base = _root(root)
    if paper is not None and paper not in PAPERS and paper != PEERS:
        raise TargetError(
            f"unknown paper {paper!r}; expected one of {sorted(PAPERS)} or {PEERS!r}"
        )
    papers = [paper] if paper is not None else sorted(PAPERS)
    files = []
    for name in papers:
        pattern = f"{table}.csv" if table is not None else "*.csv"
        files.extend(sorted((base / name).glob(pattern)))
    if not files:
        where = f"{paper or '*'}/{table or '*'}.csv"
        raise TargetError(f"no target file matches {where} under {base}")
    return files


def _fail(path: Path, line: int | None, message: str) -> TargetError:
    where = f"{path}, line {line}" if line is not None else str(path)
    return TargetError(f"{where}: {message}")


def _read_strings(path: Path, columns: tuple[str, ...]) -> pd.DataFrame:
    if not path.is_file():
        raise TargetError(f"{path}: file not found")
    if path.stat().st_size == 0:
        raise _fail(path, None, "file is empty")
    try:
        df = pd.read_csv(path, dtype=str, keep_default_na=False, encoding="utf-8")
    except (pd.errors.ParserError, UnicodeDecodeError) as exc:
        raise _fail(path, None, f"cannot be parsed as CSV ({exc})") from exc
    missing = [c for c in columns if c not in df.columns]
    extra = [c for c in df.columns if c not in columns]
    if missing or extra:
        raise _fail(
            path, 1, f"header must be {list(columns)}; missing {missing}, unexpected {extra}"
        )
    if df.empty:
        raise _fail(path, None, "has a header but no rows")
    return df[list(columns)]


def read_target_file(path: str | os.PathLike[str]) -> pd.DataFrame:
    """Read and validate one target CSV.

    Checks the header, that `paper`/`table` match the file's place, non-empty labels,
    numeric finite values, known units, integer `n`, well-formed provenance naming the
    paper's spec (for peers: repository, commit and file), and unique (row, column) keys.

    Raises:
        TargetError: naming the file, the CSV line and the column at fault.
    """
    path = Path(path)
    df = _read_strings(path, TARGET_COLUMNS)
    paper, table = path.parent.name, path.stem
    values: list[float] = []
    ns: list[int | None] = []
    seen: dict[tuple[str, str], int] = {}
    for i, rec in enumerate(df.itertuples(index=False)):
        line = i + 2
        if paper not in PAPERS and paper != PEERS:
            raise _fail(path, line, f"folder {paper!r} is not a known paper {sorted(PAPERS)}")
        if rec.paper != paper or rec.table != table:
            raise _fail(
                path,
                line,
                f"paper/table {rec.paper!r}/{rec.table!r} does not match the file "
                f"location {paper!r}/{table!r}",
            )
        for col in ("row", "column"):
            if not getattr(rec, col).strip():
                raise _fail(path, line, f"column {col!r} is empty")
        try:
            value = float(rec.value)
        except ValueError:
            raise _fail(path, line, f"column 'value': {rec.value!r} is not a number") from None
        if not math.isfinite(value):
            raise _fail(path, line, f"column 'value': {rec.value!r} is not finite")
        values.append(value)
        try:
            check_choice("column 'unit'", rec.unit, tuple(sorted(UNITS)))
        except ChoiceError as exc:
            raise _fail(path, line, str(exc)) from None
        if rec.n.strip():
            if not rec.n.strip().isdigit() or int(rec.n) <= 0:
                raise _fail(path, line, f"column 'n': {rec.n!r} is not a positive integer")
            ns.append(int(rec.n))
        else:
            ns.append(None)
        if paper == PEERS:
            if not PEER_PROVENANCE.match(rec.provenance):
                raise _fail(
                    path,
                    line,
                    f"column 'provenance': {rec.provenance!r} is not "
                    "'REPO|README owner/repo@<40-hex commit> <file>'",
                )
            key = (rec.row, rec.column)
            if key in seen:
                raise _fail(path, line, f"duplicate cell {key!r} (first on line {seen[key]})")
            seen[key] = line
            continue
        match = _PROVENANCE.match(rec.provenance)
        if not match or match["tag"] not in PROVENANCE_TAGS:
            raise _fail(
                path,
                line,
                f"column 'provenance': {rec.provenance!r} is not '<TAG> specNNN §x.y <what>' "
                f"with TAG in {sorted(PROVENANCE_TAGS)}",
            )
        if match["spec"] != PAPERS[paper]:
            raise _fail(
                path,
                line,
                f"column 'provenance': spec{match['spec']} is not the spec of {paper!r} "
                f"(spec{PAPERS[paper]})",
            )
        key = (rec.row, rec.column)
        if key in seen:
            raise _fail(path, line, f"duplicate cell {key!r} (first on line {seen[key]})")
        seen[key] = line
    out = df.copy()
    out["value"] = pd.Series(values, index=df.index, dtype="float64")
    out["n"] = pd.array(ns, dtype="Int64")
    return out


def load_targets(
    paper: str | None = None,
    table: str | None = None,
    *,
    root: str | os.PathLike[str] | None = None,
) -> pd.DataFrame:
    """Load and validate the targets, optionally for one paper and/or one table.

    Args:
        paper: a key of `PAPERS` or `PEERS`; None for all papers (peers excluded).
        table: a table id such as "table3"; None for all of the paper's tables.
        root: the targets folder; defaults to `targets_dir()`.

    Returns:
        One row per cell with the columns of `TARGET_COLUMNS` (`value` float, `n` Int64).

    Raises:
        TargetError: a file is malformed or nothing matches.
    """
    frames = [read_target_file(f) for f in target_files(paper, table, root=root)]
    out = pd.concat(frames, ignore_index=True)
    dup = out.duplicated(list(KEY), keep=False)
    if dup.any():
        first = out.loc[dup, list(KEY)].iloc[0].tolist()
        raise TargetError(f"duplicate target cell across files: {first}")
    return out


def lookup(
    paper: str,
    table: str,
    row: str,
    column: str,
    *,
    root: str | os.PathLike[str] | None = None,
) -> float:
    """Return the printed value of one cell.

    Raises:
        TargetError: the table or the cell does not exist.
    """
    df = load_targets(paper, table, root=root)
    hit = df[(df["row"] == row) & (df["column"] == column)]
    if hit.empty:
        raise TargetError(f"no target cell {paper}/{table} row={row!r} column={column!r}")
    return float(hit["value"].iloc[0])


def known_discrepancies(
    check: str | None = None, *, root: str | os.PathLike[str] | None = None
) -> pd.DataFrame:
    """Return the discrepancies the specs record (optionally those flagged by one check).

    Columns: `paper, table, row, column, check, description, source`. `row`/`column` are
    empty for a discrepancy about a whole row, column or table; `check` is empty when no
    integrity test flags it.

    Raises:
        TargetError: the file is malformed (names the line).
    """
    path = _root(root) / DISCREPANCY_FILE
    df = _read_strings(path, DISCREPANCY_COLUMNS)
    for i, rec in enumerate(df.itertuples(index=False)):
        line = i + 2
        if rec.paper not in PAPERS:
            raise _fail(path, line, f"unknown paper {rec.paper!r}")
        for col in ("table", "description", "source"):
            if not getattr(rec, col).strip():
                raise _fail(path, line, f"column {col!r} is empty")
    dup = df.duplicated(list(KEY) + ["check"], keep=False)
    if dup.any():
        line = int(dup.to_numpy().nonzero()[0][0]) + 2
        raise _fail(path, line, "duplicate discrepancy (same cell and check)")
    if check is not None:
        df = df[df["check"] == check]
    return df.reset_index(drop=True)


def _tolerances(units: pd.Series, tolerance: float | Mapping[str, float]) -> pd.Series:
    if isinstance(tolerance, Mapping):
        missing = sorted(set(units) - set(tolerance))
        if missing:
            raise TargetError(f"no tolerance given for unit(s) {missing}")
        tol = units.map(lambda u: float(tolerance[u]))
    else:
        tol = pd.Series(float(tolerance), index=units.index)
    if (tol < 0).any() or tol.isna().any():
        raise TargetError("tolerances must be non-negative numbers")
    return tol


def compare(
    reproduced: pd.DataFrame,
    *,
    tolerance: float | Mapping[str, float],
    targets: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Join reproduced values to their targets and judge each under a tolerance.

    Args:
        reproduced: the key columns (`paper, table, row, column`) plus `reproduced`,
            in the target's unit.
        tolerance: the largest accepted |reproduced - target|, one number or a mapping
            from unit to number (every unit present must be covered).
        targets: the targets to compare with; defaults to `load_targets()`.

    Returns:
        One row per reproduced cell, in input order: the key, `unit`, `n`, `target`,
        `reproduced`, `difference` (reproduced - target), `abs_difference`, `tolerance`,
        `passed` (False when the reproduced value is missing), `provenance`, `note`.

    Raises:
        TargetError: missing columns, duplicate keys, or a key with no target.
    """
    needed = list(KEY) + ["reproduced"]
    missing = [c for c in needed if c not in reproduced.columns]
    if missing:
        raise TargetError(f"reproduced values lack column(s) {missing}; need {needed}")
    rep = reproduced[needed].copy()
    if rep.duplicated(list(KEY)).any():
        first = rep.loc[rep.duplicated(list(KEY)), list(KEY)].iloc[0].tolist()
        raise TargetError(f"reproduced values repeat the cell {first}")
    rep["reproduced"] = pd.to_numeric(rep["reproduced"], errors="raise").astype("float64")
    tgt = load_targets() if targets is None else targets
    merged = rep.merge(
        tgt.rename(columns={"value": "target"}), on=list(KEY), how="left", validate="one_to_one"
    )
    unmatched = merged["target"].isna()
    if unmatched.any():
        cells = merged.loc[unmatched, list(KEY)].head(5).to_numpy().tolist()
        raise TargetError(f"{int(unmatched.sum())} reproduced cell(s) have no target: {cells}")
    merged["difference"] = merged["reproduced"] - merged["target"]
    merged["abs_difference"] = merged["difference"].abs()
    merged["tolerance"] = _tolerances(merged["unit"], tolerance)
    merged["passed"] = (merged["abs_difference"] <= merged["tolerance"] + _ABS_SLACK).astype(bool)
    cols = list(KEY) + [
        "unit",
        "n",
        "target",
        "reproduced",
        "difference",
        "abs_difference",
        "tolerance",
        "passed",
        "provenance",
        "note",
    ]
    return merged[cols]
