"""A judge's report card: every trust measure its data supports, on one page.

The card's unit is a **judge key** `<source>:<judge id>` (e.g. `llmbar:GPT-4.Vanilla`,
`umass_llm_eval_triviaqa:GPT-4.umass`, `faithbench:gpt-4-turbo.faithbench`). The same model
appears under different ids in different sources (LLMBar "GPT-4.Vanilla", UMass "GPT-4",
FaithBench "gpt-4-turbo" — different prompts, model versions and tasks), so a key never
merges sources: each (source, judge id) gets its own card and its own row.

`collect_measures` gathers, for one judge of one source's tables, every measure that applies,
each computed by the analysis modules (nothing is re-implemented here):

Measures (module → applies to):

- `ca` per split and pooled (`metrics.pairwise_rates`): pairwise, both orders, gold;
- `consistency`, `pos_a_rate` + sign-test p (`metrics.position_preference`): both orders;
- `p_longer`, `length_coef` (`length_bias.picks_longer`, `length_regression`): pairwise;
- `context_trend` (`context_length.context_trend`): items with a context text and gold;
- `kappa_human`, `agreement_human`, `fpr`, `fnr` (`correctness.correctness_rates`, or
  `pairwise_kappa` for pairwise judges): gold labels;
- `self_gap` (`correctness.self_vs_others`): correctness judges with a model family;
- `kappa_answered`, `answered_gap` (`correctness.kappa_by_answered`): judges that were also
  exam-takers;
- `kappa_reference` (`reference_quality.strategy_conditions` + `pairwise_kappa`): a model run
  with and without a reference;
- `alpha_peers` (`agreement.alpha_table`): at least 2 other judges with the same prompt;
- `invalid_rate`, `cost_per_1k`, `latency_per_1k` (`stats.wilson_interval`,
  `stats.bootstrap_mean`): every judge.

Every row carries a value, an interval and n, or `status = "n/a"` and a `note` saying why
(e.g. "no two-order data"). `traffic_lights` grades the headline of each bias against
thresholds; `comparison_table` / `comparison_html` lay the headlines side by side (an
evaluator leaderboard in the spirit of alpaca_eval's), sortable in the exported HTML.
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from judgelab.analyses.correctness import grading as correctness
from judgelab.analyses.juries import agreement
from judgelab.analyses.length import bias as length_bias
from judgelab.analyses.length import context as context_length
from judgelab.analyses.pairwise import metrics
from judgelab.analyses.reference import conditions as reference_quality
from judgelab.core import lengths, stats
from judgelab.data import catalog
from judgelab.reporting import notebook

COLUMNS = (
    "source",
    "judge",
    "measure",
    "scope",
    "headline",
    "value",
    "ci_low",
    "ci_high",
    "n",
    "p_value",
    "status",
    "note",
)

#: measure → (label shown on the page, what it measures). Order = order on the page.
MEASURES: dict[str, tuple[str, str]] = {
    "ca": ("Consistent accuracy", "correct in both presentation orders (pooled over splits)"),
    "kappa_human": ("Kappa vs humans", "Cohen's kappa with the gold / human labels"),
    "agreement_human": ("Agreement with humans", "share of verdicts equal to the human label"),
    "fpr": ("FPR", "says Correct (Consistent) when the human says Incorrect (Hallucinated)"),
    "fnr": ("FNR", "says Incorrect (Hallucinated) when the human says Correct (Consistent)"),
    "consistency": ("Consistency", "same verdict in both presentation orders"),
    "pos_a_rate": ("P(picks position A)", "share of decisive verdicts for the first response"),
    "p_longer": ("P(picks longer)", "balanced over gold when known (0.5 = no length bias)"),
    "length_coef": ("Length coefficient", "log-odds per SD of the length difference"),
    "context_trend": ("Context trend", "log-odds of a correct judgment per doubling of context"),
    "self_gap": ("Self − others FPR", "FPR on its own family's answers minus on others'"),
    "kappa_answered": ("Kappa by answered", "kappa on questions it answered right / wrong"),
    "answered_gap": ("Answered gap", "kappa(answered correctly) − kappa(answered incorrectly)"),
    "kappa_reference": ("Kappa by reference", "pairwise kappa per reference condition"),
    "alpha_peers": (
        "Alpha with peers",
        "Krippendorff's alpha (nominal) with the same-prompt judges",
    ),
    "invalid_rate": ("Invalid outputs", "share of outputs that could not be parsed"),
    "cost_per_1k": ("Cost / 1k judgments", "USD per 1,000 judgments"),
    "latency_per_1k": ("Latency / 1k judgments", "seconds per 1,000 judgments"),
}

#: Traffic-light rows: bias → (threshold key, headline measure, how the value is graded).
#: `deviation` grades |value − 0.5|, `drop` grades max(−value, 0), `abs` grades |value|,
#: `higher` wants value ≥ the thresholds, `lower` wants value ≤ them.
LIGHTS: dict[str, tuple[str, str, str]] = {
    "Position bias": ("position", "pos_a_rate", "deviation"),
    "Order consistency": ("consistency", "consistency", "higher"),
    "Length bias": ("length", "p_longer", "deviation"),
    "Context length": ("context", "context_trend", "drop"),
    "Self-preference": ("self_preference", "self_gap", "abs"),
    "Answerability": ("answerability", "answered_gap", "abs"),
    "Agreement with humans": ("human_agreement", "kappa_human", "higher"),
    "Invalid outputs": ("invalid", "invalid_rate", "lower"),
}

#: Default thresholds [green limit, amber limit] per traffic-light row (workbench choices,
#: not paper values; notebooks pass their own and show them on the page).
DEFAULT_THRESHOLDS: dict[str, list[float]] = {
    "position": [0.05, 0.15],
    "consistency": [0.8, 0.6],
    "length": [0.05, 0.15],
    "context": [0.1, 0.3],
    "self_preference": [0.05, 0.15],
    "answerability": [0.1, 0.25],
    "human_agreement": [0.6, 0.4],
    "invalid": [0.02, 0.1],
}

LIGHT_COLOURS = {
    "green": "#1a9850",
    "amber": "#f0a30a",
    "red": "#d73027",
    "grey": "#9e9e9e",
    "n/a": "#ffffff",
}
_EPS = 1e-9  # rates such as 0.55 − 0.5 carry float noise; a boundary value counts as inside


class CardKey(NamedTuple):
    """One card: a judge id within one source (never merged across sources)."""

    source: str
    judge: str

    def __str__(self) -> str:
        return f"{self.source}:{self.judge}"


class CardSource(NamedTuple):
    """A loaded source and the judges of it that get a card."""

    requested: str
    loaded: catalog.Loaded
    judges: list[str]
    note: str


def parse_key(key: str) -> CardKey:
    """Split `<source>:<judge>`; a `sample:<set>` source keeps its prefix.

    >>> parse_key("llmbar:GPT-4.Vanilla")
    CardKey(source='llmbar', judge='GPT-4.Vanilla')
    >>> parse_key("sample:nfl_correctness:GPT-4.umass")
    CardKey(source='sample:nfl_correctness', judge='GPT-4.umass')
    """
    parts = key.split(":")
    cut = 2 if key.startswith(catalog.SAMPLE_PREFIX) else 1
    if len(parts) <= cut or not all(parts[:cut]) or not ":".join(parts[cut:]):
        raise ValueError(
            f"judge key {key!r}: expected '<source>:<judge id>' "
            "(e.g. 'llmbar:GPT-4.Vanilla'; a sample source is 'sample:<set>:<judge id>')"
        )
    return CardKey(":".join(parts[:cut]), ":".join(parts[cut:]))


def load_sources(
    keys: Sequence[str],
    *,
    fallbacks: Mapping[str, str] | None = None,
    splits: Mapping[str, Sequence[str]] | None = None,
) -> dict[str, CardSource]:
    """Load every source named by the judge keys, restricted to its judges and splits.

    A source that cannot be had falls back to `fallbacks[source]` (a sample set, shown with
    a banner). The requested judge ids do not exist there, so a fallback card covers the
    sample's judges instead (the first one when a single key asked for that source), and
    `note` says so.

    Raises:
        ValueError: a key is malformed, or names a judge the (real) source does not have.
    """
    fallbacks = dict(fallbacks or {})
    splits = dict(splits or {})
    wanted: dict[str, list[str]] = {}
    for key in keys:
        k = parse_key(key)
        wanted.setdefault(k.source, [])
        if k.judge not in wanted[k.source]:
            wanted[k.source].append(k.judge)
    out: dict[str, CardSource] = {}
    for source, judges in wanted.items():
        loaded = catalog.load_source(source, fallback=fallbacks.get(source))
        if loaded.judgments is None or loaded.judgments.empty:
            raise ValueError(f"source {source!r} has no judgments to card")
        table = catalog.select(loaded, splits=list(splits.get(source, [])))
        loaded = loaded._replace(judgments=table)
        note = ""
        if loaded.source != source:
            present = sorted(table["judge"].unique())
            chosen = present[:1] if len(keys) == 1 else present
            note = f"{source} unavailable: showing sample judges {chosen} instead of {judges}"
            judges = chosen
        else:
            metrics.select_judges(table, judges)  # raises with the known ids
        label = loaded.source
        if label in out:  # two sources fell back to the same sample set
            merged = list(dict.fromkeys([*out[label].judges, *judges]))
            out[label] = out[label]._replace(judges=merged)
            continue
        out[label] = CardSource(source, loaded, list(judges), note)
    return out


def card_keys(sources: Mapping[str, CardSource]) -> list[CardKey]:
    """Return the keys that get a card, in the order requested."""
    return [CardKey(label, j) for label, cs in sources.items() for j in cs.judges]


def show_banners(sources: Mapping[str, CardSource]) -> None:
    """Display the data-source banner of every source (a red warning for sample data)."""
    from IPython.display import HTML, display

    parts = [
        notebook.banner_html(cs.loaded.source, cs.loaded.items, reason=cs.loaded.reason)
        for cs in sources.values()
    ]
    display(HTML("".join(parts)))


def judges_overview(sources: Mapping[str, CardSource]) -> pd.DataFrame:
    """Return one row per carded judge: key, model, prompt, task, orders, gold, n.

    Returns:
        `key`, `source`, `judge`, `model`, `prompt`, `task`, `n_judgments`, `n_items`,
        `orders`, `samples`, `has_gold`, `note`.
    """
    rows = []
    for label, cs in sources.items():
        table = cs.loaded.judgments
        tasks = cs.loaded.items.set_index(["benchmark", "split", "item_id"])["task"]
        for judge in cs.judges:
            j = table[table["judge"] == judge]
            keys = pd.MultiIndex.from_frame(j[["benchmark", "split", "item_id"]].astype(str))
            task = tasks.reindex(keys).dropna().astype(str).unique()
            rows.append(
                {
                    "key": str(CardKey(label, judge)),
                    "source": label,
                    "judge": judge,
                    "model": ", ".join(map(str, j["model"].dropna().unique())),
                    "prompt": ", ".join(map(str, j["prompt"].dropna().unique())),
                    "task": ", ".join(sorted(task)),
                    "n_judgments": len(j),
                    "n_items": j[["benchmark", "split", "item_id"]].drop_duplicates().shape[0],
                    "orders": int(j["order"].nunique()),
                    "samples": int(j["sample"].nunique()),
                    "has_gold": bool(j["correct"].notna().any()),
                    "note": cs.note,
                }
            )
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------- collector


def _row(source: str, judge: str, measure: str, scope: str = "", **kw: Any) -> dict:
    row = dict.fromkeys(COLUMNS, np.nan)
    row.update(source=source, judge=judge, measure=measure, scope=scope, headline=False)
    row.update(status="ok", note="")
    row.update(kw)
    return row


def _na(source: str, judge: str, measure: str, why: str) -> dict:
    return _row(source, judge, measure, headline=True, status="n/a", note=why, n=0)


def _rate_rows(
    source: str, judge: str, measure: str, frame: pd.DataFrame, *, headline_scope: str
) -> list[dict]:
    """Turn rows with scope/value/ci_low/ci_high/n(/p_value/note) into card rows."""
    rows = []
    for r in frame.itertuples(index=False):
        value = float(r.value)
        rows.append(
            _row(
                source,
                judge,
                measure,
                str(r.scope),
                headline=str(r.scope) == headline_scope,
                value=value,
                ci_low=float(r.ci_low),
                ci_high=float(r.ci_high),
                n=int(r.n),
                p_value=float(getattr(r, "p_value", np.nan)),
                status="ok" if not math.isnan(value) else "n/a",
                note=str(getattr(r, "note", "") or "")
                or ("" if not math.isnan(value) else "undefined here (no units or no gold)"),
            )
        )
    return rows


def _pseudo_choices(judgments: pd.DataFrame) -> pd.DataFrame:
    """Recode categorical pointwise verdicts as nominal codes `agreement.ratings` reads.

    Nominal alpha depends only on which values are equal, so mapping the (at most three)
    verdict categories to pos/neg/tie leaves it unchanged.
    """
    cats = sorted(judgments["verdict"].dropna().astype(str).unique())
    if len(cats) > 3:
        raise ValueError(f"more than 3 verdict categories for nominal alpha: {cats[:5]}")
    code = dict(zip(cats, ("pos", "neg", "tie"), strict=False))
    return judgments.assign(
        chosen=judgments["verdict"].astype(object).map(code), order=0, sample=0
    )


def _alpha(
    judgments: pd.DataFrame, judges: Sequence[str], *, pointwise: bool, n_boot: int, seed: int
) -> dict:
    data = judgments[judgments["judge"].isin(list(judges))]
    if pointwise:
        data = _pseudo_choices(data)
    table = agreement.alpha_table(
        data,
        units="item_order" if pointwise else "item",
        pool=None,
        level_of_measurement="nominal",
        n_boot=n_boot,
        seed=seed,
    )
    pooled = table[table["split"] == metrics.POOLED]
    row = pooled.iloc[0] if len(pooled) else (table.iloc[0] if len(table) else None)
    if row is None:
        return {"value": np.nan, "ci_low": np.nan, "ci_high": np.nan, "n": 0}
    return {
        "value": float(row["alpha"]),
        "ci_low": float(row["ci_low"]),
        "ci_high": float(row["ci_high"]),
        "n": int(row["n_units"]),
    }


def _map_labels(frame: pd.DataFrame, column: str, label_map: Mapping[str, str]) -> pd.Series:
    return frame[column].astype(object).map(lambda v: v if pd.isna(v) else label_map.get(v, v))


def _with_clusters(ctable: pd.DataFrame, items: pd.DataFrame) -> pd.DataFrame:
    """Add `cluster`, the bootstrap unit of the correctness measures.

    The question (spec 001 §4.4) when items carry one; otherwise (FaithBench: summaries of a
    shared source document, no question) the context the item was judged against, else the
    item itself — never one cluster for the whole table.
    """
    keys = ["benchmark", "split", "item_id"]
    it = items[keys].astype(str).copy()
    question = items["question"].fillna("").astype(str).to_numpy()
    context = items["context"].fillna("").astype(str).to_numpy() if "context" in items else ""
    it["cluster"] = np.where(
        question != "",
        "q|" + question,
        np.where(context != "", "c|" + context, "i|" + it["item_id"].to_numpy()),
    )
    it["cluster"] = it["benchmark"] + "|" + it["split"] + "|" + it["cluster"]
    return ctable.merge(it, on=keys, how="left", validate="many_to_one")


def collect_measures(
    items: pd.DataFrame,
    judgments: pd.DataFrame,
    *,
    judge: str,
    source: str = "",
    judge_family: Mapping[str, str] | None = None,
    candidate_family: Mapping[str, str] | None = None,
    judge_candidate: Mapping[str, str] | None = None,
    label_map: Mapping[str, str] | None = None,
    reference_strategies: Mapping[str, str] | None = None,
    peer_column: str = "prompt",
    unit: str = "words",
    invalid_policy: str = "repo",
    n_boot: int = 1000,
    seed: int = 0,
    level: float = 0.95,
    _alpha_memo: dict | None = None,
) -> pd.DataFrame:
    """Collect every trust measure that applies to one judge of one source's tables.

    Only greedy judgments (`sample` 0) are used. Measures that do not apply get one row
    with `status = "n/a"` and the reason in `note`.

    Args:
        items: The source's items table; needs `benchmark`, `split`, `item_id`, `task`,
            `gold`, `question`, `meta` and the texts lengths are counted from.
        judgments: The source's judgments table (every judge: peers, the judge's model
            under other prompts); needs the judgments schema columns.
        judge: The judge id carded.
        source: The source label written into every row.
        judge_family: Judge id → model family (self-preference; see `correctness.mark_self`).
        candidate_family: Candidate model or glob → model family.
        judge_candidate: Judge id → the candidate model that is the same model
            (answerability; see `correctness.mark_answered`).
        label_map: Gold / verdict label → Correct/Incorrect for correctness measures
            (e.g. {"Consistent": "Correct", "Hallucinated": "Incorrect"}).
        reference_strategies: Prompt → reference name (`reference_quality.strategy_conditions`);
            applies when the judge's prompt is one of them and its model ran another.
        peer_column: Judges sharing this column's value with the judge are its peers.
        unit: Length unit (`lengths.add_lengths`).
        invalid_policy: Pairwise invalid policy (`metrics.item_outcomes`).
        n_boot: Bootstrap resamples B.
        seed: Seed of every bootstrap.
        level: Confidence level of every interval.

    Returns:
        One row per measure × scope: `source`, `judge`, `measure` (a key of `MEASURES`),
        `scope` (split, condition, subset, … ; the headline row of each measure is marked
        `headline`), `value`, `ci_low`, `ci_high`, `n`, `p_value`, `status` (ok / n/a),
        `note`.

    Raises:
        ValueError: the judge has no judgments.
    """
    metrics._require(judgments, ["judge", "benchmark", "split", "item_id", "sample"], "card")
    all_j = judgments[judgments["sample"] == 0]
    j = all_j[all_j["judge"] == judge].reset_index(drop=True)
    if j.empty:
        known = sorted(judgments["judge"].unique())
        raise ValueError(f"judge {judge!r} has no judgments in {source!r}; known: {known}")
    label_map = dict(label_map or {})
    keys = ["benchmark", "split", "item_id"]
    item_keys = items[keys].astype(str)
    tasks = pd.Series(items["task"].to_numpy(), index=pd.MultiIndex.from_frame(item_keys))
    jkeys = pd.MultiIndex.from_frame(j[keys].astype(str))
    task_of = tasks.reindex(jkeys)
    pairwise = bool((task_of == "pairwise").any())
    both_orders = pairwise and j["order"].nunique() == 2
    has_gold = bool(j["correct"].notna().any())
    rows: list[dict] = []

    def add(measure: str, frame: pd.DataFrame, headline_scope: str) -> None:
        rows.extend(_rate_rows(source, judge, measure, frame, headline_scope=headline_scope))

    def na(measure: str, why: str) -> None:
        rows.append(_na(source, judge, measure, why))

    has_lengths = "len_unit" in items and (items["len_unit"].astype(str) == unit).all()
    lens = items if has_lengths else lengths.add_lengths(items, unit=unit)
    table = length_bias.item_table(lens, j, judges=[judge], invalid_policy=invalid_policy)

    # --- pairwise measures
    no_pair = "pointwise judgments: no pair of responses"
    if pairwise and both_orders:
        outcomes = metrics.item_outcomes(j, invalid_policy=invalid_policy)
        rates = metrics.pairwise_rates(outcomes, n_boot=n_boot, seed=seed, level=level)
        rates = rates[rates["aggregation"] != metrics.MEAN_OF_SPLITS]

        def scoped(metric: str) -> pd.DataFrame:
            r = metrics.rates_for(rates, metric=metric)
            return r.assign(scope=r["split"], note="")

        if has_gold:
            add("ca", scoped("ca"), metrics.POOLED)
        else:
            na("ca", "no gold labels in this source")
        add("consistency", scoped("cons"), metrics.POOLED)
        needed = ["pos_a_rate", "run_gap", "share_biased_first", "share_biased_second"]
        pref = metrics.position_preference(rates[rates["metric"].isin(needed)])
        pref = pref.assign(scope=pref["split"], value=pref["pos_a_rate"], n=pref["n_verdicts"])
        add("pos_a_rate", pref, metrics.POOLED)
    else:
        why = no_pair if not pairwise else "no two-order data (each pair shown in one order)"
        for m in ("ca", "consistency", "pos_a_rate"):
            na(m, why)
    if pairwise:
        verdicts = length_bias.pairwise_verdicts(lens, j, judges=[judge])
        picks = length_bias.picks_longer(verdicts, n_boot=n_boot, seed=seed, level=level)
        head = "balanced" if has_gold else "all"
        add("p_longer", picks.assign(scope=picks["condition"], note=""), head)
        reg = length_bias.length_regression(verdicts, level=level)
        reg = reg[reg["term"] == "length"]
        add("length_coef", reg.assign(scope="length", value=reg["coef"]), "length")
    else:
        na("p_longer", no_pair)
        na("length_coef", no_pair)

    # --- context length
    has_context = bool((table["len_context"].fillna(0) > 0).any()) if len(table) else False
    if not has_context:
        na("context_trend", "no context text in this source's items")
    elif not table["correct"].notna().any():
        na("context_trend", "no gold labels to score correctness against")
    else:
        trend = context_length.context_trend(table, level=level)
        add(
            "context_trend",
            trend.assign(scope="per doubling", value=trend["coef"]),
            "per doubling",
        )

    # --- agreement with humans and the correctness measures
    if pairwise:
        if has_gold:
            final = correctness.pairwise_final(j, groups=("judge", "benchmark", "split"))
            kap = correctness.pairwise_kappa(final, n_boot=n_boot, seed=seed, level=level)
            add("kappa_human", kap.assign(scope="pairwise"), "pairwise")
        else:
            na("kappa_human", "no gold labels in this source")
        for m in ("agreement_human", "fpr", "fnr"):
            na(m, "pairwise judgments: no Correct/Incorrect grading")
        for m in ("self_gap", "kappa_answered", "answered_gap"):
            na(m, "needs Correct/Incorrect grading of known candidates' answers")
    else:
        mapped_items = items.assign(gold=_map_labels(items, "gold", label_map))
        mapped_j = j.assign(verdict=_map_labels(j, "verdict", label_map))
        try:
            ctable = _with_clusters(
                correctness.correctness_table(mapped_items, mapped_j, judges=[judge]), items
            )
        except ValueError as exc:
            ctable = None
            why = f"labels are not Correct/Incorrect (give label_map): {exc}"
        if ctable is None or ctable.empty:
            why = why if ctable is None else "no human labels for this judge's items"
            for m in ("kappa_human", "agreement_human", "fpr", "fnr", "self_gap"):
                na(m, why)
            for m in ("kappa_answered", "answered_gap"):
                na(m, why)
        else:
            crates = correctness.correctness_rates(
                ctable, cluster="cluster", n_boot=n_boot, seed=seed, level=level
            )
            for m, name in (
                ("kappa", "kappa_human"),
                ("agreement", "agreement_human"),
                ("fpr", "fpr"),
                ("fnr", "fnr"),
            ):
                part = crates[crates["metric"] == m]
                add(name, part.assign(scope=m), m)
            if judge in (judge_family or {}):
                marked = correctness.mark_self(
                    ctable, judge_family=judge_family, candidate_family=candidate_family or {}
                )
                sv = correctness.self_vs_others(
                    marked, cluster="cluster", n_boot=n_boot, seed=seed, level=level
                )
                if sv.empty:
                    na("self_gap", "none of the graded answers is from its own model family")
                else:
                    sv = sv.assign(
                        scope=sv["metric"],
                        value=sv["diff"],
                        ci_low=sv["diff_low"],
                        ci_high=sv["diff_high"],
                        n=sv["n_self"] + sv["n_others"],
                        note="self "
                        + sv["self"].round(3).astype(str)
                        + " vs others "
                        + sv["others"].round(3).astype(str),
                    )
                    add("self_gap", sv, "fpr")
            else:
                na("self_gap", "no model family given for this judge (judge_family)")
            if judge in (judge_candidate or {}):
                marked = correctness.mark_answered(ctable, judge_candidate=judge_candidate)
                ka = correctness.kappa_by_answered(
                    marked, cluster="cluster", n_boot=n_boot, seed=seed, level=level
                )
                ka = ka[ka["metric"] == "kappa"]
                add("kappa_answered", ka.assign(scope=ka["subset"].astype(str)), "overall")
                by = ka.set_index(ka["subset"].astype(str))
                good, bad = "answered_correctly", "answered_incorrectly"
                if good in by.index and bad in by.index:
                    gap = float(by.loc[good, "value"] - by.loc[bad, "value"])
                    rows.append(
                        _row(
                            source,
                            judge,
                            "answered_gap",
                            "correctly − incorrectly",
                            headline=True,
                            value=gap,
                            n=int(by.loc[good, "n"] + by.loc[bad, "n"]),
                            status="ok" if not math.isnan(gap) else "n/a",
                            note="difference of two independently resampled subsets; "
                            "see kappa_answered for their intervals",
                        )
                    )
                else:
                    na("answered_gap", "one answered subset is empty")
            else:
                msg = "the judge was not an exam-taker of this source (judge_candidate)"
                na("kappa_answered", msg)
                na("answered_gap", msg)

    # --- reference conditions of the judge's model
    strategies = dict(reference_strategies or {})
    prompt = str(j["prompt"].iloc[0])
    model = str(j["model"].iloc[0])
    same_model = all_j[all_j["model"].astype(str) == model]
    present = {s: r for s, r in strategies.items() if s in set(same_model["prompt"].astype(str))}
    if not pairwise:
        na("kappa_reference", no_pair)
    elif prompt not in strategies or len(present) < 2:
        na("kappa_reference", f"model {model!r} was not run with and without a reference here")
    elif not has_gold:
        na("kappa_reference", "no gold labels in this source")
    else:
        cond = reference_quality.strategy_conditions(same_model, strategies=present)
        common = cond.groupby(keys)["condition"].transform("nunique") == len(present)
        cond = cond[common.to_numpy()]
        final = correctness.pairwise_final(
            cond, groups=("judge", "condition", "benchmark", "split")
        )
        kap = correctness.pairwise_kappa(
            final, by=("condition",), n_boot=n_boot, seed=seed, level=level
        )
        own = f"reference={strategies[prompt]}" if "=" not in strategies[prompt] else prompt
        add(
            "kappa_reference",
            kap.assign(
                scope=kap["condition"], note=f"model {model}, items run in every condition"
            ),
            own,
        )

    # --- agreement with the other judges of the same prompt, on the units this judge rated
    rated = all_j.merge(j[keys].drop_duplicates(), on=keys, how="inner")
    group_value = str(j[peer_column].iloc[0])
    rated = rated[rated[peer_column].astype(str) == group_value]
    # keep the units at least two peers rated, so alpha with and without the judge share units
    by_unit = rated[rated["judge"] != judge].groupby(keys)["judge"].nunique()
    shared = by_unit[by_unit >= 2].reset_index()[keys]
    rated = rated.merge(shared, on=keys, how="inner")
    units_sig = int(pd.util.hash_pandas_object(shared, index=False).sum())
    peers = sorted(
        set(rated.loc[rated[peer_column].astype(str) == group_value, "judge"]) - {judge}
    )
    if pairwise and not both_orders:
        na("alpha_peers", "no two-order data to consolidate labels")
    elif len(peers) < 2:
        na("alpha_peers", f"fewer than 2 other judges with {peer_column} {group_value!r}")
    else:
        memo = _alpha_memo if _alpha_memo is not None else {}
        for scope, group in (("with judge", [*peers, judge]), ("without judge", peers)):
            # judges of one pool usually rated the same units: the with-judge alpha is shared
            mkey = (source, tuple(sorted(group)), units_sig, not pairwise, n_boot, seed)
            if mkey not in memo:
                try:
                    memo[mkey] = _alpha(
                        rated, group, pointwise=not pairwise, n_boot=n_boot, seed=seed
                    )
                except ValueError as exc:
                    memo[mkey] = {"status": "n/a", "note": str(exc), "n": 0, "value": np.nan}
            a = {"note": f"{len(group)} judges ({peer_column} {group_value}), "
                 "on the units this judge rated", **memo[mkey]}  # fmt: skip
            rows.append(
                _row(source, judge, "alpha_peers", scope, headline=scope == "with judge", **a)
            )

    # --- reliability and cost
    valid = j["valid"].astype("boolean").fillna(False).to_numpy(dtype=bool) & j["verdict"].notna()
    k, n = int((~valid).sum()), len(j)
    low, high = stats.wilson_interval(k, n, level=level)
    rows.append(
        _row(
            source,
            judge,
            "invalid_rate",
            "judgments",
            headline=True,
            value=k / n,
            ci_low=float(low),
            ci_high=float(high),
            n=n,
            note="Wilson interval",
        )
    )
    for measure, column in (("cost_per_1k", "cost_usd"), ("latency_per_1k", "latency_s")):
        known = pd.to_numeric(j[column], errors="coerce").dropna().to_numpy(dtype=float)
        if known.size == 0:
            na(measure, f"{column} not recorded in this source")
            continue
        est = stats.bootstrap_mean(known, n_boot=n_boot, seed=seed, level=level)
        rows.append(
            _row(
                source,
                judge,
                measure,
                "per 1,000",
                headline=True,
                value=1000 * est.estimate,
                ci_low=1000 * est.low,
                ci_high=1000 * est.high,
                n=int(known.size),
                note=f"{known.size} of {n} judgments record it",
            )
        )
    out = pd.DataFrame(rows, columns=list(COLUMNS))
    order = {m: i for i, m in enumerate(MEASURES)}
    out["_o"] = out["measure"].map(order)
    out = out.sort_values("_o", kind="stable").drop(columns="_o").reset_index(drop=True)
    out["n"] = out["n"].fillna(0).astype(int)
    out["headline"] = out["headline"].astype(bool)
    return out


def collect(sources: Mapping[str, CardSource], **options: Any) -> pd.DataFrame:
    """Collect the measures of every carded judge (`collect_measures` options apply to all).

    Returns:
        The `collect_measures` rows of every judge, plus `key` (`<source>:<judge>`) first.
    """
    memo: dict = {}
    parts = []
    unit = options.get("unit", "words")
    for label, cs in sources.items():
        items = lengths.add_lengths(cs.loaded.items, unit=unit)  # once per source
        for judge in cs.judges:
            part = collect_measures(
                items,
                cs.loaded.judgments,
                judge=judge,
                source=label,
                _alpha_memo=memo,
                **options,
            )
            parts.append(part)
    out = pd.concat(parts, ignore_index=True)
    out.insert(0, "key", out["source"] + ":" + out["judge"])
    return out


def headlines(measures: pd.DataFrame) -> pd.DataFrame:
    """Return the headline row of every judge × measure (n/a rows included)."""
    out = measures[measures["headline"].astype(bool)]
    return out.drop_duplicates(["source", "judge", "measure"]).reset_index(drop=True)


def measures_view(measures: pd.DataFrame, *, digits: int = 3) -> pd.DataFrame:
    """Return the measures as display rows: label, scope, "value [low, high]", n, p, note."""

    def fmt(r: pd.Series) -> str:
        if r["status"] != "ok":
            return "n/a"
        v = f"{r['value']:.{digits}f}"
        if not (pd.isna(r["ci_low"]) or pd.isna(r["ci_high"])):
            v += f" [{r['ci_low']:.{digits}f}, {r['ci_high']:.{digits}f}]"
        return v

    out = pd.DataFrame(
        {
            "judge": measures["source"] + ":" + measures["judge"],
            "measure": measures["measure"].map(lambda m: MEASURES[m][0]),
            "scope": measures["scope"],
            "value [95% CI]": measures.apply(fmt, axis=1),
            "n": measures["n"],
            "p": measures["p_value"].map(lambda p: "" if pd.isna(p) else f"{p:.3g}"),
            "note": measures["note"],
        }
    )
    return out.reset_index(drop=True)


# --------------------------------------------------------------------------- traffic lights


def traffic_light(value: float, *, green: float, amber: float, higher_is_better: bool) -> str:
    """Grade one value: green, amber or red; grey when the value is NaN.

    Boundaries are inclusive: a value exactly at the green limit is green, exactly at the
    amber limit amber (within 1e-9, so 0.55 − 0.5 counts as 0.05).

    >>> traffic_light(0.05, green=0.05, amber=0.15, higher_is_better=False)
    'green'
    >>> traffic_light(0.6, green=0.8, amber=0.6, higher_is_better=True)
    'amber'
    """
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "grey"
    if higher_is_better:
        if green < amber:
            raise ValueError(f"higher-is-better thresholds need green ≥ amber ({green}, {amber})")
        return "green" if value >= green - _EPS else "amber" if value >= amber - _EPS else "red"
    if green > amber:
        raise ValueError(f"lower-is-better thresholds need green ≤ amber ({green}, {amber})")
    return "green" if value <= green + _EPS else "amber" if value <= amber + _EPS else "red"


def _graded(value: float, how: str) -> float:
    if how == "deviation":
        return abs(value - 0.5)
    if how == "drop":
        return max(-value, 0.0)
    if how == "abs":
        return abs(value)
    return value


def _rule_text(how: str, measure: str, green: float, amber: float) -> str:
    label = MEASURES[measure][0]
    quantity = {
        "deviation": f"|{label} − 0.5|",
        "drop": f"max(−{label}, 0)",
        "abs": f"|{label}|",
    }.get(how, label)
    if how == "higher":
        return f"green: {quantity} ≥ {green:g}; amber: ≥ {amber:g}; red: below"
    return f"green: {quantity} ≤ {green:g}; amber: ≤ {amber:g}; red: above"


def threshold_table(thresholds: Mapping[str, Sequence[float]]) -> pd.DataFrame:
    """Return the traffic-light rules as shown on the page: bias, measure, rule.

    Raises:
        KeyError: a threshold the lights need is missing.
    """
    rows = []
    for bias, (tkey, measure, how) in LIGHTS.items():
        if tkey not in thresholds:
            raise KeyError(f"thresholds: missing {tkey!r} (needed for {bias!r})")
        green, amber = (float(x) for x in thresholds[tkey])
        rows.append(
            {
                "bias": bias,
                "threshold": tkey,
                "measure": MEASURES[measure][0],
                "rule": _rule_text(how, measure, green, amber),
            }
        )
    return pd.DataFrame(rows)


def traffic_lights(
    measures: pd.DataFrame,
    *,
    thresholds: Mapping[str, Sequence[float]] | None = None,
    min_n: int = 30,
) -> pd.DataFrame:
    """Grade each judge's headline per bias: one row per judge × `LIGHTS` row.

    A bias whose measure does not apply gets `light = "n/a"` with the reason; one with fewer
    than `min_n` units (n) gets `grey` ("too few").

    Args:
        measures: `collect_measures` / `collect` output.
        thresholds: Threshold key → [green limit, amber limit] (`DEFAULT_THRESHOLDS`).
        min_n: Smallest n graded.

    Returns:
        `source`, `judge`, `bias`, `measure`, `value`, `ci_low`, `ci_high`, `n`, `graded`
        (the quantity compared with the thresholds), `light`, `rule`, `note`.
    """
    thresholds = dict(DEFAULT_THRESHOLDS if thresholds is None else thresholds)
    rules = threshold_table(thresholds).set_index("bias")["rule"]
    head = headlines(measures).set_index(["source", "judge", "measure"])
    judges = measures[["source", "judge"]].drop_duplicates().itertuples(index=False)
    rows = []
    for source, judge in judges:
        for bias, (tkey, measure, how) in LIGHTS.items():
            green, amber = (float(x) for x in thresholds[tkey])
            base = {"source": source, "judge": judge, "bias": bias, "measure": measure}
            key = (source, judge, measure)
            if key not in head.index:
                rows.append({**base, "light": "n/a", "note": "not collected", "n": 0})
                continue
            r = head.loc[key]
            out = {
                **base,
                "value": r["value"],
                "ci_low": r["ci_low"],
                "ci_high": r["ci_high"],
                "n": int(r["n"]),
                "rule": rules[bias],
                "note": r["note"],
            }
            if r["status"] != "ok":
                out["light"] = "n/a"
            elif int(r["n"]) < min_n:
                out["light"] = "grey"
                out["note"] = f"too few to grade (n {int(r['n'])} < {min_n})"
            else:
                graded = _graded(float(r["value"]), how)
                out["graded"] = graded
                out["light"] = traffic_light(
                    graded, green=green, amber=amber, higher_is_better=how == "higher"
                )
            rows.append(out)
    cols = ["source", "judge", "bias", "measure", "value", "ci_low", "ci_high", "n", "graded",
            "light", "rule", "note"]  # fmt: skip
    return pd.DataFrame(rows, columns=cols)


# --------------------------------------------------------------------------- HTML views


class Html(str):
    """An HTML fragment that notebooks display as HTML (and nbconvert exports verbatim)."""

    def _repr_html_(self) -> str:
        return str(self)


_DOT = (
    '<span class="jl-light jl-{light}" title="{light}" style="display:inline-block;width:14px;'
    "height:14px;border-radius:7px;border:1px solid #555;background:{colour};"
    'vertical-align:middle"></span>'
)


def _dot(light: str) -> str:
    return _DOT.format(light=html.escape(light), colour=LIGHT_COLOURS.get(light, "#fff"))


def _fmt(value: float, low: float = np.nan, high: float = np.nan, digits: int = 3) -> str:
    if value is None or pd.isna(value):
        return "–"
    text = f"{value:.{digits}f}"
    if not (pd.isna(low) or pd.isna(high)):
        text += f" [{low:.{digits}f}, {high:.{digits}f}]"
    return text


def lights_view(lights: pd.DataFrame) -> Html:
    """Return the traffic-light summary: one row per bias for one judge, a matrix for many."""
    style = "border-collapse:collapse;font-size:13px"
    cell = "border:1px solid #ccc;padding:4px 8px;text-align:left"
    judges = lights[["source", "judge"]].drop_duplicates()
    if len(judges) == 1:
        body = []
        for r in lights.itertuples(index=False):
            body.append(
                f"<tr><td style='{cell}'>{_dot(r.light)} {html.escape(r.light)}</td>"
                f"<td style='{cell}'><b>{html.escape(r.bias)}</b></td>"
                f"<td style='{cell}'>{html.escape(MEASURES[r.measure][0])}</td>"
                f"<td style='{cell}'>{_fmt(r.value, r.ci_low, r.ci_high)}</td>"
                f"<td style='{cell}'>{int(r.n) if not pd.isna(r.n) else 0}</td>"
                f"<td style='{cell}'>{html.escape(str(r.rule) if not pd.isna(r.rule) else '')}"
                f"</td><td style='{cell}'>{html.escape(str(r.note or ''))}</td></tr>"
            )
        head = "".join(
            f"<th style='{cell}'>{h}</th>"
            for h in ("light", "bias", "measure", "value [95% CI]", "n", "threshold rule", "note")
        )
        return Html(
            f"<table class='jl-lights' style='{style}'><thead><tr>{head}</tr></thead>"
            f"<tbody>{''.join(body)}</tbody></table>"
        )
    biases = list(dict.fromkeys(lights["bias"]))
    head = f"<th style='{cell}'>judge</th>" + "".join(
        f"<th style='{cell}'>{html.escape(b)}</th>" for b in biases
    )
    body = []
    for (source, judge), block in lights.groupby(["source", "judge"], sort=False):
        by = block.set_index("bias")
        cells = "".join(
            f"<td style='{cell};text-align:center' title='{html.escape(str(by.loc[b, 'note']))}'>"
            f"{_dot(by.loc[b, 'light'])}</td>"
            for b in biases
        )
        body.append(f"<tr><td style='{cell}'>{html.escape(f'{source}:{judge}')}</td>{cells}</tr>")
    return Html(
        f"<table class='jl-lights' style='{style}'><thead><tr>{head}</tr></thead>"
        f"<tbody>{''.join(body)}</tbody></table>"
    )


#: Headline measures in the comparison table (value columns), in order.
COMPARISON_MEASURES = (
    "ca",
    "kappa_human",
    "agreement_human",
    "fpr",
    "fnr",
    "consistency",
    "pos_a_rate",
    "p_longer",
    "length_coef",
    "context_trend",
    "self_gap",
    "answered_gap",
    "alpha_peers",
    "invalid_rate",
    "cost_per_1k",
    "latency_per_1k",
)


def comparison_table(measures: pd.DataFrame, lights: pd.DataFrame | None = None) -> pd.DataFrame:
    """Return one row per judge with each headline measure's value, interval and n.

    Columns: `key`, `source`, `judge`, then per measure `<m>`, `<m>_low`, `<m>_high`,
    `<m>_n` (NaN where it does not apply), then `n_green`, `n_amber`, `n_red` when `lights`
    is given. Rows keep the order of the judges in `measures`.
    """
    head = headlines(measures)
    judges = measures[["source", "judge"]].drop_duplicates().reset_index(drop=True)
    out = judges.copy()
    out.insert(0, "key", out["source"] + ":" + out["judge"])
    idx = head.set_index(["source", "judge", "measure"])
    for m in COMPARISON_MEASURES:
        for suffix, col in (("", "value"), ("_low", "ci_low"), ("_high", "ci_high"), ("_n", "n")):
            vals = []
            for s, jd in zip(judges["source"], judges["judge"], strict=True):
                ok = (s, jd, m) in idx.index and idx.loc[(s, jd, m), "status"] == "ok"
                vals.append(float(idx.loc[(s, jd, m), col]) if ok else np.nan)
            out[f"{m}{suffix}"] = vals
    if lights is not None:
        for light in ("green", "amber", "red"):
            counts = lights[lights["light"] == light].groupby(["source", "judge"]).size()
            out[f"n_{light}"] = [
                int(counts.get((s, jd), 0))
                for s, jd in zip(judges["source"], judges["judge"], strict=True)
            ]
    return out


_SORT_SCRIPT = """<script>
(function () {
  function key(cell, numeric) {
    var v = cell.getAttribute('data-value');
    if (!numeric) { return (v === null ? cell.textContent : v).toLowerCase(); }
    var x = parseFloat(v);
    return isNaN(x) ? null : x;
  }
  document.querySelectorAll('table.jl-sortable').forEach(function (table) {
    if (table.getAttribute('data-ready')) { return; }
    table.setAttribute('data-ready', '1');
    var heads = table.tHead.rows[0].cells;
    Array.prototype.forEach.call(heads, function (th, col) {
      th.style.cursor = 'pointer';
      th.addEventListener('click', function () {
        var asc = th.getAttribute('data-dir') !== 'asc';
        Array.prototype.forEach.call(heads, function (h) { h.removeAttribute('data-dir'); });
        th.setAttribute('data-dir', asc ? 'asc' : 'desc');
        var numeric = th.getAttribute('data-type') === 'number';
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows);
        rows.sort(function (a, b) {
          var x = key(a.cells[col], numeric), y = key(b.cells[col], numeric);
          if (x === null && y === null) { return 0; }
          if (x === null) { return 1; }
          if (y === null) { return -1; }
          var c = x < y ? -1 : x > y ? 1 : 0;
          return asc ? c : -c;
        });
        rows.forEach(function (r) { body.appendChild(r); });
      });
    });
  });
})();
</script>"""


def comparison_html(table: pd.DataFrame, lights: pd.DataFrame | None = None) -> Html:
    """Return the comparison table as HTML whose columns sort when a header is clicked.

    Cells show "value [low, high]" and carry the value in `data-value`; a measure cell is
    tinted with its traffic light when `lights` is given; missing values sort last. The
    sorting script is inline (no CDN), so it works in the offline HTML export.
    """
    tint = {}
    if lights is not None:
        for r in lights.itertuples(index=False):
            if r.light in ("green", "amber", "red"):
                tint[(r.source, r.judge, r.measure)] = r.light
    bg = {"green": "#d9f0d3", "amber": "#fde9b5", "red": "#f6c6c0"}
    cell = "border:1px solid #ccc;padding:3px 6px;white-space:nowrap"
    present = [m for m in COMPARISON_MEASURES if table[m].notna().any()]
    heads = [("judge", "text", "source:judge id"), ("source", "text", "")]
    heads += [(MEASURES[m][0], "number", MEASURES[m][1]) for m in present]
    if "n_red" in table:
        heads += [("red lights", "number", "biases graded red")]
    th = "".join(
        f"<th data-type='{t}' title='{html.escape(tip)}' style='{cell};background:#f3f3f3'>"
        f"{html.escape(h)} ⇅</th>"
        for h, t, tip in heads
    )
    body = []
    for r in table.itertuples(index=False):
        d = r._asdict()
        cells = [
            f"<td data-value='{html.escape(d['judge'])}' style='{cell}'>"
            f"<b>{html.escape(d['judge'])}</b></td>",
            f"<td data-value='{html.escape(d['source'])}' style='{cell}'>"
            f"{html.escape(d['source'])}</td>",
        ]
        for m in present:
            v = d[m]
            colour = bg.get(tint.get((d["source"], d["judge"], m), ""), "")
            style = f"{cell};background:{colour}" if colour else cell
            value = "" if pd.isna(v) else repr(float(v))
            n = "" if pd.isna(d[f"{m}_n"]) else f" title='n = {int(d[f'{m}_n'])}'"
            cells.append(
                f"<td data-value='{value}' style='{style}'{n}>"
                f"{_fmt(v, d[f'{m}_low'], d[f'{m}_high'])}</td>"
            )
        if "n_red" in d:
            cells.append(f"<td data-value='{d['n_red']}' style='{cell}'>{d['n_red']}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return Html(
        "<div style='overflow-x:auto'><table class='jl-sortable' id='jl-comparison' "
        "style='border-collapse:collapse;font-size:12px'>"
        f"<thead><tr>{th}</tr></thead><tbody>{''.join(body)}</tbody></table></div>"
        "<p style='font-size:12px'>Click a header to sort (again to reverse); "
        "values are headline estimates with 95% intervals, hover a cell for n.</p>" + _SORT_SCRIPT
    )
