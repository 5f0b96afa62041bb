"""Prompting strategies against a baseline prompt (spec 000 §4.12-4.13; Fig. 5, Table 5).

The same model judged with several prompts (`prompt` column; e.g. LLMBar's Vanilla, CoT,
Reference, ...; ContextualJudgeBench's workflow, criteria-specific and structured prompts) is
compared per split with `pairwise.compare_judges` (paired bootstrap over items, exact McNemar
test), strategy − baseline.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
import pandas as pd

from judgelab.analyses import pairwise
from judgelab.core import stats
from judgelab.core.schema import require_columns as _require
from judgelab.errors import check_choice

#: Rates a strategy effect can be measured on (`pairwise.METRICS` names).
EFFECT_METRICS: tuple[str, ...] = ("a1", "a2", "ca", "oa", "cons")
COMPARISON_COLUMNS: tuple[str, ...] = (
    "model",
    "strategy",
    "baseline",
    "benchmark",
    "split",
    "metric",
    "value_strategy",
    "value_baseline",
    "diff",
    "ci_low",
    "ci_high",
    "n_common",
    "p_value",
)
EFFECT_COLUMNS: tuple[str, ...] = (
    "strategy",
    "baseline",
    "benchmark",
    "split",
    "metric",
    "diff",
    "ci_low",
    "ci_high",
    "n",
    "n_models",
)


def strategy_comparison(
    judgments: pd.DataFrame,
    *,
    baseline: str = "Vanilla",
    strategies: Sequence[str] = (),
    metric_names: Sequence[str] = ("ca", "cons"),
    n_boot: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> pd.DataFrame:
    """Compare each prompting strategy with the baseline prompt, per model and split.

    A model's judges are its rows per `prompt` value; each strategy is compared with the
    baseline on the items both judged in both orders (`pairwise.compare_judges`), plus a
    `pooled` row over the splits both share. Models without the baseline are left out.

    Args:
        judgments: A judgments table; needs `model`, `prompt`, `judge` and the columns of
            `pairwise.item_outcomes`. Sample 0 only.
        baseline: The reference prompt (e.g. "Vanilla", "cjb.workflow").
        strategies: Prompts to compare (empty: every other prompt of the model).
        metric_names: Rates to compare: any of a1, a2, ca, oa, cons.
        n_boot: Bootstrap resamples B.
        seed: Seed of the bootstrap.
        level: Confidence level.

    Returns:
        `model`, `strategy`, `baseline`, `benchmark`, `split` (or `pooled`), `metric`,
        `value_strategy`, `value_baseline`, `diff` (strategy − baseline), `ci_low`,
        `ci_high`, `n_common`, `p_value` (exact McNemar).
    """
    _require(judgments, ["model", "prompt", "judge", "sample"], "strategy_comparison")
    data = judgments[judgments["sample"] == 0]
    parts = []
    for model, block in data.groupby("model", sort=True):
        judges = _model_judges(model, block, baseline=baseline, strategies=strategies)
        if judges is None:
            continue
        base_judge, strategy_of = judges
        keep = [base_judge, *strategy_of]
        outcomes = pairwise.item_outcomes(block[block["judge"].isin(keep)])
        for m in metric_names:
            cmp = pairwise.compare_judges(
                outcomes, metric=m, n_boot=n_boot, seed=seed, level=level
            )
            parts.append(_against_baseline(cmp, model, m, baseline, base_judge, strategy_of))
    if not parts:
        return pd.DataFrame(columns=list(COMPARISON_COLUMNS))
    out = pd.concat(parts, ignore_index=True)[list(COMPARISON_COLUMNS)]
    return out.sort_values(["metric", "model", "strategy"], kind="stable").reset_index(drop=True)


def _model_judges(
    model: object, block: pd.DataFrame, *, baseline: str, strategies: Sequence[str]
) -> tuple[str, dict[str, str]] | None:
    """Return a model's baseline judge and {judge: strategy} compared, None to skip the model."""
    prompts = block.drop_duplicates("judge").set_index("judge")["prompt"].to_dict()
    if prompts and len(set(prompts.values())) < len(prompts):
        raise ValueError(f"model {model!r}: several judges share a prompt; filter first")
    by_prompt = {p: j for j, p in prompts.items()}
    if baseline not in by_prompt:
        return None
    wanted = [p for p in (strategies or sorted(by_prompt)) if p != baseline]
    wanted = [p for p in wanted if p in by_prompt]
    if not wanted:
        return None
    return by_prompt[baseline], {by_prompt[p]: p for p in wanted}


def _against_baseline(
    cmp: pd.DataFrame,
    model: object,
    metric: str,
    baseline: str,
    base_judge: str,
    strategy_of: dict[str, str],
) -> pd.DataFrame:
    """Return the `compare_judges` rows involving the baseline, oriented strategy − baseline."""
    cmp = cmp[(cmp["judge_1"] == base_judge) | (cmp["judge_2"] == base_judge)]
    flip = cmp["judge_1"] == base_judge  # then diff is baseline − strategy
    other = np.where(flip, cmp["judge_2"], cmp["judge_1"])
    return pd.DataFrame(
        {
            "model": model,
            "strategy": [strategy_of[o] for o in other],
            "baseline": baseline,
            "benchmark": cmp["benchmark"].to_numpy(),
            "split": cmp["split"].to_numpy(),
            "metric": metric,
            "value_strategy": np.where(flip, cmp["value_2"], cmp["value_1"]),
            "value_baseline": np.where(flip, cmp["value_1"], cmp["value_2"]),
            "diff": np.where(flip, -cmp["diff"], cmp["diff"]),
            "ci_low": np.where(flip, -cmp["ci_high"], cmp["ci_low"]),
            "ci_high": np.where(flip, -cmp["ci_low"], cmp["ci_high"]),
            "n_common": cmp["n_common"].to_numpy(),
            "p_value": cmp["p_value"].to_numpy(),
        }
    )


def strategy_summary(comparison: pd.DataFrame) -> pd.DataFrame:
    """Return the per-judge summary: pooled Δ per model × strategy, one column pair per metric.

    Returns:
        `model`, `strategy`, `baseline`, then per metric `d<metric>` (in points is left to the
        display; here fractions), `d<metric>_low`, `d<metric>_high`, `<metric>_strategy`,
        `<metric>_baseline`, and `n` (items pooled).
    """
    _require(comparison, ["model", "strategy", "split", "metric", "diff"], "strategy_summary")
    pooled = comparison[comparison["split"] == pairwise.POOLED]
    keys = ["model", "strategy", "baseline"]
    out = pooled[keys].drop_duplicates().set_index(keys)
    for m in dict.fromkeys(pooled["metric"]):
        part = pooled[pooled["metric"] == m].set_index(keys)
        out[f"d{m}"] = part["diff"]
        out[f"d{m}_low"] = part["ci_low"]
        out[f"d{m}_high"] = part["ci_high"]
        out[f"{m}_strategy"] = part["value_strategy"]
        out[f"{m}_baseline"] = part["value_baseline"]
        out["n"] = part["n_common"]
    return out.reset_index()


def strategy_effect_by_split(
    judgments: pd.DataFrame,
    *,
    baseline: str = "Vanilla",
    strategies: Sequence[str] = (),
    metric: str = "ca",
    n_boot: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> pd.DataFrame:
    """Return Fig. 5 (left): per split and strategy, the Δ averaged over models, with a CI.

    For each item the per-model differences (strategy − baseline, 0/1 outcomes of `metric`)
    are averaged over the models that ran both prompts on it; the interval bootstraps items.
    `strategies` limits the prompts compared (empty: all).

    Returns:
        `strategy`, `baseline`, `benchmark`, `split`, `metric`, `diff`, `ci_low`, `ci_high`,
        `n` (items), `n_models`.
    """
    check_choice("metric", metric, EFFECT_METRICS)
    _require(judgments, ["model", "prompt", "judge", "sample"], "strategy_effect_by_split")
    wide = _outcomes_by_prompt(judgments[judgments["sample"] == 0], metric)
    if baseline not in wide.columns:
        return pd.DataFrame(columns=list(EFFECT_COLUMNS))
    rows = []
    wanted = [c for c in wide.columns if c != baseline and (not strategies or c in strategies)]
    for strategy in wanted:
        d = (wide[strategy] - wide[baseline]).dropna()
        if d.empty:
            continue
        per_item = d.groupby(level=["benchmark", "split", "item_id"]).mean()
        n_models = d.groupby(level=["benchmark", "split"]).apply(
            lambda s: s.index.get_level_values("model").nunique()
        )
        for (bench, split), vals in per_item.groupby(level=["benchmark", "split"], sort=True):
            est = stats.bootstrap_mean(vals.to_numpy(), n_boot=n_boot, seed=seed, level=level)
            rows.append(
                {
                    "strategy": strategy,
                    "baseline": baseline,
                    "benchmark": bench,
                    "split": split,
                    "metric": metric,
                    "diff": est.estimate,
                    "ci_low": est.low,
                    "ci_high": est.high,
                    "n": len(vals),
                    "n_models": int(n_models.loc[(bench, split)]),
                }
            )
    return pd.DataFrame(rows)


def _outcomes_by_prompt(data: pd.DataFrame, metric: str) -> pd.DataFrame:
    """Return the 0/1 outcome of `metric` per (benchmark, split, item, model) × prompt."""
    groups = ("judge", "model", "prompt", "benchmark", "split")
    out = pairwise.item_outcomes(data, groups=groups)
    num, den, _ = pairwise.METRICS[metric]
    out = out[out["complete"].astype(bool)]
    if den == "has_gold":
        out = out[out["has_gold"].astype(bool)]
    out = out.assign(_v=out[num].astype("boolean").fillna(False).astype(float))
    return out.pivot_table(
        index=["benchmark", "split", "item_id", "model"], columns="prompt", values="_v"
    )


class Strategies(NamedTuple):
    """The baseline prompt and the strategies compared with it, and why."""

    baseline: str
    strategies: list[str]
    note: str


def resolve_strategies(
    judgments: pd.DataFrame, *, baseline: str, strategies: Sequence[str] = ()
) -> Strategies:
    """Return the requested baseline and strategies that exist, else the data's own prompts.

    When the baseline prompt is absent (e.g. a sample fallback), the most widely run prompt
    becomes the baseline; when none of the strategies exist, every other prompt is compared.
    The note says what was replaced.
    """
    _require(judgments, ["prompt", "model"], "resolve_strategies")
    counts = (
        judgments.groupby("prompt")["model"].nunique().sort_values(ascending=False, kind="stable")
    )
    notes = []
    chosen = baseline if baseline in counts.index else str(counts.index[0])
    if chosen != baseline:
        notes.append(f"baseline {baseline!r} not in the data; using {chosen!r}")
    present = [s for s in strategies if s in counts.index and s != chosen]
    missing = [s for s in strategies if s not in counts.index]
    if missing:
        notes.append(f"strategies not in the data: {missing}")
    if not present:
        present = [str(p) for p in counts.index if p != chosen]
        if strategies:
            notes.append(f"comparing every other prompt: {present}")
    return Strategies(chosen, present, "; ".join(notes) or "as requested")
