"""Calibration checks of the juries family (notebook 09): juries, agreement, self-consistency.

Every check draws `simulate.juries.jury_benchmark` — 60 clusters × 5 items, latent ICC 0.3,
three judges with correlated errors (a shared item difficulty) and different accuracies,
both orders, ties and invalid outputs — and runs the library's estimator with its defaults
("after") or its legacy options ("before": items resampled as independent, the best member
fixed from the full sample). Jury vs best member, after: the best member cross-fitted over
folds of clusters (estimand jury − the member the procedure selects; in the null judge 0
is best by 0.03 CA, in the alternative the members tie, so it equals the planted
jury − max_j CA_j up to the rare wrong selection in the null).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import Any

import numpy as np

from judgelab.analyses import juries
from judgelab.reporting.calibration.harness import Check, Outcome
from judgelab.simulate import base
from judgelab.simulate import juries as sim_juries
from judgelab.simulate.base import Scenario, Simulation

DESIGN = base.Design(n_clusters=60, per_cluster=5, icc=0.3)
#: Three judges; judge 0 is the best (its intercept is solved for the null).
BASE = sim_juries.JuryParams(intercepts=(2.3, 2.0, 1.8))
#: Alternative: three equally able judges whose majority beats each of them.
ALTERNATIVE = sim_juries.JuryParams(intercepts=(2.6, 2.6, 2.6))
#: Self-consistency: one judge, 5 samples per order.
SC = {
    "null": sim_juries.JuryParams(intercepts=(0.5,), n_samples=5),
    "alternative": sim_juries.JuryParams(intercepts=(2.0,), n_samples=5),
}
N_BOOT = 1000
LEGACY = {"cluster": None}


def simulate_jury(
    rng: np.random.Generator, scenario: str, shape: Scenario | None = None
) -> Simulation:
    """Null: a jury exactly as accurate as its best member; alternative: `ALTERNATIVE`."""
    params = sim_juries.null_params(BASE, DESIGN.icc) if scenario == "null" else ALTERNATIVE
    return sim_juries.jury_benchmark(rng, DESIGN, params)


def simulate_agreement(
    rng: np.random.Generator, scenario: str, shape: Scenario | None = None
) -> Simulation:
    """Null: the `BASE` judges; alternative: the (more agreeing) `ALTERNATIVE` judges."""
    return sim_juries.jury_benchmark(rng, DESIGN, BASE if scenario == "null" else ALTERNATIVE)


def simulate_sc(
    rng: np.random.Generator, scenario: str, shape: Scenario | None = None
) -> Simulation:
    """One judge with 5 samples per order (weak judge under null, strong under alternative)."""
    return sim_juries.jury_benchmark(rng, DESIGN, SC[scenario])


def estimate_jury(sim: Simulation, options: Mapping[str, Any]) -> Outcome:
    """`jury_table` difference jury − best member of the 3-judge jury, with its p-value."""
    table = juries.jury_table(
        sim.judgments, size=3, across=None, n_boot=N_BOOT, seed=0, **dict(options)
    )
    row = table.iloc[0]
    return Outcome(row["diff_vs_best"], row["diff_low"], row["diff_high"], row["p_value"])


def estimate_alpha(sim: Simulation, options: Mapping[str, Any], *, units: str) -> Outcome:
    """`alpha_table` nominal alpha of the three judges under `units`."""
    table = juries.alpha_table(
        sim.judgments, units=units, across=None, n_boot=N_BOOT, seed=0, **dict(options)
    )
    row = table.iloc[0]
    return Outcome(row["alpha"], row["ci_low"], row["ci_high"])


def estimate_kappa(sim: Simulation, options: Mapping[str, Any]) -> Outcome:
    """`cohen_kappa_matrix` kappa of judges 0 and 1."""
    table = juries.cohen_kappa_matrix(
        sim.judgments, across=None, n_boot=N_BOOT, seed=0, **dict(options)
    )
    row = juries.pick(table, judge_1="judge-0", judge_2="judge-1").iloc[0]
    return Outcome(row["kappa"], row["ci_low"], row["ci_high"])


def estimate_sc(sim: Simulation, options: Mapping[str, Any]) -> Outcome:
    """`self_consistency_rates` sc − greedy CA of judge 0 (paired)."""
    sc = juries.self_consistency(sim.judgments)
    rates = juries.self_consistency_rates(sc, across=None, n_boot=N_BOOT, seed=0, **dict(options))
    row = juries.pick(rates, metric="sc_minus_greedy").iloc[0]
    return Outcome(row["value"], row["ci_low"], row["ci_high"])


def _jury_gain(params: sim_juries.JuryParams) -> float:
    return sim_juries.population(params, DESIGN.icc)["jury_minus_best"]


CHECKS: list[Check] = [
    Check(
        name="juries.jury_vs_best_member",
        family="juries",
        estimator="analyses.juries.jury_table (diff_vs_best, p_value)",
        estimand="jury_minus_best",
        simulate=simulate_jury,
        estimate=estimate_jury,
        before={"cluster": None, "best_member": "fixed", "interval": "percentile"},
        effect=(
            "three equally able judges (population CA 0.65 each) whose plurality vote "
            f"is {_jury_gain(ALTERNATIVE):+.3f} above the best member"
        ),
        notes="null: judge 0's intercept solved so the jury equals its best member",
    ),
    Check(
        name="juries.alpha",
        family="juries",
        estimator="analyses.juries.alpha_table (units=item, nominal)",
        estimand="alpha_item",
        simulate=simulate_agreement,
        estimate=partial(estimate_alpha, units="item"),
        test=False,
        before=LEGACY,
        effect="judges of equal, higher accuracy (alpha 0.12 → higher agreement)",
    ),
    Check(
        name="juries.alpha_item_order",
        family="juries",
        estimator="analyses.juries.alpha_table (units=item_order, nominal)",
        estimand="alpha_item_order",
        simulate=simulate_agreement,
        estimate=partial(estimate_alpha, units="item_order"),
        test=False,
        before=LEGACY,
        effect="judges of equal, higher accuracy",
        notes="before: the two presentations of an item resampled as independent units",
    ),
    Check(
        name="juries.kappa",
        family="juries",
        estimator="analyses.juries.cohen_kappa_matrix",
        estimand="kappa_01",
        simulate=simulate_agreement,
        estimate=estimate_kappa,
        test=False,
        before=LEGACY,
        effect="judges of equal, higher accuracy",
    ),
    Check(
        name="juries.self_consistency",
        family="juries",
        estimator="analyses.juries.self_consistency_rates (sc_minus_greedy)",
        estimand="sc_minus_greedy_0",
        simulate=simulate_sc,
        estimate=estimate_sc,
        test=False,
        before=LEGACY,
        effect="a strong judge (5 samples per order) instead of a weak one",
    ),
]
