"""Card measure of the grounding family: the judge's pass rate, corrected with human labels.

Where a pointwise source has human labels (the gold, mapped to Correct/Incorrect through the
card's `label_map`), the card shows what the judge says the graded answers' pass rate is
(judge only), what a prediction-powered estimate makes of it with `HUMAN_BUDGET` human labels
drawn at random (PPI++, the headline: what a team that labels that many would report), and
the all-human value, each with its interval and n. The intervals are for the population the
items come from (`target="population"`: the wild cluster bootstrap when the items share
source clusters); the note says how many effective clusters stand behind the estimate.

`transport_error` (issue 36): where the graded answers come from several candidate models
(UMass TriviaQA's exam-takers), the transport audit (`transport.audit`, leave one candidate
out) of the judge's PPI rectifier — one row per held-out candidate with its transported error
and interval; the headline is the candidate whose interval reaches furthest from 0, so an
equivalence grade of the headline passes only when every candidate's interval would.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from judgelab.analyses.grounding import methods, tables, transport
from judgelab.analyses.registry import CardContext, measure, na, row
from judgelab.core.stats import rng_for

FAMILY = "grounding"
#: Human labels the card's corrected estimate uses (all of them when fewer).
HUMAN_BUDGET = 100
#: What a correction must travel across on the card: the graded answers' candidate model.
TRANSPORT_SLICE = "meta.candidate_model"
#: Wild-bootstrap replicates of each transported error on the card (a card stays cheap).
TRANSPORT_BOOT = 399


def _mapped(frame: pd.DataFrame, column: str, label_map) -> pd.Series:
    return frame[column].astype(object).map(lambda v: v if pd.isna(v) else label_map.get(v, v))


def _row(scope: str, r: pd.Series, *, headline: bool, note: str) -> dict:
    return row(
        scope,
        headline=headline,
        value=float(r["estimate"]),
        ci_low=float(r["ci_low"]),
        ci_high=float(r["ci_high"]),
        n=int(r["n_labelled"]) if scope != "judge only" else int(r["n_total"]),
        note=note,
    )


@measure(
    "pass_rate_grounded",
    family=FAMILY,
    label="Pass rate with human labels",
    doc=f"graded answers' pass rate: judge only, PPI++ with {HUMAN_BUDGET} human labels, all",
    needs=("pointwise", "gold"),
)
def pass_rate_grounded(ctx: CardContext) -> list[dict]:
    """The judge-only pass rate beside its PPI++ correction and the all-human value."""
    label_map = ctx.options.label_map
    items = ctx.items.assign(gold=_mapped(ctx.items, "gold", label_map))
    own = ctx.own.assign(verdict=_mapped(ctx.own, "verdict", label_map))
    table = tables.pointwise_table(own, items, positive="Correct")
    if table.empty:
        return na("no Correct/Incorrect human labels for this judge's items (give label_map)")
    n = len(table)
    budget = min(HUMAN_BUDGET, n - 2)
    if budget < 2:
        return na(f"only {n} items with human labels")
    rng = rng_for(ctx.options.seed, "grounding-card", ctx.judge)
    labelled = np.zeros(n, dtype=bool)
    labelled[rng.choice(n, size=budget, replace=False)] = True
    level = ctx.options.level
    cluster = table["cluster"].to_numpy() if table["cluster"].nunique() < n else None
    kw = dict(level=level, n_boot=ctx.options.n_boot, seed=ctx.options.seed, target="population")
    judge, human = table["judge_label"].to_numpy(), table["human_label"].to_numpy()
    part = methods.estimates(judge, np.where(labelled, human, np.nan), cluster=cluster, **kw)
    full = methods.estimates(judge, human, cluster=cluster, **kw)
    by = part.set_index("method")
    truth = full.set_index("method").loc["classical"]
    return [
        _row("judge only", by.loc["naive"], headline=False, note="the judge's labels alone"),
        _row(
            f"PPI++, {budget} human labels",
            by.loc["ppi"],
            headline=True,
            note=(
                f"λ={by.loc['ppi', 'lambda']:.2f}; labels drawn at random (seed {kw['seed']}); "
                f"{by.loc['ppi', 'n_eff_clusters']:.1f} effective clusters"
                + (" (few)" if by.loc["ppi", "few_clusters"] else "")
            ),
        ),
        _row("all human labels", truth, headline=False, note="the value to recover"),
    ]


@measure(
    "transport_error",
    family=FAMILY,
    label="Transported correction error",
    doc="error of the PPI correction learned on the other candidate models, per held-out one",
    needs=("pointwise", "gold"),
    direction="abs",
)
def transport_error(ctx: CardContext) -> list[dict]:
    """Leave-one-candidate-out transport audit of the judge's rectifier, one row per slice."""
    label_map = ctx.options.label_map
    items = ctx.items.assign(gold=_mapped(ctx.items, "gold", label_map))
    own = ctx.own.assign(verdict=_mapped(ctx.own, "verdict", label_map))
    table = tables.pointwise_table(own, items, positive="Correct", group=TRANSPORT_SLICE)
    slices = sorted(set(table["group"]) - {"?"})
    if len(slices) < 3:
        return na("fewer than 3 candidate models to carry a correction across")
    table = table[table["group"].isin(slices)]
    audit = transport.audit(table, level=ctx.options.level,
                            n_boot=TRANSPORT_BOOT, seed=ctx.options.seed)  # fmt: skip
    ok = audit[audit["grade"] != "REFUSED"]
    if ok.empty:
        return na("every candidate's judge labels leave the range the others' labels cover")
    reach = np.maximum(ok["ci_low"].abs(), ok["ci_high"].abs())
    head = str(ok.loc[reach.idxmax(), "slice"])
    return [
        row(str(r["slice"]), headline=str(r["slice"]) == head, value=float(r["error"]),
            ci_low=float(r["ci_low"]), ci_high=float(r["ci_high"]), n=int(r["n"]),
            n_eff_clusters=float(r["n_eff_clusters"]), p_value=float(r["p_value"]),
            note=f"trained on the {len(slices) - 1} other candidates"
            + ("; headline: the interval reaching furthest from 0" if str(r["slice"]) == head
               else ""))
        for _, r in ok.iterrows()
    ]  # fmt: skip


__all__ = ["HUMAN_BUDGET", "TRANSPORT_BOOT", "TRANSPORT_SLICE", "pass_rate_grounded",
           "transport_error"]  # fmt: skip
