"""`make calibrate`: run every calibration check and save the table.

    python -m judgelab.reporting.calibration                    # R=500, defaults + legacy
    python -m judgelab.reporting.calibration --reps 40 --only pairwise,length --variants after

Prints the table (markdown) and writes `reports/calibration/` (see `results`).
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time

from judgelab.reporting.calibration import checks, harness, results


def parse(argv: list[str] | None) -> argparse.Namespace:
    """Parse the command line."""
    p = argparse.ArgumentParser(prog="python -m judgelab.reporting.calibration")
    p.add_argument("--reps", type=int, default=500, help="replicates per cell (default 500)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--variants", default="after,before", help="after (defaults), before (legacy)")
    p.add_argument("--only", default="", help="comma-separated families or check names")
    p.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    p.add_argument("--alpha", type=float, default=0.05)
    p.add_argument("--no-save", action="store_true", help="print only; write nothing")
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
    """Run the checks, print the table, save the results."""
    args = parse(argv)
    chosen = select(args.only)
    variants = tuple(v for v in args.variants.split(",") if v)
    start = time.perf_counter()
    reps = harness.run(
        chosen,
        reps=args.reps,
        seed=args.seed,
        variants=variants,
        workers=args.workers,
        progress=lambda msg: print(f"  done {msg}", file=sys.stderr, flush=True),
    )
    summary = harness.summarise(reps, chosen, alpha=args.alpha)
    meta = {
        "reps": args.reps,
        "seed": args.seed,
        "variants": list(variants),
        "alpha": args.alpha,
        "workers": args.workers,
        "checks": [c.name for c in chosen],
        "seconds": round(time.perf_counter() - start, 1),
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
    }
    print(results.markdown(summary))
    print(f"\n{len(chosen)} checks, R={args.reps}, {meta['seconds']} s", file=sys.stderr)
    if not args.no_save:
        where = results.save(results.Results(reps, summary, meta))
        print(f"saved to {where}", file=sys.stderr)
    missed = summary[(summary["variant"] == "after") & ~summary["meets_targets"]]
    if not missed.empty:
        print(f"MISSED TARGETS: {missed['check'].tolist()}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
