"""FaithEval grading: is an answer faithful to its context? (spec 003 §2.1).

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
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from judgelab.core import clusters
from judgelab.core.schema import require_columns as _need
from judgelab.errors import check_choice
from judgelab.judges import parsers
from judgelab.judges.templates import faitheval as fe_templates
from judgelab.judges.templates import get as get_template
from judgelab.judges.templates.base import ItemView

TASKS = ("unanswerable", "inconsistent", "counterfactual")
CONTEXT_KINDS = ("modified", "original", "none")
MODES = ("strict", "nonstrict")
CF_MATCH = ("letter", "text", "letter_or_text")
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
    "parsed",
    "cluster",
)
_KEY = ["benchmark", "split", "item_id"]
_ANSWERABLE = get_template("faitheval.repo.strict")


def _task_of(view: ItemView, benchmark: object) -> str:
    """The item's FaithEval task: its meta, else the template's rule, else the benchmark name."""
    task = str(view.meta.get("faitheval_task") or "").lower()
    if task not in TASKS:
        task = fe_templates.task_of(view)
    if task not in TASKS:
        task = next((t for t in TASKS if t in str(benchmark).lower()), "")
    if task not in TASKS:
        raise ValueError(
            f"item {view.key} of {benchmark!r}: cannot tell its FaithEval task "
            f"(set meta['faitheval_task'] to one of {list(TASKS)})"
        )
    return task


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
        task = _task_of(view, rec["benchmark"])
        kind = str(meta.get("context_kind") or ("modified" if view.text("context") else "none"))
        check_choice(f"item {view.key}: context_kind", kind, CONTEXT_KINDS)
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


def _parsed(output: str | None, item: dict[str, Any], letter: str | None) -> bool:
    """Whether an answer is non-empty and, for a multiple-choice item, names an option."""
    if output is None or not str(output).strip():
        return False
    view = ItemView(item)
    if view.meta.get("options") or view.meta.get("choices"):
        return letter is not None and not pd.isna(letter)
    return True


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
        (bool) and the phrase that matched in each mode (None when none did); `parsed`
        (False: an empty answer, or a multiple-choice answer naming no option — graded
        wrong, counted by `accuracy` as unparsed); `cluster` (the resampling unit: the
        judgments' own, else the items'); `label` is the model, or the judge id where one
        model has several judges.

    Raises:
        KeyError: a missing column. ValueError: an answer to an unknown item, a bad option.
    """
    check_choice("cf_match", cf_match, CF_MATCH)
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
    merged["parsed"] = [
        _parsed(out, by_key[(b, s, i)], letter)
        for out, b, s, i, letter in zip(
            merged["output"],
            merged["benchmark"],
            merged["split"],
            merged["item_id"],
            merged["phrase_strict"],
            strict=True,
        )
    ]
    merged["label"] = _labels(merged) if len(merged) else pd.Series(dtype=str)
    if clusters.COLUMN not in merged.columns:
        merged = clusters.attach(merged, items)
    return merged[list(GRADED_COLUMNS)].reset_index(drop=True)
