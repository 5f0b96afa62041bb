"""Calibration checks of the grounding family: PPI++ intervals on planted truth (issue 33).

Each check draws `simulate.grounding.grounding_sim` shaped like the scenario (its clusters,
their unequal sizes, ICC, and a judge whose error rate varies by cluster, with invalid
verdicts more frequent where it is wrong) and runs `analyses.grounding.estimates` (what
`compare` and the report card call) on its labels. The human
labels number `labels(n)` = 40 % of the items, between 25 and 100, drawn at random. The
null hypothesis has a mildly biased judge, the alternative a strongly biased one; the checks
report intervals only (no test). Two estimands, two checks per setting:

- `grounding.ppi_<kind>_population`: the super-population mean human label
  (`truth["mean"]`): the default `target="population"`, the wild cluster bootstrap.
  Before: the cluster bootstrap-t (`interval="bootstrap"`), the earlier default.
- `grounding.ppi_<kind>_items`: the mean human label of the drawn items
  (`truth["items_mean"]`): `target="items"`, the finite-population interval. Before: the
  cluster bootstrap-t.
- `grounding.ppi_binary_iid`: as many independent items as the scenario has, z interval.
  Before: the judge-only (naive) estimate, which the judge's bias pulls off the truth.
- `grounding.ppi_stratified`: the scenario's clusters in two strata (alternate clusters),
  labelled at 60 % and 30 %, the judge's FPR differing by stratum; stratified PPI++, each
  stratum's wild cluster bootstrap interval combined by MOVER (`strata_combine="joint"`, one
  wild bootstrap of the weighted sum, was the default before). Before: the stratified
  cluster bootstrap-t.
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
from judgelab.simulate.base import BALANCED, Design, Scenario, Simulation

#: Judge FPR (binary) and intercept (numeric) under the null and the alternative.
FPR = {"null": 0.15, "alternative": 0.4}
BIAS = {"null": 0.7, "alternative": 1.0}
#: Invalid verdicts: where the judge is right, and where it is wrong (missing not at random).
INVALID = (0.05, 0.2)


def labels(n_items: int) -> int:
    """Human labels of a scenario with `n_items` items: 40 %, between 25 and 100."""
    return int(np.clip(round(0.4 * n_items), 25, 100))


def simulate(
    rng: np.random.Generator,
    hypothesis: str,
    shape: Scenario | None = None,
    *,
    setting: str,
) -> Simulation:
    """Draw one benchmark of `setting` shaped like `shape` with the hypothesis' judge bias.

    Settings: binary, numeric (clustered like the scenario), binary_iid (independent
    items, as many), stratified (the scenario's clusters in two strata).
    """
    shape = shape or BALANCED
    design = shape.design()
    n_lab = labels(shape.n_items)
    invalid = {"invalid_rate": INVALID[0], "invalid_if_wrong": INVALID[1], "tables": False}
    if setting == "binary":
        return sim_grounding.grounding_sim(
            rng, design=design, n_labelled=n_lab, fpr=(FPR[hypothesis],), **invalid
        )
    if setting == "numeric":
        return sim_grounding.grounding_sim(
            rng, design=design, kind="numeric", n_labelled=n_lab, bias=(BIAS[hypothesis],),
            tables=False,
        )  # fmt: skip
    if setting == "binary_iid":
        iid = Design(n_clusters=shape.n_items, per_cluster=1, icc=0.0)
        return sim_grounding.grounding_sim(
            rng, design=iid, n_labelled=n_lab, fpr=(FPR[hypothesis],), **invalid
        )
    return sim_grounding.grounding_sim(
        rng, design=design, fpr=(0.05, FPR[hypothesis]), shifts=(1.0, -0.5),
        label_rates=(0.6, 0.3), **invalid,
    )  # fmt: skip


def frame(sim: Simulation) -> pd.DataFrame:
    """Return one row per item: judge label, human label (NaN unlabelled), cluster, stratum."""
    return sim.extra["labels"]


def estimate(sim: Simulation, options: Mapping[str, Any], *, cluster: bool, stratum: bool):
    """`grounding.estimates` on the simulated labels: the `method` row (default `ppi`)."""
    opts = dict(options)
    method = opts.pop("method", "ppi")
    labels = frame(sim)
    use_cluster = opts.pop("cluster", cluster)
    use_stratum = opts.pop("stratum", stratum)
    table = grounding.estimates(
        labels["judge"].to_numpy(),
        labels["human"].to_numpy(),
        cluster=labels["cluster"].to_numpy() if use_cluster else None,
        stratum=labels["stratum"].to_numpy() if use_stratum else None,
        methods=(method,),
        **opts,
    )
    row = table.set_index("method").loc[method]
    return Outcome(
        float(row["estimate"]),
        float(row["ci_low"]),
        float(row["ci_high"]),
        n_eff=float(row["n_eff_clusters"]),
    )


def _items_truth(sim: Simulation, hypothesis: str) -> float:
    return float(sim.truth["items_mean"])


def _check(
    name: str,
    setting: str,
    *,
    cluster: bool = True,
    stratum: bool = False,
    before: dict,
    effect: str,
    items: bool = False,
    options: dict | None = None,
) -> Check:
    target = "items" if items else "population"
    return Check(
        name=f"grounding.ppi_{name}",
        family="grounding",
        estimator=f"analyses.grounding.compare (ppi, {setting}, target={target})",
        estimand="items_mean" if items else "mean",
        simulate=partial(simulate, setting=setting),
        estimate=partial(estimate, cluster=cluster, stratum=stratum),
        test=False,
        before=before,
        effect=effect,
        truth=_items_truth if items else None,
        options=options or {},
    )


_BINARY = f"judge FPR {FPR['alternative']} (null {FPR['null']}), FNR 0.05, varying by cluster"
_NUMERIC = f"judge intercept {BIAS['alternative']} (null {BIAS['null']}), slope 0.9"
_LEGACY = {"interval": "bootstrap"}
CHECKS: list[Check] = [
    _check("binary_population", "binary", before=_LEGACY, effect=_BINARY),
    _check("binary_items", "binary", before=_LEGACY, effect=_BINARY, items=True,
           options={"target": "items"}),
    _check("numeric_population", "numeric", before=_LEGACY, effect=_NUMERIC),
    _check("numeric_items", "numeric", before=_LEGACY, effect=_NUMERIC, items=True,
           options={"target": "items"}),
    _check("binary_iid", "binary_iid", cluster=False, before={"method": "naive"},
           effect=_BINARY),
    _check("stratified", "stratified", stratum=True, before=_LEGACY,
           effect=f"judge FPR 0.05 / {FPR['alternative']} by stratum; labelled 60 % / 30 %"),
]  # fmt: skip
