"""`judgelab judge`: run a judge spec over a benchmark (cached, resumable), or --dry-run it."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

EXIT_BAD_INPUT = 2
EXIT_INCOMPLETE = 1


def _cmd_judge(args: argparse.Namespace) -> int:
    from judgelab import judges
    from judgelab.data import catalog
    from judgelab.judges import offline

    try:
        spec = judges.resolve(args.judge)
        if args.order is not None:
            from dataclasses import replace

            spec = replace(spec, orders=(args.order,))
        items = catalog.load_items(args.benchmark)
        splits = [s for part in args.split or [] for s in part.split(",") if s] or None
        conditions = args.condition or None
        if args.dry_run:
            est = judges.dry_run(
                items, spec, splits=splits, limit=args.limit, conditions=conditions
            )
            print(f"dry run: judge {spec.judge_id} on {args.benchmark} (nothing is called)")
            print(est.format())
            return 0
        result = judges.run(
            items,
            spec,
            splits=splits,
            limit=args.limit,
            conditions=conditions,
            progress=not args.no_progress,
        )
    except (judges.JudgeSpecError, offline.OfflineNotApplicable, judges.JudgeRunError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    print(result.summary.format())
    return EXIT_INCOMPLETE if result.summary.failed else 0


def register(sub: argparse._SubParsersAction) -> None:
    """Add the `judge` command to the top-level parser."""
    p = sub.add_parser(
        "judge",
        help="run a judge over a benchmark (cached, resumable); --dry-run to estimate",
        description="Run a judge spec over a benchmark. Every response is cached before it "
        "is parsed, so a rerun (also after a crash) pays only for what was never answered. "
        "The table is written to data/judgments/<benchmark>/<judge>.parquet.",
    )
    p.add_argument(
        "--judge",
        required=True,
        metavar="SPEC",
        help="a judge YAML path or a name in params/judges/",
    )
    p.add_argument(
        "--benchmark",
        required=True,
        metavar="NAME",
        help="an imported benchmark, sample:<set>, or an items .parquet/.jsonl path",
    )
    p.add_argument(
        "--split", action="append", metavar="S", help="only request these splits (repeatable)"
    )
    p.add_argument("--limit", type=int, metavar="N", help="only request the first N items")
    p.add_argument(
        "--condition",
        action="append",
        metavar="COND",
        help="condition to run, e.g. reference=human or context=without (repeatable; default: "
        "the spec's, else the template's)",
    )
    p.add_argument(
        "--order", type=int, choices=(0, 1), help="only one presentation order (default: both)"
    )
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="print requests, cache hits, estimated tokens and cost; call nothing",
    )
    p.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    p.set_defaults(func=_cmd_judge)


def main(argv: Sequence[str] | None = None) -> int:
    """Run `judge` as a standalone command (`python -m judgelab.cli.judge ...`)."""
    parser = argparse.ArgumentParser(prog="judgelab")
    sub = parser.add_subparsers(dest="command")
    register(sub)
    args = parser.parse_args(["judge", *(sys.argv[1:] if argv is None else argv)])
    try:
        return int(args.func(args))
    except (FileNotFoundError, ValueError, LookupError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
