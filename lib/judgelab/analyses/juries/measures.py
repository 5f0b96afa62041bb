"""Card measure of the juries family: Krippendorff's alpha with the judge's peers.

Registered with `judgelab.analyses.registry.measure`; the report card runs it. The peers are the
other judges of the source sharing the card's `peer_column` (the prompt by default), on the units
this judge rated that at least two peers rated too. Judges of one pool usually rated the same
units, so the with-judge alpha of a pool is computed once per card (the context's memo).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from judgelab.analyses import juries, pairwise
from judgelab.analyses.registry import CardContext, measure, na, row

FAMILY = "juries"
KEYS = ["benchmark", "split", "item_id"]


def pseudo_choices(judgments: pd.DataFrame) -> pd.DataFrame:
    """Recode categorical pointwise verdicts as nominal codes `juries.ratings` reads.

    Nominal alpha depends only on which values are equal, so mapping the (at most three)
    verdict categories to pos/neg/tie leaves it unchanged.

    Raises:
        ValueError: more than three verdict categories.
    """
    cats = sorted(judgments["verdict"].dropna().astype(str).unique())
    if len(cats) > 3:
        raise ValueError(f"more than 3 verdict categories for nominal alpha: {cats[:5]}")
    code = dict(zip(cats, ("pos", "neg", "tie"), strict=False))
    return judgments.assign(
        chosen=judgments["verdict"].astype(object).map(code), order=0, sample=0
    )


def pooled_alpha(
    judgments: pd.DataFrame, judges: Sequence[str], *, pointwise: bool, n_boot: int, seed: int
) -> dict:
    """Return the pooled nominal alpha of `judges`: `value`, `ci_low`, `ci_high`, `n` (units).

    Also `bias` (the plug-in's estimated bias; the interval is bias-corrected),
    `n_eff_clusters` and `few_clusters` (the card shows "uncertain: few effective clusters").
    """
    data = judgments[judgments["judge"].isin(list(judges))]
    if pointwise:
        data = pseudo_choices(data)
    table = juries.alpha_table(
        data,
        units="item_order" if pointwise else "item",
        pool=None,
        level_of_measurement="nominal",
        n_boot=n_boot,
        seed=seed,
    )
    pooled = table[table["split"] == pairwise.POOLED]
    first = pooled.iloc[0] if len(pooled) else (table.iloc[0] if len(table) else None)
    if first is None:
        return {"value": np.nan, "ci_low": np.nan, "ci_high": np.nan, "n": 0}
    return {
        "value": float(first["alpha"]),
        "ci_low": float(first["ci_low"]),
        "ci_high": float(first["ci_high"]),
        "n": int(first["n_units"]),
        "bias": float(first["bias"]),
        "n_eff_clusters": float(first["n_eff_clusters"]),
        "few_clusters": bool(first["few_clusters"]),
    }


def _peer_units(ctx: CardContext) -> tuple[pd.DataFrame, list[str], int]:
    """Return the pool's judgments on the shared units, the peers and the units' signature."""
    column = ctx.options.peer_column
    rated = ctx.judgments.merge(ctx.own[KEYS].drop_duplicates(), on=KEYS, how="inner")
    group_value = str(ctx.own[column].iloc[0])
    rated = rated[rated[column].astype(str) == group_value]
    # keep the units at least two peers rated, so alpha with and without the judge share units
    by_unit = rated[rated["judge"] != ctx.judge].groupby(KEYS)["judge"].nunique()
    shared = by_unit[by_unit >= 2].reset_index()[KEYS]
    rated = rated.merge(shared, on=KEYS, how="inner")
    units_sig = int(pd.util.hash_pandas_object(shared, index=False).sum())
    peers = sorted(set(rated.loc[rated[column].astype(str) == group_value, "judge"]) - {ctx.judge})
    return rated, peers, units_sig


@measure(
    "alpha_peers",
    family=FAMILY,
    label="Alpha with peers",
    doc="Krippendorff's alpha (nominal) with the same-prompt judges",
    direction="higher",
)
def alpha_peers(ctx: CardContext) -> list[dict]:
    """Nominal alpha of the peer pool with and without the judge (headline: with judge)."""
    column = ctx.options.peer_column
    group_value = str(ctx.own[column].iloc[0])
    rated, peers, units_sig = _peer_units(ctx)
    if ctx.pairwise and not ctx.both_orders:
        return na("no two-order data to consolidate labels")
    if len(peers) < 2:
        return na(f"fewer than 2 other judges with {column} {group_value!r}")
    n_boot, seed, pointwise = ctx.options.n_boot, ctx.options.seed, not ctx.pairwise
    out = []
    for scope, group in (("with judge", [*peers, ctx.judge]), ("without judge", peers)):
        key = (
            "juries.alpha",
            ctx.source,
            tuple(sorted(group)),
            units_sig,
            pointwise,
            n_boot,
            seed,
        )
        if key not in ctx.memo:
            try:
                ctx.memo[key] = pooled_alpha(
                    rated, group, pointwise=pointwise, n_boot=n_boot, seed=seed
                )
            except ValueError as exc:
                ctx.memo[key] = {"status": "n/a", "note": str(exc), "n": 0, "value": np.nan}
        note = f"{len(group)} judges ({column} {group_value}), on the units this judge rated"
        out.append(row(scope, headline=scope == "with judge", **{"note": note, **ctx.memo[key]}))
    return out
