"""Contextualized Evaluations (spec 002 §2.1-2.6): verdicts, agreement, win rates, rank flips.

The released ContextEval judgments (imported by `judgelab.data.importers.seeds.import_contexteval`
from the `contexteval_judgments` registry entry) are judgments-table rows: split = the repo's
setting id, item_id = `<pair>/<row>` (autoraters, aligned by row across the 5 judge files) or
`<pair>/human/<example>` (humans, `sample` = the annotator's `rep`), `order` 0 when candidate
1 was shown as Response 1. Everything here re-reads the raw `output` with the authors' rules:

- `verdict_table`: one row per judgment with `verdict` in C1/C2/Tie/Invalid (autoraters: the
  repo's dict-then-substring parser, §2.1; humans: exactly "Response 1"/"Response 2", else
  Tie) and `verdict_agg` (Invalid -> Tie by default, as the repo).
- `example_table`: per example the plurality label (ties broken by first occurrence in judge
  order, as `Counter.most_common`), its share, and the majority label (share > 0.5).
- `agreement`: the three agreement variants, named explicitly (§2.3): `A_all` (the paper's
  main number, which it labels "excluding ties"), `A_nontie` (the parenthesised number, which
  it labels "including ties"), `A_excl_tie_votes` ([X], Tie votes dropped); deltas against
  NoCtxGen-NoCtxEval with the repo's tests (paired t-test for A_all, Student t for the others).
- `win_rates`, `rank_flips`: Table 6 and the leader flips of spec §3.8.
- `constraint_subset_agreement`: Table 5 (human A_all on examples whose responses differ by at
  least one satisfied follow-up QA).
- `justification_shares`: Figure 4 (surface vs content codes).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats as sps

from judgelab.analyses.correctness import grading as correctness
from judgelab.core import paths, stats
from judgelab.core.schema import require_columns as _require
from judgelab.data import catalog
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
VARIANTS = ("A_all", "A_nontie", "A_excl_tie_votes")
#: How each variant appears in the paper's Table 4 (spec 002 §2.3: the labels look swapped).
PAPER_LABELS = {
    "A_all": 'main number (paper label: "excluding ties")',
    "A_nontie": 'in parentheses (paper label: "including ties")',
    "A_excl_tie_votes": "not in the paper [X]: Tie votes dropped",
}
_FOLLOWUP_MARKER = re.compile(r"\s*Follow-Up Questions and Answers.*$", re.S | re.I)
_EXAMPLE_KEYS = ["source", "pair", "setting", "example_key"]


def setting_name(setting: str) -> str:
    """Return the paper's name of a setting given either its name or the repo's id.

    >>> setting_name("gen_wo_ctx_eval_w_ctx")
    'NoCtxGen-CtxEval'
    """
    if setting in SETTINGS:
        return setting
    if setting in REPO_SETTINGS:
        return REPO_SETTINGS[setting]
    raise ValueError(f"unknown setting {setting!r}; expected one of {SETTINGS} or {REPO_SETTINGS}")


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
        (C1/C2/Tie/Invalid), `verdict_agg` (C1/C2/Tie or null).
    """
    _require(judgments, ["split", "item_id", "judge", "order", "sample", "output"], "judgments")
    if invalid_as not in ("Tie", "drop"):
        raise ValueError(f"invalid_as must be 'Tie' or 'drop', got {invalid_as!r}")
    j = judgments.reset_index(drop=True)
    pair = j["item_id"].astype(str).str.split("/", n=1).str[0]
    question = pd.Series([None] * len(j), dtype=object)
    if items is not None and len(items):
        _require(items, ["split", "item_id", "meta", "question"], "items")
        meta_pair = {
            (s, i): json.loads(m).get("pair") if isinstance(m, str) else None
            for s, i, m in zip(items["split"], items["item_id"], items["meta"], strict=True)
        }
        q = dict(
            zip(zip(items["split"], items["item_id"], strict=True), items["question"], strict=True)
        )
        keys = list(zip(j["split"], j["item_id"], strict=True))
        pair = pd.Series([meta_pair.get(k) or p for k, p in zip(keys, pair, strict=True)])
        question = pd.Series([q.get(k) for k in keys], dtype=object)
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
    cols = [
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
    return out[cols]


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
    counts = Counter(labels)
    if tie_break == "first_occurrence":
        return counts.most_common(1)[0]
    best = max(counts.values())
    tied = [lab for lab in counts if counts[lab] == best]
    if tie_break == "prefer_tie":
        return ("Tie" if "Tie" in tied else tied[0]), best
    if tie_break == "random":
        if rng is None:
            raise ValueError("tie_break='random' needs rng")
        return tied[int(rng.integers(len(tied)))], best
    raise ValueError(f"unknown tie_break {tie_break!r}")


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
        the plurality among non-Tie votes; null when every vote is Tie).
    """
    _require(verdicts, [*_EXAMPLE_KEYS, "judge_order", "verdict_agg", "row"], "verdicts")
    v = verdicts[verdicts["verdict_agg"].notna()].sort_values(
        ["judge_order", "row"], kind="stable"
    )
    first = verdicts.groupby(_EXAMPLE_KEYS, sort=False)["row"].min()
    groups = v.groupby(_EXAMPLE_KEYS, sort=False)
    labels = groups["verdict_agg"].agg(list)
    query = groups["query"].first() if "query" in v.columns else None
    rows = []
    for key, labs in labels.items():
        rng = stats.rng_for(seed, *key) if tie_break == "random" else None
        lab, count = plurality(labs, tie_break=tie_break, rng=rng)
        n = len(labs)
        c = Counter(labs)
        nontie_votes = [x for x in labs if x != "Tie"]
        excl = (
            Counter(nontie_votes).most_common(1)[0][1] / len(nontie_votes)
            if nontie_votes
            else np.nan
        )
        share = count / n
        rows.append(
            {
                **dict(zip(_EXAMPLE_KEYS, key, strict=True)),
                "query": query[key] if query is not None else "",
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
                "first_row": first[key],
            }
        )
    cols = [
        *_EXAMPLE_KEYS,
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
    out = pd.DataFrame(rows, columns=cols)
    return (
        out.sort_values("first_row", kind="stable")
        .drop(columns="first_row")
        .reset_index(drop=True)
    )


def _variant_values(ex: pd.DataFrame, variant: str) -> pd.Series:
    if variant == "A_all":
        return ex["plurality_share"]
    if variant == "A_nontie":
        return ex.loc[ex["nontie"], "plurality_share"]
    if variant == "A_excl_tie_votes":
        return ex["share_excl_tie_votes"].dropna()
    raise ValueError(f"unknown agreement variant {variant!r}; expected one of {VARIANTS}")


def _pair_keys(ex: pd.DataFrame, pairing: str) -> pd.Series:
    if pairing == "query":
        return ex["query"]
    if pairing == "example_key":
        return ex["example_key"]
    raise ValueError(f"unknown pairing {pairing!r}")


def _paired(base: pd.DataFrame, cell: pd.DataFrame, pairing: str) -> tuple[np.ndarray, ...]:
    if pairing == "position":
        if len(base) != len(cell):
            return np.array([]), np.array([])
        return base["plurality_share"].to_numpy(), cell["plurality_share"].to_numpy()
    b = base.assign(_k=_pair_keys(base, pairing)).drop_duplicates("_k", keep=False)
    c = cell.assign(_k=_pair_keys(cell, pairing)).drop_duplicates("_k", keep=False)
    m = b.merge(c, on="_k", suffixes=("_b", "_c"))
    return m["plurality_share_b"].to_numpy(), m["plurality_share_c"].to_numpy()


def agreement(
    examples: pd.DataFrame,
    *,
    variants: Sequence[str] = VARIANTS,
    baseline: str = BASELINE,
    pairing: str = "query",
    alpha: float = 0.05,
    n_boot: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> pd.DataFrame:
    """Return inter-evaluator agreement per source, pair, setting and variant (Table 4).

    Args:
        examples: The output of `example_table`.
        variants: Which of `A_all`, `A_nontie`, `A_excl_tie_votes` (see module docstring).
        baseline: The setting every delta and test compares with.
        pairing: How A_all examples are paired for the t-test: `query` (normalised query
            text, spec's recommendation), `example_key`, or `position` (the repo: list
            position; no test when the lengths differ).
        alpha: Significance level of the `significant` flag.
        n_boot: Bootstrap resamples (over examples) for the interval.
        seed: Bootstrap seed.
        level: Confidence level.

    Returns:
        `source, pair, setting, variant, paper_label, agreement` (percent), `n`, `ci_low`,
        `ci_high` (percent), `delta` (points vs `baseline`), `test`, `n_test`, `p_value`,
        `significant`.
    """
    _require(
        examples, [*_EXAMPLE_KEYS, "plurality_share", "nontie", "share_excl_tie_votes"], "examples"
    )
    rows = []
    for (source, pair), block in examples.groupby(["source", "pair"], sort=False):
        cells = {s: g for s, g in block.groupby("setting", sort=False)}
        order = [s for s in SETTINGS if s in cells] + [s for s in cells if s not in SETTINGS]
        for variant in variants:
            base_vals = _variant_values(cells[baseline], variant) if baseline in cells else None
            for setting in order:
                vals = _variant_values(cells[setting], variant).to_numpy(dtype=float)
                est = stats.bootstrap_mean(vals, n_boot=n_boot, seed=seed, level=level)
                row = {
                    "source": source,
                    "pair": pair,
                    "setting": setting,
                    "variant": variant,
                    "paper_label": PAPER_LABELS[variant],
                    "agreement": 100 * est.estimate,
                    "n": len(vals),
                    "ci_low": 100 * est.low,
                    "ci_high": 100 * est.high,
                    "delta": np.nan,
                    "test": "",
                    "n_test": 0,
                    "p_value": np.nan,
                }
                if base_vals is not None and setting != baseline and len(vals):
                    row["delta"] = row["agreement"] - 100 * float(np.mean(base_vals))
                    if variant == "A_all":
                        x, y = _paired(cells[baseline], cells[setting], pairing)
                        row["test"] = f"ttest_rel (pairing={pairing})"
                        row["n_test"] = len(x)
                        if len(x) > 1 and np.any(x != y):
                            row["p_value"] = float(sps.ttest_rel(x, y).pvalue)
                    else:
                        row["test"] = "ttest_ind"
                        row["n_test"] = len(vals) + len(base_vals)
                        if len(vals) > 1 and len(base_vals) > 1:
                            row["p_value"] = float(sps.ttest_ind(base_vals, vals).pvalue)
                rows.append(row)
    out = pd.DataFrame(rows)
    if out.empty:
        return out
    out["significant"] = out["p_value"] < alpha
    return out


def kappa_table(examples: pd.DataFrame) -> pd.DataFrame:
    """Return Fleiss' and Randolph's (free-marginal) kappa per source, pair, setting ([X]).

    The repo prints `fleiss_kappa(table, method="rand")`, which is Randolph's kappa. Only
    examples with the cell's most common number of judges enter (kappa needs equal counts).

    Returns:
        `source, pair, setting, n, n_judges, fleiss_kappa, randolph_kappa`.
    """
    from statsmodels.stats.inter_rater import fleiss_kappa

    _require(examples, [*_EXAMPLE_KEYS, "n_c1", "n_c2", "n_tie", "n_judges"], "examples")
    rows = []
    for (source, pair, setting), g in examples.groupby(["source", "pair", "setting"], sort=False):
        k = int(g["n_judges"].mode().iloc[0])
        table = g.loc[g["n_judges"] == k, ["n_c1", "n_c2", "n_tie"]].to_numpy(dtype=float)
        with np.errstate(divide="ignore", invalid="ignore"):
            fk = float(fleiss_kappa(table, method="fleiss")) if len(table) else np.nan
            rk = float(fleiss_kappa(table, method="rand")) if len(table) else np.nan
        rows.append(
            {
                "source": source,
                "pair": pair,
                "setting": setting,
                "n": len(table),
                "n_judges": k,
                "fleiss_kappa": fk,
                "randolph_kappa": rk,
            }
        )
    return pd.DataFrame(rows)


def cross_source_agreement(
    examples: pd.DataFrame, *, a: str = "human", b: str = "autorater"
) -> pd.DataFrame:
    """Return agreement between two evaluator types' majority labels on the same queries ([X]).

    Examples are matched on pair, setting and normalised query text; only examples where both
    sides have a majority label enter. Not reported in the paper (spec 002 §2.3).

    Returns:
        `pair, setting, n_matched, agreement` (percent of equal majority labels), `kappa`
        (Cohen's, over C1/C2/Tie).
    """
    _require(examples, ["source", "pair", "setting", "query", "majority_label"], "examples")
    ex = examples[examples["majority_label"].notna() & (examples["query"] != "")]
    left = ex[ex["source"] == a].drop_duplicates(["pair", "setting", "query"], keep=False)
    right = ex[ex["source"] == b].drop_duplicates(["pair", "setting", "query"], keep=False)
    m = left.merge(right, on=["pair", "setting", "query"], suffixes=("_a", "_b"))
    rows = []
    for (pair, setting), g in m.groupby(["pair", "setting"], sort=False):
        la, lb = g["majority_label_a"].tolist(), g["majority_label_b"].tolist()
        rows.append(
            {
                "pair": pair,
                "setting": setting,
                "n_matched": len(g),
                "agreement": 100 * float(np.mean(np.array(la) == np.array(lb))),
                "kappa": correctness.cohen_kappa(la, lb, labels=LABELS),
            }
        )
    return pd.DataFrame(rows, columns=["pair", "setting", "n_matched", "agreement", "kappa"])


def win_rates(examples: pd.DataFrame, *, level: float = 0.95) -> pd.DataFrame:
    """Return win rates by majority vote per source, pair and setting (Table 6, §2.5).

    Examples without a majority label (share <= 0.5) are excluded and counted.

    Returns:
        `source, pair, candidate_1, candidate_2, setting, n_majority` (|M|), `n_excluded`,
        `n_c1, n_c2, n_tie` (majority counts), `wr_c1, wr_c2, wr_tie` (percent of |M|) with
        Wilson intervals `*_low`, `*_high`, and `margin` = wr_c1 - wr_c2.
    """
    _require(examples, ["source", "pair", "setting", "majority_label"], "examples")
    rows = []
    for (source, pair, setting), g in examples.groupby(["source", "pair", "setting"], sort=False):
        maj = g["majority_label"].dropna()
        n = len(maj)
        c1, c2 = candidates(str(pair))
        row = {
            "source": source,
            "pair": pair,
            "candidate_1": c1,
            "candidate_2": c2,
            "setting": setting,
            "n_majority": n,
            "n_excluded": len(g) - n,
        }
        for lab, name in zip(LABELS, ("c1", "c2", "tie"), strict=True):
            k = int((maj == lab).sum())
            low, high = stats.wilson_interval(k, n, level=level)
            row[f"n_{name}"] = k
            row[f"wr_{name}"] = 100 * k / n if n else np.nan
            row[f"wr_{name}_low"], row[f"wr_{name}_high"] = 100 * float(low), 100 * float(high)
        row["margin"] = row["wr_c1"] - row["wr_c2"]
        rows.append(row)
    out = pd.DataFrame(rows)
    if len(out):
        out["_o"] = [SETTINGS.index(s) if s in SETTINGS else 99 for s in out["setting"]]
        out = out.sort_values(["source", "pair", "_o"], kind="stable").drop(columns="_o")
    return out.reset_index(drop=True)


def _leader(c1: str, c2: str, margin: float) -> str:
    if not np.isfinite(margin) or margin == 0:
        return "none"
    return c1 if margin > 0 else c2


def rank_flips(
    examples: pd.DataFrame,
    *,
    baseline: str = BASELINE,
    n_boot: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> pd.DataFrame:
    """Return leaders and rank flips against `baseline` per source and pair (Table 6, §3.8).

    The leader is the candidate with the higher majority win rate ("none" on equal rates); a
    flip is a leader different from the baseline's. [X] additions: an exact sign test of
    C1 vs C2 majority wins, and the bootstrap probability of a flip (examples of both
    settings resampled independently, `n_boot` times).

    Returns:
        The `win_rates` columns plus `leader`, `baseline_leader`, `delta_margin`,
        `delta_tie` (points vs the baseline), `flipped`, `sign_p`, `p_flip`.
    """
    rates = win_rates(examples, level=level)
    if rates.empty:
        return rates
    ex = examples[examples["majority_label"].notna()]
    margins: dict[tuple, np.ndarray] = {}
    for key, g in ex.groupby(["source", "pair", "setting"], sort=False):
        onehot = np.column_stack([(g["majority_label"] == lab).to_numpy(float) for lab in LABELS])
        sums = stats.bootstrap_sums(onehot, n_boot=n_boot, rng=stats.rng_for(seed, *key))
        margins[key] = np.sign(sums[:, 0] - sums[:, 1])
    out = []
    for _, r in rates.iterrows():
        base = rates[
            (rates["source"] == r["source"])
            & (rates["pair"] == r["pair"])
            & (rates["setting"] == baseline)
        ]
        row = r.to_dict()
        row["leader"] = _leader(r["candidate_1"], r["candidate_2"], r["margin"])
        row["sign_p"] = stats.sign_test(int(r["n_c1"]), int(r["n_c1"] + r["n_c2"])).p_value
        if base.empty:
            row.update(
                baseline_leader=None,
                delta_margin=np.nan,
                delta_tie=np.nan,
                flipped=None,
                p_flip=np.nan,
            )
        else:
            b = base.iloc[0]
            row["baseline_leader"] = _leader(b["candidate_1"], b["candidate_2"], b["margin"])
            row["delta_margin"] = r["margin"] - b["margin"]
            row["delta_tie"] = r["wr_tie"] - b["wr_tie"]
            row["flipped"] = bool(row["leader"] != row["baseline_leader"])
            ks = (r["source"], r["pair"], r["setting"])
            kb = (r["source"], r["pair"], baseline)
            row["p_flip"] = (
                float(np.mean(margins[ks] != margins[kb]))
                if ks in margins and kb in margins and r["setting"] != baseline
                else (0.0 if r["setting"] == baseline else np.nan)
            )
        out.append(row)
    return pd.DataFrame(out)


def leaders_by_source(flips: pd.DataFrame) -> pd.DataFrame:
    """Return the leader per pair and setting side by side for each evaluator type.

    Returns:
        One row per `pair, setting`; a `leader_<source>` column per source, and `agree`
        (True when every source names the same leader).
    """
    _require(flips, ["source", "pair", "setting", "leader"], "flips")
    wide = flips.pivot_table(
        index=["pair", "setting"], columns="source", values="leader", aggfunc="first", sort=False
    )
    wide.columns = [f"leader_{c}" for c in wide.columns]
    wide["agree"] = wide.nunique(axis=1, dropna=False) == 1
    return wide.reset_index()


# ---------------------------------------------------------------- Table 5: constraint subset


def followup_counts(records: Sequence[Mapping[str, Any]], *, pair: str) -> pd.DataFrame:
    """Count satisfied follow-up QAs per human record (the repo's `compute_human_agreement`).

    An annotator whose `follow_up_qas` hold any null label is skipped, as in the repo.

    Args:
        records: Raw human records (`example_id`, `setting`, `follow_up_qas`).
        pair: The repo pair token of the file.

    Returns:
        `pair, setting, example_key` (as the importer's item_id: `<pair>/human/<base>`),
        `rep`, `n_qas`, `n_sat_pos1`, `n_sat_pos2`, `diff` (pos1 - pos2).
    """
    rows = []
    for rec in records:
        qas = rec.get("follow_up_qas") or []
        s1 = [qa.get("satisfied_1") for qa in qas]
        s2 = [qa.get("satisfied_2") for qa in qas]
        if not qas or None in s1 or None in s2:
            continue
        base, _, rep = str(rec.get("example_id", "")).rpartition("_rep")
        rows.append(
            {
                "pair": pair,
                "setting": setting_name(str(rec.get("setting"))),
                "example_key": f"{pair}/human/{base or rep}",
                "rep": int(rep) if rep.isdigit() else 0,
                "n_qas": len(qas),
                "n_sat_pos1": int(sum(map(bool, s1))),
                "n_sat_pos2": int(sum(map(bool, s2))),
            }
        )
    cols = ["pair", "setting", "example_key", "rep", "n_qas", "n_sat_pos1", "n_sat_pos2"]
    out = pd.DataFrame(rows, columns=cols)
    out["diff"] = out["n_sat_pos1"] - out["n_sat_pos2"]
    return out


def load_followups(loaded: catalog.Loaded) -> pd.DataFrame:
    """Return the human follow-up satisfaction counts behind `loaded` (empty when none).

    A sample set keeps them in `followups.jsonl` (rows as `followup_counts` returns); the
    real release in the raw human files of the `contexteval_judgments` source.
    """
    if catalog.is_sample(loaded.source):
        path = paths.samples() / loaded.source[len(catalog.SAMPLE_PREFIX) :] / "followups.jsonl"
        return _followups_file(path)
    from judgelab.data import fetch, sources

    src = sources.get_source(loaded.source)
    root = fetch.ensure_local(src)
    frames = []
    for f in src.files:
        info = src.options.get("judgment_files", {}).get(f.path, {})
        if info.get("judge") == "human" or "human_judgements/" in f.path:
            records = json.loads((root / f.path).read_text(encoding="utf-8"))
            frames.append(followup_counts(records, pair=str(info.get("pair"))))
    return pd.concat(frames, ignore_index=True) if frames else followup_counts([], pair="x_vs_y")


def _followups_file(path: Path) -> pd.DataFrame:
    if not path.exists():
        return followup_counts([], pair="x_vs_y")
    from judgelab.core import tables

    df = pd.DataFrame(tables.read_jsonl(path))
    _require(df, ["pair", "setting", "example_key", "rep", "n_sat_pos1", "n_sat_pos2"], str(path))
    df["setting"] = [setting_name(s) for s in df["setting"]]
    df["diff"] = df["n_sat_pos1"] - df["n_sat_pos2"]
    return df


def constraint_subset_agreement(
    examples: pd.DataFrame,
    followups: pd.DataFrame,
    *,
    min_abs_mean_diff: float = 1.0,
    baseline: str = BASELINE,
) -> pd.DataFrame:
    """Return human A_all on the constraint-difference subset (Table 5, spec 002 §2.4).

    An example enters when |mean over its annotators of (satisfied QAs of Response 1 −
    satisfied QAs of Response 2)| >= `min_abs_mean_diff`; only context-aware settings have
    the labels. Deltas are given against both baselines the spec names: the human A_all of
    the no-context setting (`delta_vs_human_baseline`) and the autorater A_all the paper
    printed as its baseline row (`delta_vs_autorater_baseline`, "as printed").

    Returns:
        `pair, setting, n_subset, n_with_labels, agreement` (percent), `baseline_human`,
        `baseline_autorater`, `delta_vs_human_baseline`, `delta_vs_autorater_baseline`.
    """
    _require(followups, ["example_key", "setting", "diff"], "followups")
    mean_diff = followups.groupby(["setting", "example_key"])["diff"].mean()
    human = examples[examples["source"] == "human"]
    rows = []
    for (pair, setting), g in human.groupby(["pair", "setting"], sort=False):
        if setting == baseline:
            continue
        d = pd.Series(
            [mean_diff.get((setting, k), np.nan) for k in g["example_key"]], index=g.index
        )
        subset = g[d.abs() >= min_abs_mean_diff]
        base_h = examples[
            (examples["source"] == "human")
            & (examples["pair"] == pair)
            & (examples["setting"] == baseline)
        ]["plurality_share"]
        base_a = examples[
            (examples["source"] == "autorater")
            & (examples["pair"] == pair)
            & (examples["setting"] == baseline)
        ]["plurality_share"]
        agree = 100 * subset["plurality_share"].mean() if len(subset) else np.nan
        bh = 100 * base_h.mean() if len(base_h) else np.nan
        ba = 100 * base_a.mean() if len(base_a) else np.nan
        rows.append(
            {
                "pair": pair,
                "setting": setting,
                "n_subset": len(subset),
                "n_with_labels": int(d.notna().sum()),
                "agreement": agree,
                "baseline_human": bh,
                "baseline_autorater": ba,
                "delta_vs_human_baseline": agree - bh,
                "delta_vs_autorater_baseline": agree - ba,
            }
        )
    cols = [
        "pair",
        "setting",
        "n_subset",
        "n_with_labels",
        "agreement",
        "baseline_human",
        "baseline_autorater",
        "delta_vs_human_baseline",
        "delta_vs_autorater_baseline",
    ]
    return pd.DataFrame(rows, columns=cols)


# ---------------------------------------------------------------- Figure 4: justifications


def parse_codes(text: Any) -> tuple[bool, bool, bool]:
    """Return (content, surface, parse_ok) from a justification-coding output (spec §4.12).

    >>> parse_codes("Codes: 1, 2")
    (True, True, True)
    >>> parse_codes("none")
    (False, False, False)
    """
    digits = set(re.findall(r"\d", text)) if isinstance(text, str) else set()
    content, surface = "1" in digits, "2" in digits
    return content, surface, bool(digits)


def load_justification_codes(loaded: catalog.Loaded) -> pd.DataFrame:
    """Return coded justifications behind `loaded`: `source, pair, setting, codes` (or empty).

    The release has no codes (spec 002 §0); a sample set keeps them in `justifications.jsonl`.
    """
    cols = ["source", "pair", "setting", "codes"]
    if not catalog.is_sample(loaded.source):
        return pd.DataFrame(columns=cols)
    path = paths.samples() / loaded.source[len(catalog.SAMPLE_PREFIX) :] / "justifications.jsonl"
    if not path.exists():
        return pd.DataFrame(columns=cols)
    from judgelab.core import tables

    df = pd.DataFrame(tables.read_jsonl(path))
    _require(df, cols, str(path))
    df["setting"] = [setting_name(s) for s in df["setting"]]
    return df


def justification_shares(
    coded: pd.DataFrame,
    *,
    by: Sequence[str] = ("source", "setting"),
    normalization: str = "share_of_justifications",
    baseline: str = BASELINE,
    level: float = 0.95,
) -> pd.DataFrame:
    """Return the shares of surface- and content-level justifications (Figure 4, §2.6).

    Args:
        coded: One row per coded justification; needs `codes` (the coder's raw output) and
            the `by` columns.
        by: Grouping columns (pairs pooled unless `pair` is among them).
        normalization: `share_of_justifications` (% of justifications carrying the code; a
            justification may carry both) or `share_of_code_mentions` (% of all parsed code
            mentions, so surface + content = 100).
        baseline: The setting `delta_surface` is measured against.
        level: Confidence level of the Wilson intervals.

    Returns:
        `by` columns, `n`, `pct_surface`, `pct_content`, `pct_both`, `pct_unparseable`,
        Wilson bounds for surface and content, and `delta_surface` (points vs `baseline`
        within the same other `by` values).
    """
    by = list(by)
    _require(coded, ["codes", *by], "coded justifications")
    if normalization not in ("share_of_justifications", "share_of_code_mentions"):
        raise ValueError(f"unknown normalization {normalization!r}")
    parsed = [parse_codes(t) for t in coded["codes"]]
    df = coded.assign(
        content=[p[0] for p in parsed], surface=[p[1] for p in parsed], ok=[p[2] for p in parsed]
    )
    rows = []
    for key, g in df.groupby(by, sort=False):
        key = key if isinstance(key, tuple) else (key,)
        n = len(g)
        ks, kc = int(g["surface"].sum()), int(g["content"].sum())
        den = n if normalization == "share_of_justifications" else ks + kc
        row = dict(zip(by, key, strict=True))
        row.update(n=n, n_denominator=den)
        for name, k in (("surface", ks), ("content", kc)):
            low, high = stats.wilson_interval(k, den, level=level)
            row[f"pct_{name}"] = 100 * k / den if den else np.nan
            row[f"pct_{name}_low"], row[f"pct_{name}_high"] = 100 * float(low), 100 * float(high)
        row["pct_both"] = 100 * float((g["surface"] & g["content"]).mean())
        row["pct_unparseable"] = 100 * float((~g["ok"]).mean())
        rows.append(row)
    out = pd.DataFrame(rows)
    if out.empty or "setting" not in by:
        return out
    others = [c for c in by if c != "setting"]
    base = out[out["setting"] == baseline].set_index(others)["pct_surface"] if others else None
    if others:
        keys = list(out[others].itertuples(index=False, name=None))
        keys = [k[0] if len(others) == 1 else k for k in keys]
        out["delta_surface"] = out["pct_surface"].to_numpy() - np.array(
            [base.get(k, np.nan) for k in keys], dtype=float
        )
    else:
        b = out.loc[out["setting"] == baseline, "pct_surface"]
        out["delta_surface"] = out["pct_surface"] - (b.iloc[0] if len(b) else np.nan)
    return out


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
