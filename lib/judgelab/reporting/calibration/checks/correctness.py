"""Calibration checks of the correctness family (notebook 05; spec 001 §4.3–§4.5).

Each check draws `simulate.correctness.correctness_sim` (50 questions × 5 candidate models,
latent ICC 0.3 on answers and on the judge's errors, 4 % invalid verdicts) and runs the
library's estimator on its tables. "before" is the i.i.d. bootstrap over answers
(`cluster=None`, spec 001 §4.4 step 7), the option the legacy code also offered.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import Any

import numpy as np

from judgelab.analyses import correctness
from judgelab.reporting.calibration.harness import Check, Outcome
from judgelab.simulate import correctness as sim_correctness
from judgelab.simulate.base import Design, Scenario, Simulation

DESIGN = Design(n_clusters=50, per_cluster=5, icc=0.3)
#: Alternatives (logit shifts): the judge is lenient with its own answers; it grades worse on
#: questions its own model got wrong.
SELF_FPR = 1.0
ANSWERED_SHIFT = 1.0


def simulate(
    rng: np.random.Generator, scenario: str, shape: Scenario | None = None, *, effect: str = ""
) -> Simulation:
    """Draw one benchmark; the alternative plants `effect` (`self` or `answered`)."""
    alt = scenario == "alternative"
    return sim_correctness.correctness_sim(
        rng,
        design=DESIGN,
        self_fpr=SELF_FPR if alt and effect == "self" else 0.0,
        answered_shift=ANSWERED_SHIFT if alt and effect == "answered" else 0.0,
    )


def _table(sim: Simulation):
    return correctness.correctness_table(sim.items, sim.judgments)


def estimate_rate(sim: Simulation, options: Mapping[str, Any], *, metric: str) -> Outcome:
    """`correctness_rates`: one metric's estimate and cluster-bootstrap interval."""
    r = correctness.correctness_rates(_table(sim), **options)
    row = r[r["metric"] == metric].iloc[0]
    return Outcome(float(row["value"]), float(row["ci_low"]), float(row["ci_high"]))


def estimate_self(sim: Simulation, options: Mapping[str, Any], *, metric: str) -> Outcome:
    """`self_vs_others` (model level): self − others, its interval and adaptive p."""
    marked = correctness.mark_self(_table(sim), judge_candidate=sim.params["judge_candidate"])
    sv = correctness.self_vs_others(marked, metrics=(metric,), missing_as_error=False, **options)
    row = sv.iloc[0]
    return Outcome(float(row["diff"]), float(row["diff_low"]), float(row["diff_high"]),
                   float(row["p_value"]))  # fmt: skip


def estimate_gap(sim: Simulation, options: Mapping[str, Any], *, metric: str) -> Outcome:
    """`answered_gap`: correctly − incorrectly, its interval and adaptive p."""
    marked = correctness.mark_answered(_table(sim), judge_candidate=sim.params["judge_candidate"])
    gap = correctness.answered_gap(marked, metrics=(metric,), missing_as_error=False, **options)
    row = gap.iloc[0]
    return Outcome(float(row["diff"]), float(row["diff_low"]), float(row["diff_high"]),
                   float(row["p_value"]))  # fmt: skip


def _rate_check(metric: str) -> Check:
    return Check(
        name=f"correctness.{metric}",
        family="correctness",
        estimator=f"analyses.correctness.correctness_rates ({metric})",
        estimand=metric,
        simulate=partial(simulate, effect="self"),
        estimate=partial(estimate_rate, metric=metric),
        test=False,
        before={"cluster": None},
        effect=f"judge FPR on its own answers shifted by +{SELF_FPR} logit",
    )


CHECKS: list[Check] = [
    _rate_check("fpr"),
    _rate_check("fnr"),
    _rate_check("kappa"),
    Check(
        name="correctness.self_fpr_diff",
        family="correctness",
        estimator="analyses.correctness.self_vs_others (fpr, model level)",
        estimand="fpr_diff",
        simulate=partial(simulate, effect="self"),
        estimate=partial(estimate_self, metric="fpr"),
        before={"cluster": None},
        effect=f"FPR on its own model's answers +{SELF_FPR} logit (≈ 0.25 → 0.46)",
    ),
    Check(
        name="correctness.answered_kappa_gap",
        family="correctness",
        estimator="analyses.correctness.answered_gap (kappa, spec 001 §4.5)",
        estimand="kappa_gap",
        simulate=partial(simulate, effect="answered"),
        estimate=partial(estimate_gap, metric="kappa"),
        before={"cluster": None},
        effect=f"both error rates +{ANSWERED_SHIFT} logit where its own model answered wrong",
        notes="legacy code showed this gap with no interval or test",
    ),
]
