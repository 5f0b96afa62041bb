"""Contextualized Evaluations verdicts (spec 002 §2.1-2.2): settings, verdicts, examples.

The released ContextEval judgments (imported by the ContextEval importer of
`judgelab.data.importers` from the `contexteval_judgments` registry entry) are judgments-table
rows: split = the repo's setting id, item_id = `<pair>/<row>` (autoraters, aligned by row
across the 5 judge files) or `<pair>/human/<example>` (humans, `sample` = the annotator's
`rep`), `order` 0 when candidate 1 was shown as Response 1. Everything here re-reads the raw
`output` with the authors' rules:

- `verdict_table`: one row per judgment with `verdict` in C1/C2/Tie/Invalid (autoraters: the
  repo's dict-then-substring parser, §2.1; humans: exactly "Response 1"/"Response 2", else
  Tie) and `verdict_agg` (Invalid -> Tie by default, as the repo).
- `example_table`: per example the plurality label (ties broken by first occurrence in judge
  order, as `Counter.most_common`), its share, and the majority label (share > 0.5).
- `invalid_counts`, `query_counts`: the Invalid outputs per judge and the query pool (§1.1).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from judgelab.core import stats
from judgelab.core.schema import meta_field
from judgelab.core.schema import require_columns as _require
from judgelab.errors import check_choice
from judgelab.judges import parsers

SETTINGS = ("NoCtxGen-NoCtxEval", "NoCtxGen-CtxEval", "CtxGen-CtxEval")
BASELINE = SETTINGS[0]
#: The repo's setting ids (file prefixes / human `setting` field) -> the paper's names.
REPO_SETTINGS = {
    "gen_wo_ctx_eval_wo_ctx": "NoCtxGen-NoCtxEval",
    "gen_wo_ctx_eval_w_ctx": "NoCtxGen-CtxEval",
    "gen_w_ctx_eval_w_ctx": "CtxGen-CtxEval",
}
LABELS = ("C1", "C2", "Tie")
#: Autorater panels per repo pair token, in the repo's judge order (plurality tie-breaking).
PANELS: dict[str, tuple[str, ...]] = {
    "gpt-4_vs_gemini-1.5-flash-exp-0827": (
        "claude-3.5-sonnet",
        "meta-llama_Meta-Llama-3.1-405B-Instruct-Turbo",
        "google_gemma-2-27b-it",
        "jamba-1.5-large",
        "Qwen_Qwen2-72B-Instruct",
    ),
    "claude-3.5-sonnet_vs_meta-llama_Meta-Llama-3.1-405B-Instruct-Turbo": (
        "gpt-4",
        "gemini-1.5-pro",
        "google_gemma-2-27b-it",
        "jamba-1.5-large",
        "Qwen_Qwen2-72B-Instruct",
    ),
    "google_gemma-2-27b-it_vs_jamba-1.5-large": (
        "claude-3.5-sonnet",
        "meta-llama_Meta-Llama-3.1-405B-Instruct-Turbo",
        "gpt-4",
        "gemini-1.5-pro",
        "Qwen_Qwen2-72B-Instruct",
    ),
}
INVALID_AS = ("Tie", "drop")
TIE_BREAKS = ("first_occurrence", "prefer_tie", "random")
#: The columns that identify one example (one query judged in one setting).
EXAMPLE_KEYS = ["source", "pair", "setting", "example_key"]
_FOLLOWUP_MARKER = re.compile(r"\s*Follow-Up Questions and Answers.*$", re.S | re.I)
_VERDICT_COLUMNS = [
    "source",
    "pair",
    "candidate_1",
    "candidate_2",
    "setting",
    "example_key",
    "query",
    "judge",
    "judge_order",
    "order",
    "verdict_pos",
    "verdict",
    "verdict_agg",
    "row",
]
_EXAMPLE_COLUMNS = [
    *EXAMPLE_KEYS,
    "query",
    "n_judges",
    "n_c1",
    "n_c2",
    "n_tie",
    "plurality_label",
    "plurality_count",
    "plurality_share",
    "nontie",
    "majority_label",
    "share_excl_tie_votes",
    "first_row",
]


def setting_name(setting: str) -> str:
    """Return the paper's name of a setting given either its name or the repo's id.

    >>> setting_name("gen_wo_ctx_eval_w_ctx")
    'NoCtxGen-CtxEval'
    """
    check_choice("setting", setting, (*SETTINGS, *REPO_SETTINGS))
    return REPO_SETTINGS.get(setting, setting)


def candidates(pair: str) -> tuple[str, str]:
    """Return (candidate 1, candidate 2) of a repo pair token `<c1>_vs_<c2>`.

    >>> candidates("gpt-4_vs_gemini-1.5-flash-exp-0827")
    ('gpt-4', 'gemini-1.5-flash-exp-0827')
    """
    c1, sep, c2 = pair.partition("_vs_")
    if not sep:
        raise ValueError(f"pair {pair!r} is not '<candidate 1>_vs_<candidate 2>'")
    return c1, c2


def query_text(text: Any) -> str:
    r"""Return the query without the appended follow-up QA text (human records), normalised.

    >>> query_text("Is coffee good?\nFollow-Up Questions and Answers: Q: ...")
    'is coffee good?'
    """
    if not isinstance(text, str):
        return ""
    return " ".join(_FOLLOWUP_MARKER.sub("", text).lower().split())


def human_verdict(output: Any) -> str:
    """Return the human position verdict: exactly "Response 1"/"Response 2", else "Tie".

    >>> human_verdict("Response 2"), human_verdict("Both equally good")
    ('Response 2', 'Tie')
    """
    return output if output in ("Response 1", "Response 2") else "Tie"


def autorater_verdict(output: Any, *, mode: str = "repo_exact") -> str:
    """Return the autorater position verdict (spec 002 §2.1): Response 1/2, Tie or Invalid.

    >>> autorater_verdict('**output: {"judgement": "Tie"}** equal')
    'Tie'
    >>> autorater_verdict("No response. Finish Reason: SAFETY")
    'Invalid'
    """
    p = parsers.ce_judgement(output if isinstance(output, str) else None, mode=mode)
    return p.verdict if p.valid and p.verdict else "Invalid"


def _to_candidate(position: str, order: int) -> str:
    if position not in ("Response 1", "Response 2"):
        return position
    first = position == "Response 1"
    # order 0: candidate 1 was shown as Response 1 (rand_choice 1 / model_1 == candidate 1).
    return "C1" if first == (order == 0) else "C2"


def verdict_table(
    judgments: pd.DataFrame,
    items: pd.DataFrame | None = None,
    *,
    human_judges: Sequence[str] = ("human",),
    parse_mode: str = "repo_exact",
    invalid_as: str = "Tie",
    panels: Mapping[str, Sequence[str]] = PANELS,
) -> pd.DataFrame:
    """Return one row per judgment with its candidate verdict (spec 002 §2.1).

    Args:
        judgments: ContextEval judgments; needs `split` (setting), `item_id`, `judge`,
            `order`, `sample`, `output`.
        items: The matching items (their `meta.pair` and `question`); without them the pair
            is the `item_id` part before the first "/".
        human_judges: Judge ids holding human annotations (the importer uses "human").
        parse_mode: Autorater parser: `repo_exact` (the authors' code) or `robust`.
        invalid_as: `Tie` (the repo) or `drop` (Invalid rows get a null `verdict_agg`).
        panels: Judge order per pair (plurality tie-breaking); unknown judges come after
            the panel, in order of first appearance.

    Returns:
        `source` (human/autorater), `pair`, `candidate_1`, `candidate_2`, `setting`,
        `example_key`, `query`, `judge`, `judge_order`, `order`, `verdict_pos`, `verdict`
        (C1/C2/Tie/Invalid), `verdict_agg` (C1/C2/Tie or null), and `cluster` (the
        resampling unit) when the judgments carry one.
    """
    _require(judgments, ["split", "item_id", "judge", "order", "sample", "output"], "judgments")
    check_choice("invalid_as", invalid_as, INVALID_AS)
    j = judgments.reset_index(drop=True)
    pair, question = _pairs_and_questions(j, items)
    human = j["judge"].isin(list(human_judges)).to_numpy()
    orders = j["order"].astype(int).to_numpy()
    pos = [
        human_verdict(o) if h else autorater_verdict(o, mode=parse_mode)
        for o, h in zip(j["output"].astype(object), human, strict=True)
    ]
    verdict = [_to_candidate(p, o) for p, o in zip(pos, orders, strict=True)]
    agg = [v if v != "Invalid" else ("Tie" if invalid_as == "Tie" else None) for v in verdict]
    out = pd.DataFrame(
        {
            "source": np.where(human, "human", "autorater"),
            "pair": pair.astype(str),
            "setting": [setting_name(str(s)) for s in j["split"]],
            "example_key": j["item_id"].astype(str),
            "query": [query_text(x) for x in question],
            "judge": j["judge"].astype(str),
            "sample": j["sample"].astype(int),
            "order": orders,
            "verdict_pos": pos,
            "verdict": verdict,
            "verdict_agg": pd.Series(agg, dtype=object),
            "row": np.arange(len(j)),
        }
    )
    out["candidate_1"] = [candidates(p)[0] for p in out["pair"]]
    out["candidate_2"] = [candidates(p)[1] for p in out["pair"]]
    out["judge_order"] = _judge_order(out, panels)
    cols = list(_VERDICT_COLUMNS)
    if "cluster" in j.columns:
        out["cluster"] = j["cluster"].astype(object).to_numpy()
        cols.append("cluster")
    return out[cols]


def _pairs_and_questions(
    j: pd.DataFrame, items: pd.DataFrame | None
) -> tuple[pd.Series, pd.Series]:
    """Return each judgment's pair token and question (from `items` when given)."""
    pair = j["item_id"].astype(str).str.split("/", n=1).str[0]
    question = pd.Series([None] * len(j), dtype=object)
    if items is None or not len(items):
        return pair, question
    _require(items, ["split", "item_id", "meta", "question"], "items")
    keys = list(zip(items["split"], items["item_id"], strict=True))
    meta_pair = dict(zip(keys, meta_field(items["meta"], "pair"), strict=True))
    q = dict(zip(keys, items["question"], strict=True))
    judged = list(zip(j["split"], j["item_id"], strict=True))
    pair = pd.Series([meta_pair.get(k) or p for k, p in zip(judged, pair, strict=True)])
    return pair, pd.Series([q.get(k) for k in judged], dtype=object)


def _judge_order(v: pd.DataFrame, panels: Mapping[str, Sequence[str]]) -> np.ndarray:
    order = np.zeros(len(v), dtype=np.int64)
    human = (v["source"] == "human").to_numpy()
    order[human] = v.loc[human, "sample"].to_numpy()
    for pair, idx in v[~human].groupby("pair", sort=False).groups.items():
        panel = list(panels.get(str(pair), ()))
        seen = list(dict.fromkeys(v.loc[idx, "judge"]))
        ranking = panel + [j for j in seen if j not in panel]
        pos = {j: k for k, j in enumerate(ranking)}
        order[np.asarray(idx)] = [pos[j] for j in v.loc[idx, "judge"]]
    return order


def plurality(
    labels: Sequence[str], *, tie_break: str = "first_occurrence", rng: Any = None
) -> tuple[str, int]:
    """Return the plurality label of judge-ordered labels and its count (spec 002 §2.2).

    `first_occurrence` is the repo's `Counter.most_common(1)`; `prefer_tie` picks Tie when it
    is among the tied labels; `random` draws among them with `rng`.

    >>> plurality(["C2", "C1", "C1", "C2", "Tie"])
    ('C2', 2)
    >>> plurality(["C2", "C1", "Tie"], tie_break="prefer_tie")
    ('Tie', 1)
    """
    if not labels:
        raise ValueError("plurality of an empty list")
    check_choice("tie_break", tie_break, TIE_BREAKS)
    counts = Counter(labels)
    if tie_break == "first_occurrence":
        return counts.most_common(1)[0]
    best = max(counts.values())
    tied = [lab for lab in counts if counts[lab] == best]
    if tie_break == "prefer_tie":
        return ("Tie" if "Tie" in tied else tied[0]), best
    if rng is None:
        raise ValueError("tie_break='random' needs rng")
    return tied[int(rng.integers(len(tied)))], best


def example_table(
    verdicts: pd.DataFrame, *, tie_break: str = "first_occurrence", seed: int = 0
) -> pd.DataFrame:
    """Aggregate the judgments of each example (spec 002 §2.2).

    Args:
        verdicts: The output of `verdict_table`.
        tie_break: `first_occurrence` (the repo), `prefer_tie` or `random` (seeded by `seed`
            and the example).
        seed: Seed of the `random` tie-break.

    Returns:
        One row per `source, pair, setting, example_key` (in first-appearance order), with
        `query`, `n_judges`, `n_c1`, `n_c2`, `n_tie`, `plurality_label`, `plurality_count`,
        `plurality_share`, `nontie` (plurality label is not Tie), `majority_label` (the
        plurality label when its share is > 0.5, else null), `share_excl_tie_votes` (share of
        the plurality among non-Tie votes; null when every vote is Tie), `n_invalid`
        (Invalid verdicts of the example), `n_invalid_votes` (those counted as Tie votes),
        and `cluster` when the verdicts carry one.
    """
    _require(verdicts, [*EXAMPLE_KEYS, "judge_order", "verdict_agg", "row"], "verdicts")
    v = verdicts[verdicts["verdict_agg"].notna()].sort_values(
        ["judge_order", "row"], kind="stable"
    )
    every = verdicts.groupby(EXAMPLE_KEYS, sort=False)
    first = every["row"].min()
    invalid = verdicts["verdict"] == "Invalid"
    n_invalid = invalid.groupby([verdicts[k] for k in EXAMPLE_KEYS], sort=False).sum()
    n_invalid_votes = (
        (invalid & verdicts["verdict_agg"].notna())
        .groupby([verdicts[k] for k in EXAMPLE_KEYS], sort=False)
        .sum()
    )
    unit = every["cluster"].first() if "cluster" in verdicts.columns else None
    groups = v.groupby(EXAMPLE_KEYS, sort=False)
    labels = groups["verdict_agg"].agg(list)
    query = groups["query"].first() if "query" in v.columns else None
    rows = []
    for key, labs in labels.items():
        rng = stats.rng_for(seed, *key) if tie_break == "random" else None
        row = _example_row(labs, tie_break=tie_break, rng=rng)
        rows.append(
            {
                **dict(zip(EXAMPLE_KEYS, key, strict=True)),
                "query": query[key] if query is not None else "",
                **row,
                "n_invalid": int(n_invalid[key]),
                "n_invalid_votes": int(n_invalid_votes[key]),
                "first_row": first[key],
                **({"cluster": unit[key]} if unit is not None else {}),
            }
        )
    extra = ["n_invalid", "n_invalid_votes"] + (["cluster"] if unit is not None else [])
    out = pd.DataFrame(rows, columns=_EXAMPLE_COLUMNS + extra)
    return (
        out.sort_values("first_row", kind="stable")
        .drop(columns="first_row")
        .reset_index(drop=True)
    )


def _example_row(labs: list[str], *, tie_break: str, rng: Any) -> dict[str, Any]:
    """Return the vote counts, plurality and majority of one example's judge-ordered labels."""
    lab, count = plurality(labs, tie_break=tie_break, rng=rng)
    n = len(labs)
    c = Counter(labs)
    nontie_votes = [x for x in labs if x != "Tie"]
    excl = (
        Counter(nontie_votes).most_common(1)[0][1] / len(nontie_votes) if nontie_votes else np.nan
    )
    share = count / n
    return {
        "n_judges": n,
        "n_c1": c["C1"],
        "n_c2": c["C2"],
        "n_tie": c["Tie"],
        "plurality_label": lab,
        "plurality_count": count,
        "plurality_share": share,
        "nontie": lab != "Tie",
        "majority_label": lab if share > 0.5 else None,
        "share_excl_tie_votes": excl,
    }


def invalid_counts(verdicts: pd.DataFrame) -> pd.DataFrame:
    """Return judgments and Invalid verdicts per source, pair, setting and judge (§2.1).

    Autorater Invalid outputs count as Tie in the repo's numbers, so its low context-setting
    tie rates may be mostly Invalid outputs (spec 002 §6.19).
    """
    _require(verdicts, ["source", "pair", "setting", "judge", "verdict"], "verdicts")
    g = verdicts.groupby(["source", "pair", "setting", "judge"], sort=False)["verdict"]
    out = pd.DataFrame(
        {"n": g.size(), "n_invalid": g.apply(lambda s: int((s == "Invalid").sum()))}
    )
    out["pct_invalid"] = 100 * out["n_invalid"] / out["n"]
    return out.reset_index()


def query_counts(items: pd.DataFrame) -> pd.DataFrame:
    """Return the number of queries per source dataset (spec 002 §1.1: 2500/645/57/300/78).

    Args:
        items: ContextEval query items (task qa; split = the source dataset's short name).

    Returns:
        `split`, `n`, `pct` (of all queries), plus a final `total` row.
    """
    _require(items, ["split", "task"], "items")
    q = items[items["task"] == "qa"]
    counts = q.groupby("split", sort=True).size().rename("n").reset_index()
    counts["pct"] = 100 * counts["n"] / counts["n"].sum() if len(counts) else []
    total = pd.DataFrame({"split": ["total"], "n": [int(counts["n"].sum())], "pct": [100.0]})
    return pd.concat([counts, total], ignore_index=True)


def invalid_as_error(examples: pd.DataFrame) -> pd.DataFrame:
    """Return `examples` recomputed with every Invalid verdict counted as an error.

    An error is a vote for no label: it stays in the example's judge count (n_judges
    includes Invalid outputs) but supports neither C1, C2 nor Tie, so it lowers the
    plurality share and can remove a majority. The plurality label among equal counts is
    taken in C1, C2, Tie order (the judge order is not kept in `examples`). The sensitivity
    rows of `agreement` and `rank_flips` use it where Invalid outputs differ between the
    settings compared.
    """
    _require(examples, ["n_c1", "n_c2", "n_tie", "n_judges", "n_invalid", "n_invalid_votes"], "x")
    ex = examples.copy()
    ex["n_tie"] = ex["n_tie"] - ex["n_invalid_votes"]
    ex["n_judges"] = ex["n_judges"] + ex["n_invalid"] - ex["n_invalid_votes"]
    counts = ex[["n_c1", "n_c2", "n_tie"]].to_numpy(dtype=float)
    best = counts.argmax(axis=1)
    top = counts.max(axis=1)
    n = ex["n_judges"].to_numpy(dtype=float)
    share = np.where(n > 0, top / np.where(n > 0, n, 1), np.nan)
    label = np.array(LABELS, dtype=object)[best]
    ex["plurality_label"] = label
    ex["plurality_count"] = top.astype(int)
    ex["plurality_share"] = share
    ex["nontie"] = label != "Tie"
    ex["majority_label"] = pd.Series(np.where(share > 0.5, label, None), index=ex.index)
    return ex
