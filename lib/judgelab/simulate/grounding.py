"""Planted-truth human grounding: a biased judge on every item, human labels on a few.

`grounding_sim`: items in clusters (the design's ICC; unequal sizes when the design has a
`size_spread`, drawn by `Design.realise`), each with a human label and one judge label; a
subset of items keeps its human label (`labelled`), drawn at random, or per stratum at the
stratum's own rate. Strata are whole clusters: cluster c is in stratum c mod len(strata).

- binary: human pass P = σ(base + shift_h + u_c); the judge errs on a human fail with
  P = σ(logit(fpr_h) + e_c + b_c) and on a human pass with P = σ(logit(fnr) + e_c + b_c),
  e_c a cluster effect shared by its errors (same ICC), independent of u_c, and b_c the
  judge's bias varying by cluster (`base.cluster_slopes`, SD `design.effect_sd`);
- numeric: human score Y = mean + shift_h + u_c + ε (u_c, ε normal; ICC on this scale),
  judge score f = bias_h + b_c + slope · Y + e_c + η;
- invalid verdicts (`invalid_if_wrong`, `invalid_rate`; binary only): missing not at random,
  more frequent where the judge is wrong; an invalid verdict's label is ½ (what
  `analyses.grounding.tables.pointwise_table` scores it), so the judge label exists on every
  item, as PPI needs.

The truth (`truth["mean"]`) is the super-population mean human label Σ_h W_h E_h[Y] from the
planted parameters (closed form, or `base.expectation` over the cluster effect): the value
an interval for "items like these" must cover. Cluster sizes are drawn independently of the
cluster effects, so the item-weighted and the cluster-weighted population means agree. The
mean human label of the drawn items themselves (`items_mean`) is the target "these items".
Tables: `items` (schema, plus `human` (the label, every item), `labelled`, `stratum`) and
`judgments` of the judge `sim.judge` (`verdict` "Correct"/"Incorrect" or None when invalid,
or the score).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

import numpy as np
import pandas as pd

from judgelab.simulate import base
from judgelab.simulate.base import Design, Simulation, sigmoid

JUDGE = "sim.judge"
KINDS = ("binary", "numeric")


def _logit(p: float) -> float:
    return float(np.log(p / (1.0 - p)))


@lru_cache(maxsize=64)
def _binary_mean(base_logit: float, sd: float) -> float:
    if sd == 0:
        return float(sigmoid(base_logit))
    return base.expectation(lambda rng, n: sigmoid(base_logit + rng.normal(0.0, sd, n)))


def _labelled(
    rng: np.random.Generator, stratum: np.ndarray, n_labelled: int, rates: Sequence[float]
) -> np.ndarray:
    """Return the labelled mask: `n_labelled` at random, or `rates[h]` of stratum h."""
    n = len(stratum)
    lab = np.zeros(n, dtype=bool)
    if not rates:
        lab[rng.choice(n, size=min(n_labelled, n), replace=False)] = True
        return lab
    for h, rate in enumerate(rates):
        idx = np.flatnonzero(stratum == h)
        k = max(2, int(round(rate * len(idx))))
        lab[rng.choice(idx, size=min(k, len(idx)), replace=False)] = True
    return lab


def grounding_sim(
    rng: np.random.Generator,
    *,
    design: Design | None = None,
    kind: str = "binary",
    n_labelled: int = 120,
    base_logit: float = 0.85,
    fpr: Sequence[float] = (0.4,),
    fnr: float = 0.05,
    mean: float = 5.0,
    slope: float = 0.9,
    bias: Sequence[float] = (1.0,),
    shifts: Sequence[float] = (0.0,),
    label_rates: Sequence[float] = (),
    invalid_rate: float = 0.0,
    invalid_if_wrong: float | None = None,
    tables: bool = True,
) -> Simulation:
    """Return one simulated benchmark with a biased judge and a human-labelled subset.

    Args:
        rng: The only source of randomness.
        design: Clusters, items per cluster and ICC (default 60 × 10, ICC 0.3).
        kind: `binary` (pass/fail) or `numeric` (a score).
        n_labelled: Labelled items when `label_rates` is empty.
        base_logit: Binary: logit of the human pass rate at a median cluster.
        fpr: Binary: judge's FPR per stratum (one value: every stratum).
        fnr: Binary: judge's FNR.
        mean: Numeric: mean human score.
        slope: Numeric: judge score per human point.
        bias: Numeric: judge intercept per stratum.
        shifts: Per-stratum shift of the human label (logit, or score); its length is
            the number of strata.
        label_rates: Per-stratum share of labelled items (empty: `n_labelled` at random).
        invalid_rate: Binary: share of invalid verdicts where the judge is right.
        invalid_if_wrong: Binary: share of invalid verdicts where it is wrong (None: the
            same `invalid_rate`, missing at random).
        tables: Build `items` and `judgments` in the library's schema (False: plain frames
            with the same columns the PPI needs, for calibration speed).

    Returns:
        A `Simulation` whose `truth["mean"]` is the population mean human label and
        `truth["items_mean"]` the drawn items' mean; `extra["labels"]` holds one row per
        item: `judge` (the judge's label, ½ where invalid), `human` (NaN where unlabelled),
        `cluster`, `stratum`.
    """
    design = (design or Design(n_clusters=60, per_cluster=10, icc=0.3)).realise(rng)
    if kind not in KINDS:
        raise ValueError(f"unknown kind {kind!r}; known: {list(KINDS)}")
    n_strata = len(shifts)
    if label_rates and len(label_rates) != n_strata:
        raise ValueError(f"{len(label_rates)} label rates for {n_strata} strata")
    fprs = np.resize(np.asarray(fpr, dtype=float), n_strata)
    biases = np.resize(np.asarray(bias, dtype=float), n_strata)
    c = base.cluster_index(design)
    stratum = c % n_strata
    shift = np.asarray(shifts, dtype=float)[stratum]
    n = design.n_items
    if kind == "binary":
        sd = base.cluster_sd(design.icc)
        u, e = base.cluster_effects(rng, design), base.cluster_effects(rng, design)
        varying = base.cluster_slopes(rng, design, 0.0)
        human = (rng.random(n) < sigmoid(base_logit + shift + u)).astype(float)
        err_logit = np.where(human == 1, _logit(fnr), np.log(fprs / (1 - fprs))[stratum])
        wrong = rng.random(n) < sigmoid(err_logit + e + varying)
        judge = np.where(wrong, 1.0 - human, human)
        verdict = np.where(judge == 1, "Correct", "Incorrect").astype(object)
        rate_wrong = invalid_rate if invalid_if_wrong is None else invalid_if_wrong
        invalid = base.missing_mask(rng, n, rate=invalid_rate, wrong=wrong,
                                    rate_if_wrong=rate_wrong)  # fmt: skip
        verdict[invalid] = None
        means = [_binary_mean(base_logit + s, sd) for s in shifts]
    else:
        sd = float(np.sqrt(design.icc / (1.0 - design.icc)))
        u = rng.normal(0.0, sd, design.n_clusters)[c]
        e = rng.normal(0.0, sd, design.n_clusters)[c]
        varying = base.cluster_slopes(rng, design, 0.0)
        human = mean + shift + u + rng.normal(0.0, 1.0, n)
        judge = biases[stratum] + varying + slope * human + e + rng.normal(0.0, 0.7, n)
        verdict = np.array([repr(float(v)) for v in judge], dtype=object)
        means = [mean + s for s in shifts]
    weights = np.bincount(stratum, minlength=n_strata) / n
    labelled = _labelled(rng, stratum, n_labelled, label_rates)
    strata = np.array([f"s{h}" for h in range(n_strata)], dtype=object)[stratum]
    if tables:
        items = base.items_table(
            design,
            "pointwise",
            {"response": "an answer", "human": human, "labelled": labelled, "stratum": strata},
        )
        judgments = base.judgments_table(
            {"benchmark": design.benchmark, "split": design.split,
             "item_id": items["item_id"].to_numpy(), "judge": JUDGE, "verdict": verdict,
             "cluster": items["cluster"].to_numpy()}
        )  # fmt: skip
        cluster = items["cluster"].to_numpy()
    else:
        ids, cluster = base.item_ids(design)
        items = pd.DataFrame({"item_id": ids, "cluster": cluster, "human": human,
                              "labelled": labelled, "stratum": strata})  # fmt: skip
        judgments = pd.DataFrame({"item_id": ids, "judge": JUDGE, "verdict": verdict,
                                  "valid": pd.notna(verdict), "cluster": cluster})  # fmt: skip
    if kind == "binary":
        label = np.where(pd.isna(verdict), 0.5, judge)
    else:
        label = judge
    frame = pd.DataFrame({"judge": label, "human": np.where(labelled, human, np.nan),
                          "cluster": cluster, "stratum": strata})  # fmt: skip
    truth = {"mean": float(np.dot(weights, means)), "items_mean": float(human.mean())}
    params = {
        "kind": kind,
        "n_labelled": int(labelled.sum()),
        "fpr": fprs.tolist(),
        "bias": biases.tolist(),
        "shifts": list(shifts),
        "label_rates": list(label_rates),
        "cluster_sizes": design.cluster_sizes.tolist(),
    }
    return Simulation(items, judgments, truth, params, extra={"labels": frame})


def judge_values(sim: Simulation, *, invalid_as: float = 0.5) -> np.ndarray:
    """Return the judge's label per item of `sim.items` as floats (1.0 = Correct).

    An invalid binary verdict scores `invalid_as` (as `grounding.tables.pointwise_table`).
    """
    j = sim.judgments.set_index("item_id")["verdict"].reindex(sim.items["item_id"])
    if sim.params["kind"] == "binary":
        label = (j == "Correct").to_numpy(dtype=np.float64)
        return np.where(j.isna().to_numpy(), invalid_as, label)
    return j.astype(float).to_numpy()


__all__ = ["JUDGE", "KINDS", "grounding_sim", "judge_values"]
