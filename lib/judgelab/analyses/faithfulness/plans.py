"""The `judgelab judge` commands that produce this family's model runs, with --dry-run numbers.

Nothing is called: `judgelab.judges.dry_run` counts the requests, the cached ones and the
estimated cost of each command, for FaithEval answers (notebook 11) and for the `ragas.*`
judges on the FaithBench pair items (notebook 12).
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence

import pandas as pd

from judgelab import judges as judges_mod
from judgelab.analyses.faithfulness.faitheval_grading import TASKS, item_conditions
from judgelab.analyses.faithfulness.ragas_preferences import TEMPLATE_METHOD
from judgelab.errors import SourceNotFound


def _stand_in(benchmark: str, items: pd.DataFrame | None) -> tuple[pd.DataFrame, str]:
    """Items to estimate a benchmark that is not imported on: the sample's items of its task."""
    if items is None:
        raise SourceNotFound(
            f"items source {benchmark!r} is not imported "
            f"(run `judgelab data import {benchmark}` first)"
        )
    used = "sample (not imported: run `judgelab data import " + benchmark + "` first)"
    task = next((t for t in TASKS if t in benchmark), None)
    if task is None:
        return items, used
    keep = item_conditions(items)["task"] == task
    return items[keep.to_numpy()], used


def faitheval_plan(
    benchmarks: Mapping[str, pd.DataFrame | None],
    *,
    judge: str,
    items: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """The `judgelab judge` commands that answer each FaithEval benchmark, with --dry-run numbers.

    Args:
        benchmarks: FaithEval benchmarks (e.g. `faitheval_unanswerable`) and their imported
            items, None where not imported yet (`catalog.faithfulness.benchmark_items`).
        judge: A judge spec name in `params/judges/` or a YAML path (a `faitheval.*` template).
        items: Items to estimate on when a benchmark is not imported (e.g. the sample; the
            items of the benchmark's task); the `items_used` column says which were used.

    Returns:
        One row per benchmark: `benchmark`, `command`, `items_used`, `planned`, `cached`,
        `to_request`, `not_applicable`, `est_prompt_tokens`, `max_completion_tokens`,
        `est_cost_usd` (NaN when the spec has no prices).

    Raises:
        SourceNotFound: a benchmark is not imported and no `items` stand in.
        ValueError: the judge's template is not a `faitheval.*` one.
    """
    spec = judges_mod.resolve(judge)
    if not str(spec.template or "").startswith("faitheval."):
        raise ValueError(f"judge {judge!r} uses template {spec.template!r}, not faitheval.*")
    rows = []
    for b, imported in benchmarks.items():
        its, used = (imported, b) if imported is not None else _stand_in(b, items)
        est = judges_mod.dry_run(its, spec)
        rows.append(
            {
                "benchmark": b,
                "command": f"judgelab judge --judge {shlex.quote(judge)} --benchmark {b}",
                "items_used": used,
                **est.as_row(),
            }
        )
    return pd.DataFrame(rows)


def ragas_plan(pair_table: pd.DataFrame, *, judges: Sequence[str]) -> pd.DataFrame:
    """The `judgelab judge` commands that run the `ragas.*` judges on the pair items.

    Args:
        pair_table: Pair items (`pair_items`), written with
            `catalog.faithfulness.write_pair_items`.
        judges: Judge spec names in `params/judges/` or YAML paths (`ragas.*` templates).

    Returns:
        One row per judge: `judge`, `method`, `command`, `planned`, `cached`,
        `to_request`, `not_applicable`, `est_prompt_tokens`, `max_completion_tokens`,
        `est_cost_usd` (the `--dry-run` numbers; nothing is called).
    """
    bench = str(pair_table["benchmark"].iloc[0]) if len(pair_table) else "?"
    rows = []
    for name in judges:
        spec = judges_mod.resolve(name)
        if spec.template not in TEMPLATE_METHOD:
            raise ValueError(f"judge {name!r} uses template {spec.template!r}, not a ragas.* one")
        est = judges_mod.dry_run(pair_table, spec)
        rows.append(
            {
                "judge": spec.judge_id,
                "method": TEMPLATE_METHOD[str(spec.template)],
                "command": f"judgelab judge --judge {shlex.quote(name)} --benchmark {bench}",
                **est.as_row(),
            }
        )
    return pd.DataFrame(rows)
