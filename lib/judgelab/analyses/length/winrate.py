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

from judgelab.analyses.length.glm import fit_binomial
from judgelab.analyses.length.rates import cluster_rate
from judgelab.analyses.length.regression import design_length
from judgelab.analyses.length.verdicts import KEYS, length_unit
from judgelab.core import clusters, stats
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
) -> pd.DataFrame:
    """Return raw and length-controlled win rates of the model in `model_slot` vs the other.

    In the spirit of AlpacaEval's GLM (`length_controlled_v1`): per group, a logistic GLM
    (statsmodels, binomial family, fractional response) of the model's preference
    (`preference_for_slot`) on an intercept and tanh(len_model − len_baseline, standardized
    by its SD in the group). The LC win rate is the predicted preference with the length
    term set to 0, i.e. expit(intercept), with the Wald interval of the intercept mapped
    through expit. Uncertainty respects the resampling units (`cluster`, default: the
    `cluster` column, items sharing an instruction or source together): the raw win rate's
    bootstrap resamples clusters within splits and the GLM's errors are cluster-robust
    (t with G − 1 df); `cluster=None` is the legacy choice (a bootstrap over verdicts and
    HC0 errors, every verdict independent). Unlike AlpacaEval it has no instruction-difficulty
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
        cluster: Column of resampling units (None: verdicts independent, HC0).

    Returns:
        The `by` columns, `model`, `baseline` (from meta when present), `n`, `n_clusters`,
        `raw_winrate`, `raw_low`, `raw_high` (bootstrap), `discrete_winrate` (wins + ½ ties),
        `lc_winrate`, `lc_low`, `lc_high`, `length_coef`, `length_low`, `length_high`,
        `length_p`, `mean_len_model`, `mean_len_baseline`, `len_unit`, `note` — rates in %.
    """
    by = list(by)
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
            data.iloc[idx],
            model_slot=model_slot,
            transform=transform,
            n_boot=n_boot,
            seed=seed,
            level=level,
        )
        rows.append({**dict(zip(by, key, strict=True)), **row, "len_unit": unit})
    return pd.DataFrame(rows, columns=[*by, *_WINRATE_COLUMNS])


def _group_winrate(
    g: pd.DataFrame, *, model_slot: str, transform: str, n_boot: int, seed: int, level: float
) -> dict[str, Any]:
    """Return the `length_controlled_winrate` values of one group (no `by`, no unit)."""
    other = "pos" if model_slot == "neg" else "neg"
    y = g["_y"].to_numpy(float)
    lm, lb = g[f"len_{model_slot}"].to_numpy(float), g[f"len_{other}"].to_numpy(float)
    length, _ = design_length(lm - lb, transform)
    X = pd.DataFrame({"intercept": 1.0, "length": length})
    units = g["_unit"].to_numpy() if "_unit" in g.columns else None
    if units is None:
        raw = stats.bootstrap_mean(y, n_boot=n_boot, seed=seed)
        raw_est, raw_low, raw_high = raw.estimate, raw.low, raw.high
    else:
        strata = (g["benchmark"].astype(str) + "|" + g["split"].astype(str)).to_numpy()
        rng = stats.rng_for(seed, "raw_winrate", model_slot)
        r = cluster_rate(y, units, n_boot=n_boot, rng=rng, level=level, strata=strata)
        raw_est, raw_low, raw_high = r["value"], r["ci_low"], r["ci_high"]
    hard = preference_for_slot(g, slot=model_slot, soft=False)
    lc, lcoef, lp, note = _lc_fit(y, X, units, level=level)
    slot_model = g.get(f"model_{model_slot}", pd.Series(dtype="string")).dropna()
    slot_base = g.get(f"model_{other}", pd.Series(dtype="string")).dropna()
    return {
        "model": slot_model.iloc[0] if len(slot_model) else model_slot,
        "baseline": slot_base.iloc[0] if len(slot_base) else other,
        "n": len(g),
        "n_clusters": len(g) if units is None else len(np.unique(units)),
        "raw_winrate": 100 * raw_est,
        "raw_low": 100 * raw_low,
        "raw_high": 100 * raw_high,
        "discrete_winrate": 100 * float(np.nanmean(hard)),
        "lc_winrate": 100 * lc[0],
        "lc_low": 100 * lc[1],
        "lc_high": 100 * lc[2],
        "length_coef": lcoef[0],
        "length_low": lcoef[1],
        "length_high": lcoef[2],
        "length_p": lp,
        "mean_len_model": float(lm.mean()),
        "mean_len_baseline": float(lb.mean()),
        "note": note,
    }


def _lc_fit(
    y: np.ndarray, X: pd.DataFrame, units: np.ndarray | None, *, level: float
) -> tuple[list[float], list[float], float, str]:
    """Fit the win-rate GLM; return LC rate + interval, length coef + CI, p, note.

    The LC rate is expit(intercept) with the interval of the intercept (cluster-robust with
    a t(G − 1) reference by `units`; HC0 and normal without) mapped through expit; a
    degenerate group (all wins, constant length) gives NaN values and a note.
    """
    groups = None if units is None else pd.factorize(units)[0]
    res, note = fit_binomial(y, X, groups)
    if res is None or not np.isfinite(res.bse.to_numpy()).all():
        return [np.nan] * 3, [np.nan] * 3, np.nan, note or "fit failed: degenerate group"
    terms = stats.glm_rows(res, terms=["intercept", "length"], level=level).set_index("term")
    b0 = float(terms.loc["intercept", "coef"])
    lo0, hi0 = float(terms.loc["intercept", "ci_low"]), float(terms.loc["intercept", "ci_high"])
    lc = [_expit(b0), _expit(lo0), _expit(hi0)]
    t = terms.loc["length"]
    lcoef = [float(t["coef"]), float(t["ci_low"]), float(t["ci_high"])]
    return lc, lcoef, float(t["p_value"]), note


def _expit(x: float) -> float:
    return float(1.0 / (1.0 + np.exp(-x)))


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
