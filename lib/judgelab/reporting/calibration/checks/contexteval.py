"""Calibration checks of the ContextEval family (notebooks 07, 08): win rates, WEIRD, agreement.

Generators (`simulate.contexteval`), shaped by the scenario (`Scenario.design`: clusters of
equal or very unequal size, latent ICC, effects constant or varying by cluster, small or
moderate n):

- `pairwise`: queries in conversations (the clusters), 5 autoraters, two settings judging
  the same responses; candidates' quality and the context effect vary by conversation;
  Invalid outputs (counted as Tie) more frequent in some conversations and on close calls.
  Three draws: the margin's (null: equal candidates), the context's (null: candidate 1
  better, context changes nothing; the settings are then exchangeable, so the changes of
  margin and agreement are exactly 0).
- `ratings`: queries in clusters (topics), 5 raters rate every value of the four
  WEIRD-mapped attributes 1–5; the WEIRD gap varies by cluster; 5 % of rating outputs
  unparsed (more in some clusters).

The pairwise checks read `extra["examples"]` (what `example_table(verdict_table(...))` gives
on the generated tables, checked in tests/simulate/test_contexteval.py) to keep a
replicate cheap; the ratings checks read `extra["ratings"]` (what `ratings_table` gives)
likewise. "after" runs the defaults (the restricted wild cluster bootstrap and the
intervals that invert it); "before" the earlier defaults (the pairs cluster bootstrap with
the t_{G−s} reference, issue 20; for mean ratings the bootstrap over rows).
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
#: Pairs-bootstrap p-values ("before") stop at this many resamples: enough to resolve
#: p ≈ 0.05, where the reject decision is made.
P_MAX_BOOT = 8000
ATTR = "Age Group"
VALUE = "Young adults"
#: The earlier defaults (issue 20): the pairs cluster bootstrap, t reference.
EARLIER = {"test": "cluster_bootstrap"}


def simulate_pairwise(
    rng: np.random.Generator,
    hypothesis: str,
    shape: Scenario,
    *,
    alternative: Mapping[str, Any],
    null: Mapping[str, Any],
) -> Simulation:
    """Draw a pairwise benchmark shaped like `shape`: `null` or `alternative` parameters."""
    params = alternative if hypothesis == "alternative" else null
    return sc.pairwise(rng, shape.design(benchmark="sim-ce"), tables=False, **params)


def simulate_ratings(
    rng: np.random.Generator, hypothesis: str, shape: Scenario, *, gap: float, missing: float
) -> Simulation:
    """Draw WEIRD ratings: no gap (null) or a latent `gap` on Age Group (alternative)."""
    gaps = {ATTR: gap} if hypothesis == "alternative" else {}
    design = shape.design(benchmark="sim-weird")
    return sc.ratings(rng, design, gaps=gaps, missing=missing, tables=False)


def _row(frame, setting: str):
    return frame[(frame["setting"] == setting) & (frame["missing"] == "as_tie")].iloc[0]


def _declined(method: str) -> str:
    """The estimator's own reason for reporting no number ("" when it reported one)."""
    return method if method.startswith("no ") else ""


_LAST: list[tuple[Any, ...]] = []


def _memo(fn, frame, options: Mapping[str, Any], **kw: Any):
    """Return fn(frame, **options, **kw), reusing the last result for the same draw.

    Checks sharing a generator see the same simulated table one after the other (e.g. the
    win rate and the margin come from one `rank_flips` call); the cache holds the table
    itself, so its identity cannot be reused while cached.
    """
    key = (fn, id(frame), tuple(sorted(options.items())), tuple(sorted(kw.items())))
    for k, held, out in _LAST:
        if k == key and held is frame:
            return out
    out = fn(frame, **options, **kw)
    _LAST[:] = [*_LAST[-3:], (key, frame, out)]
    return out


def _flips(sim: Simulation, options: Mapping[str, Any]):
    return _memo(
        ce.rank_flips,
        sim.extra["examples"],
        options,
        missing_as_error=False,
        p_max_boot=P_MAX_BOOT,
    )


def estimate_win_rate(sim: Simulation, options: Mapping[str, Any]) -> Outcome:
    """Baseline majority win rate of candidate 1 (percent) and its interval."""
    r = _row(_flips(sim, options), BASE)
    return Outcome(r["wr_c1"], r["wr_c1_low"], r["wr_c1_high"], n_eff=r["n_eff_clusters"])


def estimate_margin(sim: Simulation, options: Mapping[str, Any]) -> Outcome:
    """Baseline margin wr_C1 − wr_C2 (points): interval and the test of margin = 0."""
    r = _row(_flips(sim, options), BASE)
    return Outcome(
        r["margin"],
        r["margin_low"],
        r["margin_high"],
        r["p_value"],
        declined=_declined(r["method"]),
        n_eff=r["n_eff_clusters"],
    )


def estimate_context_effect(sim: Simulation, options: Mapping[str, Any]) -> Outcome:
    """The margin's change with context (points): interval and test of no change."""
    r = _row(_flips(sim, options), CTX)
    return Outcome(
        r["delta_margin"],
        r["delta_low"],
        r["delta_high"],
        r["delta_p"],
        declined=_declined(r["delta_method"]),
        n_eff=r["delta_n_eff_clusters"],
    )


def _agreement(sim: Simulation, options: Mapping[str, Any]):
    return _memo(
        ce.agreement,
        sim.extra["examples"],
        options,
        variants=("A_all",),
        missing_as_error=False,
        p_max_boot=P_MAX_BOOT,
    )


def estimate_agreement(sim: Simulation, options: Mapping[str, Any]) -> Outcome:
    """Baseline A_all (percent) and its interval."""
    r = _row(_agreement(sim, options), BASE)
    return Outcome(r["agreement"], r["ci_low"], r["ci_high"], n_eff=r["n_eff_clusters"])


def estimate_agreement_delta(sim: Simulation, options: Mapping[str, Any]) -> Outcome:
    """A_all's change with context (points): interval and test of no change."""
    r = _row(_agreement(sim, options), CTX)
    return Outcome(
        r["delta"],
        r["delta_low"],
        r["delta_high"],
        r["p_value"],
        declined=_declined(r["delta_method"]),
        n_eff=r["delta_n_eff_clusters"],
    )


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
    return Outcome(
        r["gap"],
        r["ci_low"],
        r["ci_high"],
        r["p_value"],
        declined=_declined(r["method"]),
        n_eff=r["n_eff_clusters"],
    )


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
    n_eff = float(g.loc[g["rater"] == "all", "n_eff_clusters"].min())
    return Outcome(float(len(g)), p_value=float(np.nanmin(g["p_adj"])), n_eff=n_eff)


def estimate_mean_rating(sim: Simulation, options: Mapping[str, Any]) -> Outcome:
    """Figure 5: the mean rating of "Young adults" (Age Group) and its interval."""
    ratings = sim.extra["ratings"]
    one = ratings[(ratings["attribute"] == ATTR) & (ratings["value"] == VALUE)]
    r = ce.mean_ratings(one, **options).iloc[0]
    return Outcome(r["mean"], r["ci_low"], r["ci_high"], n_eff=r["n_eff_clusters"])


def truth_key(sim: Simulation, hypothesis: str, *, key: str) -> float:
    """The planted truth `key` of the simulation."""
    return float(sim.truth[key])


#: The margin's draws: equal candidates (null) or candidate 1 better (alternative).
_MARGIN = partial(
    simulate_pairwise,
    null={"quality": 0.0, "context_effect": 0.0},
    alternative={"quality": 0.4, "context_effect": 0.0},
)
#: The context's draws: candidate 1 better in both; context shifts preferences (alternative).
_CONTEXT = partial(
    simulate_pairwise,
    null={"quality": 0.3, "context_effect": 0.0, "invalid": (0.04, 0.04)},
    alternative={"quality": 0.3, "context_effect": 0.8, "invalid": (0.04, 0.04)},
)
_RATINGS = partial(simulate_ratings, gap=0.3, missing=0.05)

CHECKS: list[Check] = [
    Check(
        name="contexteval.win_rate",
        family="contexteval",
        estimator="analyses.contexteval.rank_flips (wr_c1, wr_c1_low/high)",
        estimand=f"{BASE}|wr_c1",
        simulate=_MARGIN,
        estimate=estimate_win_rate,
        truth=partial(truth_key, key=f"{BASE}|wr_c1"),
        test=False,
        before=EARLIER,
        effect="(interval only)",
        notes="share of majority examples won by candidate 1 (percent)",
    ),
    Check(
        name="contexteval.win_rate_margin",
        family="contexteval",
        estimator="analyses.contexteval.rank_flips (margin, p_value)",
        estimand=f"{BASE}|margin",
        simulate=_MARGIN,
        estimate=estimate_margin,
        truth=partial(truth_key, key=f"{BASE}|margin"),
        before=EARLIER,
        effect="candidate 1 better by 0.4 on the latent logit, varying by conversation",
        notes="null: equal candidates (margin 0 by symmetry)",
    ),
    Check(
        name="contexteval.context_effect",
        family="contexteval",
        estimator="analyses.contexteval.rank_flips (delta_margin, delta_p)",
        estimand="delta_margin",
        simulate=_CONTEXT,
        estimate=estimate_context_effect,
        truth=partial(truth_key, key="delta_margin"),
        before=EARLIER,
        effect="context shifts the latent preference by 0.8, varying by conversation",
        notes="paired over conversations shared by both settings; null: settings exchangeable",
    ),
    Check(
        name="contexteval.agreement",
        family="contexteval",
        estimator="analyses.contexteval.agreement (A_all, ci)",
        estimand=f"{BASE}|agreement",
        simulate=_CONTEXT,
        estimate=estimate_agreement,
        truth=partial(truth_key, key=f"{BASE}|agreement"),
        test=False,
        before=EARLIER,
        effect="(interval only)",
    ),
    Check(
        name="contexteval.agreement_delta",
        family="contexteval",
        estimator="analyses.contexteval.agreement (delta, p_value)",
        estimand="delta_agreement",
        simulate=_CONTEXT,
        estimate=estimate_agreement_delta,
        truth=partial(truth_key, key="delta_agreement"),
        before=EARLIER,
        effect="context adds 0.8 to the latent preference (judges agree more)",
    ),
    Check(
        name="contexteval.weird_gap",
        family="contexteval",
        estimator="analyses.contexteval.weird_gap (gap, p_value)",
        estimand=ATTR,
        simulate=_RATINGS,
        estimate=estimate_gap,
        truth=partial(truth_key, key=ATTR),
        before=EARLIER,
        effect="latent WEIRD gap 0.3 rating points on Age Group, varying by cluster",
    ),
    Check(
        name="contexteval.weird_family",
        family="contexteval",
        estimator="analyses.contexteval.weird_gap (min p_adj over 24 tests, Holm)",
        estimand=ATTR,
        simulate=_RATINGS,
        estimate=estimate_family,
        interval=False,
        before=EARLIER,
        effect="latent WEIRD gap 0.3 on Age Group; type-I = family-wise error",
    ),
    Check(
        name="contexteval.mean_rating",
        family="contexteval",
        estimator="analyses.contexteval.mean_ratings (mean, ci)",
        estimand=f"{ATTR}|{VALUE}",
        simulate=_RATINGS,
        estimate=estimate_mean_rating,
        truth=partial(truth_key, key=f"{ATTR}|{VALUE}"),
        test=False,
        before={"cluster": None},
        effect="(interval only)",
        notes="Figure 5: the mean 1-5 rating of one value over queries and raters",
    ),
]
