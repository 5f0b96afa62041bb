"""Calibration of every interval and test of the library on planted truth (issues 20, 33).

`harness` runs `Check`s (an estimator × a generator of `judgelab.simulate`) for R replicates
under a null and an alternative, on every scenario of the grid (`simulate.base.GRID`:
balanced or unequal cluster sizes, constant or cluster-varying effects, 8 / 15 / 50
clusters, small or moderate n), and judges coverage and type-I error with their Monte-Carlo
intervals (pass / fail / inconclusive); `checks` registers one module of checks per analysis
family. `make calibrate` runs them all (`python -m judgelab.reporting.calibration`); notebook
15_calibration shows the table, and `pooled` each check's rates over the whole grid.
"""

from judgelab.reporting.calibration import checks, pooled, results, view
from judgelab.reporting.calibration.harness import (
    COVERAGE_TARGET,
    HYPOTHESES,
    TYPE_I_TARGET,
    VARIANTS,
    Check,
    Outcome,
    extend,
    overview,
    run,
    summarise,
)

__all__ = [
    "COVERAGE_TARGET",
    "HYPOTHESES",
    "TYPE_I_TARGET",
    "VARIANTS",
    "Check",
    "Outcome",
    "checks",
    "extend",
    "overview",
    "pooled",
    "results",
    "run",
    "summarise",
    "view",
]
