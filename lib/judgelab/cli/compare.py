"""`judgelab compare A B --benchmark X`: what swapping judge A for judge B does on X.

Prints the share of changed verdicts, agreement and Cohen's kappa on the items both judged
(both orders where present), the mean score drift when both give scores, and, with
`--system`, Kendall's τ between the two judges' rankings of the systems — each with its
interval, n and effective clusters (`analyses.stability.headline`). Reads the benchmark
through the data catalog (imported corpora and `judgelab judge` runs alike); writes nothing.
"""

from __future__ import annotations

import argparse


def _cmd_compare(args: argparse.Namespace) -> int:
    from judgelab.analyses import stability
    from judgelab.data import catalog
    from judgelab.errors import ChoiceError

    loaded = catalog.load_source(args.benchmark, need_judgments=True)
    if loaded.judgments is None or loaded.judgments.empty:
        raise LookupError(f"benchmark {args.benchmark!r} has no judgments to compare")
    judgments = catalog.select(loaded, splits=args.split or [])
    try:
        rows = stability.headline(
            judgments, loaded.items, args.a, args.b, by=args.by, system=args.system,
            positive=args.positive, seed=args.seed, n_boot=args.n_boot,
        )  # fmt: skip
    except ChoiceError as exc:
        raise ChoiceError(f"benchmark {args.benchmark!r}: {exc}") from exc
    print(f"{args.benchmark}: {args.by} {args.a!r} (A) -> {args.b!r} (B)")
    for r in rows.itertuples(index=False):
        flag = "  [few effective clusters]" if r.few_clusters else ""
        print(
            f"  {r.measure:<11} {r.value:8.4f}  [{r.ci_low:.4f}, {r.ci_high:.4f}]  "
            f"n={r.n:g}  clusters={r.n_clusters} (effective {r.n_eff_clusters:.1f}){flag}"
        )
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    """Add the `compare` command to the top-level parser."""
    p = sub.add_parser(
        "compare",
        help="judge A vs judge B on one benchmark: verdict shift, kappa, drift, tau",
        description="On the items both judged: share of changed verdicts, agreement and "
        "Cohen's kappa, the mean score drift when both score, and with --system Kendall's "
        "tau between their rankings of the systems — each with its interval (notebook 19).",
    )
    p.add_argument("a", help="judge swapped out (A), e.g. GPT-4.Vanilla")
    p.add_argument("b", help="judge swapped in (B)")
    p.add_argument("--benchmark", required=True, help="registry source or sample:<set>")
    p.add_argument("--by", default="judge", help="column naming A and B (judge, model, prompt)")
    p.add_argument("--split", action="append", metavar="S", help="only these splits")
    p.add_argument("--system", help="where an item's system is named (meta.<key> or a column)")
    p.add_argument("--positive", help="verdict counted as a pass when ranking (e.g. Correct)")
    p.add_argument("--seed", type=int, default=0, help="seed of every bootstrap (default 0)")
    p.add_argument("--n-boot", type=int, default=999, help="cluster resamples for tau (999)")
    p.set_defaults(func=_cmd_compare)
