"""The `judgelab` command line."""

from __future__ import annotations

import argparse
import importlib
import sqlite3
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from judgelab import __version__

EXIT_BAD_INPUT = 2
EXIT_STORAGE = 74  # EX_IOERR: the file system refused a write (disk full, read-only)
# Modules that add subcommands: each defines `register(subparsers)`.
SUBCOMMAND_MODULES = (
    "judgelab.cli.data",
    "judgelab.cli.judge",
    "judgelab.cli.batch",
    "judgelab.cli.probe",
    "judgelab.cli.card",
    "judgelab.cli.compare",
    "judgelab.cli.plan",
    "judgelab.cli.runs",
)


def _cmd_run(args: argparse.Namespace) -> int:
    from judgelab.reporting import pipeline

    overrides = pipeline.parse_overrides(args.p or [])
    params_file = args.params
    if params_file is None:  # -p and --run apply on top of the default file, never instead
        default = pipeline.paths.params() / Path(args.notebook).stem / "default.yaml"
        params_file = default if default.exists() else None
    result = pipeline.run_notebook(
        args.notebook, params_file=params_file, overrides=overrides, run=args.run
    )
    pipeline.write_index()
    print(f"{result.status}: {result.ipynb}")
    if result.html:
        print(f"html: {result.html}")
    if not result.ok:
        print(f"error: {result.error}", file=sys.stderr)
        return 1
    return 0


def _cmd_reproduce(args: argparse.Namespace) -> int:
    from judgelab.reporting import pipeline

    if args.jobs is None:
        args.jobs = pipeline.default_jobs()
    runs = args.runs.split(",") if args.runs else None
    notebooks = args.notebooks.split(",") if args.notebooks else None
    results = pipeline.reproduce(
        runs=runs, notebooks=notebooks, jobs=args.jobs, force=args.force, progress=sys.stderr
    )
    failed = [r for r in results if not r.ok]
    skipped = sum(r.skipped for r in results)
    print(
        f"{len(results) - len(failed)} ok ({skipped} of them skipped, unchanged), "
        f"{len(failed)} failed; index: {pipeline.paths.reports() / 'index.html'}"
    )
    for r in failed:
        print(f"FAILED {r.notebook} [{r.run}]: {r.error}", file=sys.stderr)
    return 1 if failed or not results else 0


def _cmd_index(args: argparse.Namespace) -> int:
    from judgelab.reporting import pipeline

    print(pipeline.write_index())
    return 0


def build_parser() -> argparse.ArgumentParser:
    """Return the argument parser for the `judgelab` command."""
    parser = argparse.ArgumentParser(
        prog="judgelab",
        description="Measure how far an LLM judge can be trusted: import judgments, run "
        "judges, and execute the analysis notebooks.",
    )
    parser.add_argument("--version", action="version", version=f"judgelab {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser(
        "run",
        help="execute one notebook with papermill and export HTML",
        description="Execute one notebook. Its parameters are, in order of precedence: each "
        "-p KEY=VALUE, then the params file (--params, else params/<nb>/default.yaml when it "
        "exists), then the notebook's own defaults. The run is named --run, else after the "
        "params file: `run NB -p k=v` without --run replaces the `default` run's report.",
    )
    p.add_argument("notebook", help="notebook stem, e.g. 00_data_overview")
    p.add_argument(
        "--params",
        metavar="FILE",
        help="params YAML (default: params/<nb>/default.yaml when it exists, with or without "
        "-p and --run)",
    )
    p.add_argument(
        "-p",
        action="append",
        metavar="KEY=VALUE",
        help="override one parameter on top of the params file (repeatable; YAML values)",
    )
    p.add_argument("--run", help="run name (default: the params file stem, else `default`)")
    p.set_defaults(func=_cmd_run)

    p = sub.add_parser(
        "reproduce",
        help="execute every params/*/*.yaml whose inputs changed and write the index",
        description="Execute every params file params/<nb>/<run>.yaml, then write the index. A "
        "run whose inputs (notebook, parameters, library code, uv.lock, the data it read) are "
        "unchanged since its last successful run is skipped and keeps its report; --force "
        "runs everything. Progress (N of M, elapsed, ETA) and why each run ran or was skipped "
        "go to stderr.",
    )
    p.add_argument("--runs", help="comma-separated run names to keep (e.g. default)")
    p.add_argument("--notebooks", help="comma-separated notebook stems to keep")
    p.add_argument(
        "--jobs",
        type=int,
        default=None,
        help="notebooks executed at once (default: one per CPU core, at most 4)",
    )
    p.add_argument("--force", action="store_true", help="run even the unchanged runs")
    p.set_defaults(func=_cmd_reproduce)

    p = sub.add_parser("index", help="rewrite reports/index.html from the run records")
    p.set_defaults(func=_cmd_index)

    for module_name in SUBCOMMAND_MODULES:
        importlib.import_module(module_name).register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status (everything printed is escaped)."""
    from judgelab.cli import terminal

    with terminal.escaped_output():
        return _main(argv)


def _main(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 0
    from judgelab.cli import terminal
    from judgelab.core import threads
    from judgelab.errors import ParamsError, RunInProgress
    from judgelab.reporting import stopping

    threads.cap_command(args.command)

    saved, warnings.showwarning = warnings.showwarning, _show_warning
    try:
        with stopping.stop_on_signals():  # SIGTERM cleans up as Ctrl-C does
            return int(args.func(args) or 0)
    except (OSError, sqlite3.OperationalError) as exc:
        message = terminal.storage_failure(exc)
        if message is None and isinstance(exc, FileNotFoundError):
            message = str(exc)
        if message is None:
            raise
        print(f"error: {message}", file=sys.stderr)
        return EXIT_STORAGE if not isinstance(exc, FileNotFoundError) else EXIT_BAD_INPUT
    except (ParamsError, ValueError, LookupError, RunInProgress) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print(
            f"interrupted ({stopping.signal_name()}): stopped; temporary files removed",
            file=sys.stderr,
        )
        return stopping.exit_status()
    finally:
        warnings.showwarning = saved


def _show_warning(message: Warning | str, *args: Any, file: Any = None, **kwargs: Any) -> None:
    """Print a warning as one line on stderr (no source line, no file of the library)."""
    print(f"warning: {message}", file=file or sys.stderr)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
