"""Calibration checks of the correctness family (notebook 05; spec 001 §4.3–§4.5).

Each check draws `simulate.correctness.correctness_sim` shaped like the scenario (question
clusters of unequal size answered by a varying number of candidate models, the judge's own
model in a cluster-varying share of questions, ICC of the scenario on answers and on the
judge's errors, its leniency toward its own answers varying by cluster, invalid verdicts
more frequent where the verdict would be wrong) and runs the library's public estimator on its
tables. "before" is the earlier default: the percentile cluster bootstrap (with an adaptive
bootstrap p-value for the tests) and no minimum of own-model negatives.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import Any

import numpy as np
import pandas as pd

from judgelab.analyses import correctness
from judgelab.reporting.calibration.harness import Check, Outcome
from judgelab.simulate import correctness as sim_correctness
from judgelab.simulate.base import BALANCED, Scenario, Simulation

#: Alternatives (logit shifts): the judge is lenient with its own answers; it grades worse on
#: questions its own model got wrong.
SELF_FPR = 1.5
ANSWERED_SHIFT = 1.0
#: The earlier defaults (the "before" variant).
BEFORE = {"inference": "bootstrap"}
BEFORE_SELF = {"inference": "bootstrap", "min_own": 0, "min_own_clusters": 0}


def simulate(
    rng: np.random.Generator,
    hypothesis: str,
    scenario: Scenario | None = None,
    *,
    effect: str = "",
) -> Simulation:
    """Draw one benchmark shaped like `scenario`; the alternative plants `effect`."""
    alt = hypothesis == "alternative"
    return sim_correctness.correctness_sim(
        rng,
        design=(scenario or BALANCED).design(),
        self_fpr=SELF_FPR if alt and effect == "self" else 0.0,
        answered_shift=ANSWERED_SHIFT if alt and effect == "answered" else 0.0,
    )


_LAST: list[Any] = [None, None]


def _table(sim: Simulation) -> pd.DataFrame:
    """The draw's correctness table (kept for the other checks sharing the draw)."""
    if _LAST[0] is not sim.judgments:
        _LAST[:] = [sim.judgments, correctness.correctness_table(sim.items, sim.judgments)]
    return _LAST[1]


def _outcome(row: pd.Series, value: str, low: str, high: str, test: bool) -> Outcome:
    declined = str(row.get("declined", "") or row.get("note", "") or "")
    return Outcome(
        float(row[value]),
        float(row[low]),
        float(row[high]),
        float(row["p_value"]) if test else float("nan"),
        declined=declined,
        n_eff=float(row["n_eff_clusters"]),
    )


_RATES: list[Any] = [None, None, None]


def estimate_rate(sim: Simulation, options: Mapping[str, Any], *, metric: str) -> Outcome:
    """`correctness_rates`: one metric's estimate and interval (one call serves every metric)."""
    key = sorted(options.items())
    if _RATES[0] is not sim.judgments or _RATES[1] != key:
        _RATES[:] = [sim.judgments, key, correctness.correctness_rates(_table(sim), **options)]
    r = _RATES[2]
    row = r[r["metric"] == metric].iloc[0]
    return _outcome(row, "value", "ci_low", "ci_high", test=False)


_SELF: list[Any] = [None, None, None]


def estimate_self(
    sim: Simulation, options: Mapping[str, Any], *, metric: str, policy: str = "exclude"
) -> Outcome:
    """`self_vs_others` (model level): self − others, its interval and p (or why declined).

    One call gives the rows of both invalid policies (`missing_as_error`); the checks of the
    two policies share it.
    """
    key = (metric, sorted(options.items()))
    if _SELF[0] is not sim.judgments or _SELF[1] != key:
        marked = correctness.mark_self(_table(sim), judge_candidate=sim.params["judge_candidate"])
        sv = correctness.self_vs_others(marked, metrics=(metric,), **options)
        _SELF[:] = [sim.judgments, key, sv]
    sv = _SELF[2]
    if sv.empty:
        return Outcome(float("nan"), declined="no own-model or no other answers")
    rows = sv[sv["invalid_policy"] == policy]
    row = rows.iloc[0] if len(rows) else sv.iloc[0]  # no invalid verdict: the policies agree
    return _outcome(row, "diff", "diff_low", "diff_high", test=True)


def estimate_gap(sim: Simulation, options: Mapping[str, Any], *, metric: str) -> Outcome:
    """`answered_gap`: correctly − incorrectly, its interval and p (or why declined)."""
    marked = correctness.mark_answered(_table(sim), judge_candidate=sim.params["judge_candidate"])
    gap = correctness.answered_gap(marked, metrics=(metric,), missing_as_error=False, **options)
    if gap.empty:
        return Outcome(float("nan"), declined="one answered subset is empty")
    return _outcome(gap.iloc[0], "diff", "diff_low", "diff_high", test=True)


def _truth(key: str):
    def truth(sim: Simulation, hypothesis: str) -> float:
        return float(sim.truth[key])

    return truth


def _rate_check(metric: str) -> Check:
    return Check(
        name=f"correctness.{metric}",
        family="correctness",
        estimator=f"analyses.correctness.correctness_rates ({metric})",
        estimand=metric,
        simulate=partial(simulate, effect="self"),
        estimate=partial(estimate_rate, metric=metric),
        test=False,
        before=BEFORE,
        effect=f"judge FPR on its own answers shifted by +{SELF_FPR} logit",
    )


CHECKS: list[Check] = [
    _rate_check("fpr"),
    _rate_check("fnr"),
    _rate_check("kappa"),
    Check(
        name="correctness.self_fpr_diff",
        family="correctness",
        estimator="analyses.correctness.self_vs_others (fpr, model level, invalid excluded)",
        estimand="fpr_diff",
        simulate=partial(simulate, effect="self"),
        estimate=partial(estimate_self, metric="fpr"),
        before=BEFORE_SELF,
        effect=f"FPR on its own model's answers +{SELF_FPR} logit (≈ 0.27 → 0.51), "
        "varying by cluster",
        notes="declined below min_own own-model negatives / min_own_clusters clusters",
    ),
    Check(
        name="correctness.self_fpr_diff_error",
        family="correctness",
        estimator="analyses.correctness.self_vs_others (fpr, invalid counted as errors)",
        estimand="fpr_diff_error",
        simulate=partial(simulate, effect="self"),
        estimate=partial(estimate_self, metric="fpr", policy="error"),
        before=BEFORE_SELF,
        effect=f"FPR on its own model's answers +{SELF_FPR} logit, invalid verdicts as errors",
        notes="the sensitivity row beside the default (issue 33 item 6)",
    ),
    Check(
        name="correctness.answered_kappa_gap",
        family="correctness",
        estimator="analyses.correctness.answered_gap (kappa, spec 001 §4.5)",
        estimand="kappa_gap",
        simulate=partial(simulate, effect="answered"),
        estimate=partial(estimate_gap, metric="kappa"),
        before=BEFORE,
        effect=f"both error rates +{ANSWERED_SHIFT} logit where its own model answered wrong",
        notes="kappa through its linearization",
    ),
]
