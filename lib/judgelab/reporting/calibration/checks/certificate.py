"""Calibration checks of the certificate's grades on planted truth (issue 36 item 7).

One check per certificate criterion (`reporting.certificate.CRITERIA`): each draws from the
generator of the calibration check of the criterion's estimator (`Criterion.checks[0]`,
under its *alternative*, so the planted value is away from the ideal), runs that check's
estimator, and grades its interval with `certificate.grade`. The margin is set from the
planted population truth t, before the draw is looked at:

- `null` — **the true value sits at the margin**: |t − ½| (deviation), |t| (abs) or t
  itself (higher, lower). A PASS is then a false PASS, so the check's "type-I error" is the
  false-PASS rate (target ≤ 0.05; the harness's verdict reads it against 0.06);
- `alternative` — the true value sits well inside the margin (`INSIDE` further from the
  ideal side): the PASS rate is the check's "power".

The p-value reported is the grade read as a test of "the true value is at or beyond the
margin": 0 when the grade is PASS, 1 otherwise (so p < α ⇔ PASS at every α < 1). The
interval is the criterion estimator's own (its coverage is the estimator's check's business,
not repeated here: `interval=False`).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import Any

import numpy as np

from judgelab.reporting import certificate
from judgelab.reporting.calibration.harness import Check, Outcome
from judgelab.simulate.base import BALANCED, Scenario, Simulation

#: How far inside the margin the truth sits under the alternative (the criterion's scale).
INSIDE = 0.15
#: Criteria checked here (every criterion of the certificate).
CRITERIA = tuple(certificate.CRITERIA)


def _source(criterion: str) -> Check:
    """The calibration check of the criterion's estimator (its first listed check)."""
    from judgelab.reporting.calibration.checks import all_checks

    name = certificate.CRITERIA[criterion].checks[0]
    family = name.split(".", 1)[0]
    found = [c for c in all_checks((family,)) if c.name == name]
    if not found:
        raise ValueError(f"criterion {criterion!r}: calibration check {name!r} is not registered")
    return found[0]


def simulate(rng, hypothesis: str, shape: Scenario | None = None, *, criterion: str):
    """Draw the source check's alternative; remember which margin this hypothesis asks for."""
    sim = _source(criterion).simulate(rng, "alternative", shape or BALANCED)
    return sim._replace(params={**sim.params, "certificate_hypothesis": hypothesis})


def margin_for(truth: float, how: str, hypothesis: str) -> float:
    """The margin that puts the truth at the margin (null) or `INSIDE` within it (alternative).

    >>> margin_for(0.58, "deviation", "null"), margin_for(0.7, "higher", "alternative")
    (0.08, 0.55)
    """
    inside = 0.0 if hypothesis == "null" else INSIDE
    if how == "deviation":
        return round(abs(truth - 0.5) + inside, 12)
    if how == "abs":
        return round(abs(truth) + inside, 12)
    return round(truth - inside if how == "higher" else truth + inside, 12)


def truth(sim: Simulation, hypothesis: str, *, criterion: str) -> float:
    """The source check's planted value (under its alternative)."""
    return _source(criterion).true_value(sim, "alternative")


def estimate(sim: Simulation, options: Mapping[str, Any], *, criterion: str) -> Outcome:
    """The criterion estimator's interval, graded against the margin the hypothesis set."""
    source = _source(criterion)
    how = certificate.CRITERIA[criterion].how
    t = source.true_value(sim, "alternative")
    margin = margin_for(t, how, str(sim.params["certificate_hypothesis"]))
    if not margin > 0:
        return Outcome(np.nan, declined=f"planted value {t:.3g} leaves no margin > 0")
    out = source.estimate(sim, {**source.options, **options})
    if out.declined:
        return out
    grade = certificate.grade(float(out.low), float(out.high), margin, how)
    return Outcome(out.estimate, out.low, out.high, p_value=0.0 if grade == "PASS" else 1.0,
                   n_eff=out.n_eff)  # fmt: skip


def _check(criterion: str) -> Check:
    c = certificate.CRITERIA[criterion]
    return Check(
        name=f"certificate.{criterion}",
        family="certificate",
        estimator=f"reporting.certificate.grade ({c.how}) on {c.checks[0]}'s estimator",
        estimand=c.measure,
        simulate=partial(simulate, criterion=criterion),
        estimate=partial(estimate, criterion=criterion),
        truth=partial(truth, criterion=criterion),
        interval=False,
        test=True,
        before=None,
        effect=f"the truth {INSIDE} inside the margin (null: at the margin; type-I = false PASS)",
    )


CHECKS: list[Check] = [_check(c) for c in CRITERIA]


__all__ = ["CHECKS", "CRITERIA", "INSIDE", "estimate", "margin_for", "simulate", "truth"]
