"""What notebook 15_calibration shows: the estimators checked, the table, the misses, charts.

`obtain(...)` returns the results of the last `make calibrate` when there are some (and they
cover the checks asked for), else runs a small-R calibration on the spot — labelled as such
(`label`), because R = 10 measures coverage to ± 7 points, not the ± 1 the targets need.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from judgelab.reporting.calibration import checks, harness, results
from judgelab.simulate import base


def chosen(families: Sequence[str] = ()) -> list[harness.Check]:
    """Return the registered checks of `families` (every family when empty)."""
    every = checks.all_checks()
    if not families:
        return every
    known = sorted({c.family for c in every})
    unknown = [f for f in families if f not in known]
    if unknown:
        raise ValueError(f"unknown calibration families {unknown}; known: {known}")
    return [c for c in every if c.family in families]


def inventory(selected: Sequence[harness.Check]) -> pd.DataFrame:
    """Return one row per check: the estimator, what it estimates, the alternative, the legacy."""
    return pd.DataFrame(
        [
            {
                "family": c.family,
                "check": c.name,
                "estimator": c.estimator,
                "estimand": c.estimand,
                "interval": c.interval,
                "test": c.test,
                "alternative": c.effect,
                "legacy options": "—" if c.before is None else repr(dict(c.before)),
                "notes": c.notes,
            }
            for c in selected
        ]
    )


def obtain(
    selected: Sequence[harness.Check],
    *,
    use_saved: bool = True,
    reps: int = 10,
    seed: int = 0,
    variants: Sequence[str] = ("after",),
    scenarios: Sequence[str] = (),
    alpha: float = 0.05,
) -> tuple[results.Results, str]:
    """Return calibration results and a label saying where they come from.

    The saved `make calibrate` run when it covers the checks asked for; else a small-R run
    on the spot over `scenarios` (default: `SMOKE_SCENARIOS`), labelled a smoke.
    """
    names = {c.name for c in selected}
    saved = results.load() if use_saved else None
    if saved is not None and names <= set(saved.summary["check"]):
        summary = saved.summary[saved.summary["check"].isin(names)].reset_index(drop=True)
        meta = saved.meta
        label = (
            f"`make calibrate` results: {meta.get('reps')} to {meta.get('max_reps')} "
            f"replicates per cell, {len(meta.get('scenarios', []))} scenarios, seed "
            f"{meta.get('seed')}, {meta.get('seconds')} s on {meta.get('cpus')} CPUs"
        )
        return results.Results(saved.replicates, summary, meta), label
    chosen_scenarios = [base.scenario(s) for s in scenarios] or list(SMOKE_SCENARIOS)
    reps_table = harness.run(
        selected, scenarios=chosen_scenarios, reps=reps, seed=seed, variants=variants
    )
    summary = harness.summarise(reps_table, selected, alpha=alpha)
    meta = {"reps": reps, "seed": seed, "variants": list(variants), "smoke": True}
    label = (
        f"SMOKE run in this notebook: R = {reps} replicates per cell on "
        f"{len(chosen_scenarios)} scenarios (Monte-Carlo SE of a coverage near 95 % ≈ "
        f"{100 * np.sqrt(0.95 * 0.05 / reps):.0f} points: every verdict is inconclusive). "
        "Run `make calibrate` for the grid."
    )
    return results.Results(reps_table, summary, meta), label


class FindingSource(NamedTuple):
    """Where a finding's numbers come from; a smoke run is flagged like sample data."""

    source: str
    is_sample: bool


def finding_source(calibrated: results.Results, label: str) -> FindingSource:
    """The source of notebook 15's finding: a smoke run is never a headline (issue 34, 1)."""
    return FindingSource(label, bool(calibrated.meta.get("smoke")))


#: Scenario of the notebooks' smoke run (15, 17 without saved results): the hardest cell of the
#: grid (8 unequal clusters, effects varying by cluster, n = 48), where an estimator that fails
#: anywhere fails; the balanced design and the rest of the grid are `make calibrate`'s. One cell
#: keeps a fresh `make figures` short (two took ~3 of its CPU-minutes; issue 34).
SMOKE_SCENARIOS = (base.scenario("unequal/varying/G8/n48"),)


def misses(summary: pd.DataFrame) -> pd.DataFrame:
    """Return the default-variant cells that fail a target, or are inconclusive, and why."""
    after = summary[summary["variant"] == "after"]
    bad = after[after["verdict"].isin(["fail", "inconclusive"])]
    cols = [
        "family",
        "check",
        "scenario",
        "coverage_null",
        "coverage_alt",
        "type_i",
        "forecast_gap",
        "coverage_verdict",
        "type_i_verdict",
        "forecast_verdict",
        "reps",
        "failed",
        "declined",
    ]
    return bad.reindex(columns=cols).sort_values(["family", "check"]).reset_index(drop=True)


def plot(summary: pd.DataFrame, *, variant: str = "after") -> Figure:
    """Heat maps check × scenario: coverage under the null and type-I error, verdicts marked."""
    data = summary[summary["variant"] == variant]
    checks_ = list(dict.fromkeys(data["check"]))
    scen = [s.name for s in base.GRID if s.name in set(data["scenario"])]
    scen += [s for s in dict.fromkeys(data["scenario"]) if s not in scen]
    cov = data.pivot_table(index="check", columns="scenario", values="coverage_null")
    t1 = data.pivot_table(index="check", columns="scenario", values="type_i")
    cov = cov.reindex(index=checks_, columns=scen)
    t1 = t1.reindex(index=checks_, columns=scen)
    height = 0.28 * len(checks_) + 2.5
    fig, (left, right) = plt.subplots(1, 2, figsize=(14, height), sharey=True)
    lo, hi = harness.COVERAGE_TARGET
    left.imshow(100 * cov.to_numpy(), aspect="auto", cmap="RdYlGn", vmin=85, vmax=100)
    right.imshow(100 * t1.to_numpy(), aspect="auto", cmap="RdYlGn_r", vmin=0, vmax=12)
    verdicts = data.set_index(["check", "scenario"])
    for ax, col in ((left, "coverage_verdict"), (right, "type_i_verdict")):
        for i, c in enumerate(checks_):
            for j, s in enumerate(scen):
                v = verdicts[col].get((c, s))
                mark = {"fail": "✗", "inconclusive": "?", "pass": ""}.get(v, "")
                if mark:
                    ax.text(j, i, mark, ha="center", va="center", fontsize=7)
        ax.set_xticks(range(len(scen)), scen, rotation=90, fontsize=7)
    left.set_yticks(range(len(checks_)), checks_, fontsize=8)
    left.set_title(
        f"coverage of the 95 % interval, null (%): target {100 * lo:.0f}-{100 * hi:.0f}"
    )
    right.set_title("type-I error at α = 5 % (%): target ≤ 6")
    fig.tight_layout()
    return fig
