"""Card measures of the length family: length preference, length coefficient, context trend.

Registered with `judgelab.analyses.registry.measure`; the report card runs them. The two
pairwise measures share one table of the judge's verdicts with response lengths (cached per
judge).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from judgelab.analyses import length
from judgelab.analyses.registry import CardContext, measure, na, rows

FAMILY = "length"


def _uncertain(frame: pd.DataFrame) -> pd.Series:
    """A note per row: "uncertain: few effective clusters (G* = x)" where the row says so.

    Until the card shows the `few_clusters` state itself, the note carries it.
    """
    empty = pd.Series("", index=frame.index)
    base = frame["note"].fillna("").astype(str) if "note" in frame else empty
    few = frame["few_clusters"].astype("boolean").fillna(False).to_numpy(dtype=bool)
    text = (
        "uncertain: few effective clusters (G* = "
        + frame["n_eff_clusters"].map("{:.1f}".format)
        + ")"
    )
    return base.where(~few, np.where(base == "", text, base + "; " + text))


def _verdicts(ctx: CardContext) -> pd.DataFrame:
    """Return the judge's pairwise verdicts with response lengths (cached per judge)."""
    return ctx.cached(
        "length.verdicts",
        lambda: length.pairwise_verdicts(ctx.lens, ctx.own, judges=[ctx.judge]),
    )


@measure(
    "p_longer",
    family=FAMILY,
    label="P(picks longer)",
    doc="balanced over gold when known (0.5 = no length bias)",
    needs=("pairwise",),
    direction="deviation",
)
def p_longer(ctx: CardContext) -> list[dict]:
    """Share of verdicts for the longer response (headline: balanced, or all without gold)."""
    picks = length.picks_longer(_verdicts(ctx), **ctx.boot)
    head = "balanced" if ctx.has_gold else "all"
    return rows(picks.assign(scope=picks["condition"], note=_uncertain(picks)), headline=head)


@measure(
    "length_coef",
    family=FAMILY,
    label="Length coefficient",
    doc="log-odds per doubling of the length ratio (bounded log2 ratio term)",
    needs=("pairwise",),
    direction="abs",
)
def length_coef(ctx: CardContext) -> list[dict]:
    """Log-odds of picking a response per doubling of its length ratio (CR2, Bell–McCaffrey)."""
    reg = length.length_regression(_verdicts(ctx), level=ctx.options.level, wild="none")
    reg = reg[reg["term"] == "length"]
    reg = reg.assign(scope="length", value=reg["coef"], note=_uncertain(reg))
    return rows(reg, headline="length")


@measure(
    "context_trend",
    family=FAMILY,
    label="Context trend",
    doc="log-odds of a correct judgment per doubling of context",
    direction="drop",
)
def context_trend(ctx: CardContext) -> list[dict]:
    """Log-odds of a correct judgment per doubling of the context length."""
    table = length.item_table(
        ctx.lens, ctx.own, judges=[ctx.judge], invalid_policy=ctx.options.invalid_policy
    )
    has_context = bool((table["len_context"].fillna(0) > 0).any()) if len(table) else False
    if not has_context:
        return na("no context text in this source's items")
    if not table["correct"].notna().any():
        return na("no gold labels to score correctness against")
    trend = length.context_trend(table, level=ctx.options.level, wild="none")
    trend = trend.assign(scope="per doubling", value=trend["coef"], note=_uncertain(trend))
    return rows(trend, headline="per doubling")
