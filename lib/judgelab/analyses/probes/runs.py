"""Running judges on a probe benchmark: offline baselines in memory, and the exact commands.

`offline_judgments(items, specs)` judges a probe benchmark with offline baselines (judge specs
in `params/judges/`, e.g. `offline-prefer-longer`) in memory, in both orders — the same
table `judgelab judge` writes for them. They are **heuristics**, not judges: prefer-longer
reacts to anything that adds words, always-A to nothing, lexical grounding to words that
are (or are not) in the context; a baseline that cannot judge the benchmark at all (lexical
grounding without any context) is skipped and says why in `notes`.

`commands(...)` returns the `judgelab probe` and `judgelab judge` commands that produce the
same tables on disk, each judge with its `--dry-run` numbers on the generated items (nothing
is called; a real judge's estimated cost before anything is paid).
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from typing import NamedTuple

import pandas as pd

from judgelab import judges as judges_mod
from judgelab.analyses.probes.variants import SUFFIX
from judgelab.errors import OfflineNotApplicable

#: The offline baselines a probe study runs by default (spec names in `params/judges/`).
BASELINES = ("offline-prefer-longer", "offline-always-a", "offline-lexical-grounding")


class Judged(NamedTuple):
    """Judgments of the baselines that applied, and one note per baseline."""

    judgments: pd.DataFrame
    notes: pd.DataFrame  # spec, judge, status (judged / not applicable), note


def offline_judgments(items: pd.DataFrame, specs: Sequence[str] = BASELINES) -> Judged:
    """Judge `items` with offline baseline specs in memory (both orders, no cache, no files).

    Raises:
        ValueError: a spec is not an offline baseline (a model judge costs money: run it
            with `judgelab judge`).
    """
    parts, notes = [], []
    for name in specs:
        spec = judges_mod.resolve(name)
        if not spec.is_offline:
            raise ValueError(f"judge spec {name!r} is not offline; run it with `judgelab judge`")
        try:
            built = judges_mod.build_from_cache(items, spec)
        except OfflineNotApplicable as exc:
            notes.append(
                {
                    "spec": name,
                    "judge": spec.judge_id,
                    "status": "not applicable",
                    "note": str(exc),
                }
            )
            continue
        j = built.judgments
        n_invalid = int((~j["valid"].astype(bool)).sum())
        notes.append(
            {
                "spec": name,
                "judge": spec.judge_id,
                "status": "judged",
                "note": f"{len(j)} judgments, {n_invalid} invalid (kept, counted)",
            }
        )
        parts.append(j)
    judgments = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
    return Judged(judgments, pd.DataFrame(notes, columns=["spec", "judge", "status", "note"]))


def commands(
    benchmark: str,
    probes: Sequence[str],
    *,
    seed: int,
    judges: Sequence[str],
    items: pd.DataFrame | None = None,
    model: str | None = None,
) -> pd.DataFrame:
    """Return the `judgelab probe` + `judgelab judge` commands of a probe study.

    Args:
        benchmark: The benchmark (or registry source) the probes are generated from.
        probes: The probe names.
        seed: The generation seed.
        judges: Judge spec names (`params/judges/`) or YAML paths.
        items: The generated probe items: each judge's `--dry-run` numbers are computed on
            them (requests, cached, estimated tokens and cost; nothing is called).
        model: The model `self_identification` names (`--model`), when not the default.

    Returns:
        One row per command: `step`, `command`, `judge`, and with `items` the dry-run
        columns (`planned`, `cached`, `to_request`, `not_applicable`, `est_prompt_tokens`,
        `max_completion_tokens`, `est_cost_usd`) and `note`.
    """
    probe_cmd = (
        f"judgelab probe --benchmark {shlex.quote(benchmark)} "
        f"--probes {','.join(probes)} --seed {int(seed)}"
    )
    if model:
        probe_cmd += f" --model {shlex.quote(model)}"
    rows = [{"step": "generate", "command": probe_cmd, "judge": "", "note": ""}]
    target = shlex.quote(f"{benchmark}{SUFFIX}")
    for name in judges:
        spec = judges_mod.resolve(name)
        row = {
            "step": "judge",
            "command": f"judgelab judge --judge {shlex.quote(name)} --benchmark {target}",
            "judge": spec.judge_id,
            "note": "offline baseline: free" if spec.is_offline else "",
        }
        if items is not None:
            try:
                row.update(judges_mod.dry_run(items, spec).as_row())
            except (OfflineNotApplicable, judges_mod.JudgeSpecError, ValueError) as exc:
                row["note"] = f"not applicable: {exc}"
        rows.append(row)
    return pd.DataFrame(rows)


__all__ = ["BASELINES", "Judged", "commands", "offline_judgments"]
