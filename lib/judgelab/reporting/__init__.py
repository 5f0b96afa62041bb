"""Reporting: run notebooks, write their outputs, index the runs, check published numbers.

- `notebook` — what a notebook calls: `outputs(notebook, run)` (tables and figures of a run),
  the data-source banners.
- `findings` — the one named finding a notebook declares (`out.finding`), read by the index.
- `figures` — save a figure as PNG + SVG under `figures/<notebook>/<run>/`.
- `params` — params files and `-p` overrides, checked against a notebook's parameters cell.
- `pipeline` — execute a notebook with papermill (`execution`), export HTML, `reproduce`
  every params file; `freshness` — which runs' inputs are unchanged (skipped); `progress` —
  N of M, elapsed and ETA on stderr.
- `html_export` — the HTML report readers share (code behind a toggle, itables shared once).
- `index` — `reports/index.html` from the run records; `leaderboard` — its judge
  leaderboard, read from the report card's tables (`palette`: the light colours).
- `reproduction` (with `comparison`, `peers`) — which published numbers judgelab reproduces.
- `calibration` — coverage, type-I error and power of every estimator on planted truth
  (`make calibrate`, notebook 15).
- `design_check` — the study planner's closed forms against the simulator (notebook 17).
- `explore` — the items behind a number: the cases of an outcome category, expandable.
- `provenance` — what made a run (code, versions, lock, data revisions, seeds);
  `runs_diff` — what differs between two runs, numbers included.
- `card` — the judge report card (measures registered by the analysis families, lights, HTML);
  `certificate` — a certificate per judge and task graded from the card's intervals.
"""

__all__ = [
    "calibration",
    "card",
    "certificate",
    "comparison",
    "design_check",
    "execution",
    "explore",
    "figures",
    "findings",
    "freshness",
    "html_export",
    "index",
    "leaderboard",
    "notebook",
    "palette",
    "params",
    "peers",
    "pipeline",
    "progress",
    "provenance",
    "reproduction",
    "runs_diff",
]


def __getattr__(name: str) -> object:
    """Import a submodule on first use: `judgelab judge` must not pay for scipy or matplotlib."""
    if name in __all__:
        import importlib

        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
