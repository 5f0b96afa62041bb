"""Calibration checks of the faithfulness and prompting families (issue 20).

- `faithfulness.ragas_alignment`: human alignment of a detector on FaithBench-style pairs
  (40 sources × 10 summaries, every cross-label pair of a source; `simulate.faithfulness.
  faithbench`). Interval: the alignment; test: does the detector prefer the human-preferred
  summary more often than the other (null: no discrimination, margin 0). Before: pairs
  resampled as independent and the exact sign test.
- `faithfulness.faitheval_accuracy`: strict accuracy of one model on FaithEval-style
  multiple-choice items (50 clusters × 5, raw answers in several phrasings, 8 % unparsed).
  Interval only. Before: the Wilson interval over independent items.
- `prompting.strategy_ca`: consistent-accuracy difference CoT − Vanilla of one model over
  50 clusters × 5 pairwise items (a second strategy is compared too, as in notebook 10).
  Before: items resampled as independent and the exact McNemar test.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from judgelab.analyses import faithfulness, prompting
from judgelab.reporting.calibration.harness import Check, Outcome
from judgelab.simulate import faithfulness as sim_faith
from judgelab.simulate.base import Scenario, Simulation

#: Planted effects of the alternatives.
ALT_DISCRIMINATION = 0.5
ALT_STRATEGY = 0.4


def simulate_alignment(
    rng: np.random.Generator, scenario: str, shape: Scenario | None = None
) -> Simulation:
    """FaithBench-style pairs; the null detector does not separate the labels."""
    disc = 0.0 if scenario == "null" else ALT_DISCRIMINATION
    return sim_faith.faithbench(rng, discrimination=disc)


def estimate_alignment(sim: Simulation, options: Mapping[str, Any]) -> Outcome:
    """`faithfulness.alignment` on the simulated pairs (pointwise scores compared)."""
    pairs = faithfulness.faithbench_pairs(sim.items)
    prefs = faithfulness.pointwise_preferences(sim.extra["scores"], pairs)
    row = faithfulness.alignment(prefs, **options).iloc[0]
    return Outcome(row["alignment"], row["ci_low"], row["ci_high"], row["p_value"])


def simulate_faitheval(
    rng: np.random.Generator, scenario: str, shape: Scenario | None = None
) -> Simulation:
    """FaithEval-style answers; the alternative is a weaker model (interval only)."""
    return sim_faith.faitheval_mc(rng, ability=0.8 if scenario == "null" else 0.0)


def estimate_faitheval(sim: Simulation, options: Mapping[str, Any]) -> Outcome:
    """Strict accuracy from `faithfulness.accuracy` over the graded answers."""
    graded = faithfulness.grade_answers(sim.judgments, sim.items)
    acc = faithfulness.accuracy(graded, by=("label",), **options)
    row = acc[acc["mode"] == "strict"].iloc[0]
    return Outcome(row["accuracy"], row["ci_low"], row["ci_high"])


def simulate_strategies(
    rng: np.random.Generator, scenario: str, shape: Scenario | None = None
) -> Simulation:
    """One model, Vanilla vs CoT and Reference; the alternative shifts CoT's logit."""
    cot = 0.0 if scenario == "null" else ALT_STRATEGY
    return sim_faith.prompt_strategies(rng, effects={"CoT": cot, "Reference": 0.0})


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
    return Outcome(row["diff"], row["ci_low"], row["ci_high"], row["p_value"])


CHECKS: list[Check] = [
    Check(
        name="faithfulness.ragas_alignment",
        family="faithfulness",
        estimator="analyses.faithfulness.alignment",
        estimand="alignment",
        simulate=simulate_alignment,
        estimate=estimate_alignment,
        before={"cluster": None, "test": "sign", "reference": "percentile"},
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
        before={"cluster": None},
        effect="weaker model (mean logit 0 instead of 0.8)",
    ),
    Check(
        name="prompting.strategy_ca",
        family="prompting",
        estimator="analyses.prompting.strategy_comparison (ca)",
        estimand="diff_ca:CoT",
        simulate=simulate_strategies,
        estimate=estimate_strategy,
        before={"cluster": None, "test": "mcnemar"},
        effect=f"CoT logit +{ALT_STRATEGY} over Vanilla (Δ consistent accuracy ≈ +0.08)",
    ),
]
