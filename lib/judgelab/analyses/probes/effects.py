"""What a probe does to a judge: robustness, flips toward the probed response, accuracy change.

`probe_pairs(judgments, items)` pairs every variant verdict with the control verdict of the
same original item, judge, condition, sample and presentation order. `probe_effects(pairs)`
then reports, per judge × condition × sample × probe (and `all` probes pooled), over the
*valid pairs* (both verdicts valid — pos, neg or tie — and the probe not a no-op):

- `robustness`: the verdict is unchanged (variant = control);
- `flip_toward`: the control did not pick the probed response and the variant does;
- `flip_away`: the control picked the probed response and the variant does not;
- `pull` = flip_toward − flip_away: the net shift toward the probed response, i.e.
  P(variant picks it) − P(control picks it); 0 for a judge the probe does not move;
- `acc_change_worse`: accuracy (picks the gold-better response) of the variant minus the
  control, in the arm where the probe favours the **worse** response (< 0: the probe costs
  accuracy), over pairs with gold; `acc_change_better`: the same in the other arm.

Every metric is a ratio of sums over the pairs (a difference of two counts over one
denominator for the pull and the accuracy changes), and paired and item-clustered: the
resampling unit is the original item's cluster, which every variant of the item shares, so
a unit brings its control and variant verdicts together. By default (`inference="wild"`)
each row is a `core.estimates` row: the interval inverts the restricted wild cluster
bootstrap test, `p_value` (of `pull` = 0 and of each accuracy change = 0) is that test's —
below 1 − level exactly when 0 lies outside the interval —, with `n_eff_clusters`,
`few_clusters` and `method`. `inference="bootstrap"` is the earlier default (a t-expanded
percentile cluster bootstrap, Rao–Wu rescaled, and adaptive bootstrap p-values; there the
pull's p-value was also shown on `flip_toward`). `robustness`, `flip_toward` and `flip_away`
carry no p-value: robustness has no null other than 1 (which any single flip rejects), and
the test of a probe's effect is the pull's.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
import pandas as pd

from judgelab.analyses.pairwise import resample, units
from judgelab.analyses.probes.variants import CONTROL, provenance
from judgelab.core import clusters, estimates, inference, stats
from judgelab.core.schema import require_columns
from judgelab.errors import check_choice

#: Probe label of the rows pooling every probe.
ALL = "all"
VALID = ("pos", "neg", "tie")
KEYS = ("judge", "condition", "sample")
#: Columns summed per unit: the numerators and denominators of every metric.
_COLS = (
    "valid",
    "same",
    "toward",
    "away",
    "gold_neg",
    "acc_v_neg",
    "acc_c_neg",
    "gold_pos",
    "acc_v_pos",
    "acc_c_pos",
)
_C = {c: i for i, c in enumerate(_COLS)}
#: metric → (numerator, subtracted numerator or None, denominator, tested).
METRICS: dict[str, tuple[str, str | None, str, bool]] = {
    "robustness": ("same", None, "valid", False),
    "flip_toward": ("toward", None, "valid", False),
    "flip_away": ("away", None, "valid", False),
    "pull": ("toward", "away", "valid", True),
    "acc_change_worse": ("acc_v_neg", "acc_c_neg", "gold_neg", True),
    "acc_change_better": ("acc_v_pos", "acc_c_pos", "gold_pos", True),
}
#: With `inference="bootstrap"` (the earlier default) `flip_toward` showed the pull's p.
_TESTED_AS = {"flip_toward": "pull"}
#: Metrics that are differences (their interval lives in [-1, 1]).
_SIGNED = ("pull", "acc_change_worse", "acc_change_better")
#: Inference of the rows: the wild cluster bootstrap (default) or the earlier bootstrap.
INFERENCE = ("wild", "bootstrap")
PAIR_COLUMNS = (
    *KEYS,
    "benchmark",
    "split",
    "orig_item_id",
    "probe",
    "probe_target",
    "order",
    "control",
    "variant",
    "has_gold",
    "noop",
    "cluster",
)


def _verdict(j: pd.DataFrame) -> np.ndarray:
    ok = j["valid"].astype("boolean").fillna(False).to_numpy(dtype=bool)
    chosen = j["chosen"].astype(object)
    known = chosen.isin(VALID).to_numpy(dtype=bool)
    return np.where(ok & known, chosen.where(known, "invalid").to_numpy(), "invalid").astype(
        object
    )


def probe_pairs(judgments: pd.DataFrame, items: pd.DataFrame) -> pd.DataFrame:
    """Pair each variant verdict with its control verdict (same judge, item, order, sample).

    Args:
        judgments: Judgments of a probe benchmark (`generate`); the `cluster` column is used
            when present, else attached from `items`.
        items: The probe benchmark's items (provenance in `meta`).

    Returns:
        One row per judge × condition × sample × variant item × order (`PAIR_COLUMNS`):
        `control` / `variant` are pos, neg, tie, `invalid` or `missing` (the control was
        not judged); `has_gold` (the control's `correct` is known); `noop`; `cluster`.

    Raises:
        KeyError: a needed column is missing.
        ValueError: the items carry no probe provenance.
    """
    need = ["benchmark", "split", "item_id", *KEYS, "order", "valid", "chosen", "correct"]
    require_columns(judgments, need, "probe_pairs")
    prov = provenance(items)
    prov = prov[prov["probe"].notna()]
    if prov.empty or not (prov["probe"] == CONTROL).any():
        raise ValueError("probe_pairs: the items carry no probe provenance (run probes.generate)")
    j = judgments.reset_index(drop=True)
    j = j if "cluster" in j.columns else clusters.attach(j, items)
    j = j.assign(_verdict=_verdict(j), _gold=j["correct"].notna().to_numpy())
    j = j[[*need, "cluster", "_verdict", "_gold"]].astype({"benchmark": str, "split": str})
    j = j.assign(item_id=j["item_id"].astype(str)).merge(
        prov, on=["benchmark", "split", "item_id"], how="inner"
    )
    on = [*KEYS, "benchmark", "split", "orig_item_id", "order"]
    control = j[j["probe"] == CONTROL][[*on, "_verdict", "_gold"]].rename(
        columns={"_verdict": "control", "_gold": "has_gold"}
    )
    variants = j[j["probe"] != CONTROL].rename(columns={"_verdict": "variant"})
    out = variants.merge(control, on=on, how="left", validate="many_to_one")
    out["control"] = out["control"].fillna("missing")
    out["has_gold"] = out["has_gold"].astype("boolean").fillna(False).astype(bool)
    out["noop"] = out["probe_noop"].astype("boolean").fillna(False).astype(bool)
    return out[list(PAIR_COLUMNS)].reset_index(drop=True)


def _columns(pairs: pd.DataFrame) -> np.ndarray:
    """Return the per-pair 0/1 matrix of `_COLS`."""
    c, v, t = (pairs[k].to_numpy(dtype=object) for k in ("control", "variant", "probe_target"))
    valid = np.isin(c, VALID) & np.isin(v, VALID) & ~pairs["noop"].to_numpy(dtype=bool)
    ct, vt = valid & (c == t), valid & (v == t)
    gold = valid & pairs["has_gold"].to_numpy(dtype=bool)
    arm_neg, arm_pos = t == "neg", t == "pos"
    cols = {
        "valid": valid,
        "same": valid & (c == v),
        "toward": ~ct & vt,
        "away": ct & ~vt,
        "gold_neg": gold & arm_neg,
        "acc_v_neg": gold & arm_neg & (v == "pos"),
        "acc_c_neg": gold & arm_neg & (c == "pos"),
        "gold_pos": gold & arm_pos,
        "acc_v_pos": gold & arm_pos & (v == "pos"),
        "acc_c_pos": gold & arm_pos & (c == "pos"),
    }
    return np.column_stack([cols[k] for k in _COLS]).astype(np.float64)


class _Boot(NamedTuple):
    n_boot: int
    seed: int
    level: float
    cluster: str | None
    inference: str = "wild"
    metrics: tuple[str, ...] = tuple(METRICS)


def _stat(sums: np.ndarray, metric: str) -> np.ndarray:
    """Return a metric from column sums (1-D: one value; 2-D: one per replicate)."""
    num, minus, den, _ = METRICS[metric]
    s = np.atleast_2d(sums)
    top = s[:, _C[num]] - (s[:, _C[minus]] if minus else 0.0)
    return stats.ratio_replicates(top, s[:, _C[den]])


def _item_keys(rows: pd.DataFrame) -> pd.Series:
    """The original item of every pair (its unit when clusters are not used)."""
    return (
        rows["benchmark"].astype(str)
        + "|"
        + rows["split"].astype(str)
        + "|"
        + rows["orig_item_id"].astype(str)
    )


def _cell(key: dict, probe: str, rows: pd.DataFrame, values: np.ndarray, boot: _Boot) -> list:
    """Return the metric rows of one judge × condition × sample × probe cell."""
    # cluster None: each original item is its own unit (its pairs still stay together)
    unit = _item_keys(rows) if boot.cluster is None else rows[boot.cluster]
    valid = rows.loc[values[:, _C["valid"]] > 0]
    base = {
        **key,
        "probe": probe,
        "n_items": int(valid[["benchmark", "split", "orig_item_id"]].drop_duplicates().shape[0]),
        "n_invalid": int(((values[:, _C["valid"]] == 0) & ~rows["noop"].to_numpy()).sum()),
        "n_noop": int(rows["noop"].sum()),
    }
    if boot.inference == "bootstrap":
        return _boot_cell(base, probe, key, unit, values, boot)
    labels = unit.astype(str).to_numpy()
    out = []
    for metric in boot.metrics:
        num, minus, den, tested = METRICS[metric]
        top = values[:, _C[num]] - (values[:, _C[minus]] if minus else 0.0)
        s = units.row_sums(top, values[:, _C[den]], np.zeros(len(top), dtype=np.int64), labels, 1)
        rng = estimates.seeded(boot.seed, "probes", probe, *map(str, key.values()), metric)
        null = 0.0 if tested else float("nan")
        e = units.estimate(
            s,
            None,
            [1.0],
            null=null,
            level=boot.level,
            n_boot=boot.n_boot,
            rng=rng,
            bounds=(-1.0, 1.0) if metric in _SIGNED else (0.0, 1.0),
        )
        out.append(
            {
                **base,
                "n_clusters": int(e.n_clusters),
                "metric": metric,
                "value": e.value,
                "ci_low": e.ci_low,
                "ci_high": e.ci_high,
                "n": int(values[:, _C[den]].sum()),
                "p_value": e.p_value,
                "p_bound": False,
                "n_eff_clusters": e.n_eff_clusters,
                "few_clusters": bool(e.few_clusters),
                "method": e.method,
            }
        )
    return out


def _boot_cell(
    base: dict, probe: str, key: dict, unit: pd.Series, values: np.ndarray, boot: _Boot
) -> list:
    """The earlier default: percentile cluster bootstrap and adaptive bootstrap p-values."""
    codes = clusters.codes(pd.DataFrame({"_unit": unit.to_numpy()}), "_unit")
    units_ = clusters.sum_by(values, codes)
    units_ = units_[units_[:, _C["valid"]] > 0]  # units with no valid pair weigh nothing
    rng = stats.rng_for(boot.seed, "probes", probe, *key.values())
    reps = stats.bootstrap_sums(units_, n_boot=boot.n_boot, rng=rng)
    sums = units_.sum(axis=0)
    out, p_of = [], {}
    for metric in boot.metrics:
        _, _, den, tested = METRICS[metric]
        r = _stat(reps, metric)
        low, high = resample.interval(r, level=boot.level, df=len(units_) - 1)
        p = inference.PValue(np.nan, 0, np.nan, False)
        if tested or metric in _TESTED_AS:
            name = _TESTED_AS.get(metric, metric)
            if name not in p_of:
                p_of[name] = _p_value(units_, name, _stat(reps, name), rng, boot)
            p = p_of[name]
        out.append(
            {
                **base,
                "n_clusters": int(len(units_)),
                "metric": metric,
                "value": float(_stat(sums, metric)[0]),
                "ci_low": float(low),
                "ci_high": float(high),
                "n": int(sums[_C[den]]),
                "p_value": p.p,
                "p_bound": bool(p.bound),
                "n_eff_clusters": np.nan,
                "few_clusters": False,
                "method": "cluster bootstrap, percentile (expanded); adaptive bootstrap p",
            }
        )
    return out


def _p_value(
    units: np.ndarray, metric: str, first: np.ndarray, rng: np.random.Generator, boot: _Boot
) -> inference.PValue:
    """The adaptive cluster-bootstrap p-value of `metric` = 0."""
    if not np.isfinite(first).any():
        return inference.PValue(np.nan, 0, np.nan, False)

    def draw(k: int) -> np.ndarray:
        return _stat(stats.bootstrap_sums(units, n_boot=k, rng=rng), metric)

    return inference.adaptive_p(draw, null=0.0, first=first, n_boot=boot.n_boot)


def probe_effects(
    pairs: pd.DataFrame,
    *,
    probes: Sequence[str] | None = None,
    pooled: bool = True,
    n_boot: int = 1000,
    seed: int = 0,
    level: float = 0.95,
    cluster: str | None = "cluster",
    inference: str = "wild",
    metrics: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Return every probe metric (module docstring) per judge × condition × sample × probe.

    Args:
        pairs: Output of `probe_pairs`.
        probes: Probes to report, in this order (None: those present, in first-seen order).
        pooled: Add the `all` rows pooling every reported probe (same resampling units).
        n_boot: Bootstrap replicates B (the p-values draw more when they need them).
        seed: Seed of every bootstrap (per cell: results do not depend on other cells).
        level: Confidence level.
        cluster: Column of `pairs` with the resampling unit (default: the original item's
            cluster); None resamples original items (the legacy, independent-items choice).
        inference: "wild" (default: `core.estimates` rows) or "bootstrap" (the earlier
            default; see the module docstring).
        metrics: Report only these metrics (default: all of `METRICS`, in that order).

    Returns:
        Long table: `judge`, `condition`, `sample`, `probe`, `n_items` (original items with
        a valid pair), `n_clusters` (resampling units behind the metric), `n_invalid`
        (pairs with an invalid or missing verdict), `n_noop`, `metric`, `value`, `ci_low`,
        `ci_high`, `n` (the metric's denominator: valid pairs, or valid pairs with gold in
        the arm), `p_value`, `p_bound` (True: p is an upper bound; "bootstrap" only),
        `n_eff_clusters`, `few_clusters`, `method`.
    """
    require_columns(pairs, PAIR_COLUMNS, "probe_effects needs probe_pairs(...) output;")
    check_choice("inference", inference, INFERENCE)
    wanted = list(METRICS) if metrics is None else [m for m in METRICS if m in set(metrics)]
    unknown = sorted(set(metrics or ()) - set(METRICS))
    if unknown:
        raise ValueError(f"unknown probe metric(s) {unknown}; known: {list(METRICS)}")
    order = list(dict.fromkeys(pairs["probe"])) if probes is None else list(probes)
    pairs = pairs[pairs["probe"].isin(order)].reset_index(drop=True)
    values = _columns(pairs)
    boot = _Boot(n_boot, seed, level, cluster, inference, tuple(wanted))
    rows: list[dict] = []
    for key, idx in pairs.groupby(list(KEYS), sort=True, dropna=False).indices.items():
        kd = dict(zip(KEYS, key, strict=True))
        cell = pairs.iloc[idx]
        for probe in order:
            m = (cell["probe"] == probe).to_numpy()
            if m.any():
                rows += _cell(kd, probe, cell[m], values[idx][m], boot)
        if pooled and len(order) > 1:
            rows += _cell(kd, ALL, cell, values[idx], boot)
    cols = [*KEYS, "probe", "n_items", "n_clusters", "n_invalid", "n_noop", "metric"]
    cols += ["value", "ci_low", "ci_high", "n", "p_value", "p_bound"]
    cols += ["n_eff_clusters", "few_clusters", "method"]
    return pd.DataFrame(rows, columns=cols)


def _fmt(value: float, low: float, high: float, *, signed: bool) -> str:
    """Return "v [low, high]" in percent points (signed for changes), "n/a" when undefined."""
    if pd.isna(value):
        return "n/a"
    f = "+.1f" if signed else ".1f"
    return f"{100 * value:{f}} [{100 * low:{f}}, {100 * high:{f}}]"


def effects_table(
    effects: pd.DataFrame, *, metrics: Sequence[str] = ("robustness", "pull", "acc_change_worse")
) -> pd.DataFrame:
    """Return one display row per judge × probe: "value [low, high]" per metric, n and p.

    Values are in percent points (rates and changes alike); a p-value written "≤p" is an
    upper bound (no bootstrap replicate crossed the null: it is below what they resolve).
    """
    require_columns(effects, ["judge", "probe", "metric", "value"], "effects_table")
    keep = effects[effects["metric"].isin(list(metrics))]
    out = keep[["judge", "condition", "sample", "probe"]].drop_duplicates().reset_index(drop=True)
    for metric in metrics:
        part = keep[keep["metric"] == metric].set_index(["judge", "condition", "sample", "probe"])
        fmt = [
            _fmt(r.value, r.ci_low, r.ci_high, signed=metric != "robustness")
            for r in part.itertuples()
        ]
        p = [
            "" if pd.isna(v) else (f"≤{v:.2g}" if bound else f"{v:.3g}")
            for v, bound in zip(part["p_value"], part["p_bound"], strict=True)
        ]
        cols = pd.DataFrame(
            {metric: fmt, f"n_{metric}": part["n"].to_numpy(), f"p_{metric}": p},
            index=part.index,
        )
        if not METRICS[metric][3]:
            cols = cols.drop(columns=[f"p_{metric}"])
        out = out.join(cols, on=["judge", "condition", "sample", "probe"])
    return out


__all__ = ["ALL", "METRICS", "PAIR_COLUMNS", "effects_table", "probe_effects", "probe_pairs"]
