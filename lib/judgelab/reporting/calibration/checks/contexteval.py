"""Calibration checks of the ContextEval family (notebooks 07, 08): win rates, WEIRD, agreement.

Generators: `simulate.contexteval.pairwise` (40 conversations × 5 queries, ICC 0.3, 5 judges,
two settings judging the same responses, Invalid outputs 2 % / 6 %) and
`simulate.contexteval.ratings` (50 queries × 4 WEIRD-mapped attributes × 5 raters, ICC 0.3).
The pairwise checks read `extra["examples"]` (what `example_table(verdict_table(...))` gives
on the generated tables, checked in tests/simulate/test_contexteval.py) to keep a replicate
cheap; the ratings checks read `extra["ratings"]` (what `ratings_table` gives) likewise.
Every check caps the adaptive p-value at 8,000 resamples (`p_max_boot`): enough to resolve
p ≈ 0.05, where the reject decision is made; the library default (40,000) only refines
smaller p-values.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import Any

import numpy as np

from judgelab.analyses import contexteval as ce
from judgelab.reporting.calibration.harness import Check, Outcome
from judgelab.simulate import contexteval as sc
from judgelab.simulate.base import Scenario, Simulation

BASE, CTX = sc.SETTINGS
P_MAX_BOOT = 8000
ATTR = "Age Group"


def simulate_pairwise(
    rng: np.random.Generator,
    scenario: str,
    shape: Scenario | None = None,
    *,
    alternative: Mapping[str, Any],
    null: Mapping,
) -> Simulation:
    """Draw a pairwise benchmark: `null` parameters, or `alternative` ones."""
    params = alternative if scenario == "alternative" else null
    return sc.pairwise(rng, tables=False, **params)


def simulate_ratings(
    rng: np.random.Generator, scenario: str, shape: Scenario | None = None, *, gap: float
) -> Simulation:
    """Draw WEIRD ratings: no gap (null) or a latent `gap` on Age Group (alternative)."""
    return sc.ratings(rng, gaps={ATTR: gap} if scenario == "alternative" else {}, tables=False)


def _row(frame, setting: str):
    return frame[(frame["setting"] == setting) & (frame["missing"] == "as_tie")].iloc[0]


def estimate_margin(sim: Simulation, options: Mapping[str, Any]) -> Outcome:
    """Baseline margin wr_C1 − wr_C2 (points): interval and the test of margin = 0."""
    fl = ce.rank_flips(
        sim.extra["examples"], missing_as_error=False, p_max_boot=P_MAX_BOOT, **options
    )
    r = _row(fl, BASE)
    return Outcome(r["margin"], r["margin_low"], r["margin_high"], r["p_value"])


def estimate_context_effect(sim: Simulation, options: Mapping[str, Any]) -> Outcome:
    """The margin's change with context (points): interval and test of no change."""
    fl = ce.rank_flips(
        sim.extra["examples"], missing_as_error=False, p_max_boot=P_MAX_BOOT, **options
    )
    r = _row(fl, CTX)
    return Outcome(r["delta_margin"], r["delta_low"], r["delta_high"], r["delta_p"])


def _agreement(sim: Simulation, options: Mapping[str, Any]):
    return ce.agreement(
        sim.extra["examples"],
        variants=("A_all",),
        missing_as_error=False,
        p_max_boot=P_MAX_BOOT,
        **options,
    )


def estimate_agreement(sim: Simulation, options: Mapping[str, Any]) -> Outcome:
    """Baseline A_all (percent) and its interval."""
    r = _row(_agreement(sim, options), BASE)
    return Outcome(r["agreement"], r["ci_low"], r["ci_high"])


def estimate_agreement_delta(sim: Simulation, options: Mapping[str, Any]) -> Outcome:
    """A_all's change with context (points): interval and test (legacy: the repo's t-test)."""
    r = _row(_agreement(sim, options), CTX)
    return Outcome(r["delta"], r["delta_low"], r["delta_high"], r["p_value"])


def estimate_gap(sim: Simulation, options: Mapping[str, Any]) -> Outcome:
    """The Age Group WEIRD gap (raters pooled): interval and test of no gap."""
    g = ce.weird_gap(
        sim.extra["ratings"],
        weird_map={ATTR: sc.ATTRIBUTES[ATTR][1]},
        per_rater=False,
        missing_as_error=False,
        p_max_boot=P_MAX_BOOT,
        **options,
    )
    r = g.iloc[0]
    return Outcome(r["gap"], r["ci_low"], r["ci_high"], r["p_value"])


def estimate_family(sim: Simulation, options: Mapping[str, Any]) -> Outcome:
    """The smallest adjusted p of the whole family (4 attributes + 20 per-rater tests)."""
    weird_map = {a: w for a, (_, w) in sc.ATTRIBUTES.items()}
    g = ce.weird_gap(
        sim.extra["ratings"],
        weird_map=weird_map,
        missing_as_error=False,
        p_max_boot=P_MAX_BOOT,
        **options,
    )
    return Outcome(float(len(g)), p_value=float(np.nanmin(g["p_adj"])))


def truth_key(sim: Simulation, scenario: str, *, key: str) -> float:
    """The planted truth `key` of the simulation."""
    return float(sim.truth[key])


_NULL_PAIR = {"quality": 0.0, "context_effect": 0.0}
_NULL_AGREE = {"quality": 0.3, "context_effect": 0.0, "invalid": (0.04, 0.04)}

CHECKS: list[Check] = [
    Check(
        name="contexteval.win_rate_margin",
        family="contexteval",
        estimator="analyses.contexteval.rank_flips (margin, p_value)",
        estimand=f"{BASE}|margin",
        simulate=partial(
            simulate_pairwise, null=_NULL_PAIR, alternative={"quality": 0.4, "context_effect": 0.0}
        ),
        estimate=estimate_margin,
        truth=partial(truth_key, key=f"{BASE}|margin"),
        before={"cluster": None, "reference": "percentile", "test": "sign"},
        effect="candidate 1 better by 0.4 on the latent logit (margin ≈ +21 points)",
        notes="null: equal candidates (win rate of C1 among decisive majorities 0.5)",
    ),
    Check(
        name="contexteval.context_effect",
        family="contexteval",
        estimator="analyses.contexteval.rank_flips (delta_margin, delta_p)",
        estimand="delta_margin",
        simulate=partial(
            simulate_pairwise, null=_NULL_PAIR, alternative={"quality": 0.0, "context_effect": 0.5}
        ),
        estimate=estimate_context_effect,
        truth=partial(truth_key, key="delta_margin"),
        before={"cluster": None, "reference": "percentile"},
        effect="context shifts the latent preference by 0.5 (margin +≈26 points)",
        notes="paired over conversations shared by both settings",
    ),
    Check(
        name="contexteval.agreement",
        family="contexteval",
        estimator="analyses.contexteval.agreement (A_all, ci)",
        estimand=f"{BASE}|agreement",
        simulate=partial(
            simulate_pairwise,
            null=_NULL_AGREE,
            alternative={"quality": 0.6, "context_effect": 0.6},
        ),
        estimate=estimate_agreement,
        truth=partial(truth_key, key=f"{BASE}|agreement"),
        test=False,
        before={"cluster": None, "reference": "percentile"},
        effect="(interval only)",
    ),
    Check(
        name="contexteval.agreement_delta",
        family="contexteval",
        estimator="analyses.contexteval.agreement (delta, p_value)",
        estimand="delta_agreement",
        simulate=partial(
            simulate_pairwise,
            null=_NULL_AGREE,
            alternative={"quality": 0.3, "context_effect": 0.8, "invalid": (0.04, 0.04)},
        ),
        estimate=estimate_agreement_delta,
        truth=partial(truth_key, key="delta_agreement"),
        before={"cluster": None, "reference": "percentile", "test": "ttest"},
        effect="context adds 0.8 to the latent preference (judges agree more)",
    ),
    Check(
        name="contexteval.weird_gap",
        family="contexteval",
        estimator="analyses.contexteval.weird_gap (gap, p_value)",
        estimand=ATTR,
        simulate=partial(simulate_ratings, gap=0.3),
        estimate=estimate_gap,
        truth=partial(truth_key, key=ATTR),
        before={"cluster": None, "reference": "percentile", "test": "sign"},
        effect="latent WEIRD gap 0.3 rating points on Age Group",
    ),
    Check(
        name="contexteval.weird_family",
        family="contexteval",
        estimator="analyses.contexteval.weird_gap (min p_adj over 24 tests, Holm)",
        estimand=ATTR,
        simulate=partial(simulate_ratings, gap=0.3),
        estimate=estimate_family,
        interval=False,
        before={"cluster": None, "reference": "percentile", "test": "sign", "adjust": "none"},
        effect="latent WEIRD gap 0.3 on Age Group; type-I = family-wise error",
    ),
]
