"""Judge-vs-human label tables from the library's items and judgments (notebook 16).

A grounding table has one row per (judge, group, item): the judge's label `judge_label`
and the human label `human_label` on one scale, plus the item's `cluster`. `compare` and
`budget_curve` then run per (judge, group).

- `pointwise_table`: a graded model's pass rate: 1 where the verdict (judge) or the gold
  (human) is the `positive` label. A judge's invalid verdict scores `invalid_as` (0.5 by
  default: PPI stays valid for any prediction, and the naive mean then counts it as half).
- `pairwise_table`: a win rate of side "first" over side "second": 1, ½ (tie) or 0. The
  human score comes from the gold (pos / tie), the judge's from its valid verdicts, averaged
  over the orders it judged. `first_is_pos` says, per item, whether the gold-preferred
  response (`pos`) is the "first" side (`first_side` derives it from item metadata).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from judgelab.core.schema import meta_field, require_columns

KEY = ["benchmark", "split", "item_id"]
COLUMNS = ("judge", "group", *KEY, "cluster", "judge_label", "human_label")


def _cluster(items: pd.DataFrame) -> pd.Series:
    if "cluster" in items.columns:
        return items["cluster"].astype(object).where(items["cluster"].notna(), items["item_id"])
    return items["item_id"].astype(object)


def _group(items: pd.DataFrame, group: str | None) -> pd.Series:
    if group is None:
        return pd.Series("all", index=items.index, dtype=object)
    if group.startswith("meta."):
        return meta_field(items["meta"], group[len("meta.") :], default="?").astype(str)
    return items[group].astype(str)


def pointwise_table(
    judgments: pd.DataFrame,
    items: pd.DataFrame,
    *,
    positive: str,
    group: str | None = None,
    invalid_as: float = 0.5,
) -> pd.DataFrame:
    """Return the grounding table of a pointwise source (pass = `positive`).

    `group` splits the items (a column, or `meta.<key>` such as `meta.candidate_model`);
    items without gold are left out.
    """
    require_columns(judgments, ["judge", "verdict", "valid", *KEY], "pointwise_table")
    it = items.assign(group=_group(items, group), cluster=_cluster(items))
    it = it[it["gold"].notna()][[*KEY, "group", "cluster", "gold"]]
    j = judgments[["judge", *KEY, "verdict", "valid"]].merge(it, on=KEY, how="inner")
    valid = j["valid"].astype(bool).to_numpy()
    judge = np.where(valid, (j["verdict"].astype(str) == positive).to_numpy(float), invalid_as)
    out = j.assign(
        judge_label=judge, human_label=(j["gold"].astype(str) == positive).astype(float)
    )
    # one judgment per item and judge: the first order / sample
    out = out.drop_duplicates(subset=["judge", *KEY], keep="first")
    return out[list(COLUMNS)].reset_index(drop=True)


def pointwise_scores(
    judgments: pd.DataFrame,
    items: pd.DataFrame,
    *,
    positive: str,
    group: str | None = None,
    score: str = "output",
) -> pd.DataFrame:
    """Return the grounding table with the judge's numeric `score` as `judge_label`.

    For judges whose raw output is a number (a detector's probability, a rating): rows
    whose `score` is not a number are left out (their judge keeps its other rows), and
    invalid verdicts keep their score. The human label is 1 where the gold is `positive`.
    """
    require_columns(judgments, ["judge", score, *KEY], "pointwise_scores")
    it = items.assign(group=_group(items, group), cluster=_cluster(items))
    it = it[it["gold"].notna()][[*KEY, "group", "cluster", "gold"]]
    j = judgments[["judge", *KEY, score]].merge(it, on=KEY, how="inner")
    value = pd.to_numeric(j[score].astype(object), errors="coerce")
    out = j.assign(judge_label=value.astype(float),
                   human_label=(j["gold"].astype(str) == positive).astype(float))  # fmt: skip
    out = out[out["judge_label"].notna()].drop_duplicates(subset=["judge", *KEY], keep="first")
    return out[list(COLUMNS)].reset_index(drop=True)


def first_side(items: pd.DataFrame, rule: str) -> pd.Series:
    """Return, per item, whether `pos` is the "first" side of the win rate.

    Rules: `slot:<value>` — meta `pos_slot` equals `<value>` (LLMBar's `output_1`, PandaLM's
    `response1`); `model:<key>` — meta `model_pos` is the first model named in meta `<key>`
    (PandaLM's `cmp_key`, `first_second`).
    """
    kind, _, arg = rule.partition(":")
    if kind == "slot" and arg:
        return meta_field(items["meta"], "pos_slot").astype(str) == arg
    if kind == "model" and arg:
        first = [str(k).split("_")[0] for k in meta_field(items["meta"], arg, default="")]
        pos = [str(m) for m in meta_field(items["meta"], "model_pos", default="")]
        return pd.Series(
            [f != "" and f == m for f, m in zip(first, pos, strict=True)], index=items.index
        )
    raise ValueError(f"first-side rule must be slot:<value> or model:<key>, got {rule!r}")


def pairwise_table(
    judgments: pd.DataFrame,
    items: pd.DataFrame,
    first_is_pos: pd.Series,
    *,
    group: str | None = None,
) -> pd.DataFrame:
    """Return the grounding table of a win rate ("first" over "second", ties ½).

    Items whose gold is neither pos nor tie, and judges with no valid verdict on an item,
    are left out of that (judge, item).
    """
    require_columns(judgments, ["judge", "chosen", "valid", *KEY], "pairwise_table")
    it = items.assign(group=_group(items, group), cluster=_cluster(items), first=first_is_pos)
    it = it[it["gold"].isin(["pos", "tie"])]
    human = np.where(it["gold"] == "tie", 0.5, it["first"].astype(float))
    it = it.assign(human_label=human)[[*KEY, "group", "cluster", "first", "human_label"]]
    j = judgments[judgments["valid"].astype(bool) & judgments["chosen"].notna()]
    j = j[["judge", *KEY, "chosen"]].merge(it, on=KEY, how="inner")
    first = j["first"].astype(bool).to_numpy()
    picked_pos = (j["chosen"] == "pos").to_numpy()
    score = np.where(j["chosen"] == "tie", 0.5, (picked_pos == first).astype(float))
    j = j.assign(score=score)
    keys = ["judge", *KEY, "group", "cluster", "human_label"]
    out = j.groupby(keys, sort=False, dropna=False)["score"].mean().rename("judge_label")
    return out.reset_index()[list(COLUMNS)]


def per_group(table: pd.DataFrame, func, **kwargs) -> pd.DataFrame:
    """Run `func(group_table, **kwargs)` per (judge, group); prefix its rows with both."""
    frames = []
    for (judge, grp), g in table.groupby(["judge", "group"], sort=True):
        res = func(g.reset_index(drop=True), **kwargs)
        frames.append(res.assign(judge=judge, group=grp))
    if not frames:
        return pd.DataFrame()
    out = pd.concat(frames, ignore_index=True)
    return out[["judge", "group", *[c for c in out.columns if c not in ("judge", "group")]]]


def focus(curves: pd.DataFrame, pairs: list[str]) -> pd.DataFrame:
    """The budget curves of `judge|group` pairs, in the columns a reader needs."""
    wanted = [tuple(p.split("|", 1)) for p in pairs]
    keep = [(j, g) in wanted for j, g in zip(curves["judge"], curves["group"], strict=True)]
    cols = ["judge", "group", "budget", "method", "mean_width", "coverage", "coverage_se"]
    return curves.loc[keep, [*cols, "truth", "reps"]].reset_index(drop=True)


def summarise_curves(curves: pd.DataFrame) -> pd.DataFrame:
    """Average per-(judge, group) budget curves over the pairs: width, coverage, their SE.

    Coverage is pooled over every replay of every pair (its SE treats the pairs' replays as
    independent, which they are given the pairs); `n_pairs` says how many pairs are behind
    each row, and `beats_classical` the share of pairs whose method interval is narrower
    than the human-only one at that budget.
    """
    if curves.empty:
        return curves
    ref = curves[curves["method"] == "classical"].set_index(["judge", "group", "budget"])
    rows = []
    for (budget, method), g in curves.groupby(["budget", "method"], sort=True):
        cov = float((g["coverage"] * g["reps"]).sum() / g["reps"].sum())
        total = float(g["reps"].sum())
        narrower = g.set_index(["judge", "group", "budget"])["mean_width"] < ref[
            "mean_width"
        ].reindex(g.set_index(["judge", "group", "budget"]).index)
        rows.append(
            {
                "budget": budget,
                "method": method,
                "n_pairs": len(g),
                "mean_width": float(g["mean_width"].mean()),
                "coverage": cov,
                "coverage_se": float(np.sqrt(max(cov * (1 - cov), 1e-12) / total)),
                "beats_classical": float(narrower.mean()),
            }
        )
    return pd.DataFrame(rows)


__all__ = [
    "COLUMNS",
    "first_side",
    "focus",
    "pairwise_table",
    "per_group",
    "pointwise_scores",
    "pointwise_table",
    "summarise_curves",
]
