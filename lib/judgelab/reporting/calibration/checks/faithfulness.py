"""Calibration checks of the faithfulness and prompting families (issues 20, 33).

Every generator is shaped like its scenario (`Scenario.design`: 8–50 clusters, balanced or very
unequal sizes, latent ICC 0.5, and — in the "varying" cells — effects that vary by cluster),
with outputs missing not at random. "After" runs the library's defaults, "before" the
defaults before issue 33.

- `faithfulness.ragas_alignment`: human alignment of a detector on FaithBench-style pairs
  (sources of very different numbers of summaries, every cross-label pair of a source;
  `simulate.faithfulness.faithbench`; the detector's discrimination varies by document with
  SD `effect_sd`; scores of hallucinated summaries invalid at 8 %, of consistent ones at
  2 %). Interval: the alignment; test: does the detector prefer the human-preferred summary
  more often than the other (null: no discrimination, margin 0 by symmetry). After: the
  wild cluster bootstrap of both ratios (`reference="wild"`); before: t_{G−1} with the
  cluster-bootstrap SE (`reference="t"`).
- `faithfulness.faitheval_accuracy`: strict accuracy of one model on FaithEval-style
  multiple-choice items (raw answers in several phrasings; an answer names no option at
  4 % when right and 15 % when wrong; ability varying by cluster). Interval only. After: the
  wild cluster bootstrap of the ratio; before: the percentile cluster bootstrap.
- `prompting.strategy_ca`: consistent-accuracy difference CoT − Vanilla of one model over
  pairwise items (a second strategy is compared too, as in notebook 10; each prompt's
  effect varies by cluster, exchangeably, so the null is exact; invalid verdicts at 2 % when
  right and 10 % when wrong). After: the wild cluster bootstrap test and the interval it
  inverts (`test="wild"`); before: the percentile cluster bootstrap with the adaptive
  bootstrap p-value (`test="bootstrap"`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from judgelab.analyses import faithfulness, prompting
from judgelab.reporting.calibration.harness import Check, Outcome
from judgelab.simulate import base
from judgelab.simulate import faithfulness as sim_faith
from judgelab.simulate.base import Scenario, Simulation

#: Planted effects of the alternatives.
ALT_DISCRIMINATION = 0.5
ALT_STRATEGY = 0.4


def _design(shape: Scenario | None, default: base.Design) -> base.Design:
    """The scenario's design named like the generator's default (its earlier shape without)."""
    if shape is None:
        return default
    return shape.design(benchmark=default.benchmark)


def simulate_alignment(
    rng: np.random.Generator, scenario: str, shape: Scenario | None = None
) -> Simulation:
    """FaithBench-style pairs; the null detector does not separate the labels."""
    disc = 0.0 if scenario == "null" else ALT_DISCRIMINATION
    design = _design(shape, sim_faith.FAITHBENCH_DESIGN)
    doc_sd = 0.8 if shape is None else design.effect_sd
    return sim_faith.faithbench(
        rng,
        design=design,
        discrimination=disc,
        doc_sd=doc_sd,
        invalid=0.02,
        invalid_hallucinated=0.08,
    )


def estimate_alignment(sim: Simulation, options: Mapping[str, Any]) -> Outcome:
    """`faithfulness.alignment` on the simulated pairs (pointwise scores compared)."""
    pairs = faithfulness.faithbench_pairs(sim.items)
    prefs = faithfulness.pointwise_preferences(sim.extra["scores"], pairs)
    table = faithfulness.alignment(prefs, **options)
    if table.empty:  # every pair's scores tied or invalid in this draw
        return Outcome(float("nan"), declined="no decisive pair")
    row = table.iloc[0]
    few = "" if row["n_clusters"] >= 2 else "one cluster: no interval or test"
    if not few and not np.isfinite(row["p_value"]):  # the decided pairs sit in one cluster
        few = row["method"].partition("; margin: ")[2] or "no test of the margin"
    return Outcome(
        row["alignment"],
        row["ci_low"],
        row["ci_high"],
        row["p_value"],
        declined=few,
        n_eff=row["n_eff_clusters"],
    )


def simulate_faitheval(
    rng: np.random.Generator, scenario: str, shape: Scenario | None = None
) -> Simulation:
    """FaithEval-style answers; the alternative is a weaker model (interval only)."""
    return sim_faith.faitheval_mc(
        rng,
        design=_design(shape, sim_faith.FAITHEVAL_DESIGN),
        ability=0.8 if scenario == "null" else 0.0,
        unparsed=0.04,
        unparsed_if_wrong=0.15,
    )


def estimate_faitheval(sim: Simulation, options: Mapping[str, Any]) -> Outcome:
    """Strict accuracy from `faithfulness.accuracy` over the graded answers."""
    graded = faithfulness.grade_answers(sim.judgments, sim.items)
    acc = faithfulness.accuracy(graded, by=("label",), **options)
    row = acc[acc["mode"] == "strict"].iloc[0]
    return Outcome(row["accuracy"], row["ci_low"], row["ci_high"], n_eff=row["n_eff_clusters"])


def simulate_strategies(
    rng: np.random.Generator, scenario: str, shape: Scenario | None = None
) -> Simulation:
    """One model, Vanilla vs CoT and Reference; the alternative shifts CoT's logit."""
    cot = 0.0 if scenario == "null" else ALT_STRATEGY
    return sim_faith.prompt_strategies(
        rng,
        design=_design(shape, sim_faith.STRATEGY_DESIGN),
        effects={"CoT": cot, "Reference": 0.0},
        invalid={"Vanilla": 0.02, "CoT": 0.02, "Reference": 0.02},
        invalid_if_wrong={"Vanilla": 0.10, "CoT": 0.10, "Reference": 0.10},
    )


def estimate_strategy(sim: Simulation, options: Mapping[str, Any]) -> Outcome:
    """CoT − Vanilla consistent accuracy from `prompting.strategy_comparison`."""
    cmp = prompting.strategy_comparison(
        sim.judgments, baseline="Vanilla", metric_names=("ca",), **options
    )
    row = cmp[
        (cmp["strategy"] == "CoT")
        & (cmp["split"] != "pooled")
        & (cmp["variant"] == "complete_pairs")
    ].iloc[0]
    return Outcome(
        row["diff"], row["ci_low"], row["ci_high"], row["p_value"], n_eff=row["n_eff_clusters"]
    )


CHECKS: list[Check] = [
    Check(
        name="faithfulness.ragas_alignment",
        family="faithfulness",
        estimator="analyses.faithfulness.alignment",
        estimand="alignment",
        simulate=simulate_alignment,
        estimate=estimate_alignment,
        before={"reference": "t"},
        effect=f"detector logit shift {ALT_DISCRIMINATION} for consistent summaries "
        "(alignment ≈ 0.43, margin ≈ 0.19)",
        notes="interval covers the alignment; the test's null is margin (pos − neg) = 0",
    ),
    Check(
        name="faithfulness.faitheval_accuracy",
        family="faithfulness",
        estimator="analyses.faithfulness.accuracy (strict)",
        estimand="accuracy",
        simulate=simulate_faitheval,
        estimate=estimate_faitheval,
        test=False,
        before={"interval": "percentile"},
        effect="weaker model (mean logit 0 instead of 0.8)",
    ),
    Check(
        name="prompting.strategy_ca",
        family="prompting",
        estimator="analyses.prompting.strategy_comparison (ca)",
        estimand="diff_ca:CoT",
        simulate=simulate_strategies,
        estimate=estimate_strategy,
        before={"test": "bootstrap"},
        effect=f"CoT logit +{ALT_STRATEGY} over Vanilla (Δ consistent accuracy ≈ +0.08)",
    ),
]
