"""Calibration checks of the juries family (notebook 09): juries, agreement, self-consistency.

Every check draws `simulate.juries.jury_benchmark` shaped like its scenario (`Scenario.design`:
8–50 clusters, balanced or very unequal sizes, latent ICC 0.5, and — in the "varying" cells —
each judge's accuracy and the position effect varying by cluster): three judges with
correlated errors (a shared item difficulty) and different accuracies, both orders, ties,
and invalid outputs missing not at random (2 % of right verdicts, 10 % of wrong ones). It runs
the library's estimator with its defaults ("after") or with the defaults before issue 33
("before").

- Jury vs best member (`jury_table`): after, jury − best member = min_j (jury − member_j),
  each difference of rates by the restricted wild cluster bootstrap at level 1 − α/3, the
  interval of the minimum and the p-value that inverts it (`best_member="simultaneous"`);
  before, the best member cross-fitted over folds of clusters, ± t_{G−1} · bootstrap SE.
  The null plants a jury exactly as accurate as its best member (judge 0's intercept solved
  on the population, with the scenario's cluster-varying effects); the alternative three
  equal judges whose plurality vote beats each. The truth is jury − max_j CA_j.
- Alpha and kappa: after, the bias-corrected cluster jackknife with t(G − 1); before, the
  percentile cluster bootstrap. Their truths are super-population values (`population`).
- Self-consistency: sc − greedy accuracy of one judge with 5 samples per order (paired);
  after, the wild cluster bootstrap test and interval; before, the percentile bootstrap.
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

#: The design when a check is drawn without a scenario (the project's earlier balanced shape).
DESIGN = base.BALANCED.design()
#: Invalid outputs: 2 % of right verdicts, 10 % of wrong ones and ties (missing not at random).
_MNAR = {"invalid_rate": 0.02, "invalid_if_wrong": 0.10}
#: Three judges; judge 0 is the best (its intercept is solved for the null). Judges err
#: mostly on their own (judge_sd) so that a jury can help.
BASE = sim_juries.JuryParams(intercepts=(2.3, 2.0, 1.8), item_sd=0.5, judge_sd=1.5, **_MNAR)
#: Alternative: three equally able judges whose majority beats each of them.
ALTERNATIVE = sim_juries.JuryParams(intercepts=(2.3, 2.3, 2.3), item_sd=0.5, judge_sd=1.5, **_MNAR)
#: Self-consistency: one judge, 5 samples per order; under the null its intercept is solved
#: so that the vote over samples gains nothing (sc − greedy = 0 in the population).
SC = {
    "null": sim_juries.JuryParams(intercepts=(0.5,), n_samples=5, **_MNAR),
    "alternative": sim_juries.JuryParams(intercepts=(2.0,), n_samples=5, **_MNAR),
}
N_BOOT = 1000


def _design(shape: Scenario | None) -> base.Design:
    return DESIGN if shape is None else shape.design()


def simulate_jury(
    rng: np.random.Generator, scenario: str, shape: Scenario | None = None
) -> Simulation:
    """Null: a jury exactly as accurate as its best member; alternative: `ALTERNATIVE`."""
    design = _design(shape)
    if scenario == "null":
        params = sim_juries.null_params(BASE, design.icc, effect_sd=design.effect_sd)
    else:
        params = ALTERNATIVE
    return sim_juries.jury_benchmark(rng, design, params)


def simulate_agreement(
    rng: np.random.Generator, scenario: str, shape: Scenario | None = None
) -> Simulation:
    """Null: the `BASE` judges; alternative: the (more agreeing) `ALTERNATIVE` judges."""
    params = BASE if scenario == "null" else ALTERNATIVE
    return sim_juries.jury_benchmark(rng, _design(shape), params)


def simulate_sc(
    rng: np.random.Generator, scenario: str, shape: Scenario | None = None
) -> Simulation:
    """One judge with 5 samples per order (no gain from the vote under the null)."""
    design = _design(shape)
    params = SC[scenario]
    if scenario == "null":
        params = sim_juries.null_sc_params(params, design.icc, design.effect_sd)
    return sim_juries.jury_benchmark(rng, design, params)


#: The defaults before issue 33 (the "before" variant).
BEFORE_JURY = {"interval": "t"}
BEFORE_SMOOTH = {"interval": "percentile"}


def estimate_jury(sim: Simulation, options: Mapping[str, Any]) -> Outcome:
    """`jury_table` difference jury − best member of the 3-judge jury, with its p-value."""
    table = juries.jury_table(
        sim.judgments, size=3, across=None, n_boot=N_BOOT, seed=0, **dict(options)
    )
    row = table.iloc[0]
    return Outcome(
        row["diff_vs_best"],
        row["diff_low"],
        row["diff_high"],
        row["p_value"],
        n_eff=float(row.get("n_eff_clusters", np.nan)),
    )


def estimate_alpha(sim: Simulation, options: Mapping[str, Any], *, units: str) -> Outcome:
    """`alpha_table` nominal alpha of the three judges under `units`."""
    table = juries.alpha_table(
        sim.judgments, units=units, across=None, n_boot=N_BOOT, seed=0, **dict(options)
    )
    row = table.iloc[0]
    return Outcome(row["alpha"], row["ci_low"], row["ci_high"], n_eff=row["n_eff_clusters"])


def estimate_kappa(sim: Simulation, options: Mapping[str, Any]) -> Outcome:
    """`cohen_kappa_matrix` kappa of judges 0 and 1."""
    table = juries.cohen_kappa_matrix(
        sim.judgments, across=None, n_boot=N_BOOT, seed=0, **dict(options)
    )
    row = juries.pick(table, judge_1="judge-0", judge_2="judge-1").iloc[0]
    return Outcome(
        row["kappa"], row["ci_low"], row["ci_high"], n_eff=float(row.get("n_eff_clusters", np.nan))
    )


def estimate_sc(sim: Simulation, options: Mapping[str, Any]) -> Outcome:
    """`self_consistency_rates` sc − greedy CA of judge 0 (paired), with its test of 0."""
    sc = juries.self_consistency(sim.judgments)
    rates = juries.self_consistency_rates(sc, across=None, n_boot=N_BOOT, seed=0, **dict(options))
    row = juries.pick(rates, metric="sc_minus_greedy").iloc[0]
    return Outcome(
        row["value"],
        row["ci_low"],
        row["ci_high"],
        float(row.get("p_value", np.nan)),
        n_eff=float(row.get("n_eff_clusters", np.nan)),
    )


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
        before=BEFORE_JURY,
        effect=(
            "three equally able judges whose plurality vote is "
            f"{_jury_gain(ALTERNATIVE):+.3f} above the best member (balanced, ICC 0.3)"
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
        before=BEFORE_SMOOTH,
        effect="judges of equal, higher accuracy",
        notes="truth: the super-population alpha (expected coincidences, large draw)",
    ),
    Check(
        name="juries.alpha_item_order",
        family="juries",
        estimator="analyses.juries.alpha_table (units=item_order, nominal)",
        estimand="alpha_item_order",
        simulate=simulate_agreement,
        estimate=partial(estimate_alpha, units="item_order"),
        test=False,
        before=BEFORE_SMOOTH,
        effect="judges of equal, higher accuracy",
    ),
    Check(
        name="juries.kappa",
        family="juries",
        estimator="analyses.juries.cohen_kappa_matrix",
        estimand="kappa_01",
        simulate=simulate_agreement,
        estimate=estimate_kappa,
        test=False,
        before=BEFORE_SMOOTH,
        effect="judges of equal, higher accuracy",
    ),
    Check(
        name="juries.self_consistency",
        family="juries",
        estimator="analyses.juries.self_consistency_rates (sc_minus_greedy)",
        estimand="sc_minus_greedy_0",
        simulate=simulate_sc,
        estimate=estimate_sc,
        before=BEFORE_SMOOTH,
        effect="a strong judge (5 samples per order) instead of a weak one",
        notes="null: a judge whose vote over samples equals its greedy label in expectation",
    ),
]
