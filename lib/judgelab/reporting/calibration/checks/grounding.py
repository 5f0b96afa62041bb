"""Calibration checks of the grounding family: PPI++ intervals on planted truth (issue 22).

Each check draws `simulate.grounding.grounding_sim` (a judge on every item, human labels on a
subset) and runs `analyses.grounding.compare`; the truth is the population mean human label.
The null scenario has a mildly biased judge, the alternative a strongly biased one (judge
pass rate ≈ 0.1 above the human one). Intervals only (no test).

- `grounding.ppi_binary_iid`: 600 independent items, 100 labelled; z interval. Before: the
  judge-only (naive) estimate, which the judge's bias pulls off the truth.
- `grounding.ppi_binary_clustered` / `grounding.ppi_numeric_clustered`: 60 clusters × 10
  (ICC 0.3 on labels and on the judge's errors), 120 labelled items; cluster bootstrap.
  Before: the i.i.d. z interval.
- `grounding.ppi_stratified`: 600 independent items in two strata labelled at 25 % and 10 %,
  the judge's bias differing by stratum; stratified PPI++. Before: one unstratified PPI++.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import Any

import numpy as np
import pandas as pd

from judgelab.analyses import grounding
from judgelab.reporting.calibration.harness import Check, Outcome
from judgelab.simulate import grounding as sim_grounding
from judgelab.simulate.base import Design, Scenario, Simulation

IID = Design(n_clusters=600, per_cluster=1, icc=0.0)
CLUSTERED = Design(n_clusters=60, per_cluster=10, icc=0.3)
#: Judge FPR (binary) and intercept (numeric) under the null and the alternative.
FPR = {"null": 0.15, "alternative": 0.4}
BIAS = {"null": 0.7, "alternative": 1.0}


def simulate(
    rng: np.random.Generator, scenario: str, shape: Scenario | None = None, *, setting: str
) -> Simulation:
    """Draw one benchmark of `setting` with the scenario's judge bias.

    Settings: binary_iid, binary_clustered, numeric_clustered, stratified.
    """
    if setting == "binary_iid":
        return sim_grounding.grounding_sim(rng, design=IID, n_labelled=100, fpr=(FPR[scenario],))
    if setting == "binary_clustered":
        return sim_grounding.grounding_sim(rng, design=CLUSTERED, fpr=(FPR[scenario],))
    if setting == "numeric_clustered":
        return sim_grounding.grounding_sim(
            rng, design=CLUSTERED, kind="numeric", bias=(BIAS[scenario],)
        )
    return sim_grounding.grounding_sim(
        rng, design=IID, fpr=(0.05, FPR[scenario]), shifts=(1.0, -0.5), label_rates=(0.25, 0.1)
    )


def frame(sim: Simulation) -> pd.DataFrame:
    """Return one row per item: judge label, human label (NaN unlabelled), cluster, stratum."""
    items = sim.items
    human = items["human"].where(items["labelled"].astype(bool))
    return pd.DataFrame(
        {
            "judge": sim_grounding.judge_values(sim),
            "human": human.to_numpy(dtype=np.float64),
            "cluster": items["cluster"].to_numpy(),
            "stratum": items["stratum"].to_numpy(),
        }
    )


def estimate(sim: Simulation, options: Mapping[str, Any], *, cluster: bool, stratum: bool):
    """`grounding.compare` on the simulated table: the `method` row (default `ppi`)."""
    opts = dict(options)
    method = opts.pop("method", "ppi")
    opts.setdefault("cluster_col", "cluster" if cluster else None)
    opts.setdefault("stratum_col", "stratum" if stratum else None)
    table = grounding.compare(frame(sim), "judge", "human", **opts).set_index("method")
    row = table.loc[method]
    return Outcome(float(row["estimate"]), float(row["ci_low"]), float(row["ci_high"]))


def _check(setting: str, *, cluster: bool, stratum: bool, before: dict, effect: str) -> Check:
    return Check(
        name=f"grounding.ppi_{setting}",
        family="grounding",
        estimator=f"analyses.grounding.compare (ppi, {setting})",
        estimand="mean",
        simulate=partial(simulate, setting=setting),
        estimate=partial(estimate, cluster=cluster, stratum=stratum),
        test=False,
        before=before,
        effect=effect,
    )


_BINARY = f"judge FPR {FPR['alternative']} (null {FPR['null']}), FNR 0.05"
CHECKS: list[Check] = [
    _check("binary_iid", cluster=False, stratum=False, before={"method": "naive"},
           effect=_BINARY),
    _check("binary_clustered", cluster=True, stratum=False, before={"interval": "z"},
           effect=_BINARY),
    _check("numeric_clustered", cluster=True, stratum=False, before={"interval": "z"},
           effect=f"judge intercept {BIAS['alternative']} (null {BIAS['null']}), slope 0.9"),
    _check("stratified", cluster=False, stratum=True, before={"stratum_col": None},
           effect=f"judge FPR 0.05 / {FPR['alternative']} by stratum; labelled 25 % / 10 %"),
]  # fmt: skip
