"""Calibration of every interval and test of the library on planted truth (issue 20).

`harness` runs `Check`s (an estimator × a generator of `judgelab.simulate`) for R replicates
under a null and an alternative and summarises coverage, type-I error and power with their
Monte-Carlo standard errors; `checks` registers one module of checks per analysis family.
`make calibrate` runs them all (`python -m judgelab.reporting.calibration`); notebook
15_calibration shows the table.
"""

from judgelab.reporting.calibration import checks, results, view
from judgelab.reporting.calibration.harness import (
    COVERAGE_TARGET,
    SCENARIOS,
    TYPE_I_TARGET,
    VARIANTS,
    Check,
    Outcome,
    replicate,
    run,
    summarise,
)

__all__ = [
    "COVERAGE_TARGET",
    "SCENARIOS",
    "TYPE_I_TARGET",
    "VARIANTS",
    "Check",
    "Outcome",
    "checks",
    "results",
    "view",
    "replicate",
    "run",
    "summarise",
]
