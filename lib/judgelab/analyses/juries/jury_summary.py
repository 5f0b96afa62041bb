"""`jury_summary`: per pool × split × vote rule, the best judge, the best jury, jury gains.

The best judge and the best jury are the highest CA on the items they are scored on (an
in-sample maximum, so optimistic); every row says so in `selection`.
"""

from __future__ import annotations

import pandas as pd

from judgelab.core.schema import require_columns as _require

SUMMARY_COLUMNS: tuple[str, ...] = (
    "pool",
    "benchmark",
    "split",
    "vote_rule",
    "best_judge",
    "best_judge_ca",
    "best_judge_ca_low",
    "best_judge_ca_high",
    "best_jury",
    "best_jury_ca",
    "best_jury_ca_low",
    "best_jury_ca_high",
    "best_jury_diff_vs_best",
    "best_jury_diff_low",
    "best_jury_diff_high",
    "best_jury_p_holm",
    "n_juries",
    "share_beating_best",
    "share_sig_better",
    "share_sig_worse",
    "n_comparisons",
    "n",
    "selection",
)
#: `jury_summary`'s note on its best judge and best jury (chosen on the items they are scored on).
SELECTION_NOTE = (
    "best judge / best jury: highest CA on the same items (in-sample max: optimistic; "
    "best_jury_diff_vs_best and p_holm are that jury's own jury_table row)"
)


def jury_summary(table: pd.DataFrame, *, size: int = 3, alpha: float = 0.05) -> pd.DataFrame:
    """Summarise a `jury_table` per pool × split × vote rule: best judge, best jury, jury gains.

    Args:
        table: A `jury_table` (sizes 1 and `size`).
        size: The jury size summarised.
        alpha: Level of the Holm-adjusted tests counted in `share_sig_*`.

    Returns:
        `pool`, `benchmark`, `split`, `vote_rule`, `best_judge`, `best_judge_ca` (+ `_low`/
        `_high`), `best_jury`, `best_jury_ca` (+ `_low`/`_high`), `best_jury_diff_vs_best`
        (+ `_low`/`_high`, against that jury's best member), `best_jury_p_holm`,
        `n_juries`, `share_beating_best` (juries whose CA exceeds their best member's),
        `share_sig_better` / `share_sig_worse` (Holm-adjusted p < alpha, difference above /
        below 0), `n_comparisons` (tests in the Holm family of the row), `n` (items of the
        best jury), `selection` (`SELECTION_NOTE`: the best judge and jury are chosen on
        the items they are scored on, so their CAs are optimistic). In a pooled row the
        judges and juries share the row's splits and items
        (`jury_table`'s default `pool_strata`).
    """
    _require(table, ["pool", "split", "vote_rule", "size", "ca", "jury"], "jury_summary")
    keys = ["pool", "benchmark", "split", "vote_rule"]
    rows = []
    for key, block in table.groupby(keys, sort=False):
        singles = block[block["size"] == 1].sort_values("ca", ascending=False, kind="stable")
        juries = block[block["size"] == size].sort_values("ca", ascending=False, kind="stable")
        row = dict(zip(keys, key, strict=True)) | {"selection": SELECTION_NOTE}
        if len(singles):
            row |= _best("best_judge", singles.iloc[0])
        if len(juries):
            j = juries.iloc[0]
            sig = juries["p_holm"] < alpha
            row |= _best("best_jury", j) | {
                "best_jury_diff_vs_best": j["diff_vs_best"],
                "best_jury_diff_low": j["diff_low"],
                "best_jury_diff_high": j["diff_high"],
                "best_jury_p_holm": j["p_holm"],
                "n_juries": len(juries),
                "share_beating_best": float((juries["diff_vs_best"] > 0).mean()),
                "share_sig_better": float((sig & (juries["diff_vs_best"] > 0)).mean()),
                "share_sig_worse": float((sig & (juries["diff_vs_best"] < 0)).mean()),
                "n_comparisons": int(j["n_comparisons"]),
                "n": int(j["n"]),
            }
        else:
            row |= {"n_juries": 0, "n": int(singles.iloc[0]["n"]) if len(singles) else 0}
        rows.append(row)
    return pd.DataFrame(rows).reindex(columns=list(SUMMARY_COLUMNS))


def _best(prefix: str, row: pd.Series) -> dict:
    """Return the name and CA (with interval) of a `jury_table` row under `prefix`."""
    return {
        prefix: row["jury"],
        f"{prefix}_ca": row["ca"],
        f"{prefix}_ca_low": row["ca_low"],
        f"{prefix}_ca_high": row["ca_high"],
    }
