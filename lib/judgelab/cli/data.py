"""`judgelab data ...`: validate, list, fetch and import data tables."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

EXIT_BAD_INPUT = 2


def _cmd_validate(args: argparse.Namespace) -> int:
    from judgelab.core import schema, tables
    from judgelab.data import catalog

    path = Path(args.file)
    kind = args.kind or ("judgments" if "judgment" in path.name else "items")
    try:
        if path.suffix == ".jsonl":
            df = catalog.read_records(path, kind)
        else:
            df = tables.read(path, kind)
    except (schema.SchemaError, tables.TableError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    extra = ""
    if kind == "judgments":
        extra = f", {df['judge'].nunique()} judges, {int((~df['valid']).sum())} invalid"
    print(
        f"ok: {path} is a valid {kind} table: {len(df)} rows, "
        f"{df['benchmark'].nunique()} benchmarks, {df['split'].nunique()} splits{extra}"
    )
    return 0


def _size(n: int | None) -> str:
    if n is None:
        return "?"
    for unit in ("B", "kB", "MB", "GB"):
        if n < 1000 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    return "?"  # pragma: no cover


def _print_table(rows: list[dict], file=None) -> None:
    if not rows:
        return
    cols = list(rows[0])
    width = {c: max(len(c), *(len(str(r[c])) for r in rows)) for c in cols}
    print("  ".join(c.ljust(width[c]) for c in cols), file=file)
    for r in rows:
        print("  ".join(str(r[c]).ljust(width[c]) for c in cols), file=file)


def _clusters(source) -> str:
    """The number of clusters of an imported source's items ("-": not imported).

    The count remembered for the tables as they are needs no table stack; only a count
    not yet made reads the tables (and imports pandas).
    """
    from judgelab.data import imported

    tables = imported.items_files(source.name)
    if not tables:
        return "-"
    n = imported.recorded_clusters(source.name, tables)
    if n is None:
        from judgelab.data import ingest

        n = ingest.cluster_summary(source.name, source)[1]
    return "-" if n is None else str(n)


def _cmd_list(args: argparse.Namespace) -> int:
    from judgelab.core import paths
    from judgelab.core.cluster_rules import rule_text
    from judgelab.data import fetch, imported, sources

    registry = sources.load_registry()
    mirror = paths.mirror()

    def unit(name: str) -> tuple[str, str]:
        return rule_text(registry[name].cluster), _clusters(registry[name])

    rows = [
        {
            "name": s.name,
            "kind": s.kind,
            "licence": s.licence,
            "size": _size(s.size),
            "files": len(s.files),
            "cached": "yes" if fetch.is_cached(s) else "no",
            "mirror": ("yes" if fetch.in_mirror(s) else "no") if mirror else "-",
            "imported": "yes" if imported.is_imported(s.name) else "no",
            "cluster": rule,
            "clusters": n,
            "pinned": (fetch.pinned(s) or "-")[:12],
        }
        for s in registry.values()
        for rule, n in [unit(s.name)]
    ]
    _print_table(rows)
    print(
        f"\n{len(rows)} sources; cache {paths.benchmarks()}; mirror "
        + (str(mirror) if mirror else "not set (JUDGELAB_MIRROR)")
    )
    return 0


def _fetch_failed(exc: Exception) -> int:
    print(f"error: {exc}", file=sys.stderr)
    return 1


def _cmd_fetch(args: argparse.Namespace) -> int:
    from judgelab.data import fetch, sources

    source = sources.get_source(args.name)
    try:
        root = fetch.ensure_local(source, timeout=args.timeout, progress=print)
    except fetch.ChecksumError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except fetch.FetchError as exc:
        return _fetch_failed(exc)
    commit = fetch.pinned(source) if fetch.mirror_root(source) is None else None
    o = source.origin
    at = f" ({o['repo']} {o['revision']} = commit {commit})" if commit else ""
    print(f"ok: {len(source.files)} files of {source.name} verified in {root}{at}")
    return 0


def _report(report) -> None:
    for p in [*report.items_paths, *report.judgment_paths]:
        print(f"wrote {p}")
    print(f"{report.n_items} items, {report.n_judgments} judgments")
    _print_table(report.summary.to_dict("records"))
    shown = getattr(report, "presentation", None)
    if shown is not None and len(shown):
        print("accuracy of valid verdicts by the source's slot shown first (Wilson 95% CI):")
        _print_table(shown.round(3).to_dict("records"))
    for note in getattr(report, "notes", ()):
        print(f"note: {note}")


def _cmd_import(args: argparse.Namespace) -> int:
    from judgelab.data import fetch
    from judgelab.data import ingest as imports

    try:
        report = imports.import_source(args.name, limit=args.limit, progress=print)
    except fetch.ChecksumError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except fetch.FetchError as exc:
        return _fetch_failed(exc)
    _report(report)
    return 0


def _cmd_import_file(args: argparse.Namespace) -> int:
    from judgelab.data import ingest as imports

    if args.mapping is None and args.bridge is None:
        print("error: give --mapping MAPPING.yaml or --from TOOL", file=sys.stderr)
        return EXIT_BAD_INPUT
    mapping = args.mapping
    if args.bridge is not None:
        mapping = imports.bridge_mapping(args.bridge, args.mapping)
    report = imports.import_mapped_file(
        args.file,
        mapping,
        limit=args.limit,
        allow_invalid=args.allow_invalid,
        replace=args.replace,
    )
    _report(report)
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    """Add the `data` command and its actions to the top-level parser."""
    data = sub.add_parser("data", help="data sources and tables: list, fetch, import, validate")
    dsub = data.add_subparsers(dest="data_command", metavar="ACTION")
    p = dsub.add_parser(
        "list", help="every registered source: kind, licence, size, cached, mirror"
    )
    p.set_defaults(func=_cmd_list)
    p = dsub.add_parser("fetch", help="download (or check in JUDGELAB_MIRROR) and verify a source")
    p.add_argument("name")
    p.add_argument("--timeout", type=float, default=60.0, help="seconds per connection/read")
    p.set_defaults(func=_cmd_fetch)
    p = dsub.add_parser("import", help="fetch a source and write its items/judgments tables")
    p.add_argument("name")
    p.add_argument("--limit", type=int, help="keep the first N items of every split")
    p.set_defaults(func=_cmd_import)
    p = dsub.add_parser(
        "import-file", help="import CSV/JSONL/JSON/parquet/TXT file(s) with a mapping (see docs)"
    )
    p.add_argument("file", nargs="+", help="data file(s) or glob pattern(s): one import")
    p.add_argument(
        "--mapping",
        metavar="MAPPING.yaml",
        help="column mapping (with --from: keys added to, or replacing, the tool's mapping)",
    )
    p.add_argument(
        "--from",
        dest="bridge",
        metavar="TOOL",
        help="a tool's own log (inspect, promptfoo, promptfoo-select-best, lm-eval), read "
        "with the mapping judgelab ships for it (docs/importing.md sections 15-17)",
    )
    p.add_argument("--limit", type=int, help="keep the first N items of every split")
    p.add_argument(
        "--allow-invalid",
        action="store_true",
        help="accept a file whose every verdict is unmapped (kept as invalid)",
    )
    p.add_argument(
        "--replace",
        action="store_true",
        help="replace the earlier imports of the same file(s) (another mapping) whose rows "
        "this import would change, instead of refusing",
    )
    p.set_defaults(func=_cmd_import_file)
    p = dsub.add_parser("validate", help="check an items/judgments file against the schema")
    p.add_argument("file")
    p.add_argument(
        "--kind",
        choices=["items", "judgments"],
        help="table kind (default: judgments if the file name says so, else items)",
    )
    p.set_defaults(func=_cmd_validate)
    data.set_defaults(func=lambda a: (data.print_help(), EXIT_BAD_INPUT)[1])
