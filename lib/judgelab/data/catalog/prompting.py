"""Loaders of the prompting analyses: they find and read files; the analyses take frames.

Criteria verification (spec 000 §4.4) needs the verifier's decisions: a `sample:<set>`
(its judgments and `verifications.jsonl`) or a decisions file (JSONL or parquet with
`DECISION_COLUMNS`) that refers to runs of judgments the caller passes.
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

import numpy as np
import pandas as pd

from judgelab.core import paths, schema, tables
from judgelab.core.schema import DECISION_COLUMNS
from judgelab.data.catalog.core import SAMPLE_PREFIX, SourceNotFound, is_sample, load_source

__all__ = ["DECISION_COLUMNS", "Verification", "load_verification", "read_decisions"]


def read_decisions(path: str | Path) -> pd.DataFrame:
    """Read a decisions table (JSONL or parquet); errors name the file and the column."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"decisions file {path} does not exist")
    if path.suffix == ".jsonl":
        df = pd.DataFrame(tables.read_jsonl(path))
    else:
        df = pd.read_parquet(path)
    missing = [c for c in DECISION_COLUMNS if c not in df.columns]
    if missing:
        raise KeyError(f"decisions file {path}: missing column(s) {missing}")
    if df.duplicated(list(DECISION_COLUMNS[:-1])).any():
        row = int(np.flatnonzero(df.duplicated(list(DECISION_COLUMNS[:-1])))[0])
        raise ValueError(f"decisions file {path}: duplicate run key at row {row}")
    bad = df["verified"].notna() & ~df["verified"].isin([True, False])
    if bad.any():
        raise ValueError(
            f"decisions file {path}: column 'verified' row {int(np.flatnonzero(bad)[0])} "
            "must be true, false or null"
        )
    out = df[list(DECISION_COLUMNS)].copy()
    out["order"] = out["order"].astype(int)
    out["sample"] = out["sample"].astype(int)
    out["verified"] = out["verified"].astype("boolean")
    return out


class Verification(NamedTuple):
    """Judgments and verifier decisions for the verification analysis, and their origin."""

    items: pd.DataFrame
    judgments: pd.DataFrame
    decisions: pd.DataFrame
    source: str
    is_sample: bool


def load_verification(source: str, *, judgments: pd.DataFrame | None = None) -> Verification:
    """Load verifier decisions: `sample:<set>` (its judgments + `verifications.jsonl`) or a file.

    A decisions file (JSONL/parquet, `DECISION_COLUMNS`) refers to runs of `judgments`,
    which must then be given.
    """
    if is_sample(source):
        loaded = load_source(source)
        path = paths.samples() / source[len(SAMPLE_PREFIX) :] / "verifications.jsonl"
        if loaded.judgments is None:
            raise SourceNotFound(f"sample {source!r} has no judgments.jsonl")
        return Verification(loaded.items, loaded.judgments, read_decisions(path), source, True)
    if judgments is None:
        raise ValueError(f"decisions file {source!r}: pass the judgments it refers to")
    path = Path(source)
    path = path if path.is_absolute() else paths.project() / path
    return Verification(
        schema.empty(schema.ITEMS), judgments, read_decisions(path), str(source), False
    )
