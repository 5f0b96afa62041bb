"""Prompting strategies against a baseline prompt (spec 000 §4.12-4.13; Fig. 5, Table 5).

The same model judged with several prompts (`prompt` column; e.g. LLMBar's Vanilla, CoT,
Reference, ...; ContextualJudgeBench's workflow, criteria-specific and structured prompts) is
compared per split, strategy − baseline, paired over items, resampling the `cluster`
column's units (`paired`): by default the restricted wild cluster bootstrap test of the
difference of rates and the interval that inverts it (`core.estimates.difference`, issue 33;
effective clusters and `few_clusters` on every row), Holm across the strategies compared,
and the exact McNemar test as a legacy column. `test="bootstrap"` keeps the percentile
interval and adaptive bootstrap p-value (the default before issue 33).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
import pandas as pd

from judgelab.analyses import pairwise
from judgelab.analyses.prompting import paired
from judgelab.core import clusters, estimates, stats
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
    "variant",
    "value_strategy",
    "value_baseline",
    "diff",
    "ci_low",
    "ci_high",
    "n_common",
    "n_clusters",
    "n_eff_clusters",
    "few_clusters",
    "method",
    "p_value",
    "p_bound",
    "n_boot_p",
    "p_mcnemar",
    "p_holm",
    "n_tests",
    "n_missing_strategy",
    "n_missing_baseline",
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
    "p_value",
    "n_clusters",
    "n_eff_clusters",
    "few_clusters",
    "method",
)
#: Intervals of `strategy_effect_by_split`: the wild cluster bootstrap, or items resampled.
EFFECT_INTERVALS: tuple[str, ...] = ("wild", "bootstrap")


def strategy_comparison(
    judgments: pd.DataFrame,
    *,
    baseline: str = "Vanilla",
    strategies: Sequence[str] = (),
    metric_names: Sequence[str] = ("ca", "cons"),
    cluster: str | None = "cluster",
    test: str = "wild",
    adjust: str = "holm",
    n_boot: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> pd.DataFrame:
    """Compare each prompting strategy with the baseline prompt, per model and split.

    A model's judges are its rows per `prompt` value; each strategy is compared with the
    baseline on the items both judged completely (paired: an item's two outcomes stay
    together), per split plus a `pooled` row over the benchmark's splits. The interval and
    the test resample the `cluster` column's units (`paired.paired_difference`): by default
    the wild cluster bootstrap test and the interval that inverts it, and `p_holm`
    adjusts it across the strategies compared with one baseline (one family per model,
    metric, split and variant; `n_tests` says how many). Where the strategy and the
    baseline leave different numbers of items incomplete (a missing order), a
    `missing_as_error` row counts a missing outcome as an error over the items either
    judged (a sensitivity, `variant`); default rows are `complete_pairs`.

    Args:
        judgments: A judgments table; needs `model`, `prompt`, `judge` and the columns of
            `pairwise.item_outcomes` (and `cluster` for clustered resampling). Sample 0 only.
        baseline: The reference prompt (e.g. "Vanilla", "cjb.workflow").
        strategies: Prompts to compare (empty: every other prompt of the model).
        metric_names: Rates to compare: any of a1, a2, ca, oa, cons.
        cluster: Resampling unit column (absent: items); None resamples items (legacy).
        test: `wild` (default: restricted wild cluster bootstrap, interval inverting the
            test), `bootstrap` (the default before issue 33: percentile interval, adaptive
            bootstrap p) or `mcnemar` (legacy exact McNemar) as `p_value`.
        adjust: Multiplicity correction across strategies: `holm`, `bh` or `none`.
        n_boot: Bootstrap resamples B.
        seed: Seed of the bootstrap.
        level: Confidence level.

    Returns:
        The columns of `COMPARISON_COLUMNS`: `model`, `strategy`, `baseline`, `benchmark`,
        `split` (or `pooled`), `metric`, `variant`, `value_strategy`, `value_baseline`,
        `diff` (strategy − baseline), `ci_low`, `ci_high`, `n_common`, `n_clusters`,
        `n_eff_clusters`, `few_clusters`, `method`, `p_value`, `p_bound`, `n_boot_p`,
        `p_mcnemar`, `p_holm`, `n_tests`, `n_missing_strategy`, `n_missing_baseline`.
    """
    _require(judgments, ["model", "prompt", "judge", "sample"], "strategy_comparison")
    check_choice("test", test, paired.TESTS)
    data = judgments[judgments["sample"] == 0]
    opts = {"cluster": cluster, "test": test, "n_boot": n_boot, "seed": seed, "level": level}
    rows: list[dict] = []
    for model, block in data.groupby("model", sort=True):
        judges = _model_judges(model, block, baseline=baseline, strategies=strategies)
        if judges is None:
            continue
        base_judge, strategy_of = judges
        block = block[block["judge"].isin([base_judge, *strategy_of])]
        outcomes = pairwise.item_outcomes(block, groups=("judge", "benchmark", "split"))
        for m in metric_names:
            value, eligible = _wide(outcomes, m)
            unit = _unit_codes(block, value.index, cluster)
            for judge, strategy in strategy_of.items():
                head = {"model": model, "strategy": strategy, "baseline": baseline, "metric": m}
                rows += _strategy_rows(head, value, eligible, unit, judge, base_judge, opts)
    if not rows:
        return pd.DataFrame(columns=list(COMPARISON_COLUMNS))
    out = pd.DataFrame(rows)
    family = ["model", "metric", "benchmark", "split", "variant"]
    out["p_holm"] = paired.holm_within(out, family, method=adjust)
    out["n_tests"] = out.groupby(family)["p_value"].transform("count").astype(int)
    out = out[list(COMPARISON_COLUMNS)]
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


def _wide(outcomes: pd.DataFrame, metric: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per item × judge: the metric's 0/1 outcome (NaN: incomplete) and whether it counts."""
    num, den, _ = pairwise.METRICS[metric]
    df = outcomes.copy()
    complete = df["complete"].astype(bool)
    counts = df["has_gold"].astype("boolean").fillna(False) if den == "has_gold" else True
    df["_eligible"] = counts | (~complete)  # an incomplete item may lack the gold flag
    df["_v"] = df[num].astype("boolean").astype(float).where(complete)
    keys = ["benchmark", "split", "item_id"]
    value = df.pivot_table(index=keys, columns="judge", values="_v", aggfunc="first", dropna=False)
    eligible = df.pivot_table(index=keys, columns="judge", values="_eligible", aggfunc="any")
    eligible = eligible.reindex(value.index).fillna(False).astype(bool)
    return value, eligible


def _unit_codes(block: pd.DataFrame, index: pd.MultiIndex, cluster: str | None) -> np.ndarray:
    """The resampling unit code of every (benchmark, split, item) of `index`."""
    cols = ["benchmark", "split", "item_id"]
    frame = index.to_frame(index=False)
    if cluster is not None and cluster in block.columns:
        first = block.drop_duplicates(cols).set_index(cols)[cluster]
        frame[cluster] = first.reindex(index).to_numpy()
    return clusters.codes(frame, cluster)


def _strategy_rows(
    head: dict,
    value: pd.DataFrame,
    eligible: pd.DataFrame,
    unit: np.ndarray,
    judge: str,
    base_judge: str,
    opts: dict,
) -> list[dict]:
    """Rows of one strategy: per split and pooled, complete pairs (+ missing-as-error)."""
    if judge not in value.columns or base_judge not in value.columns:
        return []
    x, y = value[judge].to_numpy(), value[base_judge].to_numpy()
    either = eligible[judge].to_numpy() | eligible[base_judge].to_numpy()
    miss_x, miss_y = either & np.isnan(x), either & np.isnan(y)
    splits = value.index.get_level_values("split").to_numpy()
    bench = value.index.get_level_values("benchmark").to_numpy()
    variants = {"complete_pairs": (~np.isnan(x) & ~np.isnan(y), x, y)}
    if miss_x.sum() != miss_y.sum():
        variants["missing_as_error"] = (either, np.nan_to_num(x), np.nan_to_num(y))
    rows = []
    for variant, (keep, xs, ys) in variants.items():
        for b in sorted(set(bench[keep])):
            here = keep & (bench == b)
            cells = [(s, here & (splits == s)) for s in sorted(set(splits[here]))]
            cells.append((pairwise.POOLED, here))
            for split, m in cells:
                rng = stats.rng_for(opts["seed"], *head.values(), variant, b, split)
                res = paired.paired_difference(
                    xs[m],
                    ys[m],
                    unit[m],
                    strata=splits[m],
                    test=opts["test"],
                    n_boot=opts["n_boot"],
                    rng=rng,
                    level=opts["level"],
                )
                rows.append(
                    {
                        **head,
                        "benchmark": b,
                        "split": split,
                        "variant": variant,
                        "value_strategy": float(np.mean(xs[m])),
                        "value_baseline": float(np.mean(ys[m])),
                        **res,
                        "n_missing_strategy": int((miss_x & (bench == b)).sum()),
                        "n_missing_baseline": int((miss_y & (bench == b)).sum()),
                    }
                )
    return rows


def strategy_summary(comparison: pd.DataFrame) -> pd.DataFrame:
    """Return the per-judge summary: pooled Δ per model × strategy, one column pair per metric.

    Returns:
        `model`, `strategy`, `baseline`, then per metric `d<metric>` (in points is left to the
        display; here fractions), `d<metric>_low`, `d<metric>_high`, `<metric>_strategy`,
        `<metric>_baseline`, and `n` (items pooled).
    """
    _require(comparison, ["model", "strategy", "split", "metric", "diff"], "strategy_summary")
    pooled = comparison[comparison["split"] == pairwise.POOLED]
    if "variant" in pooled.columns:
        pooled = pooled[pooled["variant"] == "complete_pairs"]
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
    cluster: str | None = "cluster",
    interval: str = "wild",
) -> pd.DataFrame:
    """Return Fig. 5 (left): per split and strategy, the Δ averaged over models, with a CI.

    For each item the per-model differences (strategy − baseline, 0/1 outcomes of `metric`)
    are averaged over the models that ran both prompts on it; the mean over items gets the
    restricted wild cluster bootstrap interval and test of Δ = 0 (`core.estimates`; the
    items' `cluster` as the unit, issue 33), or (`interval="bootstrap"`, the default before)
    the percentile bootstrap over items. `strategies` limits the prompts compared (empty:
    all).

    Returns:
        `strategy`, `baseline`, `benchmark`, `split`, `metric`, `diff`, `ci_low`, `ci_high`,
        `n` (items), `n_models`, `p_value` (Δ = 0; NaN for `bootstrap`), `n_clusters`,
        `n_eff_clusters`, `few_clusters`, `method`.
    """
    check_choice("metric", metric, EFFECT_METRICS)
    check_choice("interval", interval, EFFECT_INTERVALS)
    _require(judgments, ["model", "prompt", "judge", "sample"], "strategy_effect_by_split")
    data = judgments[judgments["sample"] == 0]
    wide = _outcomes_by_prompt(data, metric)
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
        unit = _unit_codes(data, per_item.index, cluster)
        for (bench, split), idx in per_item.groupby(
            level=["benchmark", "split"], sort=True
        ).indices.items():
            vals = per_item.to_numpy()[idx]
            head = {"strategy": strategy, "baseline": baseline, "benchmark": bench}
            head |= {"split": split, "metric": metric}
            if interval == "wild":
                rng = estimates.seeded(seed, "effect", strategy, bench, split, metric)
                e = estimates.contrast(
                    vals,
                    np.ones(len(vals)),
                    np.zeros(len(vals), dtype=np.int64),
                    unit[idx],
                    [1.0],
                    null=0.0,
                    level=level,
                    bounds=(-1.0, 1.0),
                    rng=rng,
                )
                fields = {"diff": e.value, "ci_low": e.ci_low, "ci_high": e.ci_high}
                fields |= {"p_value": e.p_value, "n_clusters": e.n_clusters}
                fields |= {"n_eff_clusters": e.n_eff_clusters, "few_clusters": e.few_clusters}
                fields["method"] = e.method
            else:
                est = stats.bootstrap_mean(vals, n_boot=n_boot, seed=seed, level=level)
                fields = {"diff": est.estimate, "ci_low": est.low, "ci_high": est.high}
                fields |= {"p_value": np.nan, "n_clusters": len(vals), "n_eff_clusters": np.nan}
                fields |= {"few_clusters": True, "method": "percentile bootstrap of items"}
            rows.append(
                head | fields | {"n": len(vals), "n_models": int(n_models.loc[(bench, split)])}
            )
    return pd.DataFrame(rows, columns=list(EFFECT_COLUMNS))


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
