"""The `judgelab card JUDGE` command: one judge's report card, printed as the HTML's path."""

from __future__ import annotations

import argparse
import re
import sys

NOTEBOOK = "14_judge_report_card"


def run_name(key: str) -> str:
    """Return the run name of a judge key's card (characters a run name allows).

    >>> run_name("llmbar:GPT-4.Vanilla")
    'llmbar__GPT-4.Vanilla'
    """
    from judgelab.reporting import (
        card,  # deferred, as every command's: `judgelab --help` stays fast
    )

    k = card.parse_key(key)
    return re.sub(r"[^A-Za-z0-9_.-]", "_", f"{k.source}__{k.judge}")


def _cmd_card(args: argparse.Namespace) -> int:
    from judgelab.reporting import pipeline

    overrides = pipeline.parse_overrides(args.p or [])
    overrides["judges"] = [args.judge]
    params_file = args.params
    if params_file is None:
        default = pipeline.paths.params() / NOTEBOOK / "default.yaml"
        params_file = default if default.exists() else None
    result = pipeline.run_notebook(
        NOTEBOOK,
        params_file=params_file,
        overrides=overrides,
        run=args.run or run_name(args.judge),
        progress=True,  # cells N of M, elapsed and ETA on stderr
    )
    pipeline.write_index()
    if not result.ok:
        print(f"error: {result.error}", file=sys.stderr)
        if result.html:
            print(result.html)
        return 1
    print(result.html)
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    """Add the `card` command to the top-level parser."""
    p = sub.add_parser(
        "card",
        help="one judge's report card (notebook 14); prints the HTML's path",
        description="Execute notebooks/14_judge_report_card for one judge key "
        "'<source>:<judge id>' (e.g. llmbar:GPT-4.Vanilla) with params/14_judge_report_card/"
        "default.yaml for every other setting, and print the path of the exported HTML.",
    )
    p.add_argument("judge", help="judge key <source>:<judge id>, e.g. llmbar:GPT-4.Vanilla")
    p.add_argument("--params", metavar="FILE", help="params YAML (default: the default card's)")
    p.add_argument("-p", action="append", metavar="KEY=VALUE", help="override one parameter")
    p.add_argument("--run", help="run name (default: <source>__<judge id>)")
    p.set_defaults(func=_cmd_card)
