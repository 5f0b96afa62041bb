"""`judgelab plan`: how many items, orders, repeats and human labels a judge study needs.

    judgelab plan position-bias --delta 0.05 --pilot llmbar --judge GPT-4.Vanilla
    judgelab plan rate --width 0.1 --p 0.8 --icc 0.3 --cluster-size 5
    judgelab plan labels --width 0.1 --pilot umass_llm_eval_triviaqa --judge GPT-4.umass
    judgelab plan judges --diff 0.05 --discordant 0.2
    judgelab plan length --slope 0.2 --p 0.5
    judgelab plan self-preference --fpr 0.2 --shift 0.1 --share-self 0.2 --negative-rate 0.3
    judgelab plan trials --pilot position_bias_analyzer --agree 0.9,0.95

With `--pilot SOURCE` (a registry source, `sample:<set>` or an imported benchmark) the
variances, ICC and correlations are read from that source's judgments (`--judge` picks one
judge); stated values (`--icc`, `--order-corr`, ...) override the pilot's. The pilot's
figures are printed first, then one row per design alternative (notebook 17 has the curves).

A position-bias plan from a pilot is *verified*: `--reps` replays of the pilot at the
planned number of clusters (a cluster bootstrap) run the test the study will run, and the
achieved power (and type-I error) with its Monte-Carlo error is printed beside the closed
form's power.
"""

from __future__ import annotations

import argparse
import sys

EXIT_BAD_INPUT = 2


def _floats(text: str) -> list[float]:
    return [float(x) for x in text.split(",") if x.strip()]


def _pilot(args: argparse.Namespace):
    """Return (judgments of the chosen judge, items) of `--pilot`, or (None, None)."""
    if not args.pilot:
        return None, None
    from judgelab.data import catalog

    # Only the chosen judge's tables are read (LLMBar: 1 of 33); the whole source only to
    # name the judges it has when the one asked for is not there.
    wanted = [args.judge] if args.judge else None
    loaded = catalog.load_source(args.pilot, judges=wanted)
    j = loaded.judgments
    if args.judge and (j is None or args.judge not in set(j["judge"])):
        every = catalog.load_source(args.pilot).judgments
        if every is not None and not every.empty:
            known = ", ".join(sorted(set(every["judge"]))[:20])
            raise ValueError(f"pilot {args.pilot!r} has no judge {args.judge!r} (has: {known})")
    if j is None or j.empty:
        raise ValueError(f"pilot {args.pilot!r} has no judgments")
    if args.judge:  # a sample pilot is loaded whole
        j = j[j["judge"] == args.judge]
    return j, loaded.items


def _show(title: str, figures: dict) -> None:
    print(title)
    for k, v in figures.items():
        print(f"  {k}: {round(v, 4) if isinstance(v, float) else v}")


def _plan(args: argparse.Namespace):
    from judgelab.analyses import design

    judgments, items = _pilot(args)
    if args.target == "position-bias":
        return _position(args, judgments)
    if args.target == "rate":
        fig = design.pilot.rate(judgments) if judgments is not None else None
        if fig:
            _show(f"pilot {args.pilot} ({args.judge or 'all judges'}):", fig)
        return design.rate_plan(
            _floats(args.width), p=args.p, pilot=fig, icc=args.icc, cluster_size=args.cluster_size
        )
    if args.target == "labels":
        kw = dict(p_o=0.8, p_e=0.5, error_rate=0.1, prevalence=0.5, var_y=0.25, corr=0.6)
        if judgments is not None:
            lab = design.pilot.labels(judgments, items, args.positive).iloc[0]
            _show(f"pilot {args.pilot} ({lab['judge']}):", lab.to_dict())
            kw = dict(
                p_o=lab["p_o"],
                p_e=lab["p_e"],
                error_rate=lab["fpr"],
                prevalence=1 - lab["human_rate"],
                var_y=lab["var_y"],
                corr=lab["corr"],
            )
        if args.corr is not None:
            kw["corr"] = args.corr
        width = _floats(args.width)[0]
        return design.human_labels_plan(width, n_total=args.n_total, **kw)
    if args.target == "trials":
        return _trials(args, judgments)
    if args.target == "length":
        from judgelab.analyses.design import planner

        s = design.sizes.length_slope(
            args.slope, rate=args.p or 0.5, alpha=args.alpha, power=args.power
        )
        return planner.to_frame([(f"log-odds {args.slope:g} per SD of log length ratio", s, 1)])
    if args.target == "self-preference":
        from judgelab.analyses.design import planner

        s = design.sizes.self_preference(
            args.fpr,
            args.shift,
            share_self=args.share_self,
            negative_rate=args.negative_rate,
            alpha=args.alpha,
            power=args.power,
        )
        return planner.to_frame([(f"FPR {args.fpr:g} → {args.fpr + args.shift:g} on own", s, 1)])
    fig = None
    if judgments is not None and args.judges:
        a, b = args.judges.split(",")
        fig = design.pilot.paired(judgments, a, b)
        _show(f"pilot {args.pilot} ({a} vs {b}):", fig)
    return design.judges_plan(
        _floats(args.diff),
        discordant=args.discordant,
        pilot=fig,
        alpha=args.alpha,
        power=args.power,
    )


def _position(args: argparse.Namespace, judgments):
    """The position-bias plan (verified by replays of a pilot), with its trials-per-item line."""
    from judgelab.analyses import design

    fig = design.pilot.position(judgments) if judgments is not None else None
    if fig:
        _show(f"pilot {args.pilot} ({args.judge or 'all judges'}):", fig)
    plan = design.position_bias_plan(
        args.delta,
        pilot=fig,
        judgments=judgments,
        icc=args.icc,
        cluster_size=args.cluster_size,
        size_cv=args.size_cv,
        order_corr=args.order_corr,
        decisive_share=args.decisive_share,
        alpha=args.alpha,
        power=args.power,
        repeats=[int(k) for k in _floats(args.repeats)],
        deff_floor=args.deff_floor,
        reps=args.reps,
        seed=args.seed,
    )
    plan.attrs["trials"] = _trials_lines(judgments, args.seed)
    return plan


def _trials_lines(judgments, seed: int, agree: float = 0.9) -> list[str]:
    """The plan's trials-per-item line(s): from a pilot sampled several times, else why not."""
    if judgments is None or "sample" not in judgments or judgments["sample"].nunique() < 2:
        return [
            "trials per item: 1 (no pilot judge sampled several times per item, so no "
            "repeat-trial figure; `judgelab plan trials --pilot SOURCE` reads one)"
        ]
    from judgelab.analyses import stability

    needed, _ = stability.trials_needed(judgments, targets=(agree,), seed=seed)

    def bound(k: float) -> str:
        return f"{k:g}" if k == k else "beyond the largest k tried"  # NaN: beyond

    return [
        f"trials per item ({r.judge}): {r.trials_needed:g} [{bound(r.ci_low)}, "
        f"{bound(r.ci_high)}] for its majority vote to agree with the many-trial majority "
        f"with p >= {agree:g}"
        if not r.beyond
        else f"trials per item ({r.judge}): beyond the largest k tried for p >= {agree:g}"
        for r in needed.itertuples(index=False)
    ]


def _trials(args: argparse.Namespace, judgments):
    """Trials per item for a repeated judge's majority vote to settle (notebook 19)."""
    if judgments is None:
        raise ValueError(
            "plan trials reads a pilot whose judge was sampled several times per item "
            "(--pilot, e.g. position_bias_analyzer)"
        )
    from judgelab.analyses import stability

    needed, _ = stability.trials_needed(judgments, targets=_floats(args.agree), seed=args.seed)
    if needed.empty:
        raise ValueError(stability.repeats_reason(needed) or "no repeated trials in the pilot")
    agree = needed["target"].map(lambda p: f"{p:g}")
    return needed.assign(
        design=needed["judge"] + ": P(majority = many-trial majority) >= " + agree,
        formula="majority of k trials, Beta-binomial fit per judge (odd k)",
        assumes="units independent across clusters; trials exchangeable within a unit; "
        "k beyond the pilot's trials per unit is extrapolated from the fitted Beta",
    )[["design", "trials_needed", "ci_low", "ci_high", "beyond", "n", "n_clusters", "label"]
      + ["formula", "assumes"]]  # fmt: skip


def _cmd_plan(args: argparse.Namespace) -> int:
    import pandas as pd

    from judgelab.errors import FetchError, JudgelabError

    try:
        table = _plan(args)
    except (ValueError, KeyError, JudgelabError, FetchError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    shown = table.drop(columns=["formula", "assumes", "note"], errors="ignore")
    with pd.option_context("display.width", 200, "display.max_colwidth", 60):
        print(shown.to_string(index=False))
    print("formulas: " + "; ".join(sorted(set(table["formula"]))))
    print("assumes: " + " | ".join(f"{d}: {a}" for d, a in zip(table["design"], table["assumes"],
                                                                strict=True)))  # fmt: skip
    if "verified_power" in table.columns:
        for row in table.itertuples(index=False):
            print(_verified_line(row))
    for line in table.attrs.get("trials", []):
        print(line)
    return 0


def _verified_line(row) -> str:
    """One line per plan: the closed form's power beside the replayed one (± MC SE)."""
    if not row.replays:
        return f"{row.design}: closed-form power {row.power:.3f}; not verified ({row.note})"
    return (
        f"{row.design}: closed-form power {row.power:.3f}; verified by {row.replays} replays "
        f"of the pilot: achieved power {row.verified_power:.3f} ± {row.verified_power_se:.3f}, "
        f"type-I error {row.verified_type_i:.3f} ± {row.verified_type_i_se:.3f}"
    )


def register(sub: argparse._SubParsersAction) -> None:
    """Add the `plan` command to the top-level parser."""
    p = sub.add_parser(
        "plan",
        help="items, orders, repeats and human labels a judge study needs (notebook 17)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "target",
        choices=[
            "position-bias",
            "rate",
            "labels",
            "judges",
            "length",
            "self-preference",
            "trials",
        ],
    )
    p.add_argument("--pilot", help="source whose judgments give the variances (else assumed)")
    p.add_argument("--judge", help="the pilot's judge to read")
    p.add_argument("--judges", help="two pilot judges A,B (target judges)")
    p.add_argument("--delta", type=float, default=0.05, help="|P(A) - 0.5| to detect")
    p.add_argument("--width", default="0.2,0.1,0.05", help="full interval width(s), comma list")
    p.add_argument("--diff", default="0.02,0.05,0.1", help="accuracy difference(s) to detect")
    p.add_argument("--discordant", type=float, default=0.2, help="share of items judged apart")
    p.add_argument("--p", type=float, help="the rate's expected value (default: pilot or 0.5)")
    p.add_argument("--icc", type=float, help="intra-cluster correlation (one judgment's scale)")
    p.add_argument("--cluster-size", type=float, help="mean items per cluster")
    p.add_argument("--order-corr", type=float, help="effective correlation of the two orders")
    p.add_argument("--size-cv", type=float, help="coefficient of variation of cluster sizes")
    p.add_argument(
        "--decisive-share", type=float, help="share of verdicts that are valid and not ties"
    )
    p.add_argument(
        "--deff-floor", type=float, default=1.0, help="lowest design effect a plan assumes (1)"
    )
    p.add_argument("--reps", type=int, default=200, help="replays verifying a pilot's plan")
    p.add_argument("--seed", type=int, default=0, help="seed of the replays")
    p.add_argument("--repeats", default="1", help="samples per judgment to compare, e.g. 1,3")
    p.add_argument("--corr", type=float, help="judge-human correlation (labels)")
    p.add_argument("--n-total", type=int, default=1000, help="items with judge labels (labels)")
    p.add_argument("--positive", default="Correct", help="the positive label (labels)")
    p.add_argument("--slope", type=float, default=0.2, help="length log-odds per SD (length)")
    p.add_argument("--fpr", type=float, default=0.2, help="FPR on others' answers")
    p.add_argument("--shift", type=float, default=0.1, help="FPR shift on its own answers")
    p.add_argument("--share-self", type=float, default=0.2, help="share of own-model answers")
    p.add_argument("--negative-rate", type=float, default=0.3, help="share of wrong answers")
    p.add_argument(
        "--agree", default="0.9,0.95", help="P(majority agrees with many trials) (trials)"
    )
    p.add_argument("--alpha", type=float, default=0.05, help="two-sided test level")
    p.add_argument("--power", type=float, default=0.8, help="power to reach")
    p.set_defaults(func=_cmd_plan)
