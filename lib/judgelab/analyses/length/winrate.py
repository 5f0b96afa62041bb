"""AlpacaEval-style length-controlled win rate, and our numbers beside the published ones.

The GLM follows AlpacaEval's length-controlled win rate (Dubois et al. 2024,
`metrics/glm_winrate.py`); the published leaderboard is read by
`judgelab.data.catalog.length.load_alpaca_leaderboard` and passed in as a frame.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from judgelab.analyses.length.glm import INFERENCE, fit_binomial, term_inference
from judgelab.analyses.length.rates import cluster_rate
from judgelab.analyses.length.regression import design_length
from judgelab.analyses.length.verdicts import KEYS, group_rows, length_unit
from judgelab.core import clusters, estimates, stats
from judgelab.core.schema import require_columns as _require
from judgelab.errors import check_choice

#: The slots a model can hold in a pairwise verdict.
SLOTS = ("pos", "neg")

_WINRATE_COLUMNS = [
    "model",
    "baseline",
    "n",
    "n_clusters",
    "raw_winrate",
    "raw_low",
    "raw_high",
    "discrete_winrate",
    "lc_winrate",
    "lc_low",
    "lc_high",
    "length_coef",
    "length_low",
    "length_high",
    "length_p",
    "mean_len_model",
    "mean_len_baseline",
    "len_unit",
    "note",
    "lc_dof",
    "lc_wild_low",
    "lc_wild_high",
    "lc_wild_p",
    "length_wild_p",
    "raw_n_eff_clusters",
    "n_eff_clusters",
    "few_clusters",
    "method",
]


def preference_for_slot(verdicts: pd.DataFrame, *, slot: str, soft: bool = True) -> np.ndarray:
    """Return each verdict's preference for the response in `slot` (pos or neg), in [0, 1].

    With `soft`, a verdict that is an AlpacaEval preference (a number in [1, 2]: 1 = the pos
    slot / output_1, 2 = the neg slot / output_2) is used as is, so a logprob-weighted
    annotator's 1.9 counts 0.9 for neg; every other verdict counts 1 (chose `slot`), 0
    (chose the other) or ½ (tie). Invalid verdicts are NaN.

    >>> v = pd.DataFrame({"verdict": ["1.9", "A", None], "chosen": ["neg", "pos", None]})
    >>> preference_for_slot(v, slot="neg").round(2).tolist()
    [0.9, 0.0, nan]
    """
    check_choice("slot", slot, SLOTS)
    _require(verdicts, ["verdict", "chosen"], "preference_for_slot")
    chosen = verdicts["chosen"].astype(object).fillna("").to_numpy()
    hard = np.select(
        [chosen == slot, np.isin(chosen, SLOTS), chosen == "tie"],
        [1.0, 0.0, 0.5],
        np.nan,
    )
    if not soft:
        return hard
    num = pd.to_numeric(verdicts["verdict"].astype(object), errors="coerce").to_numpy(float)
    alpaca = (num >= 1) & (num <= 2) & (chosen != "")
    p_neg = num - 1.0
    soft_v = p_neg if slot == "neg" else 1.0 - p_neg
    return np.where(alpaca, soft_v, hard)


def winrate_reason(model_slot: str) -> str | None:
    """Return why the length-controlled win rate cannot apply, None when a model slot is set.

    The LC win rate compares one evaluated model against a fixed baseline (AlpacaEval: the
    baseline in `pos`, the model in `neg`); judge-benchmark pairs such as LLMBar's have no such
    model, so `model_slot` "" skips the section (an empty table and an empty plot otherwise).
    """
    if model_slot:
        return None
    return (
        "these pairs have no evaluated model against a fixed baseline (winrate_model_slot is "
        "empty); the AlpacaEval-style runs set it (params alpaca_eval: neg)"
    )


def length_controlled_winrate(
    verdicts: pd.DataFrame,
    *,
    model_slot: str = "neg",
    by: Sequence[str] = ("judge", "split"),
    soft: bool = True,
    transform: str = "tanh",
    n_boot: int = 1000,
    seed: int = 0,
    level: float = 0.95,
    cluster: str | None = clusters.COLUMN,
    inference: str = "cr2",
    wild: str = "p",
) -> pd.DataFrame:
    """Return raw and length-controlled win rates of the model in `model_slot` vs the other.

    In the spirit of AlpacaEval's GLM (`length_controlled_v1`): per group, a logistic GLM
    (statsmodels, binomial family, fractional response) of the model's preference
    (`preference_for_slot`) on an intercept and tanh(len_model − len_baseline, standardized
    by its SD in the group). The LC win rate is the predicted preference with the length
    term set to 0, i.e. expit(intercept), with the Wald interval of the intercept mapped
    through expit. Uncertainty respects the units (`cluster`, default: the `cluster` column,
    items sharing an instruction or source together): the raw win rate's interval is that
    of every ratio of sums (`core.estimates.ratio`: the inverted wild cluster bootstrap),
    and the GLM's (`glm.term_inference`) is CR2 with Bell–McCaffrey degrees of freedom
    (`lc_dof`) by default, with the wild cluster score bootstrap beside it (`wild="p"`: the
    p-values `lc_wild_p` of LC = 50 % and `length_wild_p`; `wild="interval"` adds
    `lc_wild_low`, `lc_wild_high`). `inference="cluster"` is the earlier default (a
    percentile cluster bootstrap for the raw rate, CR1 errors with t(G − 1) for the GLM);
    `cluster=None` is the issue-20 legacy (a bootstrap over verdicts and HC0 errors, every
    verdict independent). Unlike AlpacaEval it has no instruction-difficulty
    term (that needs many models judged on the same instructions), no regularisation towards
    its "gamed" baselines, and no L1/cross-validation.

    Args:
        verdicts: `pairwise_verdicts` output (one presentation order is fine).
        model_slot: The slot holding the evaluated model (`neg` for AlpacaEval imports,
            where pos = output_1 = the baseline); "" returns an empty table (no baseline).
        by: Group columns (one model per group).
        soft: Use continuous AlpacaEval preferences when the verdicts carry them.
        transform: `tanh` (AlpacaEval) or `linear`.
        n_boot: Bootstrap resamples B of the raw win rate.
        seed: Seed of the bootstrap.
        level: Confidence level.
        cluster: Column of units (None: verdicts independent, HC0).
        inference: `glm.INFERENCE` of the GLM: `cr2` (default), `wild`, or `cluster` (the
            earlier default, also for the raw rate's percentile bootstrap).
        wild: `glm.WILD`: the wild score bootstrap beside CR2 (`p` by default).

    Returns:
        The `by` columns, `model`, `baseline` (from meta when present), `n`, `n_clusters`,
        `raw_winrate`, `raw_low`, `raw_high`, `discrete_winrate` (wins + ½ ties),
        `lc_winrate`, `lc_low`, `lc_high`, `length_coef`, `length_low`, `length_high`,
        `length_p`, `mean_len_model`, `mean_len_baseline`, `len_unit`, `note`, `lc_dof`,
        `lc_wild_low`, `lc_wild_high`, `lc_wild_p`, `length_wild_p`, `raw_n_eff_clusters`,
        `n_eff_clusters` (behind the LC rate), `few_clusters`, `method` — rates in %.
    """
    by = list(by)
    check_choice("inference", inference, INFERENCE)
    if not model_slot:
        return pd.DataFrame(columns=[*by, *_WINRATE_COLUMNS])
    check_choice("model_slot", model_slot, SLOTS)
    _require(
        verdicts,
        [*by, "verdict", "chosen", "len_pos", "len_neg", *KEYS],
        "length_controlled_winrate",
    )
    data = verdicts.assign(_y=preference_for_slot(verdicts, slot=model_slot, soft=soft))
    data = data[data["_y"].notna()]
    if cluster is not None:
        data = data.assign(_unit=clusters.codes(data, cluster))
    unit = length_unit(verdicts)
    rows = []
    groups = data.groupby(by, sort=True, observed=True, dropna=True).indices if len(data) else {}
    for key, idx in groups.items():
        key = key if isinstance(key, tuple) else (key,)
        row = _group_winrate(
            group_rows(data, idx),
            model_slot=model_slot,
            transform=transform,
            n_boot=n_boot,
            seed=seed,
            level=level,
            inference=inference,
            wild_mode=wild,
            key=key,
        )
        rows.append({**dict(zip(by, key, strict=True)), **row, "len_unit": unit})
    return pd.DataFrame(rows, columns=[*by, *_WINRATE_COLUMNS])


def _group_winrate(
    g: pd.DataFrame,
    *,
    model_slot: str,
    transform: str,
    n_boot: int,
    seed: int,
    level: float,
    inference: str,
    wild_mode: str,
    key: tuple,
) -> dict[str, Any]:
    """Return the `length_controlled_winrate` values of one group (no `by`, no unit)."""
    other = "pos" if model_slot == "neg" else "neg"
    y = g["_y"].to_numpy(float)
    lm, lb = g[f"len_{model_slot}"].to_numpy(float), g[f"len_{other}"].to_numpy(float)
    length, _ = design_length(lm - lb, transform)
    X = pd.DataFrame({"intercept": 1.0, "length": length})
    units = g["_unit"].to_numpy() if "_unit" in g.columns else None
    raw_n_eff = np.nan
    if units is None:
        raw = stats.bootstrap_mean(y, n_boot=n_boot, seed=seed)
        raw_est, raw_low, raw_high = raw.estimate, raw.low, raw.high
    else:
        strata = (g["benchmark"].astype(str) + "|" + g["split"].astype(str)).to_numpy()
        rate_kind = "bootstrap" if inference == "cluster" else "wild"
        rng = stats.rng_for(seed, "raw_winrate", model_slot)
        if rate_kind == "wild":
            rng = estimates.seeded(seed, "raw_winrate", model_slot, *key)
        r = cluster_rate(
            y, units, n_boot=n_boot, rng=rng, level=level, strata=strata, inference=rate_kind
        )
        raw_est, raw_low, raw_high = r["value"], r["ci_low"], r["ci_high"]
        raw_n_eff = r["n_eff_clusters"]
    hard = preference_for_slot(g, slot=model_slot, soft=False)
    rng = estimates.seeded(seed, "lc_winrate", model_slot, *key)
    lc = _lc_fit(y, X, units, level=level, inference=inference, wild_mode=wild_mode, rng=rng)
    slot_model = g.get(f"model_{model_slot}", pd.Series(dtype="string")).dropna()
    slot_base = g.get(f"model_{other}", pd.Series(dtype="string")).dropna()
    return {
        "model": slot_model.iloc[0] if len(slot_model) else model_slot,
        "baseline": slot_base.iloc[0] if len(slot_base) else other,
        "n": len(g),
        "n_clusters": len(g) if units is None else clusters.n_distinct(units),
        "raw_winrate": 100 * raw_est,
        "raw_low": 100 * raw_low,
        "raw_high": 100 * raw_high,
        "discrete_winrate": 100 * float(np.nanmean(hard)),
        "mean_len_model": float(lm.mean()),
        "mean_len_baseline": float(lb.mean()),
        "raw_n_eff_clusters": raw_n_eff,
        **lc,
    }


def _lc_fit(
    y: np.ndarray,
    X: pd.DataFrame,
    units: np.ndarray | None,
    *,
    level: float,
    inference: str,
    wild_mode: str,
    rng: np.random.Generator,
) -> dict[str, Any]:
    """Fit the win-rate GLM; return the LC rate, its interval and the length term's columns.

    The LC rate is expit(intercept) with the interval of the intercept mapped through expit
    (`glm.term_inference` by `units`; HC0 and normal without units, the legacy); a
    degenerate group (all wins, constant length) gives NaN values and a note.
    """
    nan = float("nan")
    out: dict[str, Any] = dict.fromkeys(
        [
            "lc_winrate",
            "lc_low",
            "lc_high",
            "length_coef",
            "length_low",
            "length_high",
            "length_p",
            "lc_dof",
            "lc_wild_low",
            "lc_wild_high",
            "lc_wild_p",
            "length_wild_p",
            "n_eff_clusters",
        ],
        nan,
    )
    out.update(few_clusters=True, method="no fit", note="")
    if units is None:
        res, note = fit_binomial(y, X, None)
        if res is None or not np.isfinite(res.bse.to_numpy()).all():
            out["note"] = note or "fit failed: degenerate group"
            return out
        t = stats.glm_rows(res, terms=["intercept", "length"], level=level).set_index("term")
        i, ln = t.loc["intercept"], t.loc["length"]
        out.update(
            lc_winrate=100 * _expit(i["coef"]),
            lc_low=100 * _expit(i["ci_low"]),
            lc_high=100 * _expit(i["ci_high"]),
            length_coef=float(ln["coef"]),
            length_low=float(ln["ci_low"]),
            length_high=float(ln["ci_high"]),
            length_p=float(ln["p_value"]),
            few_clusters=pd.NA,
            method="HC0, normal reference (verdicts independent)",
            note=note,
        )
        return out
    rows, note = term_inference(
        y,
        X,
        units,
        terms=["intercept", "length"],
        inference=inference,
        wild_mode=wild_mode,
        wild_terms=("intercept", "length"),
        level=level,
        rng=rng,
    )
    i, ln = rows
    if not np.isfinite(i["std_error"]):
        out["note"] = note or "fit failed: degenerate group"
        return out
    out.update(
        lc_winrate=100 * _expit(i["coef"]),
        lc_low=100 * _expit(i["ci_low"]),
        lc_high=100 * _expit(i["ci_high"]),
        length_coef=ln["coef"],
        length_low=ln["ci_low"],
        length_high=ln["ci_high"],
        length_p=ln["p_value"],
        lc_dof=i["dof"],
        lc_wild_low=100 * _expit(i["wild_low"]),
        lc_wild_high=100 * _expit(i["wild_high"]),
        lc_wild_p=i["wild_p"],
        length_wild_p=ln["wild_p"],
        n_eff_clusters=i["n_eff_clusters"],
        few_clusters=i["few_clusters"],
        method=i["method"],
        note=note,
    )
    return out


def _expit(x: float) -> float:
    return float(1.0 / (1.0 + np.exp(-float(x))))


def compare_published(
    winrates: pd.DataFrame,
    published: pd.DataFrame,
    *,
    aliases: Mapping[str, str] | None = None,
    annotator: str = "weighted_alpaca_eval_gpt4_turbo",
    baseline: str = "gpt4_1106_preview",
) -> pd.DataFrame:
    """Put our raw / LC win rates beside the published ones (matched on model name).

    The published leaderboard belongs to one annotator and one baseline; only rows whose
    judge id starts with `annotator` and whose baseline is `baseline` are matched (another
    annotator's or baseline's numbers are not comparable and stay empty).

    Args:
        winrates: `length_controlled_winrate` output.
        published: `judgelab.data.catalog.length.load_alpaca_leaderboard` output: `model`,
            `published_winrate`, `published_lc_winrate`, `published_avg_length`.
        aliases: Our model name → the leaderboard's (e.g. AlpacaEval's NullModel annotations
            name their generator "example").
        annotator: Judge-id prefix of the leaderboard's annotator.
        baseline: The leaderboard's baseline model.

    Returns:
        `winrates` with `published_model`, `published_winrate`, `published_lc_winrate`,
        `published_avg_length`, `lc_minus_raw` (ours), `published_lc_minus_raw`.
    """
    _require(winrates, ["model", "raw_winrate", "lc_winrate"], "compare_published")
    out = winrates.copy()
    out["published_model"] = out["model"].map(lambda m: (aliases or {}).get(m, m))
    comparable = out["judge"].astype(str).str.startswith(annotator) if "judge" in out else True
    if "baseline" in out:
        comparable = comparable & (out["baseline"] == baseline)
    out["published_model"] = out["published_model"].where(comparable, None)
    out = out.merge(
        published.rename(columns={"model": "published_model"}), on="published_model", how="left"
    )
    out["lc_minus_raw"] = out["lc_winrate"] - out["raw_winrate"]
    out["published_lc_minus_raw"] = out["published_lc_winrate"] - out["published_winrate"]
    return out


def winrates_long(compared: pd.DataFrame) -> pd.DataFrame:
    """Return `compare_published` output in long form for `length.plots.interval_forest`.

    Returns:
        `model` (with the judge in brackets when there is a `judge` column), `estimate`
        (raw / LC × ours / published), `value`, `ci_low`, `ci_high` (fractions; published
        values have no interval).
    """
    rows = []
    for _, r in compared.iterrows():
        label = r["model"]
        if "judge" in compared.columns:
            label = f"{r['model']} ({str(r['judge']).split('.')[0]})"
        for name, v, lo, hi in (
            ("raw (ours)", r["raw_winrate"], r["raw_low"], r["raw_high"]),
            ("LC (ours)", r["lc_winrate"], r["lc_low"], r["lc_high"]),
            ("raw (published)", r.get("published_winrate"), np.nan, np.nan),
            ("LC (published)", r.get("published_lc_winrate"), np.nan, np.nan),
        ):
            rows.append(
                {
                    "model": label,
                    "estimate": name,
                    "value": v / 100,
                    "ci_low": lo / 100,
                    "ci_high": hi / 100,
                }
            )
    return pd.DataFrame(rows, columns=["model", "estimate", "value", "ci_low", "ci_high"])
