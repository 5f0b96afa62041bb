"""Analyses: DataFrames in, DataFrames out; one package per family, each with its `plots`.

Families (each is the face its notebooks import, e.g. `from judgelab.analyses import length`):
`overview` (00), `pairwise` (01, 02 — also the shared base of pairwise rates), `length`
(03, 04), `correctness` (05), `reference` (06), `contexteval` (07, 08), `juries` (09),
`prompting` (10), `faithfulness` (11, 12), `grounding` (16), `design` (17), `probes` (18),
`stability` (19).
`charts` holds the plot scaffolding the families share; `registry` the report-card measures
the families contribute. Families never import each other (checked by import-linter), and
never find or read files (the data wing's `catalog` does); `stability` takes the juries'
kappa interval (the one exception, declared in the import-linter contract).
"""

__all__ = [
    "charts",
    "contexteval",
    "correctness",
    "design",
    "faithfulness",
    "grounding",
    "juries",
    "length",
    "overview",
    "pairwise",
    "probes",
    "prompting",
    "reference",
    "registry",
    "stability",
]
