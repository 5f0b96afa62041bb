"""Loaders of the faithfulness analyses: they find and read files; the analyses take frames.

FaithEval answers (notebook 11) are the judgments `judgelab judge` wrote for imported
FaithEval benchmarks; the FaithBench pair items (notebook 12) are written here as a benchmark
for the `ragas.*` judges, whose judgments are read back here.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from judgelab.core import locks, paths, tables
from judgelab.core.names import safe_name
from judgelab.data import clustering
from judgelab.data.catalog.core import (
    Loaded,
    is_sample,
    load_items,
    load_judgments,
    load_or_none,
    load_source,
    with_clusters,
)
from judgelab.errors import SourceNotFound

#: The resampling unit of the FaithBench pair items: the source document they summarise.
PAIR_CLUSTER: tuple[str, ...] = ("context",)


def load_answers(
    benchmarks: Sequence[str], *, fallback: str | None = "sample:faitheval"
) -> Loaded:
    """Load FaithEval items and the answer tables `judgelab judge` wrote for them.

    Nothing is fetched: each benchmark's items must have been imported
    (`judgelab data import <benchmark>`) and answered (`judgelab judge ... --benchmark
    <benchmark>`). When none of them has answers yet, `fallback` (a sample set) is loaded
    and `reason` says what to run.

    Raises:
        SourceNotFound: nothing to show and no fallback.
    """
    items, judgments, missing = [], [], []
    for b in benchmarks:
        try:
            it = load_items(b)
            jd = load_judgments(b)
        except SourceNotFound as exc:
            missing.append(f"{b}: {exc}")
            continue
        items.append(it)
        judgments.append(jd)
    requested = ",".join(benchmarks)
    if judgments:
        all_items = pd.concat(items, ignore_index=True)
        return Loaded(
            all_items,
            with_clusters(pd.concat(judgments, ignore_index=True), all_items),
            requested,
            requested,
            any(is_sample(b) for b in benchmarks),
            "",
        )
    if fallback is None:
        raise SourceNotFound("no FaithEval answers: " + "; ".join(missing))
    sample = load_source(fallback)
    reason = (
        "no FaithEval answers yet (import the items with `judgelab data import <benchmark>`, "
        "then answer them with `judgelab judge`; see the run plan below)"
    )
    return sample._replace(requested=requested, reason=reason)


def benchmark_items(benchmarks: Sequence[str]) -> dict[str, pd.DataFrame | None]:
    """Return each benchmark's imported items, None where it is not imported yet.

    The input of `faithfulness.faitheval_plan`, which estimates a missing benchmark on
    stand-in items.
    """
    return {b: load_or_none(load_items, b) for b in benchmarks}


def write_pair_items(pair_table: pd.DataFrame, *, cluster: Sequence[str] = PAIR_CLUSTER) -> str:
    """Write pair items as an imported benchmark (`data/items/<benchmark>.parquet`).

    Args:
        pair_table: The pair items (`analyses.faithfulness.faithbench_pairs`).
        cluster: The cluster rule(s) for items without one: by default the source document
            (`context`; pairs reuse the summaries of one document, so they are dependent).

    Returns:
        The benchmark name to pass to `judgelab judge --benchmark`.
    """
    names = pair_table["benchmark"].unique()
    if len(names) != 1:
        raise ValueError(f"pair items must hold one benchmark, got {list(names)}")
    pair_table = clustering.with_clusters(pair_table, cluster)
    path = paths.items() / f"{safe_name('benchmark', names[0])}.parquet"
    with locks.locked_targets([path]):  # issue 32 (1): never mid-way through an import
        tables.write_items(pair_table, path)
    return str(names[0])


def load_pair_judgments(benchmark: str) -> pd.DataFrame | None:
    """Return the judgments `judgelab judge` wrote for a pair benchmark (None when none yet).

    They carry the `cluster` of their pair item (its source document) when the items exist.
    """
    judgments = load_or_none(load_judgments, benchmark)
    items = load_or_none(load_items, benchmark) if judgments is not None else None
    return judgments if items is None else with_clusters(judgments, items)
