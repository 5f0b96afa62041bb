"""Card measure of the stability family: how often the judge's verdict changes when it is rerun.

Registered with `judgelab.analyses.registry.measure`; the report card runs it. The headline is
the judge's repeat-trial flip rate (the share of units whose trials disagree) when it was
sampled more than once; else the share of units whose verdict changes with the prompt, among
the prompts its model was run with on the same units (template sensitivity); else n/a.
"""

from __future__ import annotations

from judgelab.analyses.registry import CardContext, measure, na, row
from judgelab.analyses.stability import repeats, templates

FAMILY = "stability"
NO_OTHER = (
    "the judge was run once per item with one prompt: no repeated trials and no other "
    "prompt of its model on the same items to compare"
)


def _fields(r) -> dict:
    return {
        "value": float(r["value"]),
        "ci_low": float(r["ci_low"]),
        "ci_high": float(r["ci_high"]),
        "n": int(r["n"]),
        "n_eff_clusters": float(r["n_eff_clusters"]),
        "few_clusters": bool(r["few_clusters"]),
    }


@measure(
    "stability",
    family=FAMILY,
    label="Verdict instability",
    doc="share of verdicts that change when the judge is rerun (else with its prompt)",
    direction="lower",
)
def stability_row(ctx: CardContext) -> list[dict]:
    """Repeat-trial flip rate (headline when sampled again), and template sensitivity."""
    out = []
    boot = {"seed": ctx.options.seed, "level": ctx.options.level}
    if not ctx.trials.empty:
        rel = repeats.repeat_reliability(ctx.trials, **boot).set_index("measure")
        note = f"{rel.loc['flip', 'trials']:.1f} trials per unit on average"
        out.append(row("repeat trials", headline=True, note=note, **_fields(rel.loc["flip"])))
    model = str(ctx.own["model"].iloc[0])
    keys = ["benchmark", "split", "item_id"]
    same = ctx.judgments[ctx.judgments["model"].astype(str) == model]
    same = same.merge(ctx.own[keys].drop_duplicates(), on=keys, how="inner")
    if same["prompt"].nunique() >= 2:
        sens = templates.template_sensitivity(same, **boot)
        if not sens.empty:
            r = sens.iloc[0]
            note = f"{int(r['n_prompts'])} prompts: {r['prompts']}"
            out.append(row("other prompts", headline=not out, note=note, **_fields(r)))
    return out or na(NO_OTHER)
