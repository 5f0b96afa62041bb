"""Loaders of the contexteval analyses (notebooks 07 and 08): they find and read files.

The analyses (`judgelab.analyses.contexteval`) take the frames these return:

- `load_attributes`: the released contextual-attribute catalogue, else a given fallback
  (the notebooks pass the paper's Table 8, `analyses.contexteval.paper_attributes()`);
- `load_ratings`: rating items and judgments of `judgelab.judges.chain` benchmarks or sample
  sets (a `Loaded`, with the sample fallback and its reason);
- `load_followups` (with `followup_counts`, the reader of the raw human records): satisfied
  follow-up QAs per human annotation (Table 5);
- `load_justification_codes`: coded justifications (Figure 4; only sample sets have them).

Settings are returned as stored (the repo's ids such as `gen_wo_ctx_eval_w_ctx`, or the
paper's names); the analyses map them to the paper's names (`setting_name`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from judgelab.core import paths, tables
from judgelab.core.schema import require_columns
from judgelab.data import fetch, sources
from judgelab.data.catalog.core import (
    SAMPLE_PREFIX,
    Loaded,
    SourceNotFound,
    is_sample,
    load_items,
    load_judgments,
    load_source,
    with_clusters,
)
from judgelab.data.importers.contexteval_attributes import read_contextual_attributes

FOLLOWUP_COLUMNS = ["pair", "setting", "example_key", "rep", "n_qas", "n_sat_pos1", "n_sat_pos2"]
CODE_COLUMNS = ["source", "pair", "setting", "codes"]


def load_attributes(
    source: str = "contexteval", *, fallback: pd.DataFrame | None = None
) -> tuple[pd.DataFrame, str]:
    """Return the contextual-attribute catalogue and where it came from.

    Args:
        source: The registry source holding `contextual_attributes_qas.txt` (mirror or
            download).
        fallback: The catalogue returned when the released file cannot be had (the notebooks
            pass the paper's Table 8, `analyses.contexteval.paper_attributes()`); None
            raises the fetch error instead.

    Returns:
        The tidy attributes (`attribute, question, option, option_index`) and a line saying
        where they came from (and why the fallback was used).
    """
    try:
        root = fetch.ensure_local(sources.get_source(source))
        return read_contextual_attributes(root), f"released file of source {source!r}"
    except (fetch.FetchError, OSError) as exc:
        if fallback is None:
            raise
        why = f"{type(exc).__name__}: {str(exc)[:160]}"
        return fallback, f"fallback (released file unavailable: {why})"


def load_ratings(names: Sequence[str], *, fallback: str | None = None) -> Loaded:
    """Load rating items and judgments from chain outputs or sample sets.

    Each entry of `names` is `sample:<set>` or a benchmark written by
    `judgelab.judges.chain.run_chain` (items `paths.items()/<name>.parquet`, judgments
    `paths.judgments()/<name>/`). When any is missing and `fallback` names a sample set, the
    sample is loaded instead and `reason` says why (notebooks show it in a banner).
    """
    items, judgments = [], []
    try:
        for name in names:
            if is_sample(name):
                loaded = load_source(name)
                items.append(loaded.items)
                judgments.append(loaded.judgments)
            else:
                items.append(load_items(name))
                judgments.append(load_judgments(name))
    except SourceNotFound as exc:
        if fallback is None:
            raise
        loaded = load_source(fallback)
        reason = f"ratings {list(names)} unavailable: {exc}"
        return Loaded(loaded.items, loaded.judgments, fallback, ",".join(names), True, reason)
    joined = ",".join(names)
    sample = all(is_sample(s) for s in names)
    all_items = pd.concat(items, ignore_index=True)
    return Loaded(
        all_items,
        with_clusters(pd.concat(judgments, ignore_index=True), all_items),
        joined,
        joined,
        sample,
        "",
    )


def followup_counts(records: Sequence[Mapping[str, Any]], *, pair: str) -> pd.DataFrame:
    """Count satisfied follow-up QAs per human record (the repo's `compute_human_agreement`).

    An annotator whose `follow_up_qas` hold any null label is skipped, as in the repo.

    Args:
        records: Raw human records (`example_id`, `setting`, `follow_up_qas`).
        pair: The repo pair token of the file.

    Returns:
        `pair, setting` (as recorded), `example_key` (as the importer's item_id:
        `<pair>/human/<base>`), `rep`, `n_qas`, `n_sat_pos1`, `n_sat_pos2`, `diff`
        (pos1 - pos2).
    """
    rows = []
    for rec in records:
        qas = rec.get("follow_up_qas") or []
        s1 = [qa.get("satisfied_1") for qa in qas]
        s2 = [qa.get("satisfied_2") for qa in qas]
        if not qas or None in s1 or None in s2:
            continue
        base, _, rep = str(rec.get("example_id", "")).rpartition("_rep")
        rows.append(
            {
                "pair": pair,
                "setting": str(rec.get("setting")),
                "example_key": f"{pair}/human/{base or rep}",
                "rep": int(rep) if rep.isdigit() else 0,
                "n_qas": len(qas),
                "n_sat_pos1": int(sum(map(bool, s1))),
                "n_sat_pos2": int(sum(map(bool, s2))),
            }
        )
    out = pd.DataFrame(rows, columns=FOLLOWUP_COLUMNS)
    out["diff"] = out["n_sat_pos1"] - out["n_sat_pos2"]
    return out


def load_followups(loaded: Loaded) -> pd.DataFrame:
    """Return the human follow-up satisfaction counts behind `loaded` (empty when none).

    A sample set keeps them in `followups.jsonl` (rows as `followup_counts` returns); the
    real release in the raw human files of the `contexteval_judgments` source.
    """
    if is_sample(loaded.source):
        needed = ["pair", "setting", "example_key", "rep", "n_sat_pos1", "n_sat_pos2"]
        df = _sample_table(loaded, "followups.jsonl", needed)
        if df is None:
            return followup_counts([], pair="x_vs_y")
        df["diff"] = df["n_sat_pos1"] - df["n_sat_pos2"]
        return df
    src = sources.get_source(loaded.source)
    root = fetch.ensure_local(src)
    frames = []
    for f in src.files:
        info = src.options.get("judgment_files", {}).get(f.path, {})
        if info.get("judge") == "human" or "human_judgements/" in f.path:
            records = json.loads((root / f.path).read_text(encoding="utf-8"))
            frames.append(followup_counts(records, pair=str(info.get("pair"))))
    return pd.concat(frames, ignore_index=True) if frames else followup_counts([], pair="x_vs_y")


def load_justification_codes(loaded: Loaded) -> pd.DataFrame:
    """Return coded justifications behind `loaded`: `source, pair, setting, codes` (or empty).

    The release has no codes (spec 002 §0); a sample set keeps them in `justifications.jsonl`.
    """
    df = _sample_table(loaded, "justifications.jsonl", CODE_COLUMNS)
    return pd.DataFrame(columns=CODE_COLUMNS) if df is None else df


def _sample_table(loaded: Loaded, file: str, columns: list[str]) -> pd.DataFrame | None:
    """Return the JSONL table `file` of a sample set with `columns` checked (None if absent)."""
    if not is_sample(loaded.source):
        return None
    path = _sample_dir(loaded.source) / file
    if not path.exists():
        return None
    df = pd.DataFrame(tables.read_jsonl(path))
    require_columns(df, columns, str(path))
    return df


def _sample_dir(source: str) -> Path:
    return paths.samples() / source[len(SAMPLE_PREFIX) :]
