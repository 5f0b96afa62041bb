"""Run estimators on planted truth: coverage, type-I error and power with Monte-Carlo errors.

A `Check` ties one estimator of the library to a generator of `judgelab.simulate`:

- `simulate(rng, scenario)` draws one simulated benchmark (`Simulation`) under the scenario
  ``"null"`` (no effect) or ``"alternative"`` (the stated effect);
- `estimate(sim, options)` runs the library's estimator on the simulated tables, with
  `options` (keyword arguments: the defaults when empty, the legacy choices for "before"),
  and returns an `Outcome`: the estimate, its interval and (for a test) its p-value;
- `truth(sim, scenario)` is the population value the interval must cover (by default
  `sim.truth[check.estimand]`).

`run(checks, R, ...)` runs R replicates per check × scenario × variant (seeded per
replicate: a cell's numbers do not depend on which other cells ran, or on the worker count)
and `summarise` reports per cell: coverage of the interval (both scenarios), type-I error
(null) and power (alternative) at `alpha`, each with its Monte-Carlo standard error, the
mean interval width, failures (an estimator that returned NaN) and seconds per replicate.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from judgelab.core import inference, stats
from judgelab.simulate.base import Simulation

SCENARIOS = ("null", "alternative")
VARIANTS = ("after", "before")
#: Targets of issue 20 at the default settings.
COVERAGE_TARGET = (0.93, 0.97)
TYPE_I_TARGET = 0.06


class Outcome(NamedTuple):
    """What an estimator reported on one simulated benchmark."""

    estimate: float
    low: float = float("nan")
    high: float = float("nan")
    p_value: float = float("nan")


@dataclass(frozen=True)
class Check:
    """One estimator, the generator it is checked on, and the choices compared."""

    name: str  # e.g. "pairwise.consistent_accuracy"
    family: str
    estimator: str  # the library function, e.g. "analyses.pairwise.pairwise_rates (ca)"
    estimand: str  # key of Simulation.truth
    simulate: Callable[[np.random.Generator, str], Simulation]
    estimate: Callable[[Simulation, Mapping[str, Any]], Outcome]
    interval: bool = True  # reports an interval (coverage is measured)
    test: bool = True  # reports a p-value (type-I error and power are measured)
    before: Mapping[str, Any] | None = None  # legacy options (None: the check is new/unchanged)
    effect: str = ""  # the alternative, in words
    truth: Callable[[Simulation, str], float] | None = None
    notes: str = ""
    options: Mapping[str, Any] = field(default_factory=dict)  # defaults' overrides ("after")

    def variant_options(self, variant: str) -> Mapping[str, Any] | None:
        """Options of a variant: `options` for "after", `before` for "before" (None: skip)."""
        if variant == "after":
            return self.options
        return self.before

    def true_value(self, sim: Simulation, scenario: str) -> float:
        """The population value the interval should cover."""
        if self.truth is not None:
            return float(self.truth(sim, scenario))
        return float(sim.truth[self.estimand])


def replicate(check: Check, scenario: str, variant: str, r: int, seed: int) -> dict[str, Any]:
    """Run one replicate of one cell; errors are recorded, never raised."""
    opts = check.variant_options(variant)
    rng = stats.rng_for(seed, check.name, scenario, r)
    row: dict[str, Any] = {"check": check.name, "scenario": scenario, "variant": variant, "r": r}
    start = time.perf_counter()
    try:
        sim = check.simulate(rng, scenario)
        out = check.estimate(sim, dict(opts or {}))
        truth = check.true_value(sim, scenario)
        row.update(out._asdict(), truth=truth, error="")
    except Exception as exc:  # noqa: BLE001 - a failed replicate is counted, not fatal
        row.update(Outcome(np.nan)._asdict(), truth=np.nan, error=f"{type(exc).__name__}: {exc}")
    row["seconds"] = time.perf_counter() - start
    return row


def _cells(checks: Iterable[Check], variants: Sequence[str]) -> list[tuple[Check, str, str]]:
    cells = []
    for check in checks:
        for variant in variants:
            if check.variant_options(variant) is None:
                continue
            cells.extend((check, scenario, variant) for scenario in SCENARIOS)
    return cells


def _run_cell(args: tuple[Check, str, str, int, int]) -> list[dict[str, Any]]:
    check, scenario, variant, reps, seed = args
    return [replicate(check, scenario, variant, r, seed) for r in range(reps)]


def run(
    checks: Iterable[Check],
    *,
    reps: int = 500,
    seed: int = 0,
    variants: Sequence[str] = ("after",),
    workers: int = 1,
    progress: Callable[[str], None] | None = None,
) -> pd.DataFrame:
    """Return one row per replicate of every check × scenario × variant (see `replicate`)."""
    unknown = [v for v in variants if v not in VARIANTS]
    if unknown:
        raise ValueError(f"unknown variant(s) {unknown}; known: {list(VARIANTS)}")
    jobs = [(c, s, v, reps, seed) for c, s, v in _cells(checks, variants)]
    rows: list[dict[str, Any]] = []
    if workers <= 1:
        for job in jobs:
            rows.extend(_run_cell(job))
            if progress:
                progress(f"{job[0].name} {job[1]} {job[2]}")
    else:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            for job, out in zip(jobs, pool.map(_run_cell, jobs), strict=True):
                rows.extend(out)
                if progress:
                    progress(f"{job[0].name} {job[1]} {job[2]}")
    return pd.DataFrame(rows)


def _rate(flags: pd.Series) -> tuple[float, float, int]:
    x = flags.dropna().astype(float)
    if x.empty:
        return np.nan, np.nan, 0
    return float(x.mean()), inference.mc_se(float(x.mean()), len(x)), len(x)


def summarise(
    replicates: pd.DataFrame, checks: Iterable[Check], *, alpha: float = 0.05
) -> pd.DataFrame:
    """Return one row per check × variant: coverage, type-I error, power, MC SEs, widths.

    Coverage counts replicates of both scenarios whose interval holds the truth (a NaN
    interval counts as a miss: an estimator that cannot answer has not covered); type-I
    error is the share of null replicates with p < alpha (NaN p counts as no rejection),
    power the same under the alternative.
    """
    by_name = {c.name: c for c in checks}
    rows = []
    for (name, variant), block in replicates.groupby(["check", "variant"], sort=False):
        check = by_name[name]
        ok = block["error"] == ""
        covered = (block["low"] <= block["truth"]) & (block["truth"] <= block["high"])
        null = block[block["scenario"] == "null"]
        alt = block[block["scenario"] == "alternative"]
        cov, cov_se, n_cov = _rate(covered.where(ok)) if check.interval else (np.nan,) * 3
        t1, t1_se, n_null = (
            _rate((null["p_value"] < alpha).where(null["error"] == ""))
            if check.test
            else (np.nan,) * 3
        )
        pw, pw_se, n_alt = (
            _rate((alt["p_value"] < alpha).where(alt["error"] == ""))
            if check.test
            else (np.nan,) * 3
        )
        rows.append(
            {
                "family": check.family,
                "check": name,
                "estimator": check.estimator,
                "variant": variant,
                "coverage": cov,
                "coverage_se": cov_se,
                "type_i": t1,
                "type_i_se": t1_se,
                "power": pw,
                "power_se": pw_se,
                "effect": check.effect,
                "width": float((block["high"] - block["low"]).mean())
                if check.interval
                else np.nan,
                "reps": int(len(block) // 2),
                "failed": int((~ok).sum() + (ok & block["estimate"].isna()).sum()),
                "s_per_rep": float(block["seconds"].mean()),
                "meets_targets": _meets(check, cov, t1),
            }
        )
    return pd.DataFrame(rows)


def _meets(check: Check, coverage: float, type_i: float) -> bool:
    lo, hi = COVERAGE_TARGET
    cov_ok = (not check.interval) or (lo <= coverage <= hi)
    t1_ok = (not check.test) or (type_i <= TYPE_I_TARGET)
    return bool(cov_ok and t1_ok)
