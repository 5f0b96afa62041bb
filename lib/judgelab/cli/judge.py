"""`judgelab judge`: run a judge spec over a benchmark (cached, resumable), or --dry-run it."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

EXIT_BAD_INPUT = 2
EXIT_INCOMPLETE = 1
EXIT_FETCH = 1  # a registry source could not be obtained (as `judgelab data fetch`)
EXIT_INTERRUPTED = 130  # issue 19 item 20b: Ctrl-C ends with one line, as shells expect
INTERRUPTED = (
    "interrupted: every answer received so far is kept in the request cache and the "
    "judgments table is as the last finished run left it; rerun the same command to request "
    "only the rest"
)


def _items_source(benchmark: str) -> str:
    """Return `--benchmark` with a relative items file made absolute against the cwd.

    A `.parquet`/`.jsonl` path given on the command line is read from where the command runs,
    as `data validate` and `data import-file` read theirs; a registry source, benchmark or
    `sample:` name is passed through unchanged (a registry source is imported on first use).
    """
    path = Path(benchmark).expanduser()
    if path.suffix in (".parquet", ".jsonl") and not path.is_absolute():
        return str(Path.cwd() / path)
    return str(path) if path.suffix in (".parquet", ".jsonl") else benchmark


def _list_templates() -> int:
    """Print every prompt template: id, pairwise or single, paper, one-line description."""
    from judgelab.judges import templates

    width = max(map(len, templates.REGISTRY))
    for name in templates.names():
        t = templates.REGISTRY[name]
        kind = "pairwise" if t.pairwise else "single"
        print(f"{name:<{width}}  {kind:<8}  {t.paper:<20}  {t.description}")
    return 0


def _load_items(args: argparse.Namespace) -> Any:
    """Return the items: records of a plain `.parquet` online run (no pandas), else a frame.

    Issue 38 item 3: `judges.light` reads an items file it is sure of with pyarrow; anything
    else (a registry source, a `.jsonl` file, a dry run, the batch back-end, a file with a
    problem, which the pandas reader names) is loaded by `catalog.load_benchmark_items`.
    """
    source = _items_source(args.benchmark)
    if args.backend == "online" and not args.dry_run and source.endswith(".parquet"):
        from judgelab.judges import light

        records = light.read_items(source)
        if records is not None:
            return records
    from judgelab.data import catalog

    return catalog.load_benchmark_items(source)


def _as_frame(items: Any, args: argparse.Namespace) -> Any:
    """Return the items as a frame (records read by `judges.light` are read again)."""
    if not isinstance(items, list):
        return items
    from judgelab.data import catalog

    return catalog.load_benchmark_items(_items_source(args.benchmark))


def _benchmarks(items: Any) -> list[str]:
    """Return the benchmarks of item records or an items frame, sorted."""
    if isinstance(items, list):
        from judgelab.judges.light import benchmarks

        return benchmarks(items)
    from judgelab.judges.store import benchmarks as of_frame

    return of_frame(items)


def _cmd_judge(args: argparse.Namespace) -> int:
    if args.list_templates:
        return _list_templates()
    missing = [f"--{k}" for k in ("judge", "benchmark") if getattr(args, k) is None]
    if missing:
        print(f"error: {' and '.join(missing)} is required", file=sys.stderr)
        return EXIT_BAD_INPUT
    from judgelab import judges
    from judgelab.core.names import safe_name
    from judgelab.errors import ChecksumError, FetchError, OfflineNotApplicable, UnsafeNameError

    try:
        spec = judges.resolve(args.judge)
        if args.order is not None:
            from dataclasses import replace

            spec = replace(spec, orders=(args.order,))
        if args.deadline_s is not None:  # issue 19 item 9
            from dataclasses import replace

            spec = replace(spec, deadline_s=args.deadline_s)
        items = _load_items(args)
        for bench in _benchmarks(items):  # refused before anything is requested
            safe_name("benchmark", bench, where=f"items {args.benchmark}")
        safe_name("judge", spec.judge_id, where=f"judge {args.judge}")
        splits = [s for part in args.split or [] for s in part.split(",") if s] or None
        conditions = args.condition or None
        if args.backend == "batch":  # issue 24: the batch back-end (judgelab.judges.batch)
            from judgelab.judges.batch.backend import judge_batch

            text, code = judge_batch(
                items,
                spec,
                splits=splits,
                limit=args.limit,
                conditions=conditions,
                dry_run=args.dry_run,
                wait=args.wait,
                poll_s=args.poll_s,
            )
            print(text)
            return code
        held = () if args.request_held else None  # None: the batch registry's (issue 32, 9)
        if args.dry_run:
            est = judges.dry_run(
                items, spec, splits=splits, limit=args.limit, conditions=conditions, held=held
            )
            print(f"dry run: judge {spec.judge_id} on {args.benchmark} (nothing is called)")
            print(est.format())
            return 0
        how = {"splits": splits, "limit": args.limit, "conditions": conditions}
        how |= {"progress": not args.no_progress, "held": held}
        how["evict_invalid"] = args.evict_invalid  # issue 19 item 7
        result = None
        if isinstance(items, list):  # issue 38 item 3: no pandas before the first request
            from judgelab.judges import light

            result = light.run(items, spec, **how)
        if result is None:
            result = judges.run(_as_frame(items, args), spec, **how)
    except (
        judges.JudgeSpecError,
        OfflineNotApplicable,
        judges.JudgeRunError,
        UnsafeNameError,
    ) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except FetchError as exc:  # the registry source named by --benchmark could not be had
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT if isinstance(exc, ChecksumError) else EXIT_FETCH
    except KeyboardInterrupt:  # issue 19 item 20b: no traceback
        print(INTERRUPTED, file=sys.stderr)
        return EXIT_INTERRUPTED
    print(result.summary.format())
    unparsed = _unparsed(result.judgments, spec.prompt_id)
    return EXIT_INCOMPLETE if result.summary.failed or unparsed else 0


RAW_SHOWN = 200  # characters of one raw output quoted when verdicts fail to parse


def _unparsed(judgments: Any, template: str) -> bool:
    """Warn when most verdicts failed to parse; return True when none parsed (an error).

    The message names the template whose parser read them and quotes one raw output,
    secrets masked, clipped and escaped (`repr`), so a wrong template or a chatty model is
    seen at once instead of as a count in the summary.
    """
    if judgments is None or not len(judgments):
        return False
    from judgelab.core import secrets
    from judgelab.judges.light import unparsed

    n, bad, raw = unparsed(judgments)
    if bad * 2 <= n:
        return False
    shown = repr(secrets.scrub_clip(raw, RAW_SHOWN, secrets.env_secrets()))
    what = f"by template {template!r}; e.g. {shown}"
    if bad == n:
        print(
            f"error: none of the {n} verdicts could be parsed {what} (check the template, "
            "or the model's answer format; the raw outputs are kept in the table)",
            file=sys.stderr,
        )
        return True
    print(f"warning: {bad} of the {n} verdicts could not be parsed {what}", file=sys.stderr)
    return False


def _positive_seconds(text: str) -> float:
    """Parse `--deadline-s`: a positive, finite number of seconds."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected seconds, got {text!r}") from None
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, got {text}")
    return value


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
        "--list-templates",
        action="store_true",
        help="print every prompt template (id, pairwise or single, paper, what it asks); "
        "a spec's `template:` is one of these ids",
    )
    p.add_argument(
        "--judge",
        metavar="SPEC",
        help="a judge YAML path or a name in params/judges/ (required unless --list-templates)",
    )
    p.add_argument(
        "--benchmark",
        metavar="NAME",
        help="a registry source (imported on first use), an imported benchmark, sample:<set>, "
        "or an items .parquet/.jsonl path (required unless --list-templates)",
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
        "--deadline-s",
        type=_positive_seconds,
        metavar="S",
        help="stop requesting after S seconds; what is left counts as failed and the next "
        "run requests it (default: the spec's deadline_s, else none)",
    )
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="print requests, cache hits, estimated tokens and cost; call nothing",
    )
    _cache_and_backend_args(p)
    p.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    p.set_defaults(func=_cmd_judge)


def _cache_and_backend_args(p: argparse.ArgumentParser) -> None:
    """Add the options about cached answers, batch-held keys and the back-end."""
    p.add_argument(
        "--evict-invalid",
        action="store_true",
        help="first evict this run's cached answers flagged invalid (malformed token usage, "
        "text UTF-8 cannot encode, unreadable entries) so they are requested, and paid, "
        "again; without it they are kept and used (usage recorded as unknown)",
    )
    p.add_argument(
        "--request-held",
        action="store_true",
        help="also request online the keys held by this judge's batches that are not "
        "collected yet (default: skip and count them; they are paid twice if those batches "
        "finish)",
    )
    p.add_argument(
        "--backend",
        choices=("online", "batch"),
        default="online",
        help="online: the async runner (default); batch: submit what is missing to the "
        "spec's Batch API (half price), collect what finished, write the table; rerun to "
        "collect the rest (see `judgelab batch`)",
    )
    p.add_argument(
        "--wait", action="store_true", help="--backend batch: poll until the batches end"
    )
    p.add_argument(
        "--poll-s",
        type=_positive_seconds,
        default=30.0,
        metavar="S",
        help="--backend batch --wait: seconds between polls (default 30)",
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Run `judge` as a standalone command (`python -m judgelab.cli.judge ...`).

    The same as `judgelab judge ...`: one entry point, so the output is escaped and errors
    are reported the same way (`judgelab.cli.main`).
    """
    from judgelab.cli import main as entry

    return entry.main(["judge", *(sys.argv[1:] if argv is None else argv)])


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
