"""The §6/§7 generation -> rating chain of Contextualized Evaluations, through the judge runner.

Every step is an items table judged by `judgelab.judges.runner.run` (the engine behind
`judgelab judge`), so every call is cached and a rerun pays nothing:

1. (optional) `filter_items` x `ce.attribute_filter`: keep (query, attribute) when all three
   answers are Yes (spec 002 §4.9); `kept_pairs` reads the verdicts;
2. `select_pairs`: up to `max_queries_per_attr` queries per attribute (the repo's
   `random.seed(4)`; `random.sample` per attribute in catalogue order);
3. `default_response_items` x `ce.response` (`context=without`): the default responses;
4. `rating_items` x `ce.default_relevance`: each default response rated 1-5 for every value
   of the attribute in one call (Table 15);
5. (optional, §7) `adapted_response_items` x `ce.response` (`context=with`, context =
   "<question> <value>") and `adapted_rating_items` x `ce.adapted_relevance`.

`run_chain` runs them all; with `write_tables` it also writes each step's items as
`paths.items()/<benchmark>.parquet`, so any step can be re-run by hand with
`judgelab judge --judge SPEC --benchmark <benchmark>`. The prompt pieces built from the
attribute catalogue (`attribute_line`, the `[CONTEXT]` of Table 8; `slug`, the split name) live
here; `judgelab.analyses.contexteval.ratings_table` turns the rating judgments into the long
table the 07 notebook analyses.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Sequence
from dataclasses import replace
from typing import Any, NamedTuple

import pandas as pd

from judgelab.core import locks, paths, schema, tables
from judgelab.core.names import safe_name
from judgelab.core.schema import read_meta
from judgelab.core.schema import require_columns as _require
from judgelab.judges import runner
from judgelab.judges.cache import RequestCache
from judgelab.judges.runner import Summary
from judgelab.judges.spec import JudgeSpec

BENCHMARKS = {
    "filter": "contexteval_attribute_filter",
    "defaults": "contexteval_defaults",
    "ratings": "contexteval_default_ratings",
    "adapted_responses": "contexteval_adapted_responses",
    "adapted_ratings": "contexteval_adapted_ratings",
}


def slug(attribute: str) -> str:
    """Return a file- and split-safe name of an attribute.

    >>> slug("Geographical / Regional Context")
    'geographical_regional_context'
    """
    return re.sub(r"[^a-z0-9]+", "_", attribute.lower()).strip("_")


def attribute_line(question: str, values: Sequence[str]) -> str:
    """Return the Table 8 line `Q: <question> A: ["v1", ...]` used as `[CONTEXT]` (§2.7).

    >>> attribute_line("Which age?", ["Children", "Seniors"])
    'Q: Which age? A: ["Children", "Seniors"]'
    """
    return f"Q: {question} A: {json.dumps(list(values), ensure_ascii=False)}"


class ChainResult(NamedTuple):
    """The tables of one chain run (None for steps not run) and the runner summaries."""

    filter: pd.DataFrame | None
    selected: pd.DataFrame
    responses: pd.DataFrame
    rating_items: pd.DataFrame
    ratings: pd.DataFrame
    adapted_responses: pd.DataFrame | None
    adapted_rating_items: pd.DataFrame | None
    adapted_ratings: pd.DataFrame | None
    summaries: list[Summary]

    @property
    def requested(self) -> int:
        """Return the number of requests sent to endpoints over the whole chain."""
        return sum(s.requested for s in self.summaries)


def _catalogue(attributes: pd.DataFrame) -> list[tuple[str, str, list[str]]]:
    _require(attributes, ["attribute", "question", "option", "option_index"], "attributes")
    out = []
    for attr, g in attributes.sort_values("option_index").groupby("attribute", sort=False):
        out.append((str(attr), str(g["question"].iloc[0]), g["option"].astype(str).tolist()))
    return out


def _queries(queries: pd.DataFrame) -> pd.DataFrame:
    _require(queries, ["item_id", "question"], "queries")
    q = queries[queries["question"].notna()]
    if "task" in q.columns:
        q = q[q["task"] == "qa"]
    return q.drop_duplicates("item_id").reset_index(drop=True)


def filter_items(
    queries: pd.DataFrame, attributes: pd.DataFrame, *, benchmark: str = BENCHMARKS["filter"]
) -> pd.DataFrame:
    """Return one qa item per (query, attribute) for the `ce.attribute_filter` template.

    Args:
        queries: Query items (`item_id` = query id, `question` = the query).
        attributes: Tidy attributes (`attribute, question, option, option_index`).
        benchmark: Benchmark name of the returned items.
    """
    rows = []
    for q in _queries(queries).itertuples(index=False):
        for attr, question, values in _catalogue(attributes):
            rows.append(
                {
                    "benchmark": benchmark,
                    "split": slug(attr),
                    "item_id": f"{q.item_id}|{slug(attr)}",
                    "task": "qa",
                    "question": q.question,
                    "context": attribute_line(question, values),
                    "meta": {"query_id": q.item_id, "attribute": attr},
                }
            )
    return schema.new_items(rows)


def kept_pairs(filter_judgments: pd.DataFrame, items: pd.DataFrame) -> pd.DataFrame:
    """Return the (query_id, attribute) pairs whose filter answers are all Yes (spec §4.9).

    Returns:
        `query_id, attribute, keep` for every judged item (invalid outputs: keep False).
    """
    meta = {i: read_meta(m) for i, m in zip(items["item_id"], items["meta"], strict=True)}
    rows = []
    for rec in filter_judgments.itertuples(index=False):
        m = meta[rec.item_id]
        answers = json.loads(rec.verdict) if rec.valid and isinstance(rec.verdict, str) else {}
        keep = bool(answers) and all(answers.get(k) == "Yes" for k in ("1", "2", "3"))
        rows.append({"query_id": m["query_id"], "attribute": m["attribute"], "keep": keep})
    return pd.DataFrame(rows, columns=["query_id", "attribute", "keep"])


def select_pairs(
    queries: pd.DataFrame,
    attributes: pd.DataFrame,
    *,
    kept: pd.DataFrame | None = None,
    max_queries_per_attr: int = 1000,
    seed: int = 4,
) -> pd.DataFrame:
    """Return the (query_id, attribute) pairs to rate: up to N kept queries per attribute.

    As the repo: one generator seeded once (`seed`), `sample(kept, min(N, len(kept)))` per
    attribute in catalogue order. Without `kept` every query is eligible.

    Returns:
        `query_id, attribute` in sampling order.
    """
    ids = _queries(queries)["item_id"].astype(str).tolist()
    rng = random.Random(seed)
    rows = []
    for attr, _, _ in _catalogue(attributes):
        if kept is None:
            pool = ids
        else:
            ok = kept[(kept["attribute"] == attr) & kept["keep"]]["query_id"].astype(str)
            pool = [i for i in ids if i in set(ok)]
        chosen = rng.sample(pool, min(max_queries_per_attr, len(pool)))
        rows += [{"query_id": q, "attribute": attr} for q in chosen]
    return pd.DataFrame(rows, columns=["query_id", "attribute"])


def default_response_items(
    queries: pd.DataFrame,
    *,
    query_ids: Sequence[str] | None = None,
    benchmark: str = BENCHMARKS["defaults"],
) -> pd.DataFrame:
    """Return one qa item per query for `ce.response` with `context=without` (defaults).

    Args:
        queries: Query items (`item_id` = query id, `question` = the query).
        query_ids: Only these queries (None: all).
        benchmark: Benchmark name of the returned items.
    """
    q = _queries(queries)
    if query_ids is not None:
        q = q[q["item_id"].isin(set(query_ids))]
    rows = [
        {
            "benchmark": benchmark,
            "split": "queries",
            "item_id": r.item_id,
            "task": "qa",
            "question": r.question,
            "meta": {"query_id": r.item_id},
        }
        for r in q.itertuples(index=False)
    ]
    return schema.new_items(rows)


def responses(judgments: pd.DataFrame) -> dict[str, str]:
    """Return item_id -> generated text of the valid greedy (sample 0) generations."""
    ok = judgments[judgments["valid"].astype(bool) & (judgments["sample"] == 0)]
    return dict(zip(ok["item_id"].astype(str), ok["verdict"].astype(str), strict=True))


def rating_items(
    queries: pd.DataFrame,
    attributes: pd.DataFrame,
    default_responses: pd.DataFrame,
    *,
    selected: pd.DataFrame | None = None,
    benchmark: str = BENCHMARKS["ratings"],
) -> pd.DataFrame:
    """Return one qa item per (query, attribute) for `ce.default_relevance` (Table 15).

    Args:
        queries: Query items.
        attributes: Tidy attributes.
        default_responses: `ce.response` judgments of `default_response_items`; queries
            without a valid response are left out.
        selected: The (query_id, attribute) pairs to rate (None: every query x attribute).
        benchmark: Benchmark name of the returned items.

    Returns:
        Items with `response` = the default response, `context` = the attribute line, and
        `meta` = `query_id, attribute, values, followup_question, response_judge`.
    """
    text = responses(default_responses)
    judge = str(default_responses["judge"].iloc[0]) if len(default_responses) else ""
    q = _queries(queries).set_index("item_id")["question"]
    cat = {a: (question, values) for a, question, values in _catalogue(attributes)}
    pairs = (
        selected
        if selected is not None
        else pd.DataFrame(
            [(i, a) for i in q.index for a in cat], columns=["query_id", "attribute"]
        )
    )
    rows = []
    for qid, attr in pairs.itertuples(index=False):
        if qid not in text:
            continue
        question, values = cat[attr]
        rows.append(
            {
                "benchmark": benchmark,
                "split": slug(attr),
                "item_id": f"{qid}|{slug(attr)}",
                "task": "qa",
                "question": q[qid],
                "context": attribute_line(question, values),
                "response": text[qid],
                "meta": {
                    "query_id": qid,
                    "attribute": attr,
                    "values": values,
                    "followup_question": question,
                    "response_judge": judge,
                },
            }
        )
    return schema.new_items(rows)


def adapted_response_items(
    queries: pd.DataFrame,
    attributes: pd.DataFrame,
    selected: pd.DataFrame,
    *,
    benchmark: str = BENCHMARKS["adapted_responses"],
) -> pd.DataFrame:
    """Return one qa item per (query, attribute, value) for `ce.response` with `context=with`.

    The context is the repo's `"<question> <value>"` (spec 002 §2.8).
    """
    q = _queries(queries).set_index("item_id")["question"]
    cat = {a: (question, values) for a, question, values in _catalogue(attributes)}
    rows = []
    for qid, attr in selected.itertuples(index=False):
        question, values = cat[attr]
        for k, v in enumerate(values):
            rows.append(
                {
                    "benchmark": benchmark,
                    "split": slug(attr),
                    "item_id": f"{qid}|{slug(attr)}|{k}",
                    "task": "qa",
                    "question": q[qid],
                    "context": f"{question} {v}",
                    "meta": {"query_id": qid, "attribute": attr, "values": values, "value": v},
                }
            )
    return schema.new_items(rows)


def adapted_rating_items(
    adapted_items: pd.DataFrame,
    adapted_responses: pd.DataFrame,
    *,
    benchmark: str = BENCHMARKS["adapted_ratings"],
) -> pd.DataFrame:
    """Return the adapted-response items with their responses, for `ce.adapted_relevance`."""
    text = responses(adapted_responses)
    out = adapted_items[adapted_items["item_id"].isin(set(text))].copy()
    out["response"] = [text[i] for i in out["item_id"]]
    out["benchmark"] = benchmark
    return schema.new_items(out.reset_index(drop=True))


def _check_template(spec: JudgeSpec, template: str, role: str) -> JudgeSpec:
    if spec.is_offline:
        raise ValueError(f"{role}: an offline baseline cannot generate or rate; use a model")
    if spec.template is None:
        return replace(spec, template=template)
    if spec.template != template:
        raise ValueError(f"{role}: spec template is {spec.template!r}, expected {template!r}")
    return spec


def _step(
    items: pd.DataFrame, spec: JudgeSpec, condition: str, opts: dict[str, Any], log: list
) -> pd.DataFrame:
    if len(items) == 0:
        return schema.empty(schema.JUDGMENTS)
    if opts["write_tables"]:
        bench = str(items["benchmark"].iloc[0])
        path = paths.items() / f"{safe_name('benchmark', bench)}.parquet"
        with locks.locked_targets([path]):  # issue 32 (1): never mid-way through an import
            tables.write_items(items, path)
    res = runner.run(
        items,
        replace(spec, orders=(0,)),
        conditions=[condition],
        cache=opts["cache"],
        progress=opts["progress"],
        write_tables=opts["write_tables"],
    )
    log.append(res.summary)
    return res.judgments


def run_chain(
    queries: pd.DataFrame,
    attributes: pd.DataFrame,
    *,
    generator: JudgeSpec,
    rater: JudgeSpec,
    filter_judge: JudgeSpec | None = None,
    adapted: bool = False,
    max_queries_per_attr: int = 1000,
    seed: int = 4,
    cache: RequestCache | None = None,
    progress: bool = True,
    write_tables: bool = True,
) -> ChainResult:
    """Run filter (optional) -> default responses -> ratings (-> adapted responses/ratings).

    Args:
        queries: Query items (`item_id` = query id, `question` = the query).
        attributes: Tidy attributes (`attribute, question, option, option_index`).
        generator: The candidate model (template `ce.response`, set when missing).
        rater: The evaluator (template `ce.default_relevance`, set when missing; the
            adapted step uses the same model with `ce.adapted_relevance`).
        filter_judge: The filter model (`ce.attribute_filter`); None rates every query for
            every attribute (up to `max_queries_per_attr`).
        adapted: Also run the §7 adapted responses and their ratings.
        max_queries_per_attr: Queries sampled per attribute (the paper: 1000).
        seed: Sampling seed (the repo: 4).
        cache: The request cache (default: `paths.cache()/requests.sqlite`).
        progress: Show progress bars.
        write_tables: Write every step's items and judgments under `paths.items()` and
            `paths.judgments()`.
    """
    gen = _check_template(generator, "ce.response", "generator")
    rate = _check_template(rater, "ce.default_relevance", "rater")
    own = cache is None
    cache = cache or RequestCache()
    opts = {"cache": cache, "progress": progress, "write_tables": write_tables}
    log: list[Summary] = []
    try:
        filt = kept = None
        if filter_judge is not None:
            fspec = _check_template(filter_judge, "ce.attribute_filter", "filter_judge")
            fitems = filter_items(queries, attributes)
            filt = _step(fitems, fspec, "", opts, log)
            kept = kept_pairs(filt, fitems)
        selected = select_pairs(
            queries, attributes, kept=kept, max_queries_per_attr=max_queries_per_attr, seed=seed
        )
        d_items = default_response_items(queries, query_ids=selected["query_id"].unique())
        defaults = _step(d_items, gen, "context=without", opts, log)
        r_items = rating_items(queries, attributes, defaults, selected=selected)
        ratings = _step(r_items, rate, "", opts, log)
        a_resp = a_items = a_ratings = None
        if adapted:
            a_gen_items = adapted_response_items(queries, attributes, selected)
            a_resp = _step(a_gen_items, gen, "context=with", opts, log)
            a_items = adapted_rating_items(a_gen_items, a_resp)
            a_spec = replace(rate, template="ce.adapted_relevance", id=None)
            a_ratings = _step(a_items, a_spec, "", opts, log)
    finally:
        if own:
            cache.close()
    return ChainResult(filt, selected, defaults, r_items, ratings, a_resp, a_items, a_ratings, log)
