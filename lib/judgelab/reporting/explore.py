"""The items behind a number: the cases of an outcome category, readable one by one.

`cases(judgments, items, category)` returns one row per (judge, item, condition, sample)
that falls in `category`, with what a reader needs to judge the judge: the question, an
excerpt of the context, both responses (or the one graded), gold, and each order's verdict
and raw output. `examples(...)` draws a seeded handful and `show(...)` renders them as
expandable rows (`<details>`: they open in JupyterLab and in static HTML alike, no script),
after a one-line-per-case summary table (interactive where `notebook.interactive_tables`
is on).

Categories (`CATEGORIES`):

- pairwise, both orders: `flipped` (a different response picked when the order was
  swapped), `consistently_wrong` (the worse response in both orders), `consistently_right`;
- pairwise, any order: `longer_worse` (picked the worse response, which was the longer);
- pointwise with gold: `false_positive` (said Correct / Consistent where gold is the other
  label), `false_negative`, `invalid` (an unparseable verdict, raw output kept).

Probe benchmarks (`judgelab probe`): `probe_cases(judgments, items, probe=, kind=)` returns
the arms behind a judges × probes cell (`analyses.probes.cases.KINDS`: the verdict moved
`toward` / `away` from the probed response, `changed`, `unchanged`) in the same shape, so
`examples` and `show` render them: the probed texts as the judge saw them, and per order
"control → probed" verdicts with the probed run's raw output.
"""

from __future__ import annotations

import html
import os
from typing import Any

import numpy as np
import pandas as pd

from judgelab.analyses import probes
from judgelab.core import lengths, scan
from judgelab.core.scan import ROW
from judgelab.data.catalog import lazy
from judgelab.reporting import explore_lazy

CATEGORIES = (
    "flipped",
    "consistently_wrong",
    "consistently_right",
    "longer_worse",
    "false_positive",
    "false_negative",
    "invalid",
)
PAIRWISE = ("flipped", "consistently_wrong", "consistently_right", "longer_worse")
POINTWISE = ("false_positive", "false_negative", "invalid")
POSITIVE = ("Correct", "Consistent", "yes", "Yes", "pass", "true", "True", "1")
KEY = ["benchmark", "split", "item_id"]
EXCERPT = 400
#: The item columns the summary table shows (`section` merges the rest into the shown few).
SUMMARY_ITEMS = ("task", "gold", "question")


def _shown_items(items: pd.DataFrame) -> pd.DataFrame:
    """The item columns a case shows: all but the resampling unit (`cluster`)."""
    return items.drop(columns=[c for c in ("cluster",) if c in items.columns])


def _missing(value: Any) -> bool:
    try:
        return value is None or bool(pd.isna(value))
    except (TypeError, ValueError):
        return False


def clip(text: Any, n: int = EXCERPT) -> str:
    """Return `text` cut to at most `n` characters at a word boundary, "…" marking the cut.

    A single word longer than half the excerpt (a URL, a hash) is cut where it reaches `n`.
    """
    if _missing(text):
        return ""
    s = str(text)
    if len(s) <= n:
        return s
    cut = s[: n - 1]
    if not s[n - 1].isspace():  # the cut falls inside a word: drop its start
        space = max(cut.rfind(" "), cut.rfind("\n"), cut.rfind("\t"))
        cut = cut[: space + 1] if space >= n // 2 else cut
    return cut + "…"


def _wide(judgments: pd.DataFrame) -> pd.DataFrame:
    """One row per (judge, item, condition, sample) with order 0 and 1 side by side."""
    keys = ["judge", *KEY, "condition", "sample"]
    cols = ["verdict", "chosen", "valid", "output"]
    parts = []
    for order in (0, 1):
        j = judgments[judgments["order"] == order][keys + cols]
        parts.append(j.rename(columns={c: f"{c}_{order}" for c in cols}))
    return parts[0].merge(parts[1], on=keys, how="outer")


def _pairwise(judgments: pd.DataFrame, items: pd.DataFrame, category: str) -> pd.DataFrame:
    w = _wide(judgments).merge(items, on=KEY, how="inner")
    c0, c1 = w["chosen_0"], w["chosen_1"]
    both = c0.isin(["pos", "neg"]) & c1.isin(["pos", "neg"])
    if category == "flipped":
        keep = both & (c0 != c1)
    elif category == "consistently_wrong":
        keep = both & (c0 == "neg") & (c1 == "neg")
    elif category == "consistently_right":
        keep = both & (c0 == "pos") & (c1 == "pos")
    else:  # longer_worse
        pos = lengths.counts(w["response_pos"].fillna(""), "words")
        neg = lengths.counts(w["response_neg"].fillna(""), "words")
        keep = ((c0 == "neg") | (c1 == "neg")) & (neg > pos)
    return w[keep.fillna(False).to_numpy(dtype=bool)]


def _pointwise(judgments: pd.DataFrame, items: pd.DataFrame, category: str) -> pd.DataFrame:
    w = judgments.merge(items, on=KEY, how="inner").rename(
        columns={"verdict": "verdict_0", "output": "output_0", "valid": "valid_0"}
    )
    said = w["verdict_0"].astype(str).isin(POSITIVE)
    gold = w["gold"].astype(str).isin(POSITIVE)
    valid = w["valid_0"].astype(bool)
    keep = {
        "false_positive": valid & said & ~gold & w["gold"].notna(),
        "false_negative": valid & ~said & gold,
        "invalid": ~valid,
    }[category]
    return w[keep.to_numpy(dtype=bool)]


def cases(
    judgments: pd.DataFrame,
    items: pd.DataFrame,
    category: str,
    *,
    judge: str | None = None,
    split: str | None = None,
    condition: str | None = None,
    item_columns: tuple[str, ...] | None = None,
) -> pd.DataFrame:
    """Return every case of `category` (see the module docstring), optionally narrowed.

    `item_columns` keeps only these item columns (besides the key, and the responses the
    `longer_worse` test reads): a large source's cases without every item text — and,
    from a lazy table, without the raw outputs (`explore_lazy.outputs_of` adds them).
    """
    narrow = {"judge": judge, "split": split, "condition": condition}
    found = _found(judgments, items, category, narrow, item_columns)
    return found.rows(slice(None)) if isinstance(found, explore_lazy.Cases) else found


def _found(
    judgments: Any,
    items: pd.DataFrame,
    category: str,
    narrow: dict[str, str | None],
    item_columns: tuple[str, ...] | None,
) -> pd.DataFrame | explore_lazy.Cases:
    """`cases` (`narrow`: its judge, split and condition filters), lazily where it can.

    A lazy table's pairwise cases stay in polars (`explore_lazy.Cases`).
    """
    if category not in CATEGORIES:
        raise ValueError(f"unknown category {category!r}; known: {', '.join(CATEGORIES)}")
    it = _shown_items(items)
    unread: list[str] = []  # item columns read for the length test only (left out after it)
    if item_columns is not None:
        lengths_of = ("response_pos", "response_neg") if category == "longer_worse" else ()
        it = it[[c for c in it.columns if c in {*KEY, "task", *item_columns, *lengths_of}]]
        unread = [c for c in lengths_of if c not in item_columns and c in it.columns]
    pairwise = bool((it["task"] == "pairwise").any())
    if lazy.is_lazy(judgments):  # a large source: pair and pick the cases in polars
        j = explore_lazy.narrowed(judgments, narrow)
        if pairwise and (category == "invalid" or category in PAIRWISE):
            outputs = item_columns is None  # the light cases carry no raw outputs either
            return _lazy_pairwise(j, it, category, outputs, unread)
        judgments = j.drop(ROW, strict=False).collect().to_pandas()
        narrow = {}  # narrowed in the scan
    j = judgments
    for col, want in narrow.items():
        if want is not None:
            j = j[j[col] == want]
    if pairwise and category == "invalid":
        out = _invalid_pairs(j, it)
    elif pairwise and category in PAIRWISE:
        out = _pairwise(j, it, category)
    elif not pairwise and category in POINTWISE:
        out = _pointwise(j, it, category)
    else:  # the category does not apply to this task
        out = it.iloc[0:0]
    out = out.drop(columns=unread)
    return out.assign(category=category).reset_index(drop=True)


def _lazy_pairwise(
    lf: Any, items: pd.DataFrame, category: str, outputs: bool, unread: list[str]
) -> explore_lazy.Cases:
    """The pairwise cases of a lazy table (`explore_lazy`), with `_pairwise`'s length test.

    `longer_worse` counts the words of each item once and pairs only the items whose worse
    response is the longer (the pandas path counts them on every paired row: the same rows);
    the `unread` item columns are left out before pairing (10^7 rows: a million cases).
    """
    if category == "longer_worse":
        pos = lengths.counts(items["response_pos"].fillna(""), "words")
        neg = lengths.counts(items["response_neg"].fillna(""), "words")
        items = items.drop(columns=unread)[np.asarray(neg > pos, dtype=bool)]
        return explore_lazy.pairwise_cases(lf, items, category, outputs=outputs, only_items=True)
    return explore_lazy.pairwise_cases(lf, items, category, outputs=outputs)


def probe_cases(
    judgments: pd.DataFrame,
    items: pd.DataFrame,
    *,
    probe: str = probes.ALL,
    kind: str = "toward",
    judge: str | None = None,
) -> pd.DataFrame:
    """Return the arms behind one probe cell (module docstring), readable like `cases`."""
    found = probes.cases.cell_cases(
        probes.probe_pairs(judgments, items), judge=judge, probe=probe, kind=kind
    )
    keys = ["judge", *KEY, "condition", "sample"]
    raw = _wide(judgments)[[*keys, "output_0", "output_1"]]
    it = _shown_items(items)
    out = found.merge(raw, on=keys, how="left").merge(it, on=KEY, how="left")
    for order in (0, 1):
        out[f"verdict_{order}"] = [
            f"control {c} → probed {v}"
            for c, v in zip(out[f"control_{order}"], out[f"variant_{order}"], strict=True)
        ]
    return out.assign(category=f"probe {probe}: {kind}").reset_index(drop=True)


def _invalid_pairs(judgments: pd.DataFrame, items: pd.DataFrame) -> pd.DataFrame:
    w = _wide(judgments).merge(items, on=KEY, how="inner")
    bad = ~(w["valid_0"].fillna(True).astype(bool) & w["valid_1"].fillna(True).astype(bool))
    return w[bad.to_numpy(dtype=bool)]


def examples(found: pd.DataFrame, n: int = 5, *, seed: int = 0) -> pd.DataFrame:
    """Return a seeded handful (`n`) of the cases, in a stable order."""
    if len(found) <= n:
        return found
    return found.sample(n=n, random_state=seed).sort_index()


def drawn(count: int, n: int = 5, seed: int = 0) -> np.ndarray:
    """The positions `examples` draws from `count` cases (numbered 0, 1, ...), sorted.

    >>> drawn(3, 5).tolist(), len(drawn(1000, 5)) == len(set(drawn(1000, 5)))
    ([0, 1, 2], True)
    """
    if count <= n:
        return np.arange(count)
    # what `DataFrame.sample(n, random_state=seed)` draws
    return np.sort(np.random.RandomState(seed).choice(count, size=n, replace=False))


def section(
    out: Any, judgments: Any, items: pd.DataFrame, category: str, *, n: int = 5, seed: int = 0
) -> None:
    """A notebook's Examples section: every case in `out`'s table "examples", a handful shown.

    `out` is the notebook's `notebook.outputs`. The cases are not kept after the section: a
    large source's can take hundreds of MB (10^7 judgment rows: 1.6 million flipped cases,
    650 MB), which a notebook variable would hold to the end of the run; they carry only
    the summary's item columns (`SUMMARY_ITEMS`), the shown few get the rest.
    """
    found = _found(judgments, items, category, {}, SUMMARY_ITEMS)
    if isinstance(found, explore_lazy.Cases):  # summarised in polars, a few taken
        out.table(found.summaries(question_excerpts), "examples")
        shown = found.rows(drawn(len(found), n, seed))
    else:
        out.table(summary(found), "examples")
        shown = examples(found, n, seed=seed)
    if lazy.is_lazy(judgments) and len(shown) and "output_0" not in shown.columns:
        keys = explore_lazy.UNIT
        shown = shown.merge(explore_lazy.outputs_of(judgments, shown), on=keys, how="left")
    it = _shown_items(items)
    it = it[it["item_id"].isin(shown["item_id"].unique())]  # the shown few's (keys compared below)
    rest = [*KEY, *(c for c in it.columns if c not in shown.columns)]
    show(shown.merge(it[rest], on=KEY, how="left") if len(rest) > len(KEY) else shown)


def summary(found: pd.DataFrame) -> pd.DataFrame:
    """One line per case: judge, split, item, verdicts per order, gold, question excerpt."""
    out = found[[c for c in explore_lazy.SUMMARY if c in found]].copy()
    texts, codes = question_excerpts(found.get("question", pd.Series("", index=found.index)))
    out["question"] = np.array(texts, dtype=object)[codes]
    return out.reset_index(drop=True)


#: Characters of a question's excerpt in a case's summary line.
QUESTION_CHARS = 80


def question_excerpts(question: pd.Series) -> tuple[list[str], np.ndarray]:
    """Return the distinct questions' excerpts and each row's position among them.

    Excerpts are `clip` to `QUESTION_CHARS`, with "" last for a missing question; each
    question is cut once (a large source repeats them across judges and orders).
    """
    codes, distinct = pd.factorize(question)
    texts = [*(clip(q, QUESTION_CHARS) for q in distinct), ""]
    return texts, np.where(codes < 0, len(distinct), codes)


def _block(title: str, text: Any) -> str:
    if _missing(text) or str(text) == "":
        return ""
    return (
        f"<div style='margin:4px 0'><b>{html.escape(title)}</b>"
        f"<pre style='white-space:pre-wrap;margin:2px 0'>{html.escape(clip(text))}</pre></div>"
    )


def _case_html(r: pd.Series) -> str:
    head = (
        f"{r.get('judge', '')} · {r.get('split', '')} · item {r.get('item_id', '')} · "
        f"{r.get('category', '')}"
    )
    parts = [
        _block("Question", r.get("question")),
        _block("Context (excerpt)", r.get("context")),
        _block("Response (better, gold)", r.get("response_pos")),
        _block("Response (worse)", r.get("response_neg")),
        _block("Response graded", r.get("response")),
        _block("Gold", r.get("gold")),
    ]
    for order in (0, 1):
        verdict = r.get(f"verdict_{order}")
        if f"verdict_{order}" not in r.index:
            continue
        label = f"Order {order} ({'better shown first' if order == 0 else 'worse shown first'})"
        if "response_pos" not in r.index or _missing(r.get("response_pos")):
            label = "Judgment"
        parts.append(_block(f"{label}: verdict {verdict}", r.get(f"output_{order}")))
    return (
        "<details class='jl-case' style='border:1px solid #ccc;margin:4px 0;padding:4px 8px'>"
        f"<summary>{html.escape(head)}</summary>{''.join(parts)}</details>"
    )


def cases_html(found: pd.DataFrame) -> str:
    """Return the cases as expandable rows (static HTML, no script)."""
    if found.empty:
        return "<p><i>No case in this category.</i></p>"
    return "".join(_case_html(r) for _, r in found.iterrows())


def show(found: pd.DataFrame) -> None:
    """Display the summary table, then each case as an expandable row."""
    from IPython.display import HTML, display

    display(summary(found))
    display(HTML(cases_html(found)))


def applicable(items: pd.DataFrame) -> tuple[str, ...]:
    """Return the categories that apply to `items`' task (pairwise or pointwise)."""
    if bool((items["task"] == "pairwise").any()):
        return (*PAIRWISE, "invalid")
    return POINTWISE


def headless() -> bool:
    """True when the notebook runs without a live reader (`judgelab run` / `make figures`)."""
    return os.environ.get("JUDGELAB_HEADLESS") == "1"


def view_html(
    judgments: pd.DataFrame,
    items: pd.DataFrame,
    category: str,
    judge: str | None,
    split: str | None,
    n: int = 5,
    seed: int = 0,
) -> str:
    """The widget's page for one choice: the count, then a seeded handful as rows."""
    found = cases(judgments, items, category, judge=judge, split=split)
    head = f"<p class='jl-count'><b>{len(found)}</b> case(s); showing up to {n}.</p>"
    return head + cases_html(examples(found, n, seed=seed))


def _distinct(judgments: Any, column: str) -> list[str]:
    if lazy.is_lazy(judgments):
        return scan.values(judgments, column)
    return sorted(judgments[column].astype(str).unique())


def browse(
    judgments: pd.DataFrame,
    items: pd.DataFrame,
    *,
    category: str | None = None,
    n: int = 5,
    seed: int = 0,
) -> Any:
    """A small JupyterLab widget: pick a judge, a category and a split; see its cases.

    Each choice re-renders the count and a seeded handful (`n`, `seed`) of the cases as
    expandable rows. In a headless run (an exported report) there is no kernel to answer
    the dropdowns, so it displays a one-line note instead and returns None; the report's
    static Examples section shows the same cases.

    Returns:
        The `ipywidgets.VBox` (display it, or leave it as the cell's last value), or None.
    """
    from IPython.display import HTML, display

    if headless():
        display(
            HTML(
                "<p><i>Open this notebook in JupyterLab to browse the cases of any "
                "judge and category here.</i></p>"
            )
        )
        return None
    import ipywidgets as w

    cats = applicable(items)
    judges, splits = (_distinct(judgments, c) for c in ("judge", "split"))
    splits = ["(all)", *splits]
    pick_judge = w.Dropdown(options=judges, description="judge")
    pick_cat = w.Dropdown(options=cats, value=category or cats[0], description="category")
    pick_split = w.Dropdown(options=splits, description="split")
    out = w.Output()

    def render(_: Any = None) -> None:
        split = None if pick_split.value == "(all)" else pick_split.value
        page = view_html(judgments, items, pick_cat.value, pick_judge.value, split, n, seed)
        out.clear_output()
        with out:
            display(HTML(page))

    for dd in (pick_judge, pick_cat, pick_split):
        dd.observe(render, names="value")
    render()
    return w.VBox([w.HBox([pick_judge, pick_cat, pick_split]), out])


__all__ = [
    "CATEGORIES",
    "applicable",
    "browse",
    "cases",
    "cases_html",
    "clip",
    "examples",
    "headless",
    "probe_cases",
    "question_excerpts",
    "show",
    "summary",
    "view_html",
]
