"""Judge accuracy against context length (ContextualJudgeBench Figs. 8 and 11, spec 000 §4.9/4.11).

Input is `verdicts.item_table` output: one row per judge × item with `correct` (pairwise:
consistent accuracy; pointwise: accuracy), `consistent` (pairwise only), `len_context` and
`len_response`. Bins are percentiles of the *items'* lengths (each item once, "percentile of
the entire benchmark"), closed on the right; every bin shows its length edge and n.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from judgelab.analyses.length.bins import accuracy_by_length, bin_lengths
from judgelab.analyses.length.glm import (
    INFERENCE,
    INFERENCE_COLUMNS,
    fit_binomial,
    term_inference,
)
from judgelab.analyses.length.verdicts import KEYS, group_rows, length_unit
from judgelab.core import clusters, estimates, stats
from judgelab.core.schema import require_columns as _require
from judgelab.core.wild import N_BOOT
from judgelab.errors import check_choice

DEFAULT_EDGES = (0, 20, 40, 60, 80, 100)


def accuracy_by_context(
    table: pd.DataFrame,
    *,
    edges: Sequence[float] = DEFAULT_EDGES,
    n_boot: int = 1000,
    seed: int = 0,
    level: float = 0.95,
    cluster: str | None = clusters.COLUMN,
    inference: str = "wild",
) -> pd.DataFrame:
    """Return accuracy (and, for pairwise judges, consistency) per judge × context bin.

    Intervals treat `cluster` units as independent by default — on FaithBench the source
    document, whose ten summaries share one context length (None: items, the issue-20
    legacy); `inference` as in `rates.rate_by_group` (default: the inverted wild cluster
    bootstrap; `bootstrap`: the earlier percentile bootstrap).

    Args:
        table: `item_table` output; needs `judge`, `len_context`, `correct`,
            `consistent`, `benchmark`, `split`, `item_id`.
        edges: Percentile edges (0–100) of the items' context lengths.
        n_boot: Bootstrap resamples B (over clusters).
        seed: Seed of the bootstrap.
        level: Confidence level.
        cluster: Column of units (None: items).
        inference: `wild` (default) or `bootstrap`.

    Returns:
        `judge`, `bin`, `metric` (`accuracy`, `consistency`), `value`, `k`, `n`, `n_items`,
        `n_clusters`, `ci_low`, `ci_high`, `wilson_low`, `wilson_high`, `n_eff_clusters`,
        `few_clusters`, `method`, `len_unit`.
    """
    return accuracy_by_length(
        table,
        edges=edges,
        by="percentile",
        column="len_context",
        n_boot=n_boot,
        seed=seed,
        level=level,
        cluster=cluster,
        inference=inference,
    )


def length_grid(
    table: pd.DataFrame,
    *,
    context_edges: Sequence[float] = DEFAULT_EDGES,
    response_edges: Sequence[float] = DEFAULT_EDGES,
    min_n: int = 20,
) -> pd.DataFrame:
    """Return accuracy and consistency per context bin × response bin, averaged over judges.

    Fig. 11 layout: each cell is the unweighted mean over judges of the judge's rate on the
    items of the cell (pairwise `correct` = consistent accuracy); `n` counts the distinct
    items in the cell and `masked` is True when n < `min_n` (draw those cells blank).

    Args:
        table: `item_table` output.
        context_edges: Percentile edges of the items' context lengths (rows).
        response_edges: Percentile edges of the items' response lengths (columns; pairwise:
            mean length of the pair).
        min_n: Cells with fewer items are masked.

    Returns:
        `context_bin`, `response_bin`, `metric` (`accuracy`, `consistency` where defined),
        `value`, `n`, `n_judges`, `masked`, `len_unit` — every cell of the grid, also empty.
    """
    _require(
        table,
        ["judge", "len_context", "len_response", "correct", "consistent", *KEYS],
        "length_grid",
    )
    ref = table.drop_duplicates(list(KEYS))
    data = table.assign(
        context_bin=bin_lengths(
            table["len_context"], edges=context_edges, reference=ref["len_context"]
        ),
        response_bin=bin_lengths(
            table["len_response"], edges=response_edges, reference=ref["len_response"]
        ),
    )
    cols = [
        "context_bin",
        "response_bin",
        "metric",
        "value",
        "n",
        "n_judges",
        "masked",
        "len_unit",
    ]
    parts = []
    for col, name in (("correct", "accuracy"), ("consistent", "consistency")):
        sub = data[data[col].notna()]
        if sub.empty:
            continue
        per_judge = sub.groupby(["context_bin", "response_bin", "judge"], observed=False)[col]
        judge_rate = per_judge.mean().rename("value").reset_index()
        cell = judge_rate.groupby(["context_bin", "response_bin"], observed=False)["value"]
        out = cell.mean().to_frame()
        out["n_judges"] = cell.count()
        counts = sub.drop_duplicates([*KEYS]).groupby(
            ["context_bin", "response_bin"], observed=False
        )
        out["n"] = counts.size()
        out = out.reset_index()
        out["n"] = out["n"].fillna(0).astype(int)
        out["metric"] = name
        parts.append(out)
    if not parts:
        return pd.DataFrame(columns=cols)
    grid = pd.concat(parts, ignore_index=True)
    grid["masked"] = grid["n"] < min_n
    grid["len_unit"] = length_unit(table)
    return grid[cols]


def context_trend(
    table: pd.DataFrame,
    *,
    by: Sequence[str] = ("judge",),
    value: str = "correct",
    control_response_length: bool = False,
    level: float = 0.95,
    cluster: str | None = clusters.COLUMN,
    inference: str = "cr2",
    wild: str = "interval",
    n_boot: int = N_BOOT,
    seed: int = 0,
) -> pd.DataFrame:
    """Logistic regression of correctness on log2 context length, per judge (trend test).

    `coef` is the change in log-odds of a correct judgment per *doubling* of the context;
    with `control_response_length`, log2 response length enters as a covariate (longer
    documents tend to come with longer responses). One row per item and judge.

    Inference clusters by `cluster` (default: the source document — context length is a
    property of the document, so its summaries are one unit of evidence about the trend).
    By default (`inference="cr2"`) the interval and p-value are CR2 with Bell–McCaffrey
    degrees of freedom (`glm.term_inference`), with the restricted wild cluster score
    bootstrap beside them (`wild_low`, `wild_high`, `wild_p`); `inference="wild"` reports
    the bootstrap, `inference="cluster"` the earlier CR1 errors with t(G − 1).
    `cluster=None` gives the legacy heteroskedasticity-robust HC0 errors that treat every
    item as independent.

    Args:
        table: `item_table` output.
        by: Group columns.
        value: The 0/1 outcome (`correct`, or `consistent`).
        control_response_length: Add log2(len_response) to the model.
        level: Confidence level of the interval.
        cluster: Column of the clusters (None: HC0, items independent).
        inference: `glm.INFERENCE`: `cr2` (default), `wild`, `cluster` (earlier default).
        wild: `glm.WILD`: the wild bootstrap beside the default (`interval`, `p`, `none`).
        n_boot: Wild bootstrap replicates.
        seed: Seed of the wild bootstrap weights (with the group key).

    Returns:
        `by` columns, `coef`, `ci_low`, `ci_high`, `p_value`, `odds_ratio` (per doubling),
        `n`, `n_clusters` (n without clusters), `se` (`CR2`, `wild`, `cluster` or `HC0`: the
        errors behind the interval), `trend` (`falls`, `rises` or `no clear trend`: whether
        the interval excludes 0), `note`, then `std_error`, `dof`, `cr2_low`, `cr2_high`,
        `cr2_p`, `wild_low`, `wild_high`, `wild_p`, `n_eff_clusters`, `few_clusters`,
        `method`.
    """
    by = list(by)
    check_choice("inference", inference, INFERENCE)
    _require(table, [*by, value, "len_context", "len_response"], "context_trend")
    data = table[table[value].notna() & (table["len_context"] > 0)]
    if control_response_length:
        data = data[data["len_response"] > 0]
    units = clusters.codes(data, cluster) if cluster is not None else None
    rows = []
    groups = data.groupby(by, sort=True, observed=True).indices if len(data) else {}
    for key, idx in groups.items():
        key = key if isinstance(key, tuple) else (key,)
        g = group_rows(data, idx)
        X = pd.DataFrame({"const": 1.0, "log2_context": np.log2(g["len_context"].astype(float))})
        if control_response_length:
            X["log2_response"] = np.log2(g["len_response"].astype(float))
        y = g[value].to_numpy(float)
        if units is None:
            row, note, label = _hc0_row(y, X, level=level)
        else:
            terms, note = term_inference(
                y,
                X,
                units[idx],
                terms=["log2_context"],
                inference=inference,
                wild_mode=wild,
                wild_terms=("log2_context",),
                level=level,
                n_boot=n_boot,
                rng=estimates.seeded(seed, "context_trend", value, *key),
            )
            row = terms[0]
            row.pop("term")
            row["odds_ratio"] = float(np.exp(row["coef"]))
            label = {"cr2": "CR2", "wild": "wild", "cluster": "cluster"}[inference]
        low, high = row["ci_low"], row["ci_high"]
        trend = "falls" if high < 0 else "rises" if low > 0 else "no clear trend"
        n_units = len(g) if units is None else clusters.n_distinct(units[idx])
        rows.append(
            {
                **dict(zip(by, key, strict=True)),
                **row,
                "n": len(g),
                "n_clusters": n_units,
                "se": label,
                "trend": trend,
                "note": note,
            }
        )
    cols = ["coef", "ci_low", "ci_high", "p_value", "odds_ratio", "n", "n_clusters", "se"]
    return pd.DataFrame(rows, columns=[*by, *cols, "trend", "note", *INFERENCE_COLUMNS])


def _hc0_row(y: np.ndarray, X: pd.DataFrame, *, level: float) -> tuple[dict, str, str]:
    """The legacy trend row: HC0 errors, every item independent (no cluster columns)."""
    res, note = fit_binomial(y, X, None)
    term = stats.glm_rows(res, terms=["log2_context"], level=level, odds_ratio=True)
    row = term.iloc[0].drop(["term", "n"]).to_dict()
    row["method"] = "HC0, normal reference (items independent)"
    return row, note, "HC0"
