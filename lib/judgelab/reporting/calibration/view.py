"""What notebook 15_calibration shows: the estimators checked, the table, the misses, charts.

`obtain(...)` returns the results of the last `make calibrate` when there are some (and they
cover the checks asked for), else runs a small-R calibration on the spot — labelled as such
(`label`), because R = 10 measures coverage to ± 7 points, not the ± 1 the targets need.
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from judgelab.reporting.calibration import checks, harness, results


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
    alpha: float = 0.05,
) -> tuple[results.Results, str]:
    """Return calibration results and a label saying where they come from."""
    names = {c.name for c in selected}
    saved = results.load() if use_saved else None
    if saved is not None and names <= set(saved.summary["check"]):
        summary = saved.summary[saved.summary["check"].isin(names)].reset_index(drop=True)
        meta = saved.meta
        label = (
            f"`make calibrate` results: R = {meta.get('reps')} replicates per cell, "
            f"seed {meta.get('seed')}, {meta.get('seconds')} s on {meta.get('cpus')} CPUs"
        )
        return results.Results(saved.replicates, summary, meta), label
    reps_table = harness.run(selected, reps=reps, seed=seed, variants=variants)
    summary = harness.summarise(reps_table, selected, alpha=alpha)
    meta = {"reps": reps, "seed": seed, "variants": list(variants)}
    label = (
        f"SMOKE run in this notebook: R = {reps} replicates per cell (Monte-Carlo SE of a "
        f"coverage near 95 % ≈ {100 * np.sqrt(0.95 * 0.05 / (2 * reps)):.0f} points). "
        "Run `make calibrate` for the R = 500 table."
    )
    return results.Results(reps_table, summary, meta), label


def misses(summary: pd.DataFrame) -> pd.DataFrame:
    """Return the default-variant rows that miss a target, with what they missed."""
    after = summary[summary["variant"] == "after"].copy()
    lo, hi = harness.COVERAGE_TARGET
    cov_bad = after["coverage"].notna() & ~after["coverage"].between(lo, hi)
    t1_bad = after["type_i"].notna() & (after["type_i"] > harness.TYPE_I_TARGET)
    after["missed"] = np.where(cov_bad, "coverage", "") + np.where(t1_bad, " type-I", "")
    cols = ["family", "check", "coverage", "coverage_se", "type_i", "type_i_se", "missed"]
    return after.loc[cov_bad | t1_bad, cols].reset_index(drop=True)


def plot(summary: pd.DataFrame) -> Figure:
    """Coverage (target band shaded) and type-I error (target line) per check, both variants."""
    data = summary.copy()
    order = list(dict.fromkeys(data["check"]))
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 0.32 * len(order) + 1.5), sharey=True)
    y = np.arange(len(order))
    styles = {"after": ("tab:blue", "o", -0.15), "before": ("tab:grey", "s", 0.15)}
    for variant, (color, marker, shift) in styles.items():
        block = data[data["variant"] == variant].set_index("check").reindex(order)
        label = "default" if variant == "after" else "legacy"
        for ax, col in ((left, "coverage"), (right, "type_i")):
            ax.errorbar(
                100 * block[col],
                y + shift,
                xerr=100 * 1.96 * block[f"{col}_se"],
                fmt=marker,
                color=color,
                label=label,
                markersize=4,
                capsize=2,
            )
    lo, hi = harness.COVERAGE_TARGET
    left.axvspan(100 * lo, 100 * hi, color="tab:green", alpha=0.15, label="target")
    left.axvline(95, color="grey", linestyle="--", linewidth=1)
    right.axvline(100 * harness.TYPE_I_TARGET, color="tab:red", linestyle="--", linewidth=1)
    right.axvline(5, color="grey", linestyle=":", linewidth=1)
    left.set_yticks(y, order)
    left.invert_yaxis()
    left.set_xlabel("coverage of the 95 % interval (%)")
    right.set_xlabel("type-I error at α = 5 % (%)")
    left.legend(loc="lower left", fontsize=8)
    fig.tight_layout()
    return fig
