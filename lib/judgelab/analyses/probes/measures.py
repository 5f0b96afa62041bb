"""Card measure of the probes family: how far each probe pulls the judge (a row per probe).

Where the judge was run on a probe benchmark (`judgelab probe`, then `judgelab judge`), the
card shows, per probe, the net pull toward the probed response (`effects.probe_effects`'s
`pull`, with its paired item-clustered interval and test), and notes the robustness and the
accuracy change when the probe favours the worse response; the headline is every probe
pooled (`all`). Other sources get one n/a row saying how to produce the data.
"""

from __future__ import annotations

import pandas as pd

from judgelab.analyses.probes.effects import ALL, probe_effects, probe_pairs
from judgelab.analyses.probes.variants import is_probe_benchmark
from judgelab.analyses.registry import CardContext, measure, na, rows

FAMILY = "probes"
NO_PROBES = "not a probe benchmark (run `judgelab probe`, then `judgelab judge` on it)"


def _note(part: pd.DataFrame) -> str:
    by = part.set_index("metric")
    rob, acc = by.loc["robustness"], by.loc["acc_change_worse"]
    text = f"robustness {100 * rob['value']:.0f}%"
    if not pd.isna(acc["value"]):
        text += f"; accuracy {100 * acc['value']:+.1f} pts when it favours the worse response"
    return text


@measure(
    "probe_pull",
    family=FAMILY,
    label="Probe pull",
    doc="net shift toward the response a probe was applied to (0 = robust), per probe",
    needs=("pairwise", "both_orders"),
    direction="abs",
)
def probe_pull(ctx: CardContext) -> list[dict]:
    """Per probe: the pull toward the probed response, robustness and accuracy change."""
    if not is_probe_benchmark(ctx.items):
        return na(NO_PROBES)
    effects = ctx.cached(
        "probe_effects", lambda: probe_effects(probe_pairs(ctx.own, ctx.items), **ctx.boot)
    )
    if effects.empty:
        return na("no variant of this judge's items was judged with its control")
    frames = []
    for (condition, probe), part in effects.groupby(["condition", "probe"], sort=False):
        pull = part[part["metric"] == "pull"].iloc[0]
        scope = probe if effects["condition"].nunique() == 1 else f"{probe} ({condition})"
        frames.append(
            {
                "scope": scope,
                "value": pull["value"],
                "ci_low": pull["ci_low"],
                "ci_high": pull["ci_high"],
                "n": pull["n"],
                "p_value": pull["p_value"],
                "note": _note(part),
            }
        )
    table = pd.DataFrame(frames)
    headline = next((s for s in table["scope"] if str(s).startswith(ALL)), table["scope"].iloc[0])
    return rows(table, headline=headline)


__all__ = ["NO_PROBES", "probe_pull"]
