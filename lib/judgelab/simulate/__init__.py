"""Planted-truth benchmarks and judges, generated through the real schema (DESIGN §8).

Every generator takes a seeded `numpy.random.Generator`, a `base.Design` (clusters of items
with a latent intra-cluster correlation) and the parameters it plants, and returns a
`base.Simulation`: `items` and `judgments` tables in the schema's dtypes that every analysis
runs on unchanged, the population `truth` of each estimand, and the parameters. The
calibration harness (`judgelab.reporting.calibration`) runs the library's estimators on them.

One module per analysis family:

- `pairwise` — both presentation orders, position bias, ties, invalid outputs (at random and
  not at random), repeated samples, several splits (`pairwise_benchmark`, `population`);
- `length` — heavy-tailed response lengths with a bounded (log-ratio) or unbounded (linear)
  length bias, documents with a context-length trend, length-controlled win rates;
- `correctness` — questions answered by several candidate models, judges whose FPR/FNR shift
  on their own model's (or family's) answers, reference conditions (`reference`);
- `juries` — judges with correlated errors (shared item difficulty) and different
  accuracies, vote rules, self-consistency samples;
- `contexteval` — queries judged with and without context, WEIRD attribute gaps, ratings;
- `faithfulness` — source documents with ~10 summaries each, FaithEval multiple-choice
  answers in several phrasings (some unparseable), prompting strategies;
- `stability` — a judge switch with a known shift matrix and score drift, a leaderboard
  graded by humans and a judge, repeated trials; `humans` — annotators beside a judge, each
  rater's skill varying by cluster; `anchors` — systems against two baselines, with or
  without a matchup effect that makes the ranking depend on the baseline.

Further modules (`probes`, `grounding`, `transport`, `confidence`, `design`, ...) serve one
calibration family each and are imported by name.
"""

from judgelab.simulate import (
    anchors,
    base,
    contexteval,
    correctness,
    faithfulness,
    humans,
    juries,
    length,
    pairwise,
    stability,
)
from judgelab.simulate.base import Design, Simulation, expectation, heavy_tailed, sigmoid

__all__ = [
    "Design",
    "Simulation",
    "anchors",
    "base",
    "contexteval",
    "correctness",
    "expectation",
    "faithfulness",
    "heavy_tailed",
    "humans",
    "juries",
    "length",
    "pairwise",
    "sigmoid",
    "stability",
]
