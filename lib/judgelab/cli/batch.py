"""`judgelab batch`: export, submit, poll, cancel, collect and abandon batch jobs; ingest output.

Every answer lands in the same request cache as `judgelab judge` (keyed by the request), so
a table built after a batch run is the one an online run gives; see `judgelab.judges.batch`.
Exit status: 0 done, 1 incomplete (error lines, unknown ids, a broken batch, or an API
failure; rerun to go on), 2 bad input (the message names the file and line).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

EXIT_BAD_INPUT = 2
EXIT_INCOMPLETE = 1
MB = 1024 * 1024


def _setup(args: argparse.Namespace, *, items: bool = True) -> tuple[Any, Any]:
    """Return (spec, items or None) from `--judge`, `--order` and `--benchmark`."""
    from dataclasses import replace

    from judgelab import judges
    from judgelab.cli.judge import _items_source
    from judgelab.core.names import safe_name
    from judgelab.data import catalog
    from judgelab.judges import store

    spec = judges.resolve(args.judge)
    if getattr(args, "order", None) is not None:
        spec = replace(spec, orders=(args.order,))
    if spec.is_offline:
        raise ValueError(f"judge {args.judge} is an offline baseline; it makes no requests")
    safe_name("judge", spec.judge_id, where=f"judge {args.judge}")
    if not items:
        return spec, None
    loaded = catalog.load_benchmark_items(_items_source(args.benchmark))
    for bench in store.benchmarks(loaded):
        safe_name("benchmark", bench, where=f"items {args.benchmark}")
    return spec, loaded


def _selection(args: argparse.Namespace) -> dict[str, Any]:
    splits = [s for part in args.split or [] for s in part.split(",") if s] or None
    return {"splits": splits, "limit": args.limit, "conditions": args.condition or None}


def _dry_run(args: argparse.Namespace, spec: Any, work: Any) -> int:
    from judgelab.judges.batch import export

    est = export.estimate(
        work,
        spec,
        discount=args.discount,
        price_in=args.batch_price_in,
        price_out=args.batch_price_out,
    )
    print(f"dry run: judge {spec.judge_id} on {args.benchmark} at batch rates (nothing is sent)")
    print(est.format())
    return 0


def _cmd_export(args: argparse.Namespace) -> int:
    from judgelab.judges.batch import Registry, export
    from judgelab.judges.batch.backend import opened

    export.shard_name(args.prefix, 0)  # a refused prefix: nothing is read or written
    spec, items = _setup(args)
    export.plan_requests(items, spec, **_selection(args))  # bad input: nothing is written
    if not args.dry_run and not args.out:
        raise ValueError("batch export: --out DIR is required (unless --dry-run)")
    with opened(None) as cache:
        held = Registry().held_keys(spec.judge_id)
        work = export.pending(items, spec, cache, held=held, **_selection(args))
    if args.dry_run:
        return _dry_run(args, spec, work)
    files = export.write_shards(
        work.todo,
        args.out,
        fmt=args.format,
        prefix=args.prefix,
        max_lines=args.max_lines,
        max_bytes=int(args.max_mb * MB),
    )
    print(f"judge {spec.judge_id}: {len(work.plan.requests)} planned, {len(work.cached)} cached,")
    print(f"  {work.in_flight} in submitted batches; {len(work.todo)} exported ({args.format})")
    for f in files:
        print(f"  {f}")
    return 0


def _cmd_submit(args: argparse.Namespace) -> int:
    from judgelab.judges.batch import Registry, backend, export

    spec, items = _setup(args)
    export.plan_requests(items, spec, **_selection(args))  # bad input: nothing is written
    with backend.opened(None) as cache:
        if args.dry_run:
            held = Registry().held_keys(spec.judge_id)
            return _dry_run(
                args, spec, export.pending(items, spec, cache, held=held, **_selection(args))
            )
        result = backend.run_batch(
            items,
            spec,
            cache=cache,
            wait=args.wait,
            poll_s=args.poll_s,
            max_wait_s=args.max_wait_s,
            write_tables=args.wait,
            max_lines=args.max_lines,
            max_bytes=int(args.max_mb * MB),
            provider=args.provider,
            **_selection(args),
        )
    print(result.format())
    return 0


def _cmd_status(args: argparse.Namespace) -> int:
    from judgelab.judges.batch import Registry, backend
    from judgelab.judges.batch import openai_batches as api
    from judgelab.judges.batch_registry import ABANDONED

    spec, _ = _setup(args, items=False)
    reg = Registry()
    if not args.offline:
        with reg.lock():
            api.refresh(spec, backend.open_client(spec, args.provider), reg)
    entries = reg.entries(spec.judge_id)
    held = [e for e in entries if e.holds]
    broken = [e for e in held if e.broken]
    abandoned = [e for e in entries if e.state == ABANDONED]
    print(
        f"judge {spec.judge_id}: {len(entries)} batch(es), {len(held)} not collected, "
        f"{len(broken)} broken, {len(abandoned)} abandoned"
    )
    for e in entries:
        if e.state == ABANDONED:
            done = "abandoned (its requests may be submitted again)"
        else:
            done = "collected " + str(e.result) if e.collected else "not collected"
        print(f"  {e.label}: {e.state}, {len(e.keys)} requests, {done}")
        if e.broken:
            print(f"    BROKEN: {e.problem}")
            print(f"    `judgelab batch abandon {e.label}` gives its requests to the next submit")
        for err in e.errors[:3]:
            print(f"    {err}")
    return 0


def _write_table(
    items: Any, spec: Any, cache: Any, conditions: list[str] | None, indent: str = ""
) -> None:
    """Build and write the judge's table from the cache; print its rows and paths."""
    from judgelab.judges.batch import backend

    built, paths = backend.write_table(items, spec, cache, conditions or None)
    pending = int((built.details["status"] == "pending").sum())
    print(f"{indent}judgment rows      {len(built.judgments)} ({pending} pending)")
    for p in paths:
        print(f"{indent}table              {p}")


def _cmd_collect(args: argparse.Namespace) -> int:
    from judgelab.judges.batch import backend

    spec, items = _setup(args, items=args.benchmark is not None)
    with backend.opened(None) as cache:
        report = backend.collect(spec, cache=cache, provider=args.provider)
        print(report.format())
        if items is not None:
            _write_table(items, spec, cache, args.condition)
    return EXIT_INCOMPLETE if report.incomplete else 0


def _cmd_cancel(args: argparse.Namespace) -> int:
    from judgelab.judges.batch import Registry, backend
    from judgelab.judges.batch import openai_batches as api

    spec, _ = _setup(args, items=False)
    reg = Registry()
    with reg.lock():
        done = api.cancel(spec, backend.open_client(spec, args.provider), reg, args.batch)
    print(f"judge {spec.judge_id}: cancel asked for {len(done)} batch(es)")
    for e in done:
        print(f"  {e.batch_id}: {e.state}")
    print("run `judgelab batch collect` once they are cancelled to keep what they answered")
    return 0


def _cmd_abandon(args: argparse.Namespace) -> int:
    from judgelab.judges.batch import Registry

    judge = _setup(args, items=False)[0].judge_id if args.judge else None
    reg = Registry()
    reg.check_abandon(reg.find(judge, args.batch), force=args.force)  # refused: nothing written
    with reg.lock():
        entry = reg.abandon(reg.find(judge, args.batch), force=args.force)
    print(f"{entry.label}: abandoned (judge {entry.judge}); its record stays in {reg.root}")
    print(f"  {len(entry.keys)} request(s) may be submitted again (`judgelab batch submit`)")
    return 0


def _cmd_ingest(args: argparse.Namespace) -> int:
    from judgelab.judges.batch import backend, export, ingest

    spec, items = _setup(args)
    plan = export.plan_requests(items, spec, conditions=args.condition or None)
    requests = {r.key: r.request for r in plan.requests}
    total = ingest.IngestReport()
    with backend.opened(None) as cache:
        for path in args.files:
            total.add(
                ingest.ingest_file(
                    path, requests, cache, max_response_bytes=spec.max_response_bytes
                )
            )
        print(f"judge {spec.judge_id}: ingested {len(args.files)} file(s)")
        print(total.format())
        if not args.no_table:
            _write_table(items, spec, cache, args.condition, indent="  ")
    if total.unknown:
        print(
            "  unknown custom_ids are not requests of this judge on this benchmark: pass the "
            "--judge, --benchmark and --condition the export used",
            file=sys.stderr,
        )
    return EXIT_INCOMPLETE if total.error_lines or total.unknown else 0


def _cmd_ray(args: argparse.Namespace) -> int:
    from judgelab.judges.batch import backend, ingest, ray_run

    if args.benchmark is not None and not args.ingest:
        raise ValueError("batch ray: --benchmark writes the table after --ingest; add --ingest")
    spec, items = _setup(args, items=args.benchmark is not None)
    settings = ray_run.RaySettings(
        engine=args.engine,
        concurrency=args.concurrency,
        batch_size=args.batch_size,
        qps=args.qps,
        address=args.address,
        num_cpus=args.num_cpus,
        max_retries=args.max_retries,
    )
    report = ray_run.run(args.files, spec, args.out, settings)
    print(f"judge {spec.judge_id}: Ray Data ({args.engine}) over {len(args.files)} file(s)")
    print(report.format())
    if not args.ingest:
        return EXIT_INCOMPLETE if report.errors else 0
    requests: dict[str, Any] = {}
    for path in args.files:
        requests.update(ingest.requests_of_input(path, spec.endpoint_id))
    with backend.opened(None) as cache:
        got = ingest.ingest_file(
            args.out, requests, cache, max_response_bytes=spec.max_response_bytes
        )
        print(f"ingested {args.out}")
        print(got.format())
        if items is not None:
            _write_table(items, spec, cache, args.condition, indent="  ")
    return EXIT_INCOMPLETE if got.error_lines or got.unknown else 0


def _guarded(cmd: Any) -> Any:
    """Wrap a command: bad input exits 2 with its message, an API failure exits 1."""

    def run(args: argparse.Namespace) -> int:
        from judgelab.errors import JudgelabError, JudgeRunError

        try:
            return int(cmd(args))
        except JudgeRunError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return EXIT_INCOMPLETE
        except (JudgelabError, ValueError, LookupError, OSError, ImportError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return EXIT_BAD_INPUT

    return run


def _judge_args(p: argparse.ArgumentParser, *, benchmark: str = "required") -> None:
    p.add_argument(
        "--judge",
        required=True,
        metavar="SPEC",
        help="a judge YAML path or a name in params/judges/",
    )
    if benchmark == "none":
        return
    p.add_argument(
        "--benchmark",
        required=benchmark == "required",
        metavar="NAME",
        help="a registry source, an imported benchmark, sample:<set>, or an items "
        ".parquet/.jsonl path (as `judgelab judge`)"
        + ("; given, the judge's table is rebuilt and written" if benchmark == "optional" else ""),
    )
    p.add_argument(
        "--condition", action="append", metavar="COND", help="condition to run (repeatable)"
    )
    p.add_argument(
        "--order", type=int, choices=(0, 1), help="only one presentation order (default: both)"
    )


def _selection_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--split", action="append", metavar="S", help="only these splits (repeatable)")
    p.add_argument("--limit", type=int, metavar="N", help="only the first N items")
    p.add_argument("--max-lines", type=int, default=50_000, metavar="N", help="lines per file")
    p.add_argument("--max-mb", type=float, default=200.0, metavar="MB", help="MB per file")
    p.add_argument(
        "--dry-run", action="store_true", help="count and price at batch rates; send nothing"
    )
    p.add_argument(
        "--discount",
        type=float,
        default=0.5,
        help="batch price as a share of the spec's prices (default 0.5: half price)",
    )
    p.add_argument("--batch-price-in", type=float, metavar="USD", help="USD per 1M prompt tokens")
    p.add_argument(
        "--batch-price-out", type=float, metavar="USD", help="USD per 1M completion tokens"
    )


def _provider_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--provider",
        choices=("openai", "anthropic"),
        default="openai",
        help="the Batch API: openai (any OpenAI-compatible base_url; default) or anthropic "
        "(Message Batches; needs judgelab[anthropic])",
    )


def register(sub: argparse._SubParsersAction) -> None:
    """Add the `batch` command (export, submit, status, collect, cancel, abandon, ingest, ray)."""
    top = sub.add_parser(
        "batch",
        help="run a judge through batch APIs or vLLM run-batch, into the same cache",
        description="Batch back-ends: the requests `judgelab judge` would send, as batch "
        "JSONL (custom_id = request key), submitted to an OpenAI-compatible Batch API or run "
        "with `vllm run-batch`; answers are ingested into the request cache idempotently.",
    )
    cmds = top.add_subparsers(dest="batch_command", metavar="ACTION", required=True)

    p = cmds.add_parser("export", help="write the uncached requests as batch JSONL shards")
    _judge_args(p)
    _selection_args(p)
    p.add_argument("--out", metavar="DIR", help="folder for the shards (not with --dry-run)")
    p.add_argument("--format", choices=("openai", "anthropic"), default="openai")
    p.add_argument("--prefix", default="requests", help="shard file prefix (default requests)")
    p.set_defaults(func=_guarded(_cmd_export))

    p = cmds.add_parser("submit", help="collect finished batches, then submit what is missing")
    _judge_args(p)
    _selection_args(p)
    _provider_arg(p)
    p.add_argument("--wait", action="store_true", help="poll until done, then write the table")
    p.add_argument("--poll-s", type=float, default=30.0, metavar="S", help="poll interval")
    p.add_argument("--max-wait-s", type=float, metavar="S", help="stop waiting after S seconds")
    p.set_defaults(func=_guarded(_cmd_submit))

    p = cmds.add_parser("status", help="poll and list the judge's batches")
    _judge_args(p, benchmark="none")
    _provider_arg(p)
    p.add_argument("--offline", action="store_true", help="list the registry only; poll nothing")
    p.set_defaults(func=_guarded(_cmd_status))

    p = cmds.add_parser("collect", help="download and ingest finished batches")
    _judge_args(p, benchmark="optional")
    _provider_arg(p)
    p.set_defaults(func=_guarded(_cmd_collect))

    p = cmds.add_parser("cancel", help="cancel the judge's running batches")
    _judge_args(p, benchmark="none")
    _provider_arg(p)
    p.add_argument("--batch", metavar="ID", help="only this batch (default: all running)")
    p.set_defaults(func=_guarded(_cmd_cancel))

    _register_abandon(cmds)
    _register_ingest_and_ray(cmds)


def _register_abandon(cmds: argparse._SubParsersAction) -> None:
    """Add `batch abandon`."""
    p = cmds.add_parser(
        "abandon",
        help="give up a broken batch: its record stays, its requests go to the next submit",
        description="Mark a batch abandoned: never polled, collected or submitted again; its "
        "record and files stay under the registry; its requests become free for the next "
        "`batch submit`. Refused for a batch that is not broken unless --force.",
    )
    p.add_argument("batch", metavar="ID", help="the batch id or local id `batch status` lists")
    p.add_argument(
        "--judge", metavar="SPEC", help="look among this judge's batches only (default: all)"
    )
    p.add_argument(
        "--force",
        action="store_true",
        help="abandon a batch that is not broken (what it answers is never collected)",
    )
    p.set_defaults(func=_guarded(_cmd_abandon))


def _register_ingest_and_ray(cmds: argparse._SubParsersAction) -> None:
    """Add `batch ingest` and `batch ray`."""
    p = cmds.add_parser("ingest", help="ingest batch output files (vLLM run-batch, OpenAI)")
    p.add_argument("files", nargs="+", metavar="OUT.jsonl", help="batch output files")
    _judge_args(p)
    p.add_argument("--no-table", action="store_true", help="only fill the cache")
    p.set_defaults(func=_guarded(_cmd_ingest))

    p = cmds.add_parser(
        "ray", help="run exported shards through Ray Data (needs judgelab[ray]); write OUT"
    )
    p.add_argument("files", nargs="+", metavar="INPUT.jsonl", help="`batch export` shards")
    _judge_args(p, benchmark="optional")
    p.add_argument("--out", required=True, metavar="OUT.jsonl", help="batch output file")
    p.add_argument(
        "--engine",
        choices=("http", "vllm"),
        default="http",
        help="http: Ray's HTTP processor against the spec's base_url (default); vllm: Ray's "
        "vLLM engine on GPU nodes (needs vllm)",
    )
    p.add_argument("--concurrency", type=int, default=2, metavar="N", help="Ray actors (2)")
    p.add_argument(
        "--batch-size",
        type=int,
        default=16,
        metavar="N",
        help="rows per Ray batch; a batch's requests are sent together (16)",
    )
    p.add_argument("--qps", type=int, metavar="N", help="pace the requests of each batch")
    p.add_argument(
        "--address", metavar="ADDR", help="join a Ray cluster (auto, ray://...); default: local"
    )
    p.add_argument("--num-cpus", type=int, metavar="N", help="CPUs of a local Ray (all)")
    p.add_argument("--max-retries", type=int, metavar="N", help="per request (the spec's)")
    p.add_argument(
        "--ingest", action="store_true", help="then ingest OUT into the cache (and the table)"
    )
    p.set_defaults(func=_guarded(_cmd_ray))


def main(argv: Sequence[str] | None = None) -> int:
    """Run `batch` as a standalone command (`python -m judgelab.cli.batch ...`).

    The same as `judgelab batch ...`: one entry point, so the output is escaped and errors
    are reported the same way (`judgelab.cli.main`).
    """
    from judgelab.cli import main as entry

    return entry.main(["batch", *(sys.argv[1:] if argv is None else argv)])


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
