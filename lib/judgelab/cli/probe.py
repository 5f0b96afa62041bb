"""`judgelab probe`: write a benchmark's bias-probe variants as a new benchmark to judge.

`judgelab probe --benchmark llmbar --probes authority,verbosity --seed 0` writes
`data/items/llmbar+probes.parquet` (benchmark `llmbar+probes`: every pairwise item's control
plus, per probe, the probe on the better and on the worse response, provenance in `meta`);
`judgelab judge --judge <spec> --benchmark llmbar+probes` then runs it like any other
benchmark (both orders, cached). Notebook 18 analyses it.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

EXIT_BAD_INPUT = 2
EXIT_FETCH = 1


def _probe_list(text: str) -> list[str]:
    names = [p.strip() for p in text.split(",") if p.strip()]
    if not names:
        raise argparse.ArgumentTypeError("give at least one probe (comma-separated)")
    return names


def _target_name(items, suffix: str) -> str:
    benches = sorted(set(items["benchmark"].astype(str)))
    if len(benches) != 1:
        raise ValueError(
            f"the items hold {len(benches)} benchmarks {benches}; probe one at a time "
            "(give an items file of one benchmark)"
        )
    return f"{benches[0]}{suffix}"


def _stale(path, table) -> bool:
    """True when `path` holds another probe table than `table` and judgments refer to it."""
    from judgelab.core import paths, tables

    if not path.exists():
        return False
    old = tables.read_items(path)
    same = old.reset_index(drop=True).equals(table.reset_index(drop=True))
    judged = paths.judgments() / path.stem
    return not same and judged.is_dir() and any(judged.glob("*.parquet"))


def _cmd_probe(args: argparse.Namespace) -> int:
    from judgelab.analyses import probes

    if args.list:  # the catalogue only: no table stack
        for row in probes.catalogue_table():
            print(f"{row['probe']:<20} [{row['slot']}] {row['transformation']}")
            print(f"{'':<20} isolates: {row['isolates']} ({row['origin']})")
        return 0
    from judgelab.cli.judge import _items_source
    from judgelab.core import locks, paths, tables
    from judgelab.core.names import safe_name
    from judgelab.data import catalog
    from judgelab.errors import ChecksumError, FetchError, UnsafeNameError

    if not args.benchmark:
        print("error: --benchmark is required (or --list)", file=sys.stderr)
        return EXIT_BAD_INPUT
    names = args.probes or list(probes.PROBES)
    model = args.model or probes.catalogue.DEFAULT_MODEL
    ratio = probes.catalogue.PAD_RATIO if args.pad_ratio is None else args.pad_ratio
    try:
        items = catalog.load_benchmark_items(_items_source(args.benchmark))
        splits = [s for part in args.split or [] for s in part.split(",") if s]
        items = probes.select_items(items, splits, args.limit)
        table = probes.generate(items, names, seed=args.seed, model=model, pad_ratio=ratio)
        name = safe_name("benchmark", _target_name(table, ""), where="--benchmark")
        path = paths.items() / f"{name}.parquet"
        with locks.locked_targets([path]):  # issue 32 (1): the check and the write, one step
            if _stale(path, table) and not args.force:
                print(
                    f"error: {path} holds other probe variants and judgments in "
                    f"{paths.judgments() / name} refer to them; rerun with the same "
                    "arguments, or pass --force to replace the variants (old verdicts would "
                    "no longer match)",
                    file=sys.stderr,
                )
                return EXIT_BAD_INPUT
            tables.write_items(table, path)
    except (ValueError, LookupError, UnsafeNameError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except FetchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT if isinstance(exc, ChecksumError) else EXIT_FETCH
    except OSError as exc:  # the table could not be written; nothing half-written is left
        print(f"error: cannot write the probe benchmark: {exc}", file=sys.stderr)
        return EXIT_FETCH
    n_orig = int((probes.provenance(table)["probe"] == probes.CONTROL).sum())
    print(
        f"wrote {len(table)} items ({n_orig} originals × (1 control + 2 arms × "
        f"{len(names)} probes)) to {path}\n"
        f"judge it: judgelab judge --judge <spec> --benchmark {name}"
    )
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    """Add the `probe` command to the top-level parser."""
    p = sub.add_parser(
        "probe",
        help="write bias-probe variants of a pairwise benchmark as a new benchmark",
        description="Generate counterfactual probe variants (fake citation, bandwagon note, "
        "padding, ...) of every pairwise item: the control, and each probe applied to the "
        "better and to the worse response. Written to data/items/<benchmark>+probes.parquet; "
        "judge it with `judgelab judge --benchmark <benchmark>+probes`. `--list` prints the "
        "probe catalogue.",
    )
    p.add_argument("--list", action="store_true", help="print the probe catalogue and exit")
    p.add_argument(
        "--benchmark",
        metavar="NAME",
        help="a registry source (imported on first use), an imported benchmark, sample:<set>, "
        "or an items .parquet/.jsonl path",
    )
    p.add_argument(
        "--probes",
        type=_probe_list,
        metavar="A,B",
        help="comma-separated probes (default: all; see --list)",
    )
    p.add_argument("--seed", type=int, default=0, help="seed of every drawn choice (default 0)")
    p.add_argument(
        "--model",
        help="the model self_identification names: the judge's own (default GPT-4)",
    )
    p.add_argument(
        "--pad-ratio",
        type=float,
        help="verbosity adds at least this share of a response's words (default 0.5)",
    )
    p.add_argument("--split", action="append", metavar="S", help="only these splits")
    p.add_argument("--limit", type=int, metavar="N", help="only the first N items per split")
    p.add_argument(
        "--force",
        action="store_true",
        help="replace existing variants even though judgments refer to them",
    )
    p.set_defaults(func=_cmd_probe)


def main(argv: Sequence[str] | None = None) -> int:
    """Run `probe` as a standalone command (`python -m judgelab.cli.probe ...`).

    The same as `judgelab probe ...`: one entry point, so the output is escaped and errors
    are reported the same way (`judgelab.cli.main`).
    """
    from judgelab.cli import main as entry

    return entry.main(["probe", *(sys.argv[1:] if argv is None else argv)])


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
