"""Length bias of judges: accuracy against response length, P(picks longer), regressions.

Definitions follow ContextualJudgeBench §5.3 (spec 000 §4.10, Fig. 10) and AlpacaEval's
length-controlled win rate (Dubois et al. 2024, `metrics/glm_winrate.py`). Lengths come from
`judgelab.core.lengths.add_lengths` (one named unit; never mixed): every function here needs an
items table that already carries `len_*` columns and `len_unit`.

Two tables feed every analysis:

- `pairwise_verdicts`: one row per pairwise judgment (judge × item × order × sample) with the
  two response lengths, which one is longer, whether the judge picked it, and which response
  was shown first;
- `item_table`: one row per judge × item (both task types): `correct` (pairwise: consistent
  accuracy from `metrics.item_outcomes`; pointwise: the judgment's `correct`), `consistent`
  (pairwise only), `score` (a numeric pointwise verdict), and the context / response lengths.

Rates come with a seeded percentile bootstrap over items (`judgelab.core.stats`) and, where the
value is 0/1, a Wilson interval; regressions use statsmodels with item-clustered errors.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from judgelab.analyses.pairwise import metrics
from judgelab.core import stats
from judgelab.core.schema import require_columns as _require

KEYS = ("benchmark", "split", "item_id")
EQUAL = "d = 0"
CONDITIONS = ("all", "longer is better", "longer is worse", "balanced")
DIFF_MODES = ("cumulative", "disjoint")
BIN_KINDS = ("percentile", "value")
TRANSFORMS = ("linear", "tanh")


def _require_lengths(items: pd.DataFrame, columns: Sequence[str], what: str) -> None:
    missing = [c for c in [*columns, "len_unit"] if c not in items.columns]
    if missing:
        raise KeyError(
            f"{what}: items lack length column(s) {missing}; "
            "call judgelab.core.lengths.add_lengths(items, unit=...) first"
        )


def _unit(items: pd.DataFrame) -> str:
    units = items["len_unit"].dropna().unique()
    if len(units) > 1:
        raise ValueError(f"items mix length units {sorted(units)}; recompute in one unit")
    return str(units[0]) if len(units) else ""


def _meta_field(meta: pd.Series, name: str) -> pd.Series:
    """Return one field of the JSON `meta` column (NA where absent), parsing each value once."""
    cache: dict[str, object] = {}

    def get(m: object) -> object:
        if not isinstance(m, str):
            return pd.NA
        if m not in cache:
            try:
                cache[m] = json.loads(m).get(name, pd.NA)
            except ValueError:
                cache[m] = pd.NA
        value = cache[m]
        return value if isinstance(value, str) else pd.NA

    return pd.Series([get(m) for m in meta.astype(object)], index=meta.index, dtype="string")


def _group_label(df: pd.DataFrame, by: Sequence[str]) -> pd.Series:
    """Return one display label per row: the `by` values joined by " · "."""
    if df.empty:
        return pd.Series([], dtype=object, index=df.index)
    return df[list(by)].astype(str).agg(" · ".join, axis=1)


def _select(judgments: pd.DataFrame, judges: Sequence[str], sample: int | None) -> pd.DataFrame:
    data = metrics.select_judges(judgments, judges)
    if sample is not None:
        data = data[data["sample"] == sample]
    return data


def pairwise_verdicts(
    items: pd.DataFrame,
    judgments: pd.DataFrame,
    *,
    judges: Sequence[str] = (),
    sample: int | None = 0,
) -> pd.DataFrame:
    """Return one row per pairwise judgment with the lengths of the two responses.

    Args:
        items: An items table with lengths (`judgelab.core.lengths.add_lengths`); needs
            `benchmark`, `split`, `item_id`, `task`, `meta`, `len_pos`, `len_neg`,
            `len_context`, `len_unit`. Only `task == "pairwise"` items are used.
        judgments: A judgments table; needs `judge`, `benchmark`, `split`, `item_id`,
            `order`, `sample`, `valid`, `chosen`, `correct`, `verdict`.
        judges: Judge ids to keep (all when empty).
        sample: Keep this `sample` (0 = greedy); None keeps every sample.

    Returns:
        `judge`, `benchmark`, `split`, `item_id`, `order`, `sample`, `verdict`, `chosen`,
        `correct`, `len_pos`, `len_neg`, `len_context`, `len_mean` ((len_pos + len_neg) / 2),
        `len_diff` (len_pos − len_neg), `longer` (`pos`, `neg` or `equal`), `picked_longer`
        (1/0 for a pos/neg verdict on a pair of unequal lengths, NaN otherwise),
        `first_shown` (`pos` in order 0, `neg` in order 1), `both_orders` (the judge has
        judgments in both orders), `model_pos`, `model_neg` (from meta, when present),
        `len_unit`.
    """
    _require(items, [*KEYS, "task", "meta"], "pairwise_verdicts items")
    _require_lengths(items, ["len_pos", "len_neg", "len_context"], "pairwise_verdicts")
    _require(
        judgments,
        ["judge", *KEYS, "order", "sample", "valid", "chosen", "correct", "verdict"],
        "pairwise_verdicts judgments",
    )
    pair = items[items["task"] == "pairwise"]
    side = pair[[*KEYS, "len_pos", "len_neg", "len_context", "len_unit"]].copy()
    side["model_pos"] = _meta_field(pair["meta"], "model_pos")
    side["model_neg"] = _meta_field(pair["meta"], "model_neg")
    cols = ["judge", *KEYS, "order", "sample", "verdict", "chosen", "correct"]
    data = _select(judgments, judges, sample)[cols]
    out = data.merge(side, on=list(KEYS), how="inner", validate="many_to_one")
    for c in ("len_pos", "len_neg", "len_context"):
        out[c] = out[c].astype(float)
    out["len_mean"] = (out["len_pos"] + out["len_neg"]) / 2
    out["len_diff"] = out["len_pos"] - out["len_neg"]
    d = out["len_diff"].to_numpy()
    out["longer"] = np.select([d > 0, d < 0], ["pos", "neg"], "equal")
    chosen = out["chosen"].astype(object).fillna("").to_numpy()
    decisive = np.isin(chosen, ("pos", "neg")) & (out["longer"].to_numpy() != "equal")
    out["picked_longer"] = np.where(decisive, (chosen == out["longer"].to_numpy()), np.nan)
    out["order"] = out["order"].astype(int)
    out["first_shown"] = np.where(out["order"] == 0, "pos", "neg")
    n_orders = out.groupby("judge")["order"].transform("nunique")
    out["both_orders"] = n_orders.to_numpy() == 2
    return out.reset_index(drop=True)


def item_table(
    items: pd.DataFrame,
    judgments: pd.DataFrame,
    *,
    judges: Sequence[str] = (),
    sample: int | None = 0,
    invalid_policy: str = "repo",
) -> pd.DataFrame:
    """Return one row per judge × item of both task types, with correctness and lengths.

    Pairwise items are paired over the two orders by `metrics.item_outcomes`: `correct` is
    consistent accuracy (correct in both orders; null without gold or with one order only)
    and `consistent` is consistency. Pointwise (and qa) items take `correct` from the
    judgment and `score` from a numeric `verdict` (e.g. a 1–10 grade); `consistent` is null.

    Args:
        items: An items table with lengths (`judgelab.core.lengths.add_lengths`); needs
            `benchmark`, `split`, `item_id`, `task`, `len_context`, `len_pos`, `len_neg`,
            `len_response`, `len_unit`.
        judgments: A judgments table (see `metrics.item_outcomes` for pairwise columns).
        judges: Judge ids to keep (all when empty).
        sample: Keep this `sample` (0 = greedy); None keeps every sample.
        invalid_policy: Passed to `metrics.item_outcomes`.

    Returns:
        `judge`, `benchmark`, `split`, `item_id`, `sample`, `task`, `correct`, `consistent`,
        `score` (floats; NaN when undefined), `len_context`, `len_response` (pairwise: the
        mean of the pair), `len_diff` (pairwise: len_pos − len_neg), `len_unit`.
    """
    _require(items, [*KEYS, "task"], "item_table items")
    _require_lengths(
        items, ["len_context", "len_pos", "len_neg", "len_response"], "item_table items"
    )
    _require(judgments, ["judge", *KEYS, "sample", "verdict", "correct"], "item_table")
    data = _select(judgments, judges, sample)
    lens = items[[*KEYS, "task", "len_context", "len_pos", "len_neg", "len_response"]].copy()
    for c in ("len_context", "len_pos", "len_neg", "len_response"):
        lens[c] = lens[c].astype(float)
    pairwise = lens["task"] == "pairwise"
    lens["len_diff"] = np.where(pairwise, lens["len_pos"] - lens["len_neg"], np.nan)
    lens["len_response"] = np.where(
        pairwise, (lens["len_pos"] + lens["len_neg"]) / 2, lens["len_response"]
    )
    lens["len_unit"] = _unit(items)
    lens = lens.drop(columns=["len_pos", "len_neg"])
    tasks = data[list(KEYS)].merge(lens[[*KEYS, "task"]], on=list(KEYS), how="left")["task"]
    parts = []
    pw = data[(tasks == "pairwise").to_numpy()]
    if len(pw):
        out = metrics.item_outcomes(pw, groups=("judge", *KEYS[:2]), invalid_policy=invalid_policy)
        out = out[out["complete"].astype(bool)]
        parts.append(
            pd.DataFrame(
                {
                    "judge": out["judge"],
                    "benchmark": out["benchmark"],
                    "split": out["split"],
                    "item_id": out["item_id"],
                    "sample": out["sample"].astype(int),
                    "correct": out["consistently_correct"].astype("Float64").astype(float),
                    "consistent": out["consistent"].astype("Float64").astype(float),
                    "score": np.nan,
                }
            )
        )
    pt = data[(tasks.isin(["pointwise", "qa"])).to_numpy()]
    if len(pt):
        parts.append(
            pd.DataFrame(
                {
                    "judge": pt["judge"],
                    "benchmark": pt["benchmark"],
                    "split": pt["split"],
                    "item_id": pt["item_id"],
                    "sample": pt["sample"].astype(int),
                    "correct": pt["correct"].astype("Float64").astype(float),
                    "consistent": np.nan,
                    "score": pd.to_numeric(pt["verdict"].astype(object), errors="coerce"),
                }
            )
        )
    columns = [
        "judge",
        *KEYS,
        "sample",
        "task",
        "correct",
        "consistent",
        "score",
        "len_context",
        "len_response",
        "len_diff",
        "len_unit",
    ]
    if not parts:
        return pd.DataFrame(columns=columns)
    table = pd.concat(parts, ignore_index=True)
    for c in KEYS:
        table[c] = table[c].astype(str)
    for c in KEYS:
        lens[c] = lens[c].astype(str)
    table = table.merge(lens, on=list(KEYS), how="left", validate="many_to_one")
    return table[columns]


def percentile_edges(values: pd.Series | np.ndarray, *, edges: Sequence[float]) -> np.ndarray:
    """Return the length values at percentile `edges` (0–100) of `values` (NaN ignored).

    >>> percentile_edges([1, 2, 3, 4, 5], edges=[0, 50, 100]).tolist()
    [1.0, 3.0, 5.0]
    """
    edges = [float(e) for e in edges]
    if edges != sorted(edges) or edges[0] < 0 or edges[-1] > 100 or len(edges) < 2:
        raise ValueError(f"percentile edges must increase within [0, 100], got {edges}")
    values = np.asarray(values, dtype=float)
    values = values[~np.isnan(values)]
    if values.size == 0:
        return np.full(len(edges), np.nan)
    return np.percentile(values, edges)


def bin_lengths(
    values: pd.Series,
    *,
    edges: Sequence[float],
    by: str = "percentile",
    reference: pd.Series | np.ndarray | None = None,
) -> pd.Series:
    """Assign each length to a bin; return an ordered categorical (NaN only for NaN lengths).

    With `by="percentile"`, `edges` are percentiles (e.g. [0, 20, 40, 60, 80, 100]) of
    `reference` (default: `values` itself; pass item-level lengths so that judges with more
    rows do not move the edges). Bins are closed on the right, the first also on the left,
    so with edges 0 and 100 every length falls in exactly one bin; percentiles that land on
    the same length (ties) merge into one bin. Labels read `P0–20 (≤57)`: the percentile
    range and the largest length in the bin.

    With `by="value"`, `edges` are lengths; bins are closed on the left, `[16, 64)`, a
    first edge above the minimum is lowered to it and the last bin is open (`≥256`).
    """
    if by not in BIN_KINDS:
        raise ValueError(f"by must be one of {BIN_KINDS}, got {by!r}")
    x = pd.Series(values, dtype=float)
    if by == "percentile":
        ref = x if reference is None else pd.Series(reference, dtype=float)
        cuts = percentile_edges(ref, edges=edges)
        pct = [float(e) for e in edges]
        if np.isnan(cuts).all():
            return pd.Series(pd.Categorical([np.nan] * len(x)), index=x.index)
        lo, hi = min(cuts[0], np.nanmin(x)) if x.notna().any() else cuts[0], cuts[-1]
        cuts = cuts.copy()
        cuts[0] = lo
        if x.notna().any():
            cuts[-1] = max(hi, np.nanmax(x))
        keep = [0] + [i for i in range(1, len(cuts)) if cuts[i] > cuts[i - 1]]
        if len(keep) == 1:  # every length equal: one bin
            keep = [0, len(cuts) - 1]
            cuts[-1] = cuts[0] + 1e-9
        starts = [pct[keep[i - 1]] for i in range(1, len(keep))]
        # the largest length in each bin (the cut itself when the bin is empty): rounding
        # the cut could name a length of the next bin (cut 5.5 shown as "≤6")
        tops = []
        for i in range(1, len(keep)):
            lo_i, hi_i = cuts[keep[i - 1]], cuts[keep[i]]
            inside = x[(x <= hi_i) & ((x > lo_i) | ((x >= lo_i) if i == 1 else False))]
            tops.append(float(inside.max()) if len(inside) else float(hi_i))
        labels = [
            f"P{a:g}–{pct[keep[i]]:g} (≤{_length_text(top)})"
            for i, a, top in zip(range(1, len(keep)), starts, tops, strict=True)
        ]
        binned = pd.cut(x, bins=cuts[keep], labels=labels, include_lowest=True, right=True)
        return pd.Series(binned, index=x.index)
    cuts = sorted(float(e) for e in edges)
    if x.notna().any() and x.min() < cuts[0]:
        cuts[0] = float(x.min())
    labels = [f"[{a:,.0f}, {b:,.0f})" for a, b in zip(cuts[:-1], cuts[1:], strict=False)]
    labels.append(f"≥{cuts[-1]:,.0f}")
    bins = [*cuts, np.inf]
    binned = pd.cut(x, bins=bins, labels=labels, right=False)
    return pd.Series(binned, index=x.index)


def _length_text(value: float) -> str:
    """Return a length for a bin label: an integer as is, anything else to one decimal."""
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.1f}"


def diff_buckets(
    table: pd.DataFrame,
    *,
    thresholds: Sequence[float] = (1, 16, 32, 64, 128),
    mode: str = "cumulative",
    column: str = "len_diff",
) -> pd.DataFrame:
    """Return the rows of `table` in length-difference buckets N(x+) / d = 0 / P(x+).

    `d` = `column` (len_pos − len_neg). **N(x+)**: the negative response is longer by x or
    more (d ≤ −x); **P(x+)**: the positive is longer by x or more (d ≥ x); the boundary
    d = ±x is included (spec 000 §4.10). In `cumulative` mode the buckets nest (N(128+) ⊆
    N(32+)) and a row appears in every bucket it satisfies; in `disjoint` mode each row with
    |d| ≥ min(thresholds) is in one bucket: N(x+) holds −x' < d ≤ −x for the next threshold
    x'. Equal lengths form their own bucket `d = 0`. Thresholds must be > 0 (with integer
    units, 1 means "longer at all").

    Returns:
        The selected rows (repeated across nested buckets) with a `bucket` column, an
        ordered categorical N(max+) … N(min+), d = 0, P(min+) … P(max+).
    """
    _require(table, [column], "diff_buckets")
    if mode not in DIFF_MODES:
        raise ValueError(f"mode must be one of {DIFF_MODES}, got {mode!r}")
    ts = sorted(float(t) for t in thresholds)
    if not ts or ts[0] <= 0:
        raise ValueError(
            f"thresholds must be > 0, got {list(thresholds)}; d = 0 is its own bucket"
        )
    d = table[column].to_numpy(dtype=float)
    names_n = [f"N({t:g}+)" for t in reversed(ts)]
    names_p = [f"P({t:g}+)" for t in ts]
    order = [*names_n, EQUAL, *names_p]
    parts = []
    for i, t in enumerate(ts):
        upper = ts[i + 1] if (mode == "disjoint" and i + 1 < len(ts)) else np.inf
        neg = (d <= -t) & (d > -upper)
        pos = (d >= t) & (d < upper)
        parts.append(table[neg].assign(bucket=f"N({t:g}+)"))
        parts.append(table[pos].assign(bucket=f"P({t:g}+)"))
    parts.append(table[d == 0].assign(bucket=EQUAL))
    out = pd.concat(parts, ignore_index=True)
    out["bucket"] = pd.Categorical(out["bucket"], categories=order, ordered=True)
    return out.sort_values("bucket", kind="stable").reset_index(drop=True)


def _binary(values: np.ndarray) -> bool:
    v = values[~np.isnan(values)]
    return bool(np.isin(v, (0.0, 1.0)).all())


def _cluster_rate(
    value: np.ndarray,
    cluster: np.ndarray,
    *,
    n_boot: int,
    rng: np.random.Generator,
    level: float,
) -> dict[str, float]:
    """Mean of `value` with a percentile bootstrap over clusters (items) and Wilson bounds."""
    ok = ~np.isnan(value)
    value, cluster = value[ok], cluster[ok]
    n = int(value.size)
    if n == 0:
        nan = float("nan")
        return dict(
            value=nan,
            k=0.0,
            n=0,
            n_items=0,
            ci_low=nan,
            ci_high=nan,
            wilson_low=nan,
            wilson_high=nan,
        )
    codes, inverse = np.unique(cluster, return_inverse=True)
    per = np.zeros((len(codes), 2))
    np.add.at(per[:, 0], inverse, value)
    np.add.at(per[:, 1], inverse, 1.0)
    reps = stats.bootstrap_sums(per, n_boot=n_boot, rng=rng)
    low, high = stats.percentile_interval(
        stats.ratio_replicates(reps[:, 0], reps[:, 1]), level=level
    )
    k = float(value.sum())
    if _binary(value):
        w_low, w_high = stats.wilson_interval(k, n, level=level)
    else:
        w_low = w_high = np.nan
    return dict(
        value=k / n,
        k=k,
        n=n,
        n_items=len(codes),
        ci_low=float(low),
        ci_high=float(high),
        wilson_low=float(w_low),
        wilson_high=float(w_high),
        _reps=stats.ratio_replicates(reps[:, 0], reps[:, 1]),
    )


_RATE_COLUMNS = ["value", "k", "n", "n_items", "ci_low", "ci_high", "wilson_low", "wilson_high"]


def _item_key(df: pd.DataFrame) -> np.ndarray:
    return (
        df["benchmark"].astype(str)
        + "\x1f"
        + df["split"].astype(str)
        + "\x1f"
        + df["item_id"].astype(str)
    ).to_numpy()


def rate_by_group(
    table: pd.DataFrame,
    *,
    value: str = "correct",
    by: Sequence[str] = ("judge",),
    n_boot: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> pd.DataFrame:
    """Return the mean of `value` per group with a bootstrap over items and Wilson bounds.

    Rows where `value` is NaN are left out. Categorical `by` columns keep every category,
    so an empty bin appears with n = 0 (every bin shows its n). The bootstrap resamples
    items (`benchmark`, `split`, `item_id`), seeded by `seed` and the group key; Wilson
    bounds are given when `value` is 0/1 (trials = rows).

    Args:
        table: One row per observation; needs `by`, `value`, `benchmark`, `split`, `item_id`.
        value: The column averaged (0/1 for a rate, or e.g. a score).
        by: Group columns.
        n_boot: Bootstrap resamples B.
        seed: Seed of the bootstrap.
        level: Confidence level.

    Returns:
        The `by` columns, `value`, `k` (sum), `n` (rows), `n_items`, `ci_low`, `ci_high`,
        `wilson_low`, `wilson_high`.
    """
    by = list(by)
    _require(table, [*by, value, *KEYS], "rate_by_group")
    v = table[value].astype(float).to_numpy()
    items = _item_key(table)
    rows = []
    grouped = table.groupby(by, sort=True, observed=False, dropna=True)
    for key, idx in grouped.indices.items() if len(table) else []:
        key = key if isinstance(key, tuple) else (key,)
        rng = stats.rng_for(seed, value, *key)
        r = _cluster_rate(v[idx], items[idx], n_boot=n_boot, rng=rng, level=level)
        rows.append({**dict(zip(by, key, strict=True)), **{c: r[c] for c in _RATE_COLUMNS}})
    # Categories with no rows at all (groupby.indices skips them): add them with n = 0.
    out = pd.DataFrame(rows, columns=[*by, *_RATE_COLUMNS])
    cats = [c for c in by if isinstance(table[c].dtype, pd.CategoricalDtype)]
    if cats:
        levels = [
            table[c].cat.categories if c in cats else pd.Index(table[c].dropna().unique())
            for c in by
        ]
        full = pd.MultiIndex.from_product(levels, names=by).to_frame(index=False)
        out = full.merge(out.astype({c: object for c in by}), on=by, how="left")
        out["n"] = out["n"].fillna(0).astype(int)
        out["n_items"] = out["n_items"].fillna(0).astype(int)
        out["k"] = out["k"].fillna(0.0)
        for c in cats:
            out[c] = pd.Categorical(out[c], categories=table[c].cat.categories, ordered=True)
        out = out.sort_values(by, kind="stable").reset_index(drop=True)
    else:
        out["n"] = out["n"].astype(int)
        out["n_items"] = out["n_items"].astype(int)
    return out


def accuracy_by_length(
    table: pd.DataFrame,
    *,
    edges: Sequence[float] = (0, 20, 40, 60, 80, 100),
    by: str = "percentile",
    column: str = "len_response",
    metrics_: Sequence[str] = ("correct", "consistent"),
    n_boot: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> pd.DataFrame:
    """Return accuracy (and consistency) per judge × length bin — Fig. 10 left / Fig. 8.

    Bins come from `bin_lengths` on `column`; percentile edges are computed over the
    items (each item once, whichever judges saw it), as in "percentile of entire benchmark".
    For pairwise items `correct` is consistent accuracy; for pointwise items it is accuracy.

    Args:
        table: `item_table` output.
        edges: Bin edges (percentiles or lengths, per `by`).
        by: `percentile` or `value` (see `bin_lengths`).
        column: The length column binned (`len_response`, `len_context`).
        metrics_: Value columns reported (each where defined).
        n_boot: Bootstrap resamples B.
        seed: Seed of the bootstrap.
        level: Confidence level.

    Returns:
        `judge`, `bin`, `metric`, then the `rate_by_group` columns, and `len_unit`.
    """
    _require(table, ["judge", column, *KEYS, *metrics_], "accuracy_by_length")
    ref = table.drop_duplicates(list(KEYS))[column]
    data = table.assign(bin=bin_lengths(table[column], edges=edges, by=by, reference=ref))
    parts = []
    for m in metrics_:
        sub = data[data[m].notna()]
        if sub.empty:
            continue
        r = rate_by_group(sub, value=m, by=("judge", "bin"), n_boot=n_boot, seed=seed, level=level)
        r.insert(2, "metric", _METRIC_NAMES.get(m, m))
        parts.append(r)
    cols = ["judge", "bin", "metric", *_RATE_COLUMNS, "len_unit"]
    if not parts:
        return pd.DataFrame(columns=cols)
    out = pd.concat(parts, ignore_index=True)
    out["len_unit"] = _first_unit(table)
    return out[cols]


_METRIC_NAMES = {"correct": "accuracy", "consistent": "consistency", "score": "mean score"}


def _first_unit(table: pd.DataFrame) -> str:
    if "len_unit" not in table.columns or table["len_unit"].dropna().empty:
        return ""
    return str(table["len_unit"].dropna().iloc[0])


def accuracy_by_diff_bucket(
    table: pd.DataFrame,
    *,
    thresholds: Sequence[float] = (1, 16, 32, 64, 128),
    mode: str = "cumulative",
    n_boot: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> pd.DataFrame:
    """Return consistent accuracy per judge × length-difference bucket — Fig. 10 right.

    Pairwise rows of `item_table` only (those with `len_diff`), bucketed by `diff_buckets`.

    Returns:
        `judge`, `bucket`, the `rate_by_group` columns and `len_unit`.
    """
    _require(table, ["judge", "len_diff", "correct", *KEYS], "accuracy_by_diff_bucket")
    data = table[table["len_diff"].notna() & table["correct"].notna()]
    cols = ["judge", "bucket", *_RATE_COLUMNS, "len_unit"]
    if data.empty:
        return pd.DataFrame(columns=cols)
    buckets = diff_buckets(data, thresholds=thresholds, mode=mode)
    out = rate_by_group(
        buckets, value="correct", by=("judge", "bucket"), n_boot=n_boot, seed=seed, level=level
    )
    out["len_unit"] = _first_unit(table)
    return out[cols]


def picks_longer(
    verdicts: pd.DataFrame,
    *,
    by: Sequence[str] = ("judge",),
    abs_diff_edges: Sequence[float] | None = None,
    conditions: Sequence[str] = CONDITIONS,
    n_boot: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> pd.DataFrame:
    """Return P(judge picks the longer response), overall and conditioned on the gold label.

    Verdicts count when they pick pos or neg on a pair of unequal lengths (ties and invalid
    outputs are left out). Conditions: `all`; `longer is better` (the longer response is the
    gold positive: P = accuracy there) and `longer is worse` (the longer one is the gold
    negative: P = error rate there); `balanced` = the mean of the two, which weighs both
    cases equally and so removes the confound that longer answers may simply be better more
    often: 0.5 = no length preference. The conditional rows need gold (`correct` not null).

    Args:
        verdicts: `pairwise_verdicts` output.
        by: Group columns.
        abs_diff_edges: If given, also group by bins of |len_diff| (`bin_lengths` with
            `by="value"`), in a column `abs_diff_bin`.
        conditions: The conditions returned (a subset of `CONDITIONS`).
        n_boot: Bootstrap resamples B (over items; both orders of an item stay together).
        seed: Seed of the bootstrap.
        level: Confidence level.

    Returns:
        The `by` columns (and `abs_diff_bin`), `group` (the `by` values as one label),
        `condition`, `value`, `k`, `n` (verdicts),
        `n_items`, `ci_low`, `ci_high` (bootstrap), `wilson_low`, `wilson_high` (verdicts as
        trials; optimistic when each item is judged twice; NaN for `balanced`).
    """
    by = list(by)
    _require(verdicts, [*by, "picked_longer", "longer", "correct", *KEYS], "picks_longer")
    data = verdicts[verdicts["picked_longer"].notna()].copy()
    if abs_diff_edges is not None:
        data["abs_diff_bin"] = bin_lengths(
            data["len_diff"].abs(), edges=abs_diff_edges, by="value"
        )
        by = [*by, "abs_diff_bin"]
    gold = data["correct"].notna().to_numpy()
    longer_better = data["longer"].to_numpy() == "pos"
    cond = np.where(~gold, "", np.where(longer_better, "longer is better", "longer is worse"))
    value = data["picked_longer"].to_numpy(dtype=float)
    items = _item_key(data)
    rows = []
    groups = data.groupby(by, sort=True, observed=True, dropna=True).indices if len(data) else {}
    for key, idx in groups.items():
        key = key if isinstance(key, tuple) else (key,)
        base = dict(zip(by, key, strict=True))
        r = _cluster_rate(
            value[idx],
            items[idx],
            n_boot=n_boot,
            rng=stats.rng_for(seed, "all", *key),
            level=level,
        )
        rows.append({**base, "condition": "all", **{c: r[c] for c in _RATE_COLUMNS}})
        reps = {}
        for c in CONDITIONS[1:3]:
            sel = idx[cond[idx] == c]
            r = _cluster_rate(
                value[sel],
                items[sel],
                n_boot=n_boot,
                rng=stats.rng_for(seed, c, *key),
                level=level,
            )
            reps[c] = (r.get("_reps"), r["value"], r["n"], r["n_items"])
            rows.append({**base, "condition": c, **{k: r[k] for k in _RATE_COLUMNS}})
        (rb, vb, nb, ib), (rw, vw, nw, iw) = reps["longer is better"], reps["longer is worse"]
        if nb and nw:
            low, high = stats.percentile_interval((rb + rw) / 2, level=level)
            bal = dict(
                value=(vb + vw) / 2,
                k=np.nan,
                n=nb + nw,
                n_items=ib + iw,
                ci_low=float(low),
                ci_high=float(high),
                wilson_low=np.nan,
                wilson_high=np.nan,
            )
        else:
            bal = dict(
                value=np.nan,
                k=np.nan,
                n=nb + nw,
                n_items=ib + iw,
                ci_low=np.nan,
                ci_high=np.nan,
                wilson_low=np.nan,
                wilson_high=np.nan,
            )
        rows.append({**base, "condition": "balanced", **bal})
    bad = [c for c in conditions if c not in CONDITIONS]
    if bad:
        raise ValueError(f"unknown condition(s) {bad}; known: {CONDITIONS}")
    out = pd.DataFrame(rows, columns=[*by, "condition", *_RATE_COLUMNS])
    out = out[out["condition"].isin(list(conditions))].reset_index(drop=True)
    out.insert(len(by), "group", _group_label(out, [b for b in by if b != "abs_diff_bin"]))
    out["n"] = out["n"].astype(int)
    out["n_items"] = out["n_items"].astype(int)
    if "abs_diff_bin" in by and len(out):
        out["abs_diff_bin"] = pd.Categorical(
            out["abs_diff_bin"], categories=data["abs_diff_bin"].cat.categories, ordered=True
        )
    return out


def _design_length(diff: np.ndarray, transform: str) -> tuple[np.ndarray, float]:
    if transform not in TRANSFORMS:
        raise ValueError(f"transform must be one of {TRANSFORMS}, got {transform!r}")
    sd = float(np.std(diff, ddof=1)) if diff.size > 1 else float("nan")
    z = diff / sd if sd > 0 else np.zeros_like(diff)
    return (np.tanh(z) if transform == "tanh" else z), sd


def _fit_glm(y: np.ndarray, X: pd.DataFrame, groups: np.ndarray, *, level: float):
    """Fit a binomial GLM with item-clustered errors; return (result, note)."""
    import statsmodels.api as sm

    note = ""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            model = sm.GLM(y, X, family=sm.families.Binomial())
            res = model.fit(cov_type="cluster", cov_kwds={"groups": groups})
        except Exception as exc:  # singular design, separation in old statsmodels, ...
            return None, f"fit failed: {type(exc).__name__}: {exc}"
    if (
        any("separation" in str(w.message).lower() for w in caught)
        or (np.abs(res.params.to_numpy()) > 15).any()
    ):
        note = "(quasi-)separation: estimates unreliable"
    return res, note


def length_regression(
    verdicts: pd.DataFrame,
    *,
    by: Sequence[str] = ("judge",),
    transform: str = "linear",
    level: float = 0.95,
) -> pd.DataFrame:
    """Logistic regression of "the judge chose response X" on length, position and gold.

    Per group, over verdicts that pick pos or neg:

    - when the judge saw both orders, X = the response shown first (A): the intercept is
      the position-A preference (log-odds), `length` the effect of A being longer, and, with
      gold, `gold` = +½ when A is the gold positive and −½ otherwise (the judge's skill);
    - otherwise (one presentation order, e.g. AlpacaEval) X = the `pos` slot: the intercept
      absorbs position and gold, and only `length` is separated.

    The length term is the difference len_X − len_Y divided by its standard deviation in
    the group (`linear`), or tanh of that (`tanh`, AlpacaEval's choice). Standard errors are
    clustered by item (the two orders of an item are not independent). `coef_per_100`
    converts the linear length coefficient to log-odds per 100 length units.

    Args:
        verdicts: `pairwise_verdicts` output.
        by: Group columns.
        transform: `linear` or `tanh`.
        level: Confidence level of the Wald intervals.

    Returns:
        One row per group × term (`intercept`, `length`, `gold`): the `by` columns, `group`
        (the `by` values as one label), `term`,
        `coef`, `ci_low`, `ci_high`, `p_value`, `odds_ratio`, `n` (verdicts), `n_items`,
        `x` (what X is), `sd_length`, `coef_per_100`, `len_unit`, `note`.
    """
    by = list(by)
    _require(
        verdicts,
        [*by, "chosen", "order", "len_pos", "len_neg", "correct", *KEYS],
        "length_regression",
    )
    data = verdicts[verdicts["chosen"].isin(["pos", "neg"])]
    unit = _first_unit(verdicts)
    rows = []
    groups = data.groupby(by, sort=True, observed=True, dropna=True).indices if len(data) else {}
    for key, idx in groups.items():
        key = key if isinstance(key, tuple) else (key,)
        g = data.iloc[idx]
        order = g["order"].to_numpy(dtype=int)
        chosen = g["chosen"].astype(str).to_numpy()
        lp, ln = g["len_pos"].to_numpy(float), g["len_neg"].to_numpy(float)
        both = len(np.unique(order)) == 2
        gold_known = bool(g["correct"].notna().all())
        if both:
            first_pos = order == 0
            y = np.where(first_pos, chosen == "pos", chosen == "neg").astype(float)
            diff = np.where(first_pos, lp - ln, ln - lp)
            x_name = "response shown first (A)"
        else:
            y = (chosen == "pos").astype(float)
            diff = lp - ln
            x_name = "pos slot (single presentation order)"
        length, sd = _design_length(diff, transform)
        X = pd.DataFrame({"intercept": 1.0, "length": length})
        if both and gold_known:
            X["gold"] = np.where(first_pos, 0.5, -0.5)
        items = _item_key(g)
        base = {**dict(zip(by, key, strict=True))}
        res, note = _fit_glm(y, X, pd.factorize(items)[0], level=level)
        for term in X.columns:
            if res is None:
                coef = low = high = p = np.nan
            else:
                coef = float(res.params[term])
                ci = res.conf_int(alpha=1 - level).loc[term]
                low, high, p = float(ci.iloc[0]), float(ci.iloc[1]), float(res.pvalues[term])
            per100 = coef / sd * 100 if term == "length" and transform == "linear" else np.nan
            rows.append(
                {
                    **base,
                    "term": term,
                    "coef": coef,
                    "ci_low": low,
                    "ci_high": high,
                    "p_value": p,
                    "odds_ratio": float(np.exp(coef)),
                    "n": len(g),
                    "n_items": len(np.unique(items)),
                    "x": x_name,
                    "sd_length": sd,
                    "coef_per_100": per100,
                    "len_unit": unit,
                    "note": note,
                }
            )
    cols = [
        "term",
        "coef",
        "ci_low",
        "ci_high",
        "p_value",
        "odds_ratio",
        "n",
        "n_items",
        "x",
        "sd_length",
        "coef_per_100",
        "len_unit",
        "note",
    ]
    out = pd.DataFrame(rows, columns=[*by, *cols])
    out.insert(len(by), "group", _group_label(out, by))
    return out


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
    if slot not in ("pos", "neg"):
        raise ValueError(f"slot must be 'pos' or 'neg', got {slot!r}")
    _require(verdicts, ["verdict", "chosen"], "preference_for_slot")
    chosen = verdicts["chosen"].astype(object).fillna("").to_numpy()
    hard = np.select(
        [chosen == slot, np.isin(chosen, ("pos", "neg")), chosen == "tie"],
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
) -> pd.DataFrame:
    """Return raw and length-controlled win rates of the model in `model_slot` vs the other.

    In the spirit of AlpacaEval's GLM (`length_controlled_v1`): per group, a logistic GLM
    (statsmodels, binomial family, fractional response) of the model's preference
    (`preference_for_slot`) on an intercept and tanh(len_model − len_baseline, standardized
    by its SD in the group). The LC win rate is the predicted preference with the length
    term set to 0, i.e. expit(intercept), with the Wald interval of the intercept mapped
    through expit (robust HC0 errors). Unlike AlpacaEval it has no instruction-difficulty
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

    Returns:
        The `by` columns, `model`, `baseline` (from meta when present), `n`, `raw_winrate`,
        `raw_low`, `raw_high` (bootstrap over items), `discrete_winrate` (wins + ½ ties),
        `lc_winrate`, `lc_low`, `lc_high`, `length_coef`, `length_low`, `length_high`,
        `length_p`, `mean_len_model`, `mean_len_baseline`, `len_unit`, `note` — rates in %.
    """
    import statsmodels.api as sm

    by = list(by)
    cols = [
        "model",
        "baseline",
        "n",
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
    if not model_slot:
        return pd.DataFrame(columns=[*by, *cols])
    if model_slot not in ("pos", "neg"):
        raise ValueError(f"model_slot must be 'pos', 'neg' or '' (skip), got {model_slot!r}")
    _require(
        verdicts,
        [*by, "verdict", "chosen", "len_pos", "len_neg", *KEYS],
        "length_controlled_winrate",
    )
    other = "pos" if model_slot == "neg" else "neg"
    data = verdicts.assign(_y=preference_for_slot(verdicts, slot=model_slot, soft=soft))
    data = data[data["_y"].notna()]
    unit = _first_unit(verdicts)
    rows = []
    groups = data.groupby(by, sort=True, observed=True, dropna=True).indices if len(data) else {}
    z = stats._sps.norm.ppf(0.5 + level / 2)
    for key, idx in groups.items():
        key = key if isinstance(key, tuple) else (key,)
        g = data.iloc[idx]
        y = g["_y"].to_numpy(float)
        lm, lb = g[f"len_{model_slot}"].to_numpy(float), g[f"len_{other}"].to_numpy(float)
        length, _ = _design_length(lm - lb, transform)
        X = pd.DataFrame({"intercept": 1.0, "length": length})
        raw = stats.bootstrap_mean(y, n_boot=n_boot, seed=seed)
        hard = preference_for_slot(g, slot=model_slot, soft=False)
        note = ""
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                res = sm.GLM(y, X, family=sm.families.Binomial()).fit(cov_type="HC0")
            b0, se0 = float(res.params["intercept"]), float(res.bse["intercept"])
            lc = [_expit(b0), _expit(b0 - z * se0), _expit(b0 + z * se0)]
            ci = res.conf_int(alpha=1 - level).loc["length"]
            lcoef = [float(res.params["length"]), float(ci.iloc[0]), float(ci.iloc[1])]
            lp = float(res.pvalues["length"])
        except Exception as exc:  # a degenerate group (all wins, constant length)
            lc, lcoef, lp, note = [np.nan] * 3, [np.nan] * 3, np.nan, f"fit failed: {exc}"
        slot_model = g.get(f"model_{model_slot}", pd.Series(dtype="string")).dropna()
        slot_base = g.get(f"model_{other}", pd.Series(dtype="string")).dropna()
        rows.append(
            {
                **dict(zip(by, key, strict=True)),
                "model": slot_model.iloc[0] if len(slot_model) else model_slot,
                "baseline": slot_base.iloc[0] if len(slot_base) else other,
                "n": len(g),
                "raw_winrate": 100 * raw.estimate,
                "raw_low": 100 * raw.low,
                "raw_high": 100 * raw.high,
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
                "len_unit": unit,
                "note": note,
            }
        )
    return pd.DataFrame(rows, columns=[*by, *cols])


def _expit(x: float) -> float:
    return float(1.0 / (1.0 + np.exp(-x)))


def alpaca_leaderboard(source: str = "alpaca_eval") -> pd.DataFrame:
    """Return AlpacaEval's published leaderboard (win_rate, LC win rate), or an empty frame.

    Reads `weighted_alpaca_eval_gpt4_turbo_leaderboard.csv` of the registry source (mirror or
    verified download cache). When the source cannot be had (offline, no mirror) the frame
    is empty, so notebooks running on samples still execute; `source=""` skips the read.

    Returns:
        `model`, `published_winrate`, `published_lc_winrate`, `published_avg_length` (chars).
    """
    from judgelab.data import fetch, sources

    cols = ["model", "published_winrate", "published_lc_winrate", "published_avg_length"]
    if not source:
        return pd.DataFrame(columns=cols)
    try:
        root = fetch.ensure_local(sources.get_source(source))
    except (fetch.FetchError, OSError, LookupError):
        return pd.DataFrame(columns=cols)
    files = sorted(root.glob("*weighted_alpaca_eval_gpt4_turbo_leaderboard.csv"))
    if not files:
        return pd.DataFrame(columns=cols)
    board = pd.read_csv(files[0]).rename(columns={"Unnamed: 0": "model"})
    board = board.drop_duplicates("model")
    out = pd.DataFrame(
        {
            "model": board["model"].astype(str),
            "published_winrate": board["win_rate"].astype(float),
            "published_lc_winrate": board["length_controlled_winrate"].astype(float),
            "published_avg_length": board["avg_length"].astype(float),
        }
    )
    return out.reset_index(drop=True)


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
        published: `alpaca_leaderboard` output.
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
    """Return `compare_published` output in long form for `plots_length.interval_forest`.

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


def score_length_regression(
    table: pd.DataFrame,
    *,
    by: Sequence[str] = ("judge",),
    value: str = "score",
    column: str = "len_response",
    fixed: str | None = "split",
    level: float = 0.95,
) -> pd.DataFrame:
    """OLS of a pointwise score on standardized response length (± fixed effects).

    With `fixed="split"` (arena-bench: split = the answering model) the length effect is
    estimated *within* each model, so "better models write longer answers" is not counted
    as length bias. Errors are clustered by `item_id` (the question).

    Returns:
        Per group: the `by` columns, `term` (`length`), `coef` (score points per SD of
        length), `ci_low`, `ci_high`, `p_value`, `n`, `n_items`, `sd_length`,
        `coef_per_100` (points per 100 length units), `len_unit`, `note`.
    """
    import statsmodels.api as sm

    by = list(by)
    _require(table, [*by, value, column, "item_id"], "score_length_regression")
    data = table[table[value].notna() & table[column].notna()]
    rows = []
    groups = data.groupby(by, sort=True, observed=True).indices if len(data) else {}
    for key, idx in groups.items():
        key = key if isinstance(key, tuple) else (key,)
        g = data.iloc[idx]
        length, sd = _design_length(g[column].to_numpy(float) - g[column].mean(), "linear")
        X = pd.DataFrame({"const": 1.0, "length": length}, index=g.index)
        if fixed is not None and g[fixed].nunique() > 1:
            X = X.join(pd.get_dummies(g[fixed], prefix="fe", drop_first=True, dtype=float))
        note = ""
        try:
            res = sm.OLS(g[value].to_numpy(float), X).fit(
                cov_type="cluster", cov_kwds={"groups": pd.factorize(g["item_id"])[0]}
            )
            coef = float(res.params["length"])
            ci = res.conf_int(alpha=1 - level).loc["length"]
            low, high, p = float(ci.iloc[0]), float(ci.iloc[1]), float(res.pvalues["length"])
        except Exception as exc:
            coef = low = high = p = np.nan
            note = f"fit failed: {exc}"
        rows.append(
            {
                **dict(zip(by, key, strict=True)),
                "term": "length",
                "coef": coef,
                "ci_low": low,
                "ci_high": high,
                "p_value": p,
                "n": len(g),
                "n_items": g["item_id"].nunique(),
                "sd_length": sd,
                "coef_per_100": coef / sd * 100 if sd > 0 else np.nan,
                "len_unit": _first_unit(table),
                "note": note,
            }
        )
    cols = [
        "term",
        "coef",
        "ci_low",
        "ci_high",
        "p_value",
        "n",
        "n_items",
        "sd_length",
        "coef_per_100",
        "len_unit",
        "note",
    ]
    return pd.DataFrame(rows, columns=[*by, *cols])


def score_pairs(table: pd.DataFrame, *, value: str = "score") -> pd.DataFrame:
    """Turn pointwise scores into pairs: the answers of two splits to the same `item_id`.

    For arena-bench (split = answering model, item_id = question) each question yields one
    pair per two models. A pair counts when both lengths and both scores differ; then
    `picked_longer` is 1 when the longer answer got the higher score. Pairs take the
    benchmark/split/item_id key of the question so `picks_longer` bootstraps questions.

    Returns:
        `judge`, `benchmark`, `split` ("pairs"), `item_id`, `picked_longer`, `longer`
        (`pos` = the higher-scored answer is longer), `correct` (null: no gold), `len_diff`.
    """
    _require(table, ["judge", *KEYS, value, "len_response"], "score_pairs")
    data = table[table[value].notna() & table["len_response"].notna()]
    cols = [
        "judge",
        "benchmark",
        "split",
        "item_id",
        "picked_longer",
        "longer",
        "correct",
        "len_diff",
    ]
    if data.empty:
        return pd.DataFrame(columns=cols)
    a = data[["judge", "benchmark", "item_id", "split", value, "len_response"]]
    m = a.merge(a, on=["judge", "benchmark", "item_id"], suffixes=("_a", "_b"))
    m = m[m["split_a"] < m["split_b"]]
    ds, dl = m[f"{value}_a"] - m[f"{value}_b"], m["len_response_a"] - m["len_response_b"]
    keep = (ds != 0) & (dl != 0)
    m, ds, dl = m[keep], ds[keep], dl[keep]
    out = pd.DataFrame(
        {
            "judge": m["judge"],
            "benchmark": m["benchmark"],
            "split": "pairs",
            "item_id": m["item_id"],
            "picked_longer": (np.sign(ds) == np.sign(dl)).astype(float),
            "longer": "neg",
            "correct": pd.array([pd.NA] * len(m), dtype="boolean"),
            "len_diff": dl.abs(),
        }
    )
    return out[cols].reset_index(drop=True)
