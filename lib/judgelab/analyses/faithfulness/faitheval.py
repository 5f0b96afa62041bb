"""FaithEval contextual faithfulness of answering models (spec 003 §2, §3).

FaithEval grades no answer with a judge: a response is correct when it *mentions* the valid
answer (spec 003 §2.1). The grading here is a pure function of an answers table (judgments
written by `judgelab judge` with a `faitheval.*` template) and the items, and it reuses the
template's own matchers (`judgelab.judges.parsers.faitheval_*`), so the notebook and the
judge runner can never disagree:

- unanswerable / inconsistent (modified context): the strict and the non-strict phrase lists
  of spec 003 §2.1.2 (a substring test on the normalised response, so "cannot" passes the
  non-strict "not");
- counterfactual and closed-book (options): the option the response names, matched per
  `cf_match` ∈ {letter, text, letter_or_text} (spec 003 §2.1.4);
- original context (answerable questions): the response mentions the gold answer or an
  alias in `meta["answers"]` (spec 003 §2.1.3; the `faitheval.*` template rule).

An item's condition comes from its meta: `faitheval_task` (the FaithEval task the question
belongs to; default: the template's `task_of`, then the benchmark name), `context_kind`
(`modified` = the FaithEval context, `original` = the source dataset's context, `none` =
closed-book; default `modified`, or `none` without a context) and `subset` /
`source_dataset` (the source dataset; counterfactual items are ARC-Challenge).

Accuracy gets Wilson intervals per cell; the task AVG is the unweighted macro-mean over the
source datasets (spec 003 §2.2: it reproduces every printed AVG, the micro-mean does not),
with a bootstrap interval that resamples items within each dataset.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from judgelab.core import stats
from judgelab.core.schema import require_columns as _need
from judgelab.data import catalog, targets
from judgelab.judges import parsers
from judgelab.judges.templates import faitheval as fe_templates
from judgelab.judges.templates import get as get_template
from judgelab.judges.templates.base import ItemView

TASKS = ("unanswerable", "inconsistent", "counterfactual")
CONTEXT_KINDS = ("modified", "original", "none")
MODES = ("strict", "nonstrict")
CF_MATCH = ("letter", "text", "letter_or_text")
AVERAGES = ("macro", "micro")
#: The paper's column order of the ten source datasets (Tables 1, 4, 5).
DATASETS = (
    "BioASQ",
    "DROP",
    "HotpotQA",
    "NQ",
    "NewsQA",
    "RACE",
    "SQuAD",
    "SearchQA",
    "TextbookQA",
    "TriviaQA",
)
#: The target table and figure of each task, and their column labels (data/targets/faitheval).
PAPER_TABLE = {"unanswerable": "table4", "inconsistent": "table5"}
PAPER_FIGURE = {"unanswerable": "figure4", "inconsistent": "figure5", "counterfactual": "figure6"}
FIGURE_LABELS = {
    "unanswerable": {"original": "Original Context", "modified": "Unanswerable Context"},
    "inconsistent": {"original": "Original Context", "modified": "Inconsistent Context"},
    "counterfactual": {"none": "No Context (closed-book)", "modified": "Counterfactual Context"},
}
#: Proprietary models of spec 003 Table 3 (drawn in orange in the paper's figures).
PROPRIETARY = frozenset(
    {
        "gpt-3.5-turbo",
        "gpt-4o-mini",
        "gpt-4o",
        "gpt-4-turbo",
        "Command R",
        "Command R+",
        "Claude 3.5 Sonnet",
    }
)
GRADED_COLUMNS = (
    "benchmark",
    "split",
    "item_id",
    "judge",
    "model",
    "prompt",
    "label",
    "task",
    "context_kind",
    "source_dataset",
    "gold",
    "output",
    "strict",
    "nonstrict",
    "phrase_strict",
    "phrase_nonstrict",
)
_KEY = ["benchmark", "split", "item_id"]
_ANSWERABLE = get_template("faitheval.repo.strict")


def _check(name: str, value: str, allowed: Sequence[str]) -> None:
    if value not in allowed:
        raise ValueError(f"{name} {value!r} must be one of {list(allowed)}")


def item_conditions(items: pd.DataFrame) -> pd.DataFrame:
    """Return each FaithEval item's task, context kind and source dataset.

    Args:
        items: An items table of FaithEval-shaped rows (see the module docstring).

    Returns:
        One row per item: `benchmark, split, item_id, task, context_kind, source_dataset,
        gold`.

    Raises:
        ValueError: an item whose FaithEval task cannot be told, or an unknown context kind.
    """
    _need(items, _KEY + ["context", "gold", "meta"], "items")
    rows = []
    for rec in items.to_dict("records"):
        view = ItemView(rec)
        meta = view.meta
        task = str(meta.get("faitheval_task") or "").lower()
        if task not in TASKS:
            task = fe_templates.task_of(view)
        if task not in TASKS:
            task = next((t for t in TASKS if t in str(rec["benchmark"]).lower()), "")
        if task not in TASKS:
            raise ValueError(
                f"item {view.key} of {rec['benchmark']!r}: cannot tell its FaithEval task "
                f"(set meta['faitheval_task'] to one of {list(TASKS)})"
            )
        kind = str(meta.get("context_kind") or ("modified" if view.text("context") else "none"))
        _check(f"item {view.key}: context_kind", kind, CONTEXT_KINDS)
        dataset = meta.get("subset") or meta.get("source_dataset")
        if not dataset:
            dataset = "ARC-Challenge" if task == "counterfactual" else "unknown"
        rows.append(
            {
                "benchmark": rec["benchmark"],
                "split": rec["split"],
                "item_id": rec["item_id"],
                "task": task,
                "context_kind": kind,
                "source_dataset": str(dataset),
                "gold": view.text("gold"),
            }
        )
    return pd.DataFrame(rows, columns=_KEY + ["task", "context_kind", "source_dataset", "gold"])


def _option_correct(
    output: str | None, view: ItemView, gold: str | None, cf_match: str
) -> tuple[bool, str | None]:
    opts = fe_templates.options_of(view)
    if not opts:
        raise ValueError(f"item {view.key}: a multiple-choice item without options")
    letter = parsers.faitheval_option(output, opts, match=cf_match)
    if letter is None or gold is None:
        return False, letter
    if letter == gold:
        return True, letter
    # A gold may be the option text rather than its letter.
    text = dict(opts).get(letter, "")
    return parsers.faitheval_normalize(text) == parsers.faitheval_normalize(gold), letter


def grade_one(
    output: str | None, item: dict[str, Any], *, task: str, context_kind: str, cf_match: str
) -> tuple[bool, bool, str | None, str | None]:
    """Grade one response: (strict correct, non-strict correct, strict phrase, non-strict one).

    The phrase is the valid phrase (or option letter, or gold answer) that matched.

    >>> item = {"split": "test", "item_id": "1", "gold": "unknown", "context": "c", "meta": {}}
    >>> grade_one("I cannot tell.", item, task="unanswerable", context_kind="modified",
    ...     cf_match="letter_or_text")
    (False, True, None, 'not')
    """
    view = ItemView(item)
    if output is None or not str(output).strip():
        return False, False, None, None
    if view.meta.get("options") or view.meta.get("choices"):
        ok, letter = _option_correct(output, view, view.text("gold"), cf_match)
        return ok, ok, letter, letter
    if context_kind == "modified" and task in ("unanswerable", "inconsistent"):
        label = "unknown" if task == "unanswerable" else "conflict"
        s = parsers.faitheval_phrase(output, label, mode="strict")
        n = parsers.faitheval_phrase(output, label, mode="nonstrict")
        return s is not None, n is not None, s, n
    # The template picks its rule from the item's task; an original-context item is an
    # answerable question whatever its split is called, so the view says so explicitly.
    plain = ItemView({**item, "split": "", "meta": {**view.meta, "task": "answerable"}})
    parsed = _ANSWERABLE.parse(output, plain, {})
    ok = bool(_ANSWERABLE.correct(parsed, plain)) if _ANSWERABLE.correct else False
    mention = parsed.verdict if ok else None
    return ok, ok, mention, mention


def _labels(judgments: pd.DataFrame) -> pd.Series:
    """Model name, or the judge id where one model answered with several judges."""
    per_model = judgments.groupby("model")["judge"].nunique()
    several = set(per_model[per_model > 1].index)
    return judgments.apply(
        lambda r: r["judge"] if r["model"] in several else r["model"], axis=1
    ).astype(str)


def grade_answers(
    judgments: pd.DataFrame,
    items: pd.DataFrame,
    *,
    cf_match: str = "letter_or_text",
    sample: int = 0,
) -> pd.DataFrame:
    """Grade every FaithEval answer with both matching modes (spec 003 §2.1).

    Args:
        judgments: Answers as a judgments table (`benchmark, split, item_id, judge, model,
            prompt, sample, output`); only run `sample` is graded.
        items: The items answered (see `item_conditions`).
        cf_match: How a multiple-choice answer is matched: `letter`, `text` or
            `letter_or_text` (spec 003 §2.1.4).
        sample: Which run to grade when a model was sampled several times (0: greedy).

    Returns:
        One row per answer with the columns of `GRADED_COLUMNS`: `strict` / `nonstrict`
        (bool) and the phrase that matched in each mode (None when none did); `label` is the
        model, or the judge id where one model has several judges.

    Raises:
        KeyError: a missing column. ValueError: an answer to an unknown item, a bad option.
    """
    _check("cf_match", cf_match, CF_MATCH)
    _need(judgments, _KEY + ["judge", "model", "prompt", "sample", "output"], "judgments")
    conds = item_conditions(items)
    answers = judgments[judgments["sample"] == sample].copy()
    merged = answers.merge(conds, on=_KEY, how="left", validate="many_to_one")
    unknown = merged["task"].isna()
    if unknown.any():
        first = merged.loc[unknown, _KEY].iloc[0].tolist()
        raise ValueError(
            f"{int(unknown.sum())} answer(s) to items not in the items table: {first}"
        )
    by_key = {tuple(r[k] for k in _KEY): r for r in items.to_dict("records")}
    graded = [
        grade_one(
            out,
            by_key[(b, s, i)],
            task=task,
            context_kind=kind,
            cf_match=cf_match,
        )
        for out, b, s, i, task, kind in zip(
            merged["output"],
            merged["benchmark"],
            merged["split"],
            merged["item_id"],
            merged["task"],
            merged["context_kind"],
            strict=True,
        )
    ]
    merged["strict"] = [g[0] for g in graded]
    merged["nonstrict"] = [g[1] for g in graded]
    merged["phrase_strict"] = [g[2] for g in graded]
    merged["phrase_nonstrict"] = [g[3] for g in graded]
    merged["label"] = _labels(merged) if len(merged) else pd.Series(dtype=str)
    return merged[list(GRADED_COLUMNS)].reset_index(drop=True)


def accuracy(
    graded: pd.DataFrame,
    *,
    by: Sequence[str] = ("label", "task", "context_kind", "source_dataset"),
    level: float = 0.95,
) -> pd.DataFrame:
    """Accuracy per group and matching mode with Wilson intervals.

    Args:
        graded: Output of `grade_answers`.
        by: Group columns.
        level: Confidence level.

    Returns:
        One row per group × mode: the `by` columns, `mode`, `n`, `k`, `accuracy`,
        `ci_low`, `ci_high`.
    """
    _need(graded, [*by, "strict", "nonstrict"], "graded answers")
    rows = []
    for mode in MODES:
        g = graded.groupby(list(by), sort=True, observed=True)[mode].agg(["size", "sum"])
        g = g.reset_index().rename(columns={"size": "n", "sum": "k"})
        g.insert(len(by), "mode", mode)
        rows.append(g)
    out = pd.concat(rows, ignore_index=True)
    out["k"] = out["k"].astype(int)
    out["accuracy"] = out["k"] / out["n"]
    low, high = stats.wilson_interval(out["k"].to_numpy(), out["n"].to_numpy(), level=level)
    out["ci_low"], out["ci_high"] = low, high
    return out


def task_average(
    graded: pd.DataFrame,
    *,
    avg: str = "macro",
    by: Sequence[str] = ("label", "task", "context_kind"),
    n_boot: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> pd.DataFrame:
    """The AVG column: accuracy averaged over source datasets, with a bootstrap interval.

    `macro` (default, the paper's AVG, spec 003 §2.2) is the unweighted mean of the
    per-dataset accuracies; `micro` the item-level mean. The interval resamples items
    within each source dataset (stratified, seeded per group).

    Args:
        graded: Output of `grade_answers`.
        avg: `macro` or `micro`.
        by: Group columns (the average is taken over `source_dataset` inside each group).
        n_boot: Bootstrap resamples.
        seed: Bootstrap seed.
        level: Confidence level.

    Returns:
        One row per group × mode: the `by` columns, `mode`, `n` (items), `n_datasets`,
        `accuracy`, `ci_low`, `ci_high`.
    """
    _check("avg", avg, AVERAGES)
    _need(graded, [*by, "source_dataset", "strict", "nonstrict"], "graded answers")
    rows = []
    for key, grp in graded.groupby(list(by), sort=True, observed=True):
        key = key if isinstance(key, tuple) else (key,)
        for mode in MODES:
            parts = [g[mode].to_numpy(dtype=float) for _, g in grp.groupby("source_dataset")]
            names = sorted(grp["source_dataset"].unique())
            sizes = np.array([len(p) for p in parts], dtype=float)
            means = np.array([p.mean() for p in parts])
            reps = np.column_stack(
                [
                    stats.bootstrap_sums(
                        p, n_boot=n_boot, rng=stats.rng_for(seed, *key, mode, name)
                    )[:, 0]
                    / len(p)
                    for p, name in zip(parts, names, strict=True)
                ]
            )
            weights = (
                np.full(len(parts), 1 / len(parts)) if avg == "macro" else sizes / sizes.sum()
            )
            low, high = stats.percentile_interval(reps @ weights, level=level)
            rows.append(
                {
                    **dict(zip(by, key, strict=True)),
                    "mode": mode,
                    "n": int(sizes.sum()),
                    "n_datasets": len(parts),
                    "accuracy": float(means @ weights),
                    "ci_low": float(low),
                    "ci_high": float(high),
                }
            )
    cols = [*by, "mode", "n", "n_datasets", "accuracy", "ci_low", "ci_high"]
    return pd.DataFrame(rows, columns=cols)


def _paper_wide(task: str, *, targets_root: str | None = None) -> pd.DataFrame:
    t = targets.load_targets("faitheval", PAPER_TABLE[task], root=targets_root)
    wide = t.pivot(index="row", columns="column", values="value")
    wide.index.name = "model"
    return wide


def _columns() -> list[str]:
    return [f"{d} {m}" for d in (*DATASETS, "AVG") for m in ("S", "N")]


def paper_table(
    graded: pd.DataFrame,
    *,
    task: str,
    avg: str = "macro",
    with_paper: bool = True,
    targets_root: str | None = None,
) -> pd.DataFrame:
    """Tables 4/5 layout: accuracy per source dataset, S and N, and AVG, beside the paper.

    Args:
        graded: Output of `grade_answers`.
        task: `unanswerable` (Table 4) or `inconsistent` (Table 5); modified contexts only.
        avg: How AVG is taken over the datasets present (`macro`, the paper's, or `micro`).
        with_paper: Add the paper's rows (from `data/targets/faitheval/`).
        targets_root: Folder of the target CSVs (default: the project's).

    Returns:
        One row per model: `source` (`yours` / `paper`), `model`, `n`, then `<dataset> S`,
        `<dataset> N` for the ten datasets and `AVG S`, `AVG N` (fractions; NaN where a
        dataset has no answers). A dataset outside the paper's ten gets its own columns.
    """
    _check("task", task, tuple(PAPER_TABLE))
    mine = graded[(graded["task"] == task) & (graded["context_kind"] == "modified")]
    acc = accuracy(mine, by=("label", "source_dataset"))
    avg_tab = task_average(mine, avg=avg, by=("label",), n_boot=1)
    short = {"strict": "S", "nonstrict": "N"}
    acc["column"] = acc["source_dataset"] + " " + acc["mode"].map(short)
    avg_tab["column"] = "AVG " + avg_tab["mode"].map(short)
    long = pd.concat([acc, avg_tab], ignore_index=True)
    yours = long.pivot(index="label", columns="column", values="accuracy")
    extra = sorted(set(yours.columns) - set(_columns()))
    cols = [c for c in _columns() if not c.startswith("AVG")] + extra + ["AVG S", "AVG N"]
    yours = yours.reindex(columns=cols)
    yours.insert(0, "n", mine.groupby("label").size().reindex(yours.index))
    yours.insert(0, "source", "yours")
    yours.index.name = "model"
    out = [yours.reset_index()]
    if with_paper:
        paper = _paper_wide(task, targets_root=targets_root).reindex(columns=cols)
        paper.insert(0, "n", np.nan)
        paper.insert(0, "source", "paper")
        out.append(paper.reset_index())
    return pd.concat(out, ignore_index=True)[["source", "model", "n", *cols]]


def original_vs_modified(
    averages: pd.DataFrame,
    *,
    task: str,
    mode: str = "strict",
    with_paper: bool = True,
    targets_root: str | None = None,
) -> pd.DataFrame:
    """Figures 4/5/6 data: each model's accuracy (%) with the original vs the FaithEval context.

    Args:
        averages: Output of `task_average` grouped by `label, task, context_kind`.
        task: `unanswerable`, `inconsistent` or `counterfactual`.
        mode: Matching mode of your models (the paper's bars are strict).
        with_paper: Add the paper's bars (from `data/targets/faitheval/figure{4,5,6}.csv`).
        targets_root: Folder of the target CSVs (default: the project's).

    Returns:
        Long: `source` (`yours`/`paper`), `model`, `context` (the paper's series label),
        `accuracy` (%), `ci_low`, `ci_high` (% ; NaN for paper bars), `n`, `proprietary`.
    """
    _check("task", task, TASKS)
    _check("mode", mode, MODES)
    labels = FIGURE_LABELS[task]
    a = averages[
        (averages["task"] == task)
        & (averages["mode"] == mode)
        & (averages["context_kind"].isin(list(labels)))
    ]
    yours = pd.DataFrame(
        {
            "source": "yours",
            "model": a["label"].astype(str),
            "context": a["context_kind"].map(labels),
            "accuracy": 100 * a["accuracy"],
            "ci_low": 100 * a["ci_low"],
            "ci_high": 100 * a["ci_high"],
            "n": a["n"].astype(float),
        }
    )
    frames = [yours]
    if with_paper:
        t = targets.load_targets("faitheval", PAPER_FIGURE[task], root=targets_root)
        frames.append(
            pd.DataFrame(
                {
                    "source": "paper",
                    "model": t["row"],
                    "context": t["column"],
                    "accuracy": t["value"],
                    "ci_low": np.nan,
                    "ci_high": np.nan,
                    "n": t["n"].astype(float),
                }
            )
        )
    out = pd.concat(frames, ignore_index=True)
    out["proprietary"] = out["model"].isin(PROPRIETARY)
    # The original (or closed-book) series first: the paper sorts its bars by it.
    rank = {label: i for i, label in enumerate(labels.values())}
    return out.sort_values("context", key=lambda c: c.map(rank), kind="stable").reset_index(
        drop=True
    )


def strict_vs_nonstrict(
    averages: pd.DataFrame,
    *,
    task: str = "unanswerable",
    with_paper: bool = True,
    targets_root: str | None = None,
) -> pd.DataFrame:
    """Figure 10 data: AVG accuracy (%) under strict and non-strict matching, modified context.

    Returns:
        Long: `source`, `model`, `mode`, `accuracy` (%), `ci_low`, `ci_high`, `n`.
    """
    _check("task", task, tuple(PAPER_TABLE))
    a = averages[(averages["task"] == task) & (averages["context_kind"] == "modified")]
    yours = pd.DataFrame(
        {
            "source": "yours",
            "model": a["label"].astype(str),
            "mode": a["mode"],
            "accuracy": 100 * a["accuracy"],
            "ci_low": 100 * a["ci_low"],
            "ci_high": 100 * a["ci_high"],
            "n": a["n"].astype(float),
        }
    )
    frames = [yours]
    if with_paper:
        w = _paper_wide(task, targets_root=targets_root)
        for col, mode in (("AVG S", "strict"), ("AVG N", "nonstrict")):
            frames.append(
                pd.DataFrame(
                    {
                        "source": "paper",
                        "model": w.index,
                        "mode": mode,
                        "accuracy": 100 * w[col].to_numpy(),
                        "ci_low": np.nan,
                        "ci_high": np.nan,
                        "n": np.nan,
                    }
                )
            )
    return pd.concat(frames, ignore_index=True)


def overall(
    averages: pd.DataFrame,
    *,
    mode: str = "strict",
    with_paper: bool = True,
    targets_root: str | None = None,
) -> pd.DataFrame:
    """Figure 1 companion: per model, the modified-context accuracy of each task and their mean.

    The mean is unweighted across the three tasks (spec 003 §2.2) and left NaN for a
    model that lacks a task.

    Returns:
        One row per model: `source`, `model`, `unanswerable`, `inconsistent`,
        `counterfactual` (%), `mean` (%), sorted by `mean` descending.
    """
    _check("mode", mode, MODES)
    frames = []
    for task in TASKS:
        f = original_vs_modified(
            averages, task=task, mode=mode, with_paper=with_paper, targets_root=targets_root
        )
        f = f[f["context"] == FIGURE_LABELS[task]["modified"]]
        frames.append(f.assign(task=task))
    long = pd.concat(frames, ignore_index=True)
    wide = long.pivot_table(
        index=["source", "model"], columns="task", values="accuracy", aggfunc="first"
    )
    wide = wide.reindex(columns=list(TASKS))
    wide["mean"] = wide.mean(axis=1, skipna=False)
    return wide.reset_index().sort_values("mean", ascending=False, na_position="last")


def load_answers(
    benchmarks: Sequence[str], *, fallback: str | None = "sample:faitheval"
) -> catalog.Loaded:
    """Load FaithEval items and the answer tables `judgelab judge` wrote for them.

    Nothing is fetched: each benchmark's items must have been imported
    (`judgelab data import <benchmark>`) and answered (`judgelab judge ... --benchmark
    <benchmark>`). When none of them has answers yet, `fallback` (a sample set) is loaded
    and `reason` says what to run.

    Raises:
        catalog.SourceNotFound: nothing to show and no fallback.
    """
    items, judgments, missing = [], [], []
    for b in benchmarks:
        try:
            it = catalog.load_items(b)
            jd = catalog.load_judgments(b)
        except catalog.SourceNotFound as exc:
            missing.append(f"{b}: {exc}")
            continue
        items.append(it)
        judgments.append(jd)
    requested = ",".join(benchmarks)
    if judgments:
        return catalog.Loaded(
            pd.concat(items, ignore_index=True),
            pd.concat(judgments, ignore_index=True),
            requested,
            requested,
            any(catalog.is_sample(b) for b in benchmarks),
            "",
        )
    if fallback is None:
        raise catalog.SourceNotFound("no FaithEval answers: " + "; ".join(missing))
    sample = catalog.load_source(fallback)
    reason = (
        "no FaithEval answers yet (import the items with `judgelab data import <benchmark>`, "
        "then answer them with `judgelab judge`; see the run plan below)"
    )
    return sample._replace(requested=requested, reason=reason)


def run_plan(
    benchmarks: Sequence[str],
    *,
    judge: str,
    items: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """The `judgelab judge` commands that answer each benchmark, with their --dry-run numbers.

    Args:
        benchmarks: FaithEval benchmarks (e.g. `faitheval_unanswerable`).
        judge: A judge spec name in `params/judges/` or a YAML path (a `faitheval.*` template).
        items: Items to estimate on when a benchmark is not imported (e.g. the sample);
            the `items_used` column says which were used.

    Returns:
        One row per benchmark: `benchmark`, `command`, `items_used`, `planned`, `cached`,
        `to_request`, `not_applicable`, `est_prompt_tokens`, `max_completion_tokens`,
        `est_cost_usd` (NaN when the spec has no prices).
    """
    from judgelab import judges

    spec = judges.resolve(judge)
    if not str(spec.template or "").startswith("faitheval."):
        raise ValueError(f"judge {judge!r} uses template {spec.template!r}, not faitheval.*")
    rows = []
    for b in benchmarks:
        try:
            its, used = catalog.load_items(b), b
        except catalog.SourceNotFound:
            if items is None:
                raise
            its = items
            used = "sample (not imported: run `judgelab data import " + b + "` first)"
            task = next((t for t in TASKS if t in b), None)
            if task is not None:
                conds = item_conditions(items)
                keep = conds["task"] == task
                its = items[keep.to_numpy()]
        est = judges.dry_run(its, spec)
        rows.append(
            {
                "benchmark": b,
                "command": f"judgelab judge --judge {shlex.quote(judge)} --benchmark {b}",
                "items_used": used,
                **est.as_row(),
            }
        )
    return pd.DataFrame(rows)
