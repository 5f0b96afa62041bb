"""Bias probes: counterfactual perturbations of real pairwise items, and what they do to judges.

The face of the probes family (notebook 18, `judgelab probe`). CALM (arXiv 2410.02736)
and Shi et al. (arXiv 2406.07791) name biases beyond position and length — authority,
bandwagon, verbosity, sentiment, self-enhancement, refinement, distraction, chain of
thought, repetition; this family ships them as a reusable, controlled experiment:

1. `catalogue`: the probes, each a small documented, seeded transformation of one response
   (or of the context, aimed at one response); `catalogue_table()` lists them;
2. `variants`: `generate` makes a probe benchmark from any pairwise items table — every
   item's control plus, per probe, the probe on the better and on the worse response — with
   provenance in `meta`, so `judgelab judge` runs it like any other benchmark (both orders,
   cached);
3. `effects`: per judge × probe, robustness, flips toward the probed response, net pull and
   the accuracy change when the probe favours the worse response, each with a paired
   item-clustered bootstrap interval and test (`probe_pairs`, `probe_effects`,
   `effects_table`);
4. `cases`: the arms behind a cell (which verdicts a probe moved; rendered by
   `reporting.explore.probe_cases`); `runs`: offline baselines in memory and the exact
   `judgelab probe` / `judgelab judge` commands with dry-run costs (`commands`);
5. `plots`: the judges × probes heatmap; `measures`: the report-card row per probe.
"""

from judgelab.core.lazy import face

# Every name is imported on first use: `judgelab probe --list` needs no pandas, scipy or
# matplotlib. (`generate` is a function of `variants`, not a submodule: importing a submodule
# can never replace a function on the package.)
_WHERE = {
    **{m: m for m in ("cases", "catalogue", "plots", "variants")},
    **{n: "catalogue" for n in ("PROBES", "apply", "catalogue_table")},
    **{n: "effects" for n in ("ALL", "METRICS", "effects_table", "probe_effects", "probe_pairs")},
    **{n: "runs" for n in ("BASELINES", "commands", "offline_judgments")},
    **{
        n: "variants"
        for n in (
            "CONTROL",
            "PROVENANCE",
            "SUFFIX",
            "TARGETS",
            "generate",
            "is_probe_benchmark",
            "provenance",
            "select_items",
            "variant_counts",
        )
    },
}
__getattr__ = face(__name__, _WHERE)

__all__ = [
    "ALL",
    "BASELINES",
    "CONTROL",
    "METRICS",
    "PROBES",
    "PROVENANCE",
    "SUFFIX",
    "TARGETS",
    "apply",
    "cases",
    "catalogue",
    "catalogue_table",
    "commands",
    "effects_table",
    "generate",
    "is_probe_benchmark",
    "offline_judgments",
    "plots",
    "probe_effects",
    "probe_pairs",
    "provenance",
    "variant_counts",
    "select_items",
]
