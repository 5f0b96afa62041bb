"""Card measures no single analysis family owns (registered like the families' own).

- `kappa_reference` combines two families: the reference family recasts the judge's model under
  each prompting strategy as a reference condition (`strategy_conditions`), the correctness
  family gives the pairwise kappa per condition. Families are independent of each other, so
  the combination lives here, above them.
- `invalid_rate`, `cost_per_1k`, `latency_per_1k` apply to every judge and need only the
  judgments' `valid`, `cost_usd` and `latency_s` columns (`stats.wilson_interval`,
  `stats.bootstrap_mean`).
"""

from __future__ import annotations

import pandas as pd

from judgelab.analyses import correctness, reference
from judgelab.analyses.registry import CardContext, measure, na, row, rows, unmet
from judgelab.core import stats

KEYS = ["benchmark", "split", "item_id"]


@measure(
    "kappa_reference",
    family="reference",
    label="Kappa by reference",
    doc="pairwise kappa per reference condition",
    needs=("pairwise",),
    direction="higher",
)
def kappa_reference(ctx: CardContext) -> list[dict]:
    """Pairwise kappa of the judge's model per reference condition, on items run in all."""
    strategies = ctx.options.reference_strategies
    prompt = str(ctx.own["prompt"].iloc[0])
    model = str(ctx.own["model"].iloc[0])
    same_model = ctx.judgments[ctx.judgments["model"].astype(str) == model]
    ran = set(same_model["prompt"].astype(str))
    present = {s: r for s, r in strategies.items() if s in ran}
    if prompt not in strategies or len(present) < 2:
        return na(f"model {model!r} was not run with and without a reference here")
    why = unmet(ctx, "gold")
    if why is not None:
        return na(why)
    cond = reference.strategy_conditions(same_model, strategies=present)
    common = cond.groupby(KEYS)["condition"].transform("nunique") == len(present)
    cond = cond[common.to_numpy()]
    final = correctness.pairwise_final(cond, groups=("judge", "condition", "benchmark", "split"))
    kap = correctness.pairwise_kappa(final, by=("condition",), **ctx.boot)
    own = f"reference={strategies[prompt]}" if "=" not in strategies[prompt] else prompt
    note = f"model {model}, items run in every condition"
    return rows(kap.assign(scope=kap["condition"], note=note), headline=own)


@measure(
    "invalid_rate",
    family="card",
    label="Invalid outputs",
    doc="share of outputs that could not be parsed",
    direction="lower",
)
def invalid_rate(ctx: CardContext) -> list[dict]:
    """Share of the judge's outputs without a valid verdict, with a Wilson interval."""
    own = ctx.own
    valid = own["valid"].astype("boolean").fillna(False).to_numpy(dtype=bool)
    valid = valid & own["verdict"].notna()
    k, n = int((~valid).sum()), len(own)
    low, high = stats.wilson_interval(k, n, level=ctx.options.level)
    return [
        row(
            "judgments",
            headline=True,
            value=k / n,
            ci_low=float(low),
            ci_high=float(high),
            n=n,
            note="Wilson interval",
        )
    ]


def _per_1k(ctx: CardContext, column: str) -> list[dict]:
    """Mean of `column` per 1,000 judgments with a bootstrap interval (where it is recorded)."""
    known = pd.to_numeric(ctx.own[column], errors="coerce").dropna().to_numpy(dtype=float)
    if known.size == 0:
        return na(f"{column} not recorded in this source")
    est = stats.bootstrap_mean(known, **ctx.boot)
    return [
        row(
            "per 1,000",
            headline=True,
            value=1000 * est.estimate,
            ci_low=1000 * est.low,
            ci_high=1000 * est.high,
            n=int(known.size),
            note=f"{known.size} of {len(ctx.own)} judgments record it",
        )
    ]


@measure(
    "cost_per_1k",
    family="card",
    label="Cost / 1k judgments",
    doc="USD per 1,000 judgments",
    direction="lower",
)
def cost_per_1k(ctx: CardContext) -> list[dict]:
    """USD per 1,000 judgments."""
    return _per_1k(ctx, "cost_usd")


@measure(
    "latency_per_1k",
    family="card",
    label="Latency / 1k judgments",
    doc="seconds per 1,000 judgments",
    direction="lower",
)
def latency_per_1k(ctx: CardContext) -> list[dict]:
    """Seconds per 1,000 judgments."""
    return _per_1k(ctx, "latency_s")
