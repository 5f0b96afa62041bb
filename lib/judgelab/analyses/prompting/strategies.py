"""Prompting strategies and criteria verification (spec 000 §4.4, §4.12-4.13; Figs. 4, 5, 12).

Strategy comparison: the same model judged with several prompts (`prompt` column; e.g.
LLMBar's Vanilla, CoT, Reference, ...; ContextualJudgeBench's workflow, criteria-specific and
structured prompts) is compared per split with `metrics.compare_judges` (paired bootstrap
over items, exact McNemar test), strategy − baseline.

Criteria verification: a verifier (the `cjb.verify` template, spec §3.6) decides for each
*correct* run whether the judge's explanation used the split's criterion. With `d_r ∈ {0, 1}`
that decision and `c_r` the run's correctness, `u_r = c_r · d_r`; verified consistent accuracy
VCA = mean(u_1 · u_2), verified optimistic accuracy VOA = mean(max(u_1, u_2)) (spec §4.4).
`verification_items` turns judgments into the verifier's input items, `decisions_from_verifier`
turns the verifier's judgments back into decisions.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pandas as pd
import statsmodels.api as sm

from judgelab.analyses.pairwise import metrics
from judgelab.core import paths, schema, stats, tables
from judgelab.core.schema import require_columns as _require
from judgelab.data import catalog

#: Criteria named by ContextualJudgeBench; a split's criterion is the first found in its id.
CRITERIA: tuple[str, ...] = ("refusal", "faithfulness", "completeness", "conciseness")
DECISION_COLUMNS: tuple[str, ...] = (
    "benchmark",
    "split",
    "item_id",
    "judge",
    "order",
    "sample",
    "verified",
)
MISSING_POLICIES = ("error", "unverified", "verified")
UNDECIDED_POLICIES = ("verified", "unverified", "missing")
_ID_SEP = "|"


# ------------------------------------------------------------------- strategy comparison


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
    baseline on the items both judged in both orders (`metrics.compare_judges`), plus a
    `pooled` row over the splits both share. Models without the baseline are left out.

    Args:
        judgments: A judgments table; needs `model`, `prompt`, `judge` and the columns of
            `metrics.item_outcomes`. Sample 0 only.
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
    columns = [
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
    ]
    parts = []
    for model, block in data.groupby("model", sort=True):
        prompts = block.drop_duplicates("judge").set_index("judge")["prompt"].to_dict()
        if prompts and len(set(prompts.values())) < len(prompts):
            raise ValueError(f"model {model!r}: several judges share a prompt; filter first")
        by_prompt = {p: j for j, p in prompts.items()}
        if baseline not in by_prompt:
            continue
        wanted = [p for p in (strategies or sorted(by_prompt)) if p != baseline]
        wanted = [p for p in wanted if p in by_prompt]
        if not wanted:
            continue
        base_judge = by_prompt[baseline]
        keep = [base_judge, *(by_prompt[p] for p in wanted)]
        outcomes = metrics.item_outcomes(block[block["judge"].isin(keep)])
        strategy_of = {by_prompt[p]: p for p in wanted}
        for m in metric_names:
            cmp = metrics.compare_judges(outcomes, metric=m, n_boot=n_boot, seed=seed, level=level)
            cmp = cmp[(cmp["judge_1"] == base_judge) | (cmp["judge_2"] == base_judge)]
            flip = cmp["judge_1"] == base_judge  # then diff is baseline − strategy
            other = np.where(flip, cmp["judge_2"], cmp["judge_1"])
            out = pd.DataFrame(
                {
                    "model": model,
                    "strategy": [strategy_of[o] for o in other],
                    "baseline": baseline,
                    "benchmark": cmp["benchmark"].to_numpy(),
                    "split": cmp["split"].to_numpy(),
                    "metric": m,
                    "value_strategy": np.where(flip, cmp["value_2"], cmp["value_1"]),
                    "value_baseline": np.where(flip, cmp["value_1"], cmp["value_2"]),
                    "diff": np.where(flip, -cmp["diff"], cmp["diff"]),
                    "ci_low": np.where(flip, -cmp["ci_high"], cmp["ci_low"]),
                    "ci_high": np.where(flip, -cmp["ci_low"], cmp["ci_high"]),
                    "n_common": cmp["n_common"].to_numpy(),
                    "p_value": cmp["p_value"].to_numpy(),
                }
            )
            parts.append(out)
    if not parts:
        return pd.DataFrame(columns=columns)
    out = pd.concat(parts, ignore_index=True)[columns]
    return out.sort_values(["metric", "model", "strategy"], kind="stable").reset_index(drop=True)


def strategy_summary(comparison: pd.DataFrame) -> pd.DataFrame:
    """Return the per-judge summary: pooled Δ per model × strategy, one column pair per metric.

    Returns:
        `model`, `strategy`, `baseline`, then per metric `d<metric>` (in points is left to the
        display; here fractions), `d<metric>_low`, `d<metric>_high`, `<metric>_strategy`,
        `<metric>_baseline`, and `n` (items pooled).
    """
    _require(comparison, ["model", "strategy", "split", "metric", "diff"], "strategy_summary")
    pooled = comparison[comparison["split"] == metrics.POOLED]
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
    allowed = {"a1", "a2", "ca", "oa", "cons"}
    if metric not in allowed:
        raise ValueError(f"metric must be one of {sorted(allowed)}, got {metric!r}")
    _require(judgments, ["model", "prompt", "judge", "sample"], "strategy_effect_by_split")
    data = judgments[judgments["sample"] == 0]
    groups = ("judge", "model", "prompt", "benchmark", "split")
    out = metrics.item_outcomes(data, groups=groups)
    num, den, _ = metrics.METRICS[metric]
    out = out[out["complete"].astype(bool)]
    if den == "has_gold":
        out = out[out["has_gold"].astype(bool)]
    out = out.assign(_v=out[num].astype("boolean").fillna(False).astype(float))
    wide = out.pivot_table(
        index=["benchmark", "split", "item_id", "model"], columns="prompt", values="_v"
    )
    rows = []
    if baseline not in wide.columns:
        return pd.DataFrame(
            columns=[
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
            ]
        )
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


# ------------------------------------------------------------------ criteria verification


def criterion_of(split: str) -> str | None:
    """Return the ContextualJudgeBench criterion named in a split id, None if none is.

    >>> criterion_of("conciseness_qa"), criterion_of("Natural")
    ('conciseness', None)
    """
    low = str(split).lower()
    return next((c for c in CRITERIA if c in low), None)


def verification_items(
    judgments: pd.DataFrame,
    *,
    judges: Sequence[str] = (),
    criterion: str | None = None,
) -> pd.DataFrame:
    """Return the verifier's input: one pointwise item per correct run with an explanation.

    Only runs with the correct outcome are sent (spec §3.6). Each item carries the judge's
    output as `response` (the critique) and, in `meta`, the outcome shown to the verifier
    ("Response A" for order 0, "Response B" for order 1: the position of the positive
    response), the criterion and the source keys; its benchmark is `<benchmark>.verify` so
    verifier tables never mix with judge tables. Judge it with the `cjb.verify` template.

    Args:
        judgments: A judgments table (pairwise, with gold and `output`).
        judges: Only these judges (empty: all).
        criterion: Force one criterion (else taken from the split id; splits naming none
            are left out).
    """
    _require(judgments, ["judge", "output", "correct", "order", "sample"], "verification_items")
    if criterion is not None and criterion not in CRITERIA:
        raise ValueError(f"criterion must be one of {CRITERIA}, got {criterion!r}")
    data = metrics.select_judges(judgments, list(judges))
    ok = data["correct"].astype("boolean").fillna(False).to_numpy(dtype=bool)
    has_text = data["output"].notna().to_numpy() & (data["output"].astype(str).str.strip() != "")
    data = data[ok & has_text]
    rows = []
    for r in data.itertuples(index=False):
        crit = criterion or criterion_of(r.split)
        if crit is None:
            continue
        source = {
            "benchmark": r.benchmark,
            "split": r.split,
            "item_id": r.item_id,
            "judge": r.judge,
            "order": int(r.order),
            "sample": int(r.sample),
        }
        rows.append(
            {
                "benchmark": f"{r.benchmark}.verify",
                "split": r.split,
                "item_id": _ID_SEP.join(
                    [str(r.item_id), str(r.judge), str(int(r.order)), str(int(r.sample))]
                ),
                "task": "pointwise",
                "response": r.output,
                "meta": json.dumps(
                    {
                        "judgment": "Response A" if int(r.order) == 0 else "Response B",
                        "criterion": crit,
                        "source": source,
                    }
                ),
            }
        )
    return schema.new_items(rows) if rows else schema.empty(schema.ITEMS)


def decisions_from_verifier(
    verifier_judgments: pd.DataFrame,
    items: pd.DataFrame,
    *,
    undecided: str = "verified",
) -> pd.DataFrame:
    """Map the verifier's judgments back onto the judged runs: one decision per run.

    Args:
        verifier_judgments: Judgments of the `cjb.verify` template over `items`; `verdict`
            is Yes/No, null when the output was unparseable.
        items: The `verification_items` that were verified.
        undecided: What an unparseable decision (both or neither of yes/no) counts as:
            `verified` (the repo's "benefit of the doubt"), `unverified`, or `missing`.

    Returns:
        A decisions table: `benchmark`, `split`, `item_id`, `judge`, `order`, `sample` (of
        the judged run) and `verified` (nullable boolean).
    """
    if undecided not in UNDECIDED_POLICIES:
        raise ValueError(f"undecided must be one of {UNDECIDED_POLICIES}, got {undecided!r}")
    _require(verifier_judgments, ["benchmark", "split", "item_id", "verdict"], "verifier")
    _require(items, ["benchmark", "split", "item_id", "meta"], "verification items")
    meta = items.set_index(["benchmark", "split", "item_id"])["meta"]
    rows = []
    for r in verifier_judgments.itertuples(index=False):
        key = (r.benchmark, r.split, r.item_id)
        if key not in meta.index:
            raise KeyError(f"verifier judgment for unknown verification item {key}")
        source = json.loads(meta.loc[key])["source"]
        verdict = None if pd.isna(r.verdict) else str(r.verdict).strip().lower()
        if verdict in ("yes", "no"):
            verified: bool | None = verdict == "yes"
        else:
            verified = {"verified": True, "unverified": False, "missing": None}[undecided]
        rows.append({**source, "verified": verified})
    out = pd.DataFrame(rows, columns=list(DECISION_COLUMNS))
    out["verified"] = out["verified"].astype("boolean")
    return out


def read_decisions(path: str | Path) -> pd.DataFrame:
    """Read a decisions table (JSONL or parquet); errors name the file and the column."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"decisions file {path} does not exist")
    if path.suffix == ".jsonl":
        df = pd.DataFrame(tables.read_jsonl(path))
    else:
        df = pd.read_parquet(path)
    missing = [c for c in DECISION_COLUMNS if c not in df.columns]
    if missing:
        raise KeyError(f"decisions file {path}: missing column(s) {missing}")
    if df.duplicated(list(DECISION_COLUMNS[:-1])).any():
        row = int(np.flatnonzero(df.duplicated(list(DECISION_COLUMNS[:-1])))[0])
        raise ValueError(f"decisions file {path}: duplicate run key at row {row}")
    bad = df["verified"].notna() & ~df["verified"].isin([True, False])
    if bad.any():
        raise ValueError(
            f"decisions file {path}: column 'verified' row {int(np.flatnonzero(bad)[0])} "
            "must be true, false or null"
        )
    out = df[list(DECISION_COLUMNS)].copy()
    out["order"] = out["order"].astype(int)
    out["sample"] = out["sample"].astype(int)
    out["verified"] = out["verified"].astype("boolean")
    return out


class Verification(NamedTuple):
    """Judgments and verifier decisions for the verification analysis, and their origin."""

    items: pd.DataFrame
    judgments: pd.DataFrame
    decisions: pd.DataFrame
    source: str
    is_sample: bool


def load_verification(source: str, *, judgments: pd.DataFrame | None = None) -> Verification:
    """Load verifier decisions: `sample:<set>` (its judgments + `verifications.jsonl`) or a file.

    A decisions file (JSONL/parquet, `DECISION_COLUMNS`) refers to runs of `judgments`,
    which must then be given.
    """
    if catalog.is_sample(source):
        loaded = catalog.load_source(source)
        path = paths.samples() / source[len(catalog.SAMPLE_PREFIX) :] / "verifications.jsonl"
        if loaded.judgments is None:
            raise catalog.SourceNotFound(f"sample {source!r} has no judgments.jsonl")
        return Verification(loaded.items, loaded.judgments, read_decisions(path), source, True)
    if judgments is None:
        raise ValueError(f"decisions file {source!r}: pass the judgments it refers to")
    path = Path(source)
    path = path if path.is_absolute() else paths.project() / path
    return Verification(
        schema.empty(schema.ITEMS), judgments, read_decisions(path), str(source), False
    )


def verified_accuracy(
    judgments: pd.DataFrame,
    decisions: pd.DataFrame,
    *,
    by: str = "criterion",
    missing: str = "error",
    n_boot: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> pd.DataFrame:
    """Return CA, OA and their verified versions VCA, VOA per judge × criterion (or split).

    Args:
        judgments: A judgments table with gold (the judged runs).
        decisions: A decisions table (`DECISION_COLUMNS`); `verified` matters only for
            correct runs.
        by: `criterion` (splits pooled per criterion named in their id, as Fig. 4; splits
            naming none keep their own name) or `split`.
        missing: A correct run without a decision: `error` (raise), `unverified` (d = 0) or
            `verified` (d = 1).
        n_boot: Bootstrap resamples B.
        seed: Seed of the bootstrap.
        level: Confidence level.

    Returns:
        `judge`, `group` (criterion or split, or `pooled`), and for each of `ca`, `vca`, `oa`,
        `voa` the value and `_low`/`_high`; `drop_ca` = ca − vca, `drop_oa` = oa − voa; `n`
        (items with gold judged in both orders), `n_correct_runs`, `n_missing_decisions`.
    """
    if by not in ("criterion", "split"):
        raise ValueError(f"by must be 'criterion' or 'split', got {by!r}")
    if missing not in MISSING_POLICIES:
        raise ValueError(f"missing must be one of {MISSING_POLICIES}, got {missing!r}")
    _require(decisions, DECISION_COLUMNS, "verified_accuracy decisions")
    keys = ["benchmark", "split", "item_id", "judge", "sample"]
    out = metrics.item_outcomes(judgments)
    out = out[out["complete"].astype(bool) & out["has_gold"].astype(bool)].reset_index(drop=True)
    dec = decisions.astype({"item_id": str, "order": int, "sample": int})
    d = {}
    n_missing = np.zeros(len(out), dtype=int)
    for o in (0, 1):
        part = dec[dec["order"] == o].set_index(keys)["verified"]
        joined = out.astype({"item_id": str}).join(part, on=keys)["verified"]
        correct = out[f"correct_{o}"].astype("boolean").fillna(False).to_numpy(dtype=bool)
        lacking = correct & joined.isna().to_numpy()
        n_missing += lacking
        fill = {"error": False, "unverified": False, "verified": True}[missing]
        d[o] = correct & joined.astype("boolean").fillna(fill).to_numpy(dtype=bool)
    if missing == "error" and n_missing.any():
        i = int(np.flatnonzero(n_missing)[0])
        row = out.iloc[i]
        raise ValueError(
            f"{int(n_missing.sum())} correct run(s) have no verifier decision, e.g. judge="
            f"{row['judge']!r} split={row['split']!r} item_id={row['item_id']!r}; run the "
            "verifier on them or pass missing='unverified'/'verified'"
        )
    c0 = out["correct_0"].astype("boolean").fillna(False).to_numpy(dtype=float)
    c1 = out["correct_1"].astype("boolean").fillna(False).to_numpy(dtype=float)
    u0, u1 = d[0].astype(float), d[1].astype(float)
    values = np.column_stack(
        [c0 * c1, u0 * u1, np.maximum(c0, c1), np.maximum(u0, u1), c0 + c1, n_missing]
    )
    group = (
        out["split"].map(criterion_of).fillna(out["split"]) if by == "criterion" else out["split"]
    )
    frame = pd.DataFrame({"judge": out["judge"], "group": group.to_numpy()})
    cells = []
    for (judge, grp), idx in frame.groupby(["judge", "group"], sort=True).indices.items():
        v = values[idx]
        reps = stats.bootstrap_sums(
            v, n_boot=n_boot, rng=stats.rng_for(seed, "verified", judge, grp)
        )
        cells.append((judge, grp, v.sum(axis=0), reps, len(v)))
    by_judge: dict[str, list] = {}
    for c in cells:
        by_judge.setdefault(c[0], []).append(c)
    for judge, members in by_judge.items():
        cells.append(
            (
                judge,
                metrics.POOLED,
                np.sum([m[2] for m in members], axis=0),
                np.sum([m[3] for m in members], axis=0),
                sum(m[4] for m in members),
            )
        )
    rows = []
    for judge, grp, sums, reps, n in cells:
        low, high = stats.percentile_interval(reps[:, :4] / n, level=level)
        row = {"judge": judge, "group": grp}
        for i, name in enumerate(("ca", "vca", "oa", "voa")):
            row |= {name: sums[i] / n, f"{name}_low": low[i], f"{name}_high": high[i]}
        row |= {
            "drop_ca": (sums[0] - sums[1]) / n,
            "drop_oa": (sums[2] - sums[3]) / n,
            "n": n,
            "n_correct_runs": int(sums[4]),
            "n_missing_decisions": int(sums[5]),
        }
        rows.append(row)
    return pd.DataFrame(rows)


def fit_coefficients(data: pd.DataFrame, *, x: str, y: str) -> pd.DataFrame:
    """Return every reading of the paper's "line of best fit coefficient" for y against x.

    Spec §4.4 leaves it open, so all four are given: the OLS slope (with intercept), the
    slope through the origin, Pearson r and R² (statsmodels OLS).

    Returns:
        One row: `x`, `y`, `ols_slope`, `ols_intercept`, `origin_slope`, `pearson_r`, `r2`,
        `n` (points).
    """
    _require(data, [x, y], "fit_coefficients")
    pts = data[[x, y]].dropna().to_numpy(dtype=float)
    row = {
        "x": x,
        "y": y,
        "ols_slope": np.nan,
        "ols_intercept": np.nan,
        "origin_slope": np.nan,
        "pearson_r": np.nan,
        "r2": np.nan,
        "n": len(pts),
    }
    if len(pts) >= 2 and np.ptp(pts[:, 0]) > 0:
        fit = sm.OLS(pts[:, 1], sm.add_constant(pts[:, 0])).fit()
        origin = sm.OLS(pts[:, 1], pts[:, 0]).fit()
        r = float(np.corrcoef(pts[:, 0], pts[:, 1])[0, 1]) if np.ptp(pts[:, 1]) > 0 else np.nan
        row |= {
            "ols_slope": float(fit.params[1]),
            "ols_intercept": float(fit.params[0]),
            "origin_slope": float(origin.params[0]),
            "pearson_r": r,
            "r2": r * r,
        }
    return pd.DataFrame([row])


def verification_summary(table: pd.DataFrame) -> pd.DataFrame:
    """Return the Fig. 4 numbers over the judge × group points (pooled rows left out).

    Returns:
        Two rows (`pair` = "CA→VCA" and "OA→VOA"): `mean_drop` (mean of x − y over points),
        the `fit_coefficients` columns, and `n` points.
    """
    _require(table, ["group", "ca", "vca", "oa", "voa"], "verification_summary")
    pts = table[table["group"] != metrics.POOLED]
    rows = []
    for pair, x, y in (("CA→VCA", "ca", "vca"), ("OA→VOA", "oa", "voa")):
        fit = fit_coefficients(pts, x=x, y=y).iloc[0].to_dict()
        rows.append({"pair": pair, "mean_drop": float((pts[x] - pts[y]).mean()), **fit})
    return pd.DataFrame(rows)


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
