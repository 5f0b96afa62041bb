"""`make calibrate`: run every calibration check on the scenario grid and save the table.

    python -m judgelab.reporting.calibration                     # the grid, R=400 -> 1600
    python -m judgelab.reporting.calibration --reps 100 --only pairwise,length \
        --scenarios unequal/varying/G8/n48,balanced/constant/G50/n250 --variants after

Starts with `--reps` replicates per cell, then adds replicates (doubling, up to
`--max-reps`) to the cells whose verdict is still inconclusive, while `--budget-min` lasts.
Prints the overview (markdown) and writes `reports/calibration/` (see `results`). Every
finished job is journalled under `reports/calibration/journal/` as it ends, so a killed run
resumes where it stopped when rerun with the same library code (`--fresh` ignores the journal).
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time

from judgelab.core import tables
from judgelab.reporting.calibration import checks, harness, pooled, results
from judgelab.reporting.calibration.journal import Journal
from judgelab.simulate import base


def parse(argv: list[str] | None) -> argparse.Namespace:
    """Parse the command line."""
    p = argparse.ArgumentParser(prog="python -m judgelab.reporting.calibration")
    p.add_argument("--reps", type=int, default=400, help="first replicates per cell (400)")
    p.add_argument("--max-reps", type=int, default=1600, help="most replicates per cell")
    p.add_argument("--budget-min", type=float, default=45.0, help="minutes for extending")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--variants", default="after,before", help="after (defaults), before")
    p.add_argument("--only", default="", help="comma-separated families or check names")
    p.add_argument("--scenarios", default="", help="comma-separated scenario names (all)")
    p.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    p.add_argument("--alpha", type=float, default=0.05)
    p.add_argument("--no-save", action="store_true", help="print only; write nothing")
    p.add_argument("--fresh", action="store_true", help="ignore jobs journalled by an earlier run")
    return p.parse_args(argv)


def select(names: str) -> list[harness.Check]:
    """Return the registered checks named (by family or check name; all when empty)."""
    every = checks.all_checks()
    wanted = [n for n in names.split(",") if n]
    if not wanted:
        return every
    chosen = [c for c in every if c.family in wanted or c.name in wanted]
    unknown = [n for n in wanted if not any(n in (c.family, c.name) for c in every)]
    if unknown:
        known = sorted({c.family for c in every})
        raise SystemExit(f"unknown family or check {unknown}; families: {known}")
    return chosen


def main(argv: list[str] | None = None) -> int:
    """Run the checks, print the overview, save the results."""
    args = parse(argv)
    chosen = select(args.only)
    scenarios = [base.scenario(s) for s in args.scenarios.split(",") if s] or list(base.GRID)
    variants = tuple(v for v in args.variants.split(",") if v)
    start = time.perf_counter()

    def note(msg: str) -> None:
        print(f"  done {msg}", file=sys.stderr, flush=True)

    journal = None
    if not args.no_save:
        code = "fresh-" + str(time.time_ns()) if args.fresh else None
        journal = Journal(results.folder() / "journal", code)
    reps = harness.run(
        chosen,
        scenarios=scenarios,
        reps=args.reps,
        seed=args.seed,
        variants=variants,
        workers=args.workers,
        progress=note,
        journal=journal,
    )
    reps = harness.extend(
        reps,
        chosen,
        alpha=args.alpha,
        max_reps=args.max_reps,
        seed=args.seed,
        workers=args.workers,
        budget_s=60 * args.budget_min,
        progress=note,
        journal=journal,
    )
    summary = harness.summarise(reps, chosen, alpha=args.alpha)
    meta = {
        "reps": args.reps,
        "max_reps": args.max_reps,
        "seed": args.seed,
        "variants": list(variants),
        "scenarios": [s.name for s in scenarios],
        "alpha": args.alpha,
        "workers": args.workers,
        "checks": [c.name for c in chosen],
        "seconds": round(time.perf_counter() - start, 1),
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
    }
    print(results.markdown(harness.overview(summary)))
    grid = pooled.pooled(reps, chosen, alpha=args.alpha)
    print("\nPooled over the grid (each check's average; a cell can still miss):\n")
    print(results.markdown(results.table(grid)))
    print(f"\n{len(chosen)} checks, {meta['seconds']} s", file=sys.stderr)
    if not args.no_save:
        where = results.save(results.Results(reps, summary, meta))
        tables.write_text(where / "pooled.csv", grid.to_csv(index=False))
        print(f"saved to {where}", file=sys.stderr)
    after = summary["variant"] == "after"
    failed = summary[after & (summary["verdict"] == "fail")]
    open_ = harness.undecided(summary)
    for label, rows in (("FAILED TARGETS", failed[~open_]), ("unconfirmed fails", failed[open_])):
        cells = sorted(set(zip(rows["check"], rows["scenario"], strict=True)))
        if cells:
            more = f" (fewer than {harness.CONFIRM_REPS} replicates)" if label[0] == "u" else ""
            print(f"{label}{more}, {len(cells)} cells: {cells}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
