"""Run estimators on planted truth over a grid of data shapes; judge them with Monte-Carlo error.

A `Check` ties one estimator of the library to a generator of `judgelab.simulate`:

- `simulate(rng, hypothesis, scenario)` draws one simulated benchmark (`Simulation`) under
  the hypothesis ``"null"`` (no effect) or ``"alternative"`` (the stated effect), shaped
  like `scenario` (a cell of `simulate.base.GRID`: balanced or unequal cluster sizes,
  constant or cluster-varying effects, 8 / 15 / 50 clusters, small or moderate n);
- `estimate(sim, options)` runs the library's public estimator on the simulated tables with
  `options` (the defaults when empty; the earlier defaults for "before") and returns an
  `Outcome`: the estimate, its interval, its p-value — or `declined`, the reason the
  estimator gave for reporting no number (e.g. too few own-model negatives);
- `truth(sim, hypothesis)` is the population value the interval must cover (by default
  `sim.truth[check.estimand]`).

Checks that share their `simulate` function share each simulated benchmark: one draw per
replicate feeds all of them. `run` seeds every replicate by (seed, generator, scenario,
hypothesis, r), so a cell's numbers do not depend on which other cells ran, on the worker
count, or on whether more replicates were added later (`extend`).

`summarise` reports per check × scenario × variant, null and alternative apart: coverage
under each, type-I error (null) and power (alternative) at `alpha`, each with its
Monte-Carlo 95 % interval (Wilson); failures (an exception, or no number without a reason)
and declines in their own columns, never silently dropped or counted as "no rejection";
mean interval width and effective clusters. Each target gets a verdict from its MC interval:
**pass** when the whole interval lies inside the target (coverage in [0.93, 0.97], type-I
error below 0.06), **fail** when it lies wholly outside, **inconclusive** otherwise (then more
replicates decide: `extend` adds them to the undecided cells). A *fail* read off fewer than
`CONFIRM_REPS` replicates is undecided too: each cell's 95 % MC interval misses its true rate
one time in twenty, so among the grid's hundreds of cells a few fail by chance at small R (issue
33: the probe pull at 15 clusters failed at R = 60 with type-I 0.13 [0.07, 0.24] — 0.075 at
R = 400 and 0.038 [0.026, 0.057] on 600 fresh replicates); `extend` re-checks such a cell
with more replicates before the failure stands. A failure from failed replicates (an exception,
a missing number) is not re-checked: more replicates cannot undo it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from judgelab.core import stats, threads
from judgelab.reporting.calibration.forecast import forecast_fields, forecast_verdict
from judgelab.reporting.calibration.journal import Journal
from judgelab.simulate.base import BALANCED, GRID, Scenario, Simulation

HYPOTHESES = ("null", "alternative")
VARIANTS = ("after", "before")
#: Targets at the default settings (issue 33).
COVERAGE_TARGET = (0.93, 0.97)
TYPE_I_TARGET = 0.06
#: Verdicts of a target from its Monte-Carlo interval.
VERDICTS = ("pass", "fail", "inconclusive", "n/a")
#: A Monte-Carlo "fail" on fewer replicates than this is re-checked by `extend`.
CONFIRM_REPS = 400


class Outcome(NamedTuple):
    """What an estimator reported on one simulated benchmark."""

    estimate: float
    low: float = float("nan")
    high: float = float("nan")
    p_value: float = float("nan")
    declined: str = ""  # the estimator's own reason for reporting no number (not a failure)
    n_eff: float = float("nan")  # effective clusters behind the number


@dataclass(frozen=True)
class Check:
    """One estimator, the generator it is checked on, and the choices compared."""

    name: str  # e.g. "pairwise.consistent_accuracy"
    family: str
    estimator: str  # the library function, e.g. "analyses.pairwise.pairwise_rates (ca)"
    estimand: str  # key of Simulation.truth
    simulate: Callable[[np.random.Generator, str, Scenario], Simulation]
    estimate: Callable[[Simulation, Mapping[str, Any]], Outcome]
    interval: bool = True  # reports an interval (coverage is measured)
    test: bool = True  # reports a p-value (type-I error and power are measured)
    forecast: bool = False  # the estimate is P(event), the truth its indicator (`forecast`)
    before: Mapping[str, Any] | None = None  # earlier defaults (None: the check is new)
    effect: str = ""  # the alternative, in words
    truth: Callable[[Simulation, str], float] | None = None
    notes: str = ""
    options: Mapping[str, Any] = field(default_factory=dict)  # defaults' overrides ("after")

    def variant_options(self, variant: str) -> Mapping[str, Any] | None:
        """Options of a variant: `options` for "after", `before` for "before" (None: skip)."""
        if variant == "after":
            return self.options
        return self.before

    def true_value(self, sim: Simulation, hypothesis: str) -> float:
        """The population value the interval should cover."""
        if self.truth is not None:
            return float(self.truth(sim, hypothesis))
        return float(sim.truth[self.estimand])


def generator_name(fn: Callable[..., Any]) -> str:
    """Return a stable name of a `simulate` function: module, name and any bound arguments.

    Two partials of one function with different arguments are different generators.
    """
    inner = getattr(fn, "func", fn)  # functools.partial
    name = f"{getattr(inner, '__module__', '?')}.{getattr(inner, '__qualname__', repr(inner))}"
    bound = sorted((getattr(fn, "keywords", None) or {}).items())
    args = getattr(fn, "args", ())
    return name + (f"{args!r}{bound!r}" if bound or args else "")


class _Job(NamedTuple):
    checks: tuple[Check, ...]  # all share one simulate function
    scenario: Scenario
    hypothesis: str
    variants: tuple[str, ...]
    rs: tuple[int, ...]
    seed: int


def _replicate(job: _Job, r: int) -> list[dict[str, Any]]:
    """Draw one benchmark and run every check of the job on it; errors are rows, not raised."""
    gen = job.checks[0].simulate
    rng = stats.rng_for(job.seed, generator_name(gen), job.scenario.name, job.hypothesis, r)
    base = {"scenario": job.scenario.name, "hypothesis": job.hypothesis, "r": r}
    start = time.perf_counter()
    try:
        sim = gen(rng, job.hypothesis, job.scenario)
        sim_error = ""
    except Exception as exc:  # noqa: BLE001 - a failed draw is counted, not fatal
        sim, sim_error = None, f"simulate: {type(exc).__name__}: {exc}"
    sim_s = time.perf_counter() - start
    rows = []
    for check in job.checks:
        for variant in job.variants:
            opts = check.variant_options(variant)
            if opts is None:
                continue
            row = {"check": check.name, "variant": variant, **base}
            t0 = time.perf_counter()
            if sim is None:
                row.update(Outcome(np.nan)._asdict(), truth=np.nan, error=sim_error)
            else:
                try:
                    out = check.estimate(sim, dict(opts))
                    row.update(out._asdict(), truth=check.true_value(sim, job.hypothesis))
                    row["error"] = ""
                except Exception as exc:  # noqa: BLE001 - a failed estimate is counted
                    row.update(Outcome(np.nan)._asdict(), truth=np.nan)
                    row["error"] = f"{type(exc).__name__}: {exc}"
            row["seconds"] = time.perf_counter() - t0 + sim_s / len(job.checks)
            rows.append(row)
    return rows


def _run_job(job: _Job) -> list[dict[str, Any]]:
    return [row for r in job.rs for row in _replicate(job, r)]


def _jobs(
    checks: Iterable[Check],
    scenarios: Sequence[Scenario],
    variants: Sequence[str],
    rs: Sequence[int],
    seed: int,
) -> list[_Job]:
    groups: dict[str, list[Check]] = {}
    for check in checks:
        groups.setdefault(generator_name(check.simulate), []).append(check)
    jobs = []
    for members in groups.values():
        for scenario in scenarios:
            for hypothesis in HYPOTHESES:
                jobs.append(
                    _Job(tuple(members), scenario, hypothesis, tuple(variants), tuple(rs), seed)
                )
    return jobs


def _execute(
    jobs: list[_Job],
    workers: int,
    progress: Callable[[str], None] | None,
    journal: Journal | None = None,
) -> list[dict[str, Any]]:
    """Run the jobs (reusing the journal's finished ones); rows in job order."""
    done: dict[int, list[dict[str, Any]]] = {}

    def finish(i: int, rows: list[dict[str, Any]], fresh: bool) -> None:
        done[i] = rows
        if fresh and journal is not None:
            journal.store(jobs[i], rows)
        if progress:
            job = jobs[i]
            names = ",".join(c.name for c in job.checks)
            how = "" if fresh else " (journal)"
            progress(f"{names} {job.scenario.name} {job.hypothesis} R+={len(job.rs)}{how}")

    todo = []
    for i, job in enumerate(jobs):
        kept = journal.load(job) if journal is not None else None
        if kept is None:
            todo.append(i)
        else:
            finish(i, kept, fresh=False)
    if workers <= 1:
        for i in todo:
            finish(i, _run_job(jobs[i]), fresh=True)
    else:
        cap = threads.per_job(workers)
        with ProcessPoolExecutor(workers, initializer=threads.cap, initargs=(cap,)) as pool:
            futures = {pool.submit(_run_job, jobs[i]): i for i in todo}
            for future in as_completed(futures):
                finish(futures[future], future.result(), fresh=True)
    return [row for i in range(len(jobs)) for row in done[i]]


def run(
    checks: Iterable[Check],
    *,
    scenarios: Sequence[Scenario],
    reps: int = 500,
    seed: int = 0,
    variants: Sequence[str] = ("after",),
    workers: int = 1,
    progress: Callable[[str], None] | None = None,
    journal: Journal | None = None,
) -> pd.DataFrame:
    """Return one row per replicate × check × variant × scenario × hypothesis.

    With a `journal`, each finished job is saved as it ends and jobs saved by an earlier run
    with the same library code are read back instead of rerun.
    """
    unknown = [v for v in variants if v not in VARIANTS]
    if unknown:
        raise ValueError(f"unknown variant(s) {unknown}; known: {list(VARIANTS)}")
    jobs = _jobs(list(checks), list(scenarios), variants, range(reps), seed)
    return pd.DataFrame(_execute(jobs, workers, progress, journal))


def extend(
    replicates: pd.DataFrame,
    checks: Iterable[Check],
    *,
    alpha: float = 0.05,
    max_reps: int = 2000,
    seed: int = 0,
    workers: int = 1,
    budget_s: float | None = None,
    progress: Callable[[str], None] | None = None,
    journal: Journal | None = None,
) -> pd.DataFrame:
    """Add replicates to every undecided cell (doubling, up to `max_reps`) within a budget.

    A cell (checks sharing a generator × scenario) is undecided while any of its verdicts
    is inconclusive, or is a Monte-Carlo fail read off fewer than `CONFIRM_REPS` replicates
    (`undecided`). Replicate r of a cell is the same draw whatever else ran, so extending
    equals running with more replicates from the start.
    """
    checks = list(checks)
    start = time.perf_counter()
    by_name = {c.name: c for c in checks}
    while True:
        summary = summarise(replicates, checks, alpha=alpha)
        open_ = summary[undecided(summary)]
        have_r = replicates.groupby(["check", "scenario"])["r"].max() + 1
        todo: dict[tuple[str, str], int] = {}
        for row in open_.itertuples():
            have = int(have_r[(row.check, row.scenario)])
            if have < max_reps:
                todo[(generator_name(by_name[row.check].simulate), row.scenario)] = have
        if not todo:
            return replicates
        if budget_s is not None and time.perf_counter() - start > budget_s:
            return replicates
        jobs = []
        for (gen, scen_name), have in todo.items():
            members = tuple(c for c in checks if generator_name(c.simulate) == gen)
            scen = next(s for s in (*GRID, BALANCED) if s.name == scen_name)
            variants = tuple(sorted(set(replicates["variant"])))
            more = range(have, min(max_reps, 2 * have))
            for hypothesis in HYPOTHESES:
                jobs.append(_Job(members, scen, hypothesis, variants, tuple(more), seed))
        replicates = pd.concat(
            [replicates, pd.DataFrame(_execute(jobs, workers, progress, journal))],
            ignore_index=True,
        )


def undecided(summary: pd.DataFrame) -> pd.Series:
    """Return which `summarise` rows need more replicates (see `extend`).

    Inconclusive verdicts, and Monte-Carlo fails on fewer than `CONFIRM_REPS` replicates
    (a fail from failed replicates stands: more replicates cannot undo it).
    """
    cols = ["coverage_verdict", "type_i_verdict", "forecast_verdict"]
    verdicts = summary[[c for c in cols if c in summary.columns]]
    open_ = (verdicts == "inconclusive").any(axis=1)
    unconfirmed = (
        (verdicts == "fail").any(axis=1)
        & (summary["failed"] == 0)
        & (summary["reps"] < CONFIRM_REPS)
    )
    return open_ | unconfirmed


def mc_interval(k: float, n: int) -> tuple[float, float]:
    """Return the Wilson 95 % interval of a Monte-Carlo rate (k of n replicates)."""
    if n <= 0:
        return float("nan"), float("nan")
    low, high = stats.wilson_interval(k, n, level=0.95)
    return float(low), float(high)


def verdict(low: float, high: float, target: tuple[float, float]) -> str:
    """Return pass / fail / inconclusive: the MC interval inside, outside or across `target`.

    >>> verdict(0.935, 0.965, (0.93, 0.97)), verdict(0.80, 0.90, (0.93, 0.97))
    ('pass', 'fail')
    >>> verdict(0.92, 0.96, (0.93, 0.97)), verdict(0.01, 0.05, (0.0, 0.06))
    ('inconclusive', 'pass')
    """
    if not np.isfinite(low) or not np.isfinite(high):
        return "n/a"
    lo, hi = target
    if lo <= low and high <= hi:
        return "pass"
    if high < lo or low > hi:
        return "fail"
    return "inconclusive"


def _rate(flags: pd.Series) -> dict[str, float]:
    x = flags.astype(float)
    n = len(x)
    k = float(x.sum())
    low, high = mc_interval(k, n)
    return {"rate": k / n if n else np.nan, "low": low, "high": high, "n": n}


def summarise(
    replicates: pd.DataFrame, checks: Iterable[Check], *, alpha: float = 0.05
) -> pd.DataFrame:
    """Return one row per check × scenario × variant with rates, MC intervals and verdicts.

    A replicate *failed* when the estimator raised or returned no number without a reason
    (NaN estimate, NaN bounds of an interval check, NaN p-value of a test check); it is
    *declined* when the estimator said why it reports nothing. Neither enters the rates;
    both are counted. Coverage is measured under each hypothesis; type-I error from the
    null replicates, power from the alternative ones.
    """
    by_name = {c.name: c for c in checks}
    rows = []
    keys = ["check", "scenario", "variant"]
    for (name, scen, variant), block in replicates.groupby(keys, sort=False):
        check = by_name[name]
        declined = block["declined"].fillna("").astype(str) != ""
        bad = block["error"].fillna("").astype(str) != ""
        bad |= ~declined & block["estimate"].isna()
        if check.interval:
            bad |= ~declined & (block["low"].isna() | block["high"].isna())
        if check.test:
            bad |= ~declined & block["p_value"].isna()
        ok = ~bad & ~declined
        covered = (block["low"] <= block["truth"]) & (block["truth"] <= block["high"])
        rejected = block["p_value"] < alpha
        row: dict[str, Any] = {
            "family": check.family,
            "check": name,
            "estimator": check.estimator,
            "scenario": scen,
            "variant": variant,
            "reps": int(block["r"].nunique()),
            "failed": int(bad.sum()),
            "declined": int(declined.sum()),
            "effect": check.effect,
        }
        pooled = _rate(covered[ok]) if check.interval else None
        row["coverage"] = pooled["rate"] if pooled else np.nan  # both hypotheses together
        for hyp, tag in (("null", "null"), ("alternative", "alt")):
            sel = ok & (block["hypothesis"] == hyp)
            cov = _rate(covered[sel]) if check.interval else None
            row[f"coverage_{tag}"] = cov["rate"] if cov else np.nan
            row[f"coverage_{tag}_low"] = cov["low"] if cov else np.nan
            row[f"coverage_{tag}_high"] = cov["high"] if cov else np.nan
            rej = _rate(rejected[sel]) if check.test else None
            name_rej = "type_i" if hyp == "null" else "power"
            row[name_rej] = rej["rate"] if rej else np.nan
            row[f"{name_rej}_low"] = rej["low"] if rej else np.nan
            row[f"{name_rej}_high"] = rej["high"] if rej else np.nan
        row["width"] = (
            float((block["high"] - block["low"])[ok].mean()) if check.interval else np.nan
        )
        if check.forecast:
            row.update(forecast_fields(block["estimate"][ok], block["truth"][ok]))
        row["n_eff"] = float(block["n_eff"][ok].mean()) if ok.any() else np.nan
        row["s_per_rep"] = float(block["seconds"].mean())
        row.update(_verdicts(row, check))
        rows.append(row)
    return pd.DataFrame(rows)


def _verdicts(row: Mapping[str, Any], check: Check) -> dict[str, str]:
    if check.interval:
        both = [
            verdict(row[f"coverage_{t}_low"], row[f"coverage_{t}_high"], COVERAGE_TARGET)
            for t in ("null", "alt")
        ]
        cov = _worst(both)
    else:
        cov = "n/a"
    t1 = (
        verdict(row["type_i_low"], row["type_i_high"], (0.0, TYPE_I_TARGET))
        if check.test
        else "n/a"
    )
    fc = (
        forecast_verdict(row["forecast_gap_low"], row["forecast_gap_high"])
        if check.forecast
        else "n/a"
    )
    if row["failed"]:
        cov = "fail" if check.interval else cov
        t1 = "fail" if check.test else t1
        fc = "fail" if check.forecast else fc
    return {"coverage_verdict": cov, "type_i_verdict": t1, "forecast_verdict": fc,
            "verdict": _worst([cov, t1, fc])}  # fmt: skip


def _worst(verdicts: Sequence[str]) -> str:
    for v in ("fail", "inconclusive", "pass"):
        if v in verdicts:
            return v
    return "n/a"


def overview(summary: pd.DataFrame) -> pd.DataFrame:
    """Return one row per check × variant: how many scenarios pass, fail, are inconclusive."""
    counts = (
        summary.groupby(["family", "check", "variant", "verdict"], sort=False)
        .size()
        .unstack("verdict", fill_value=0)
        .reindex(columns=list(VERDICTS[:3]), fill_value=0)
        .reset_index()
    )
    worst = summary.groupby(["check", "variant"], sort=False)["verdict"].agg(
        lambda v: _worst(list(v))
    )
    pairs = zip(counts["check"], counts["variant"], strict=True)
    counts["verdict"] = [worst[(c, v)] for c, v in pairs]
    return counts


__all__ = [
    "CONFIRM_REPS",
    "COVERAGE_TARGET",
    "HYPOTHESES",
    "TYPE_I_TARGET",
    "VARIANTS",
    "VERDICTS",
    "Check",
    "Outcome",
    "extend",
    "generator_name",
    "mc_interval",
    "overview",
    "run",
    "summarise",
    "undecided",
    "verdict",
]
