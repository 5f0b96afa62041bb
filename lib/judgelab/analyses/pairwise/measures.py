"""Card measures of the pairwise family: consistent accuracy, consistency, position preference.

Registered with `judgelab.analyses.registry.measure`; the report card runs them. All three come
from one `pairwise_rates` table per judge (per split and pooled; the mean of splits is left
out), computed once and shared through the context's cache.
"""

from __future__ import annotations

import pandas as pd

from judgelab.analyses import pairwise
from judgelab.analyses.registry import CardContext, measure, rows

FAMILY = "pairwise"
#: The rates the card reads (each row costs one wild cluster bootstrap: compute only these).
CARD_METRICS = ("ca", "cons", *pairwise.position.NEEDED)


def _rates(ctx: CardContext) -> pd.DataFrame:
    """Return the judge's pairwise rates per split and pooled (cached per judge)."""

    def build() -> pd.DataFrame:
        outcomes = pairwise.item_outcomes(ctx.own, invalid_policy=ctx.options.invalid_policy)
        rates = pairwise.pairwise_rates(outcomes, metrics=CARD_METRICS, **ctx.boot)
        return rates[rates["aggregation"] != pairwise.MEAN_OF_SPLITS]

    return ctx.cached("pairwise.rates", build)


def _scoped(ctx: CardContext, metric: str) -> pd.DataFrame:
    r = pairwise.rates_for(_rates(ctx), metric=metric)
    return r.assign(scope=r["split"], note=r["reason"])


@measure(
    "ca",
    family=FAMILY,
    label="Consistent accuracy",
    doc="correct in both presentation orders (pooled over splits)",
    needs=("pairwise", "both_orders", "gold"),
    direction="higher",
)
def consistent_accuracy(ctx: CardContext) -> list[dict]:
    """Consistent accuracy per split and pooled (headline: pooled)."""
    return rows(_scoped(ctx, "ca"), headline=pairwise.POOLED)


@measure(
    "consistency",
    family=FAMILY,
    label="Consistency",
    doc="same verdict in both presentation orders",
    needs=("pairwise", "both_orders"),
    direction="higher",
)
def consistency(ctx: CardContext) -> list[dict]:
    """Order consistency per split and pooled (headline: pooled)."""
    return rows(_scoped(ctx, "cons"), headline=pairwise.POOLED)


@measure(
    "pos_a_rate",
    family=FAMILY,
    label="P(picks position A)",
    doc="share of valid verdicts for the first response (spec 000 §4.7)",
    needs=("pairwise", "both_orders"),
    direction="deviation",
)
def position_a_rate(ctx: CardContext) -> list[dict]:
    """Share of valid verdicts for position A with the cluster-bootstrap p (headline: pooled)."""
    rates = _rates(ctx)
    shares = ["share_biased_first", "share_biased_second"]
    needed = [*pairwise.rates.POSITION_RATES, "run_gap", *shares]
    pref = pairwise.position_preference(rates[rates["metric"].isin(needed)])
    pref = pref.assign(scope=pref["split"], value=pref["pos_a_rate"], n=pref["n_verdicts"])
    return rows(pref, headline=pairwise.POOLED)
