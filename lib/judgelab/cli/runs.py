"""`judgelab runs list` (every recorded run) and `judgelab runs diff A B` (what differs)."""

from __future__ import annotations

import argparse
import sys

EXIT_BAD_INPUT = 2


def _cmd_diff(args: argparse.Namespace) -> int:
    from judgelab.reporting import runs_diff

    try:
        result = runs_diff.diff(args.a, args.b, atol=args.atol)
    except (ValueError, FileNotFoundError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    print(runs_diff.render(result, args.a, args.b))
    return 0


def _cmd_list(args: argparse.Namespace) -> int:
    from judgelab.reporting import runs_diff

    lines = runs_diff.list_runs()
    print("\n".join(lines) if lines else "no recorded runs (run `judgelab run <notebook>`)")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    """Add the `runs` command (its `list` and `diff` actions) to the top-level parser."""
    runs = sub.add_parser("runs", help="list and compare recorded notebook runs")
    rsub = runs.add_subparsers(dest="runs_command", metavar="ACTION")
    p = rsub.add_parser(
        "list", help="every recorded run: <notebook>/<run>, status, start, seconds, params"
    )
    p.set_defaults(func=_cmd_list)
    p = rsub.add_parser("diff", help="what differs between two runs <notebook>/<run>")
    p.add_argument("a", help="first run, e.g. 02_positional_bias/default")
    p.add_argument("b", help="second run")
    p.add_argument("--atol", type=float, default=1e-9, help="numbers closer than this are equal")
    p.set_defaults(func=_cmd_diff)
    runs.set_defaults(func=lambda a: (runs.print_help(), EXIT_BAD_INPUT)[1])
