"""Which judging method agrees with humans on faithfulness (spec 004 §2.2–2.5, Table 1).

Three methods (spec 004 §2): **Baseline** (direct scoring: each candidate scored alone, the
higher score preferred), **Ranking** (both candidates in one prompt), **Ragas** (granular
decomposition: F = |V|/|S| over statements, AR = mean cosine of generated questions, CR =
essential / all context sentences). Human alignment is the share of contrastive pairs in
which the method prefers the human-preferred candidate (spec 004 §2.5).

Pairs from FaithBench (`faithbench_pairs`). FaithBench has 10 summaries (by different LLMs)
of each of 75 source documents, each labelled by humans; a *pair* is two summaries **of the
same source** whose human labels differ, and the human-preferred member is the one judged
faithful (`by="gold"`: Consistent over Hallucinated) or the less severe one (`by="severity"`:
Consistent > Benign > Questionable > Unwanted, the importer's `worst_label`). `pairing="all"`
takes every such pair (summaries then recur across pairs, so pairs of one source are not
independent: the source-clustered bootstrap interval accounts for that, the Wilson and exact
intervals do not); `pairing="disjoint"` uses each summary at most once (seeded matching).

Methods on those pairs:
- the detector / LLM-judge verdicts FaithBench ships (`judgment_scores`): each summary is
  judged alone, so they are direct scoring (Baseline); binary verdicts tie often, which is
  why the tie policy matters;
- offline baselines (no model): `lexical` Baseline (share of the summary's content tokens
  found in the source, `offline.grounding`) and the `decomposition` Ragas analogue (split the
  summary into sentences = statements; a statement is supported when its grounding is at
  least `support`; F = |V|/|S|);
- model runs of the `ragas.*` templates over the pair items (`pair_items`, written with
  `write_pair_items`) read back by `template_preferences`.

Tie policies (spec 004 §2.2): `miss` (a tie counts as not aligned; reproduces the paper's
near-0 % cells), `half` (half a success), `random` (a seeded coin). An unparseable verdict
is always a miss.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy import stats as sps

from judgelab.core import schema, stats, tables
from judgelab.core.schema import require_columns as _need
from judgelab.data import targets
from judgelab.data.importers.faithbench import worst_label
from judgelab.judges import offline, parsers

METRICS = ("faithfulness", "answer_relevance", "context_relevance")
#: Table 1 column labels of each metric.
METRIC_LABELS = {
    "faithfulness": "Faithfulness",
    "answer_relevance": "Answer Relevancy",
    "context_relevance": "Context Relevancy",
}
METHODS = ("Ragas", "Baseline", "Ranking")
TIE_POLICIES = ("miss", "half", "random")
EMPTY_POLICIES = ("nan", "zero", "one")
PAIR_BY = ("gold", "severity")
PAIRINGS = ("all", "disjoint")
#: The ragas.* template behind each method (spec 004 §2.2–2.4).
TEMPLATE_METHOD = {
    "ragas.direct": "Baseline",
    "ragas.compare": "Ranking",
    "ragas.faithfulness": "Ragas",
    "ragas.context_relevance": "Ragas",
}
SEVERITY = {"Consistent": 0, "Benign": 1, "Questionable": 2, "Unwanted": 3}
PAIR_COLUMNS = ("pair_id", "group", "metric", "item_pos", "item_neg", "label_pos", "label_neg")
PREF_COLUMNS = ("pair_id", "group", "metric", "judge", "method", "score_pos", "score_neg", "pref")
#: The instruction FaithBench's summarisers answered (pair items need a question).
SUMMARY_QUESTION = "Summarize the source document."


def _check(name: str, value: str, allowed: Sequence[str]) -> None:
    if value not in allowed:
        raise ValueError(f"{name} {value!r} must be one of {list(allowed)}")


# ---------------------------------------------------------------- the Ragas formulas


def faithfulness_score(n_supported: int, n_statements: int, *, empty_policy: str = "nan") -> float:
    """Return F = |V| / |S| (spec 004 §2.4); `empty_policy` decides |S| = 0 (nan, zero, one).

    >>> faithfulness_score(3, 4)
    0.75
    """
    _check("empty_policy", empty_policy, EMPTY_POLICIES)
    if n_supported < 0 or n_statements < 0 or n_supported > n_statements:
        raise ValueError(f"need 0 <= supported <= statements, got {n_supported}/{n_statements}")
    if n_statements == 0:
        return {"nan": math.nan, "zero": 0.0, "one": 1.0}[empty_policy]
    return n_supported / n_statements


def answer_relevance_score(
    cosines: Sequence[float], *, noncommittal: Sequence[int] = (), zeroing: bool = False
) -> float:
    """Return AR = (1/n) Σ cos(q, q'_i), zeroed when any answer is noncommittal and `zeroing`.

    Cosines are kept raw (they may be negative); no generated question gives NaN.

    >>> answer_relevance_score([0.9, 0.6, 0.3])
    0.6
    """
    if len(cosines) == 0:
        return math.nan
    score = float(np.mean(np.asarray(cosines, dtype=float)))
    return 0.0 if zeroing and any(int(x) for x in noncommittal) else score


def context_relevance_score(n_extracted: int, n_sentences: int) -> float:
    """Return CR = min(extracted / context sentences, 1); an empty context scores 0 (Ragas lib).

    >>> context_relevance_score(2, 8)
    0.25
    """
    if n_extracted < 0 or n_sentences < 0:
        raise ValueError("sentence counts must be non-negative")
    return 0.0 if n_sentences == 0 else min(n_extracted / n_sentences, 1.0)


def bow_cosine(a: str, b: str) -> float:
    """Return the cosine of the content-token count vectors of two texts (0 when one is empty).

    >>> round(bow_cosine("red apple pie", "apple pie recipe"), 4)  # 2 / (√3 · √3)
    0.6667
    """
    ca, cb = pd.Series(offline.content_tokens(a)), pd.Series(offline.content_tokens(b))
    va, vb = ca.value_counts(), cb.value_counts()
    if va.empty or vb.empty:
        return 0.0
    dot = float((va * vb.reindex(va.index, fill_value=0)).sum())
    return dot / math.sqrt(float((va**2).sum()) * float((vb**2).sum()))


# ---------------------------------------------------------------- offline decomposition


def decompose_faithfulness(
    response: str, context: str, *, support: float = 0.5, empty_policy: str = "nan"
) -> tuple[int, int, float]:
    """Offline Ragas-F analogue: sentences as statements, lexical grounding as verification.

    A statement (one sentence of `response`, `parsers.split_sentences`) is supported when at
    least `support` of its content tokens occur in `context` (`offline.grounding`).

    Returns:
        (|V|, |S|, F).

    >>> decompose_faithfulness("The mill closed. Aliens bought it.", "The mill closed in 1990.")
    (1, 2, 0.5)
    """
    statements = parsers.split_sentences(response or "")
    supported = sum(offline.grounding(s, context) >= support for s in statements)
    return (
        supported,
        len(statements),
        faithfulness_score(supported, len(statements), empty_policy=empty_policy),
    )


def decompose_context_relevance(
    question: str, context: str, *, support: float = 0.5
) -> tuple[int, int, float]:
    """Offline Ragas-CR analogue: essential sentences by lexical overlap with the question.

    A context sentence is essential when it holds at least `support` of the question's
    content tokens.

    Returns:
        (essential sentences, context sentences, CR).

    >>> decompose_context_relevance("When did the mill close?",
    ...     "The mill closed in 1990. Bread is tasty. Rain fell.")
    (1, 3, 0.3333333333333333)
    """
    sentences = parsers.split_sentences(context or "")
    essential = sum(offline.grounding(question, s) >= support for s in sentences)
    return essential, len(sentences), context_relevance_score(essential, len(sentences))


def lexical_answer_relevance(question: str, answer: str, *, zeroing: bool = True) -> float:
    """Offline AR stand-in: bag-of-words cosine of question and answer; refusals score 0.

    The question-generation step needs a model and an embedder; this keeps the AR shape
    (similarity to the question, noncommittal answers zeroed via `offline.is_refusal`).

    >>> lexical_answer_relevance("When did the mill close?", "I cannot answer that.")
    0.0
    """
    return answer_relevance_score(
        [bow_cosine(question, answer)], noncommittal=[offline.is_refusal(answer)], zeroing=zeroing
    )


def offline_scores(
    items: pd.DataFrame,
    *,
    support: float = 0.5,
    refusal_score: float = 0.5,
    empty_policy: str = "nan",
) -> pd.DataFrame:
    """Score every pointwise item's response against its context with the offline baselines.

    Args:
        items: Pointwise items with `context` and `response` (FaithBench: source, summary).
        support: Grounding a statement needs to count as supported (decomposition).
        refusal_score: Score of a refusal under the whole-response lexical baseline.
        empty_policy: F of a response with no statement (`nan` → invalid, `zero`, `one`).

    Returns:
        Long: `item_id`, `judge` (`offline-lexical` / `offline-decomposition`), `method`
        (`Baseline` / `Ragas`), `metric` (`faithfulness`), `score`, `n_supported`,
        `n_statements` (decomposition only).
    """
    _need(items, ["item_id", "context", "response"], "items")
    rows = []
    for iid, ctx, resp in zip(items["item_id"], items["context"], items["response"], strict=True):
        ctx, resp = str(ctx or ""), str(resp or "")
        lex = refusal_score if offline.is_refusal(resp) else offline.grounding(resp, ctx)
        rows.append(
            {
                "item_id": iid,
                "judge": "offline-lexical",
                "method": "Baseline",
                "metric": "faithfulness",
                "score": lex,
                "n_supported": np.nan,
                "n_statements": np.nan,
            }
        )
        v, s, f = decompose_faithfulness(resp, ctx, support=support, empty_policy=empty_policy)
        rows.append(
            {
                "item_id": iid,
                "judge": "offline-decomposition",
                "method": "Ragas",
                "metric": "faithfulness",
                "score": f,
                "n_supported": v,
                "n_statements": s,
            }
        )
    return pd.DataFrame(rows)


def judgment_scores(judgments: pd.DataFrame, *, method: str = "Baseline") -> pd.DataFrame:
    """Turn pointwise faithfulness verdicts into scores (higher = more faithful).

    The raw `output` is used when it is a number in [0, 1] (FaithBench's detectors: 0/1 or a
    probability such as HHEM's), else the verdict (Consistent = 1, Hallucinated = 0); an
    invalid row scores NaN.

    Returns:
        Long: `item_id`, `judge`, `method`, `metric` (`faithfulness`), `score`.
    """
    _need(judgments, ["item_id", "judge", "output", "verdict", "valid"], "judgments")

    def score(out: object, verdict: object, valid: object) -> float:
        if not bool(valid):
            return math.nan
        try:
            x = float(str(out))
        except (TypeError, ValueError):
            x = math.nan
        if 0 <= x <= 1:
            return x
        return {"Consistent": 1.0, "Hallucinated": 0.0}.get(str(verdict), math.nan)

    return pd.DataFrame(
        {
            "item_id": judgments["item_id"].to_numpy(),
            "judge": judgments["judge"].to_numpy(),
            "method": method,
            "metric": "faithfulness",
            "score": [
                score(o, v, ok)
                for o, v, ok in zip(
                    judgments["output"], judgments["verdict"], judgments["valid"], strict=True
                )
            ],
        }
    )


def faithbench_scores(
    items: pd.DataFrame,
    judgments: pd.DataFrame | None,
    *,
    support: float = 0.5,
    refusal_score: float = 0.5,
    empty_policy: str = "nan",
) -> pd.DataFrame:
    """Scores of every summary: the shipped verdicts (Baseline) plus the offline baselines.

    Returns:
        Long: `item_id`, `judge`, `method`, `metric`, `score` (see `judgment_scores`,
        `offline_scores`).
    """
    parts = [
        offline_scores(
            items, support=support, refusal_score=refusal_score, empty_policy=empty_policy
        )[["item_id", "judge", "method", "metric", "score"]]
    ]
    if judgments is not None and len(judgments):
        parts.insert(0, judgment_scores(judgments))
    return pd.concat(parts, ignore_index=True)


# ---------------------------------------------------------------- pairs


def pair_summary(pairs: pd.DataFrame) -> pd.DataFrame:
    """Count pairs, sources and distinct summaries per metric and label combination.

    Returns:
        One row per (`metric`, `label_pos`, `label_neg`): `pairs`, `sources`, `summaries`.
    """
    _need(pairs, list(PAIR_COLUMNS), "pairs")
    rows = []
    for key, g in pairs.groupby(["metric", "label_pos", "label_neg"], sort=True):
        rows.append(
            {
                "metric": key[0],
                "label_pos": key[1],
                "label_neg": key[2],
                "pairs": len(g),
                "sources": g["group"].nunique(),
                "summaries": len(set(g["item_pos"]) | set(g["item_neg"])),
            }
        )
    return pd.DataFrame(
        rows, columns=["metric", "label_pos", "label_neg", "pairs", "sources", "summaries"]
    )


def faithbench_pairs(
    items: pd.DataFrame, *, by: str = "gold", pairing: str = "all", seed: int = 0
) -> pd.DataFrame:
    """Build contrastive pairs: two summaries of the same source with different human labels.

    Args:
        items: FaithBench items (`context` = source document, `gold` =
            Consistent/Hallucinated, `meta.annotations` for `by="severity"`).
        by: `gold` (Consistent preferred over Hallucinated) or `severity` (the less severe
            worst label preferred: Consistent > Benign > Questionable > Unwanted).
        pairing: `all` cross-label pairs of a source, or `disjoint` (each summary used at
            most once; seeded random matching per source).
        seed: Seed of the disjoint matching.

    Returns:
        The columns of `PAIR_COLUMNS`: `group` numbers the source documents, `item_pos` is
        the human-preferred summary, `label_*` the labels compared.
    """
    _check("by", by, PAIR_BY)
    _check("pairing", pairing, PAIRINGS)
    _need(items, ["item_id", "context", "gold", "meta"], "items")
    df = items[["item_id", "context", "gold", "meta"]].copy()
    if by == "gold":
        df["label"] = df["gold"].astype(str)
        df["rank"] = df["label"].map({"Consistent": 0, "Hallucinated": 1})
    else:

        def worst(meta: object) -> str:
            m = json.loads(meta) if isinstance(meta, str) else (meta or {})
            if "worst_label" in m:
                return str(m["worst_label"])
            labels = [lab for a in m.get("annotations") or [] for lab in a.get("label") or []]
            return worst_label(labels)

        df["label"] = df["meta"].map(worst)
        df["rank"] = df["label"].map(SEVERITY)
    if df["rank"].isna().any():
        bad = df.loc[df["rank"].isna(), ["item_id", "label"]].iloc[0].tolist()
        raise ValueError(f"item {bad[0]!r}: label {bad[1]!r} cannot be ordered (by={by!r})")
    groups = {c: i for i, c in enumerate(dict.fromkeys(df["context"]))}
    rows = []
    for ctx, g in df.groupby("context", sort=False):
        gid = groups[ctx]
        recs = g.sort_values("item_id", kind="stable").to_dict("records")
        if pairing == "all":
            cand = [(a, b) for a in recs for b in recs if a["rank"] < b["rank"]]
        else:
            rng = stats.rng_for(seed, "disjoint", gid)
            order = list(rng.permutation(len(recs)))
            free, cand = [recs[i] for i in order], []
            while True:
                best = next(
                    (
                        (a, b)
                        for i, a in enumerate(free)
                        for b in free[i + 1 :]
                        if a["rank"] != b["rank"]
                    ),
                    None,
                )
                if best is None:
                    break
                a, b = best
                free = [r for r in free if r is not a and r is not b]
                cand.append((a, b) if a["rank"] < b["rank"] else (b, a))
        for a, b in cand:
            rows.append(
                {
                    "pair_id": f"{a['item_id']}>{b['item_id']}",
                    "group": gid,
                    "metric": "faithfulness",
                    "item_pos": a["item_id"],
                    "item_neg": b["item_id"],
                    "label_pos": a["label"],
                    "label_neg": b["label"],
                }
            )
    return pd.DataFrame(rows, columns=list(PAIR_COLUMNS))


def pointwise_preferences(scores: pd.DataFrame, pairs: pd.DataFrame) -> pd.DataFrame:
    """Compare the scores of each pair's two members (direct scoring, spec 004 §2.2).

    Args:
        scores: Long scores (`item_id`, `judge`, `method`, `score`; NaN = invalid); one
            score per item and judge.
        pairs: Output of `faithbench_pairs`.

    Returns:
        One row per pair × judge with the columns of `PREF_COLUMNS`; `pref` is `pos`, `neg`,
        `tie`, or `invalid` (either score missing).
    """
    _need(scores, ["item_id", "judge", "method", "score"], "scores")
    _need(pairs, list(PAIR_COLUMNS), "pairs")
    if scores.duplicated(["item_id", "judge"]).any():
        first = scores.loc[scores.duplicated(["item_id", "judge"]), ["item_id", "judge"]]
        raise ValueError(f"several scores for one item and judge: {first.iloc[0].tolist()}")
    out = []
    for (judge, method), s in scores.groupby(["judge", "method"], sort=True):
        by_item = s.set_index("item_id")["score"]
        pos = pairs["item_pos"].map(by_item).astype(float)
        neg = pairs["item_neg"].map(by_item).astype(float)
        pref = np.select(
            [pos.isna() | neg.isna(), pos > neg, pos < neg], ["invalid", "pos", "neg"], "tie"
        )
        out.append(
            pairs[["pair_id", "group", "metric"]].assign(
                judge=judge, method=method, score_pos=pos, score_neg=neg, pref=pref
            )
        )
    if not out:
        return pd.DataFrame(columns=list(PREF_COLUMNS))
    return pd.concat(out, ignore_index=True)[list(PREF_COLUMNS)]


def pair_items(
    items: pd.DataFrame,
    pairs: pd.DataFrame,
    *,
    benchmark: str | None = None,
    question: str = SUMMARY_QUESTION,
) -> pd.DataFrame:
    """Return the pairs as pairwise items for the `ragas.*` templates (`judgelab judge`).

    `item_id` is the `pair_id`, `response_pos` the human-preferred summary, `context` the
    source, `question` the summarisation instruction, `meta.metric` the metric. The
    benchmark is named `<items benchmark>_pairs` unless `benchmark` is given.
    """
    _need(items, ["benchmark", "item_id", "context", "response"], "items")
    if benchmark is None:
        benchmark = f"{items['benchmark'].iloc[0]}_pairs" if len(items) else "pairs"
    by_id = items.set_index("item_id")
    rows = [
        {
            "benchmark": benchmark,
            "split": p["metric"],
            "item_id": p["pair_id"],
            "task": "pairwise",
            "question": question,
            "context": by_id.at[p["item_pos"], "context"],
            "response_pos": by_id.at[p["item_pos"], "response"],
            "response_neg": by_id.at[p["item_neg"], "response"],
            "gold": "pos",
            "meta": {
                "metric": p["metric"],
                "group": int(p["group"]),
                "item_pos": p["item_pos"],
                "item_neg": p["item_neg"],
                "labels": [p["label_pos"], p["label_neg"]],
            },
        }
        for p in pairs.to_dict("records")
    ]
    return schema.new_items(rows)


def write_pair_items(pair_table: pd.DataFrame) -> str:
    """Write pair items as an imported benchmark (`data/items/<benchmark>.parquet`).

    Returns:
        The benchmark name to pass to `judgelab judge --benchmark`.
    """
    from judgelab.core import paths

    names = pair_table["benchmark"].unique()
    if len(names) != 1:
        raise ValueError(f"pair items must hold one benchmark, got {list(names)}")
    tables.write_items(pair_table, paths.items() / f"{names[0]}.parquet")
    return str(names[0])


def template_preferences(
    judgments: pd.DataFrame, pair_table: pd.DataFrame, *, orders: str = "consensus"
) -> pd.DataFrame:
    """Preferences from `ragas.*` runs over pair items (see `pair_items`).

    `ragas.compare` (Ranking) gives `chosen` per order: `orders="consensus"` keeps a choice
    both orders agree on and calls a disagreement a tie; `"0"` / `"1"` use one order. The
    score templates (`ragas.direct`, `ragas.faithfulness`, `ragas.context_relevance`) score
    each candidate alone (`candidate=pos|neg` conditions); the higher score is preferred.

    Returns:
        The columns of `PREF_COLUMNS`.
    """
    _check("orders", orders, ("consensus", "0", "1"))
    _need(judgments, ["item_id", "judge", "prompt", "condition", "order", "verdict", "valid"], "j")
    meta = pair_table.set_index("item_id")["meta"].map(
        lambda m: json.loads(m) if isinstance(m, str) else m
    )
    out = []
    for (judge, prompt), j in judgments.groupby(["judge", "prompt"], sort=True):
        if prompt not in TEMPLATE_METHOD:
            continue
        j = j[j["item_id"].isin(meta.index)]
        if prompt == "ragas.compare":
            chosen = j.assign(c=np.where(j["valid"].astype(bool), j["chosen"], None))
            wide = chosen.pivot_table(
                index="item_id", columns="order", values="c", aggfunc="first"
            )
            if orders == "consensus":
                a, b = wide.get(0), wide.get(1)
                pref = pd.Series(
                    [
                        "invalid"
                        if x is None or y is None or pd.isna(x) or pd.isna(y)
                        else (x if x == y else "tie")
                        for x, y in zip(a, b, strict=True)
                    ]
                    if a is not None and b is not None
                    else ["invalid"] * len(wide),
                    index=wide.index,
                )
            else:
                col = wide.get(int(orders))
                pref = (
                    col.map(lambda v: "invalid" if v is None or pd.isna(v) else v)
                    if col is not None
                    else pd.Series("invalid", index=wide.index)
                )
            sp = sn = pd.Series(np.nan, index=wide.index)
        else:
            cand = j["condition"].str.extract(r"candidate=(pos|neg)")[0]
            val = pd.to_numeric(j["verdict"].where(j["valid"].astype(bool)), errors="coerce")
            s = pd.DataFrame({"item_id": j["item_id"], "cand": cand, "v": val})
            wide = s.pivot_table(index="item_id", columns="cand", values="v", aggfunc="first")
            sp = wide.get("pos", pd.Series(np.nan, index=wide.index))
            sn = wide.get("neg", pd.Series(np.nan, index=wide.index))
            pref = pd.Series(
                np.select(
                    [sp.isna() | sn.isna(), sp > sn, sp < sn], ["invalid", "pos", "neg"], "tie"
                ),
                index=wide.index,
            )
        ids = pref.index
        out.append(
            pd.DataFrame(
                {
                    "pair_id": ids,
                    "group": [meta[i].get("group") for i in ids],
                    "metric": [meta[i].get("metric") for i in ids],
                    "judge": judge,
                    "method": TEMPLATE_METHOD[prompt],
                    "score_pos": sp.reindex(ids).to_numpy(),
                    "score_neg": sn.reindex(ids).to_numpy(),
                    "pref": pref.to_numpy(),
                }
            )
        )
    if not out:
        return pd.DataFrame(columns=list(PREF_COLUMNS))
    return pd.concat(out, ignore_index=True)[list(PREF_COLUMNS)]


# ---------------------------------------------------------------- human alignment


def _exact_ci(k: float, n: int, level: float) -> tuple[float, float]:
    if n == 0 or k != int(k):
        return math.nan, math.nan
    ci = sps.binomtest(int(k), n).proportion_ci(confidence_level=level, method="exact")
    return float(ci.low), float(ci.high)


def alignment(
    prefs: pd.DataFrame,
    *,
    tie_policy: str = "miss",
    by: Sequence[str] = ("judge", "method", "metric"),
    n_boot: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> pd.DataFrame:
    """Human alignment: the share of pairs where the method prefers the human-preferred item.

    Args:
        prefs: Preferences (`pointwise_preferences` / `template_preferences`); `pref` is
            pos (aligned), neg, tie or invalid; `group` clusters pairs (FaithBench source).
        tie_policy: `miss` (a tie counts 0), `half` (0.5) or `random` (a seeded coin per
            tie); invalid verdicts always count 0.
        by: Group columns.
        n_boot: Bootstrap resamples of the source-clustered interval.
        seed: Seed of the random tie-break and of the bootstrap.
        level: Confidence level of every interval.

    Returns:
        One row per group: the `by` columns, `n` (pairs), `aligned` (successes; fractional
        under `half`), `ties`, `invalid`, `alignment`, `wilson_low/high`, `exact_low/high`
        (Clopper–Pearson; NaN for a fractional count), `boot_low/high` (bootstrap over
        `group` clusters), `p_value` (exact sign test of pos vs neg among decided pairs,
        against 50 %), `tie_policy`.
    """
    _check("tie_policy", tie_policy, TIE_POLICIES)
    _need(prefs, [*by, "pref", "group"], "preferences")
    rows = []
    for key, g in prefs.groupby(list(by), sort=True, observed=True):
        key = key if isinstance(key, tuple) else (key,)
        pref = g["pref"].to_numpy()
        ties = pref == "tie"
        success = (pref == "pos").astype(float)
        if tie_policy == "half":
            success[ties] = 0.5
        elif tie_policy == "random":
            rng = stats.rng_for(seed, "ties", *key)
            success[ties] = rng.integers(0, 2, size=int(ties.sum()))
        n = len(pref)
        k = float(success.sum())
        wl, wh = stats.wilson_interval(k, n, level=level)
        el, eh = _exact_ci(k, n, level)
        groups = g["group"].to_numpy()
        uniq, inv = np.unique(groups, return_inverse=True)
        per = np.zeros((len(uniq), 2))
        np.add.at(per, inv, np.column_stack([success, np.ones(n)]))
        sums = stats.bootstrap_sums(per, n_boot=n_boot, rng=stats.rng_for(seed, "boot", *key))
        bl, bh = stats.percentile_interval(
            stats.ratio_replicates(sums[:, 0], sums[:, 1]), level=level
        )
        n_pos, n_neg = int((pref == "pos").sum()), int((pref == "neg").sum())
        rows.append(
            {
                **dict(zip(by, key, strict=True)),
                "n": n,
                "aligned": k,
                "ties": int(ties.sum()),
                "invalid": int((pref == "invalid").sum()),
                "alignment": k / n if n else math.nan,
                "wilson_low": float(wl),
                "wilson_high": float(wh),
                "exact_low": el,
                "exact_high": eh,
                "boot_low": float(bl),
                "boot_high": float(bh),
                "p_value": stats.sign_test(n_pos, n_pos + n_neg).p_value,
                "tie_policy": tie_policy,
            }
        )
    return pd.DataFrame(rows)


def alignment_by_tie_policy(prefs: pd.DataFrame, **kwargs: object) -> pd.DataFrame:
    """Return `alignment` under every tie policy, stacked (column `tie_policy`)."""
    return pd.concat(
        [alignment(prefs, tie_policy=p, **kwargs) for p in TIE_POLICIES],  # type: ignore[arg-type]
        ignore_index=True,
    )


def _cell(a: float, lo: float, hi: float, n: float) -> str:
    if pd.isna(a):
        return ""
    ci = f" [{100 * lo:.0f}–{100 * hi:.0f}]" if pd.notna(lo) and pd.notna(hi) else ""
    size = f" n={int(n)}" if pd.notna(n) else ""
    return f"{100 * a:.1f}{ci}{size}"


def table1(
    aligned: pd.DataFrame,
    *,
    ci: str = "wilson",
    with_paper: bool = True,
    level: float = 0.95,
    targets_root: str | None = None,
) -> pd.DataFrame:
    """The paper's Table 1 layout: alignment % [CI] n per judge × method (rows) and metric.

    Args:
        aligned: Output of `alignment` (by judge, method, metric).
        ci: Interval shown: `wilson`, `exact` or `boot`.
        with_paper: Add the paper's rows (Romanian and English) from
            `data/targets/ragas_romanian/table1.csv`; the Romanian cells get the Wilson
            interval at the paper's n = 100.
        level: Confidence level of the paper rows' intervals.
        targets_root: Folder of the target CSVs (default: the project's).

    Returns:
        One row per (source, judge, method): `source`, `judge`, `method`, then one text
        column per metric label (`Faithfulness`, `Answer Relevancy`, `Context Relevancy`);
        empty where the metric was not measured.
    """
    _check("ci", ci, ("wilson", "exact", "boot"))
    labels = list(METRIC_LABELS.values())
    rows = []
    for (judge, method), g in aligned.groupby(["judge", "method"], sort=True):
        row = {"source": "yours", "judge": judge, "method": method}
        for m, lab in METRIC_LABELS.items():
            hit = g[g["metric"] == m]
            row[lab] = (
                ""
                if hit.empty
                else _cell(
                    hit["alignment"].iloc[0],
                    hit[f"{ci}_low"].iloc[0],
                    hit[f"{ci}_high"].iloc[0],
                    hit["n"].iloc[0],
                )
            )
        rows.append(row)
    if with_paper:
        t = targets.load_targets("ragas_romanian", "table1", root=targets_root)
        parts = t["row"].str.split(" | ", regex=False)
        t = t.assign(
            judge=parts.str[0],
            method=parts.str[1],
            language=t["column"].str.split(" | ", regex=False).str[0],
            metric=t["column"].str.split(" | ", regex=False).str[1],
        )
        for (lang, judge, method), g in t.groupby(["language", "judge", "method"], sort=False):
            row = {"source": f"paper · {lang}", "judge": judge, "method": method}
            for lab in labels:
                hit = g[g["metric"] == lab]
                if hit.empty:
                    row[lab] = ""
                    continue
                v, n = hit["value"].iloc[0] / 100, hit["n"].iloc[0]
                lo, hi = (
                    stats.wilson_interval(v * n, n, level=level) if pd.notna(n) else (None, None)
                )
                row[lab] = _cell(
                    v, lo if lo is not None else np.nan, hi if hi is not None else np.nan, n
                )
            rows.append(row)
    return pd.DataFrame(rows, columns=["source", "judge", "method", *labels])


def run_plan(pair_table: pd.DataFrame, *, judges: Sequence[str]) -> pd.DataFrame:
    """The `judgelab judge` commands that run the `ragas.*` judges on the pair items.

    Args:
        pair_table: Pair items (`pair_items`), written with `write_pair_items`.
        judges: Judge spec names in `params/judges/` or YAML paths (`ragas.*` templates).

    Returns:
        One row per judge: `judge`, `method`, `command`, `planned`, `cached`,
        `to_request`, `not_applicable`, `est_prompt_tokens`, `max_completion_tokens`,
        `est_cost_usd` (the `--dry-run` numbers; nothing is called).
    """
    import shlex

    from judgelab import judges as judges_mod

    bench = str(pair_table["benchmark"].iloc[0]) if len(pair_table) else "?"
    rows = []
    for name in judges:
        spec = judges_mod.resolve(name)
        if spec.template not in TEMPLATE_METHOD:
            raise ValueError(f"judge {name!r} uses template {spec.template!r}, not a ragas.* one")
        est = judges_mod.dry_run(pair_table, spec)
        rows.append(
            {
                "judge": spec.judge_id,
                "method": TEMPLATE_METHOD[str(spec.template)],
                "command": f"judgelab judge --judge {shlex.quote(name)} --benchmark {bench}",
                **est.as_row(),
            }
        )
    return pd.DataFrame(rows)


def load_pair_judgments(benchmark: str) -> pd.DataFrame | None:
    """Return the judgments `judgelab judge` wrote for a pair benchmark (None when none yet)."""
    from judgelab.data import catalog

    try:
        return catalog.load_judgments(benchmark)
    except catalog.SourceNotFound:
        return None


def all_preferences(
    scores: pd.DataFrame,
    pairs: pd.DataFrame,
    *,
    pair_table: pd.DataFrame | None = None,
    pair_judgments: pd.DataFrame | None = None,
    orders: str = "consensus",
) -> pd.DataFrame:
    """Stack pointwise preferences and (when present) the `ragas.*` template preferences."""
    parts = [pointwise_preferences(scores, pairs)]
    if pair_judgments is not None and pair_table is not None and len(pair_judgments):
        parts.append(template_preferences(pair_judgments, pair_table, orders=orders))
    parts = [p for p in parts if len(p)]
    if not parts:
        return pd.DataFrame(columns=list(PREF_COLUMNS))
    return pd.concat(parts, ignore_index=True)
