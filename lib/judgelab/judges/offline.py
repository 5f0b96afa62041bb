r"""Offline judges: transparent baselines that need no network (`endpoint: offline`).

They are real computations on real inputs, and they are **baselines**: their judge ids start
with `offline-` and their `prompt` column with `offline:` so that every table and figure
labels them as such.

- `prefer_longer` (pairwise): the longer response in length unit `unit` (default words);
  equal lengths → tie.
- `always_a` (pairwise): always position A, a positional-bias control.
- `lexical_grounding` (pairwise, pointwise): the share of a response's content tokens found
  in the context; refusals get `refusal_score`. Pairwise: the higher score (equal → tie);
  pointwise: the score itself (not comparable to gold, so `correct` stays null).
- `reference_similarity` (pairwise, pointwise): token-F1 or ROUGE-L against the reference:
  the argmax of the two (pairwise, spec 001 §4.6; equal → tie), or Correct when the score is
  at least `threshold` (pointwise), else Incorrect.

Each baseline refuses clearly (`OfflineNotApplicable`) on a benchmark it does not apply to:
pairwise-only baselines on a benchmark without pairwise items, lexical grounding without any
context, reference similarity without any reference. Single items that lack the input are
kept as invalid rows whose output says why, so they are counted, never dropped.

Definitions:
- *content tokens*: lower-cased `\w+` tokens minus a short English stop-word list;
  grounding = (# response content tokens that occur in the context) / (# response content
  tokens), counting repeated tokens each time; a response with no content tokens scores 0.
- *refusal*: the response matches one of `REFUSAL_PATTERNS` (e.g. "cannot answer", "does not
  mention", "not enough information"); a refusal is scored `refusal_score` (default 0.5).
- *token-F1*: SQuAD F1 after SQuAD normalisation (lower case, punctuation and articles
  removed); two empty texts score 1.
- *ROUGE-L*: F-measure of the longest common subsequence over `rouge_score` default tokens
  (lower-cased `[a-z0-9]+` runs, no stemming), as `evaluate`'s default; non-ASCII letters
  are dropped by that tokenizer, exactly as in the paper's setup.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd

from judgelab.core import lengths
from judgelab.errors import OfflineNotApplicable as OfflineNotApplicable
from judgelab.judges.parsers import Parsed
from judgelab.judges.templates.base import ItemView, NotApplicable, parse_condition

REFUSAL_PATTERNS = (
    r"\b(can ?not|can't|cannot|unable to|not able to)\b.{0,40}\b(answer|determine|tell|find|"
    r"say|provide|know)\b",
    r"\b(does not|doesn't|do not|don't|did not)\b.{0,30}\b(mention|state|say|specify|"
    r"provide|contain|include|indicate)\b",
    r"\b(not enough|insufficient|no) (information|context|details|data)\b",
    r"\bi (do not|don't) know\b",
    r"\b(is|are) not (mentioned|stated|specified|provided)\b",
    r"^\s*unknown\W*$",
)
_REFUSAL = re.compile("|".join(f"(?:{p})" for p in REFUSAL_PATTERNS), flags=re.I | re.S)

STOPWORDS = frozenset(
    """a an the and or but if of to in on at by for with from as is are was were be been being
    it its this that these those there here i you he she we they me him her us them my your his
    our their what which who whom whose when where why how do does did done have has had not no
    so than too very can will just should would could may might must shall also into about over
    under again further then once all any both each few more most other some such only own same
    s t""".split()
)


def is_refusal(text: str) -> bool:
    """Return True when `text` reads as a refusal to answer.

    >>> is_refusal("The context does not mention the date, so I cannot answer.")
    True
    >>> is_refusal("The library moved in March 2019.")
    False
    """
    return bool(_REFUSAL.search(text or ""))


def content_tokens(text: str) -> list[str]:
    r"""Return lower-cased `\w+` tokens without stop words.

    >>> content_tokens("The library moved in March 2019.")
    ['library', 'moved', 'march', '2019']
    """
    return [t for t in re.findall(r"\w+", (text or "").lower()) if t not in STOPWORDS]


def grounding(response: str, context: str) -> float:
    """Return the share of the response's content tokens that occur in the context.

    >>> grounding("Library moved 2019 Paris", "The library moved in 2019.")  # 3 of 4
    0.75
    """
    toks = content_tokens(response)
    if not toks:
        return 0.0
    ctx = set(content_tokens(context))
    return sum(t in ctx for t in toks) / len(toks)


_ARTICLES = re.compile(r"\b(a|an|the)\b")


def squad_tokens(text: str) -> list[str]:
    """Return SQuAD-normalised tokens (lower case, no punctuation, no articles).

    >>> squad_tokens("The Eiffel-Tower, in Paris!")
    ['eiffeltower', 'in', 'paris']
    """
    s = "".join(ch for ch in (text or "").lower() if ch not in set(string.punctuation))
    return _ARTICLES.sub(" ", s).split()


def token_f1(prediction: str, reference: str) -> float:
    """Return SQuAD token-F1 between two texts.

    >>> round(token_f1("the cat sat on the mat", "a cat on a mat"), 4)  # P=3/4, R=3/3
    0.8571
    """
    pred, ref = squad_tokens(prediction), squad_tokens(reference)
    if not pred or not ref:
        return float(pred == ref)
    same = sum((Counter(pred) & Counter(ref)).values())
    if same == 0:
        return 0.0
    p, r = same / len(pred), same / len(ref)
    return 2 * p * r / (p + r)


def rouge_tokens(text: str) -> list[str]:
    """Return `rouge_score`'s default tokens: lower-cased `[a-z0-9]+` runs.

    >>> rouge_tokens("Café, 2 cats!")
    ['caf', '2', 'cats']
    """
    return re.sub(r"[^a-z0-9]+", " ", (text or "").lower()).split()


def _lcs(a: list[str], b: list[str]) -> int:
    prev = [0] * (len(b) + 1)
    for x in a:
        cur = [0]
        for j, y in enumerate(b, start=1):
            cur.append(prev[j - 1] + 1 if x == y else max(prev[j], cur[j - 1]))
        prev = cur
    return prev[-1]


def rouge_l(prediction: str, reference: str) -> float:
    """Return the ROUGE-L F-measure (LCS-based, beta = 1).

    >>> rouge_l("the cat sat on the mat", "the cat on a mat")  # LCS 4: P=4/6, R=4/5
    0.7272727272727272
    """
    pred, ref = rouge_tokens(prediction), rouge_tokens(reference)
    if not pred or not ref:
        return 0.0
    lcs = _lcs(pred, ref)
    if lcs == 0:
        return 0.0
    p, r = lcs / len(pred), lcs / len(ref)
    return 2 * p * r / (p + r)


SIMILARITY: dict[str, Callable[[str, str], float]] = {"token_f1": token_f1, "rougeL": rouge_l}


@dataclass(frozen=True)
class Baseline:
    """An offline judge: which items it takes, its options, and its per-item rule."""

    name: str
    description: str
    pairwise: bool
    pointwise: bool
    defaults: Mapping[str, Any]
    judge: Callable[[ItemView, int, dict[str, str], Mapping[str, Any]], tuple[str, Parsed]]
    needs: str | None = None  # an item column the benchmark must have somewhere
    gold_comparable: bool = True
    conditions: tuple[str, ...] = ("",)

    def check_options(self, options: Mapping[str, Any]) -> dict[str, Any]:
        """Return the options merged with defaults; raise ValueError on unknown/bad ones."""
        unknown = sorted(set(options) - set(self.defaults))
        if unknown:
            raise ValueError(
                f"unknown option(s) {unknown} for offline baseline {self.name!r}; "
                f"known: {sorted(self.defaults)}"
            )
        out = {**self.defaults, **options}
        if "threshold" in out and not (
            isinstance(out["threshold"], int | float) and 0 <= out["threshold"] <= 1
        ):
            raise ValueError(f"threshold {out['threshold']!r} must be a number in [0, 1]")
        if "refusal_score" in out and not (
            isinstance(out["refusal_score"], int | float) and 0 <= out["refusal_score"] <= 1
        ):
            raise ValueError(f"refusal_score {out['refusal_score']!r} must be in [0, 1]")
        if "metric" in out and out["metric"] not in SIMILARITY:
            raise ValueError(f"metric {out['metric']!r} must be one of {sorted(SIMILARITY)}")
        if "unit" in out:
            try:
                lengths.count("probe", out["unit"])
            except lengths.LengthUnitError as exc:
                raise ValueError(str(exc)) from None
        return out


def _pick(score_a: float, score_b: float) -> str:
    return "A" if score_a > score_b else "B" if score_b > score_a else "tie"


def _prefer_longer(view: ItemView, order: int, cond: dict[str, str], opts: Mapping[str, Any]):
    a, b = view.pair(order)
    la, lb = lengths.count(a, opts["unit"]), lengths.count(b, opts["unit"])
    v = _pick(la, lb)
    return f"len(A)={la:g} len(B)={lb:g} {opts['unit']} -> {v}", Parsed(v, True, 1)


def _always_a(view: ItemView, order: int, cond: dict[str, str], opts: Mapping[str, Any]):
    view.pair(order)
    return "always A (positional control)", Parsed("A", True, 1)


def _ground_score(text: str, context: str, opts: Mapping[str, Any]) -> tuple[float, str]:
    if is_refusal(text):
        return float(opts["refusal_score"]), "refusal"
    return grounding(text, context), "answer"


def _lexical(view: ItemView, order: int, cond: dict[str, str], opts: Mapping[str, Any]):
    context = view.need("context")
    if view.row.get("task") == "pairwise":
        a, b = view.pair(order)
        (sa, ka), (sb, kb) = _ground_score(a, context, opts), _ground_score(b, context, opts)
        v = _pick(sa, sb)
        return f"grounding A={sa:.4f} ({ka}) B={sb:.4f} ({kb}) -> {v}", Parsed(v, True, 1)
    s, kind = _ground_score(view.candidate(cond), context, opts)
    return f"grounding={s:.4f} ({kind})", Parsed(f"{s:.4f}", True, 1, kind)


def _similarity(view: ItemView, order: int, cond: dict[str, str], opts: Mapping[str, Any]):
    ref = view.reference(cond if "reference" in cond else {**cond, "reference": "human"})
    if ref is None:
        raise NotApplicable("reference=none: reference similarity needs a reference")
    sim = SIMILARITY[opts["metric"]]
    if view.row.get("task") == "pairwise":
        a, b = view.pair(order)
        sa, sb = sim(a, ref), sim(b, ref)
        v = _pick(sa, sb)
        return f"{opts['metric']} A={sa:.4f} B={sb:.4f} -> {v}", Parsed(v, True, 1)
    s = sim(view.candidate(cond), ref)
    v = "Correct" if s >= opts["threshold"] else "Incorrect"
    return f"{opts['metric']}={s:.4f} threshold={opts['threshold']:g} -> {v}", Parsed(v, True, 1)


BASELINES: dict[str, Baseline] = {
    b.name: b
    for b in (
        Baseline(
            "prefer_longer",
            "picks the longer response (length bias baseline)",
            pairwise=True,
            pointwise=False,
            defaults={"unit": lengths.DEFAULT_UNIT},
            judge=_prefer_longer,
        ),
        Baseline(
            "always_a",
            "always picks position A (positional-bias control)",
            pairwise=True,
            pointwise=False,
            defaults={},
            judge=_always_a,
        ),
        Baseline(
            "lexical_grounding",
            "lexical grounding in the context with refusal detection (faithfulness proxy)",
            pairwise=True,
            pointwise=True,
            defaults={"refusal_score": 0.5},
            judge=_lexical,
            needs="context",
            gold_comparable=False,
        ),
        Baseline(
            "reference_similarity",
            "token-F1 / ROUGE-L against the reference (spec 001 §4.6 classifiers)",
            pairwise=True,
            pointwise=True,
            defaults={"metric": "token_f1", "threshold": 0.5},
            judge=_similarity,
            needs="reference",
            conditions=("reference=human",),
        ),
    )
}


def check_benchmark(items: pd.DataFrame, baseline: Baseline) -> None:
    """Raise `OfflineNotApplicable` when `baseline` cannot judge any item of `items`."""
    name = ",".join(sorted(map(str, items["benchmark"].unique()))) if len(items) else "?"
    tasks = set(items["task"]) if len(items) else set()
    usable = ({"pairwise"} if baseline.pairwise else set()) | (
        {"pointwise", "qa"} if baseline.pointwise else set()
    )
    if not tasks & usable:
        raise OfflineNotApplicable(
            f"offline baseline {baseline.name!r} judges {sorted(usable)} items; benchmark "
            f"{name!r} has only {sorted(tasks) or 'no'} items"
        )
    if baseline.needs:
        col = (
            items[baseline.needs] if baseline.needs in items.columns else pd.Series([], dtype=str)
        )
        has = col.astype(object).map(lambda v: isinstance(v, str) and bool(v.strip()))
        if not has.any():
            raise OfflineNotApplicable(
                f"offline baseline {baseline.name!r} needs a {baseline.needs} and no item of "
                f"benchmark {name!r} has one"
            )


def build(
    items: pd.DataFrame,
    *,
    name: str,
    options: Mapping[str, Any],
    judge_id: str,
    conditions: list[str] | None = None,
    orders: tuple[int, ...] = (0, 1),
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Judge every item with an offline baseline; return (judgment rows, detail rows).

    Raises:
        OfflineNotApplicable: the baseline does not apply to this benchmark at all.
    """
    from judgelab.judges.table import item_records, judge_row

    baseline = BASELINES[name]
    opts = baseline.check_options(options)
    check_benchmark(items, baseline)
    conds = conditions or list(baseline.conditions)
    rows: list[dict[str, Any]] = []
    details: list[dict[str, Any]] = []
    for row in item_records(items):
        view = ItemView(row)
        task = str(row["task"])
        pairwise = task == "pairwise"
        if (pairwise and not baseline.pairwise) or (not pairwise and not baseline.pointwise):
            continue
        for cond in conds:
            parsed_cond = parse_condition(cond)
            for order in orders if pairwise else (0,):
                try:
                    output, parsed = baseline.judge(view, order, parsed_cond, opts)
                except NotApplicable as exc:
                    output, parsed = f"not applicable: {exc}", Parsed(None, False, 0, str(exc))
                key = {
                    "benchmark": row["benchmark"],
                    "split": row["split"],
                    "item_id": row["item_id"],
                    "condition": cond,
                    "order": order,
                    "sample": 0,
                }
                verdicts = judge_row(
                    None, view, parsed, order=order, condition=cond, pairwise=pairwise
                )
                if not baseline.gold_comparable and not pairwise:
                    verdicts["correct"] = None  # a grounding score is not a gold label
                rows.append(
                    {
                        **key,
                        "judge": judge_id,
                        "model": f"offline:{name}",
                        "prompt": f"offline:{name}",
                        "output": output,
                        **verdicts,
                        "prompt_tokens": None,
                        "completion_tokens": None,
                        "latency_s": None,
                        "cost_usd": 0.0,
                        "request_key": None,
                        "created_at": None,
                    }
                )
                details.append(
                    {
                        **key,
                        "request_key": None,
                        "status": "answered" if parsed.valid else "not_applicable",
                        "finish_reason": None,
                        "n_verdict_tokens": parsed.n_tokens,
                        "note": parsed.note,
                    }
                )
    return rows, details
