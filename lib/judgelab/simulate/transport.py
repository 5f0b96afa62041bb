"""Planted-truth transport: a judge whose error does, or does not, carry over to another slice.

`transport_sim`: the design's items (clusters, their unequal sizes, ICC) are answered in
each of `n_slices` slices (exam-takers answering the same questions): the human label of
item i in slice s is Y ~ Bernoulli(σ(base_logit + u_c)), u_c the cluster's effect shared by
every slice (a hard question is hard for all), drawn independently per slice. The judge errs
on a human fail with probability `fpr` (the last slice, the one tested: `fpr + shift`) and
on a human pass with `fnr`, independently given Y.

The rectifier of a slice is Δ_s = E[Y − f] = fnr · P₁ − fpr_s · P₀ (P₁ = E σ(base + u),
P₀ = 1 − P₁, the same in every slice), so the correction fitted on the training slices
misses the tested slice by

    error = Δ_train − Δ_test = shift · P₀,

0 when `shift` = 0 (the null: every slice alike, by symmetry). `truth["transport_error"]`
holds it (P₁ from `base.expectation`, a large independent draw, not the estimator's
algebra). Table `extra["labels"]`: one row per slice × item — `group` (slice), `cluster`,
`judge_label`, `human_label` — the shape `analyses.grounding.transport.audit` reads.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import pandas as pd

from judgelab.simulate import base
from judgelab.simulate.base import Design, Simulation, sigmoid

#: Name of the tested slice (the others are `train0`, `train1`, …).
TESTED = "tested"


@lru_cache(maxsize=64)
def pass_rate(base_logit: float, sd: float) -> float:
    """E σ(base_logit + u), u ~ N(0, sd²): the human pass rate of every slice."""
    if sd == 0:
        return float(sigmoid(base_logit))
    return base.expectation(lambda rng, n: sigmoid(base_logit + rng.normal(0.0, sd, n)))


def transport_error(base_logit: float, icc: float, shift: float) -> float:
    """The planted transported error shift · P₀ of the rectifier (see the module docstring)."""
    return float(shift * (1.0 - pass_rate(base_logit, base.cluster_sd(icc))))


def transport_sim(
    rng: np.random.Generator,
    *,
    design: Design,
    n_slices: int = 4,
    base_logit: float = 0.4,
    fpr: float = 0.2,
    fnr: float = 0.1,
    shift: float = 0.0,
) -> Simulation:
    """Draw one benchmark: `n_slices` slices of the design's items, the last one tested."""
    if n_slices < 2:
        raise ValueError(f"transport needs at least 2 slices, got {n_slices}")
    d = design.realise(rng)
    cl = base.cluster_index(d)
    u = base.cluster_effects(rng, d)
    n = d.n_items
    frames = []
    for s in range(n_slices):
        name = TESTED if s == n_slices - 1 else f"train{s}"
        y = rng.random(n) < sigmoid(base_logit + u)
        rate = fpr + (shift if name == TESTED else 0.0)
        wrong = np.where(y, rng.random(n) < fnr, rng.random(n) < rate)
        f = np.where(wrong, ~y, y)
        frames.append(pd.DataFrame({"group": name, "cluster": cl, "item": np.arange(n),
                                    "judge_label": f.astype(float),
                                    "human_label": y.astype(float)}))  # fmt: skip
    labels = pd.concat(frames, ignore_index=True)
    truth = {"transport_error": transport_error(base_logit, d.icc, shift)}
    params = {"n_slices": n_slices, "base_logit": base_logit, "fpr": fpr, "fnr": fnr,
              "shift": shift, "icc": d.icc, "n_clusters": d.n_clusters}  # fmt: skip
    empty = pd.DataFrame()
    return Simulation(empty, empty, truth, params, extra={"labels": labels})


__all__ = ["TESTED", "pass_rate", "transport_error", "transport_sim"]
