"""The logistic regression of the judge's choice on length (the score OLS: `score`).

It clusters by the `cluster` column (items that share a question or source are one unit;
items when the column is absent). The default inference is CR2 with Bell–McCaffrey degrees
of freedom, the wild cluster score bootstrap of the length term side by side
(`glm.term_inference`; `inference="cluster"`: the earlier CR1 t(G − 1) errors). A lazy
table (`lazy`) is read judge by judge; `length_sensitivity` fits every length term in one
pass.

The length term of the choice regression is bounded by default: `log_ratio` =
log2(len_X / len_Y) of the two responses (X = the one shown first when both orders exist),
so a coefficient is the log-odds per *doubling* of the length ratio. The legacy `linear`
term (len_X − len_Y per SD) is unbounded: with heavy-tailed |Δlength| (kurtosis ≈ 6.5 on
LLMBar) a few extreme pairs decide its fit and its significance; it and AlpacaEval's `tanh`
of it are kept as sensitivity rows (`length_sensitivity`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import pandas as pd
import polars as pl

from judgelab.analyses.length import lazy
from judgelab.analyses.length.glm import INFERENCE, INFERENCE_COLUMNS, term_inference
from judgelab.analyses.length.verdicts import (
    KEYS,
    group_label,
    groups_of,
    item_key,
    length_unit,
)
from judgelab.core import clusters, estimates, threads, wild
from judgelab.core import wild as wild_mod
from judgelab.core.schema import require_columns as _require
from judgelab.errors import check_choice

#: Length terms: log2 length ratio (default, bounded), the difference per SD (`linear`,
#: legacy) or tanh of it (AlpacaEval).
TRANSFORMS = ("log_ratio", "linear", "tanh")
#: Length terms of `design_length` (a function of the difference alone).
DIFF_TRANSFORMS = ("linear", "tanh")

_REGRESSION_COLUMNS = [
    "transform",
    "term",
    "coef",
    "ci_low",
    "ci_high",
    "p_value",
    "odds_ratio",
    "n",
    "n_items",
    "n_clusters",
    "x",
    "sd_length",
    "coef_per_100",
    "len_unit",
    "note",
    *INFERENCE_COLUMNS,
]


def design_length(diff: np.ndarray, transform: str) -> tuple[np.ndarray, float]:
    """Return the length term of a design matrix and the SD it was standardized by.

    The term is `diff` / SD(`diff`) (`linear`; all zeros when the SD is 0) or tanh of that
    (`tanh`, AlpacaEval's choice).

    >>> z, sd = design_length(np.array([-1.0, 1.0]), "linear")
    >>> z.round(3).tolist(), round(sd, 3)
    ([-0.707, 0.707], 1.414)
    """
    check_choice("transform", transform, DIFF_TRANSFORMS)
    sd = float(np.std(diff, ddof=1)) if diff.size > 1 else float("nan")
    z = diff / sd if sd > 0 else np.zeros_like(diff)
    return (np.tanh(z, out=z) if transform == "tanh" else z), sd


def length_term(len_x: np.ndarray, len_y: np.ndarray, transform: str) -> tuple[np.ndarray, float]:
    """Return the length term of X against Y and SD(len_x − len_y).

    `log_ratio`: log2((len_x + 1) / (len_y + 1)) (+1 keeps empty responses finite);
    `linear` / `tanh`: `design_length` of the difference.

    >>> t, sd = length_term(np.array([3.0, 1.0]), np.array([1.0, 3.0]), "log_ratio")
    >>> t.tolist(), round(sd, 3)
    ([1.0, -1.0], 2.828)
    """
    check_choice("transform", transform, TRANSFORMS)
    diff = np.asarray(len_x, dtype=float) - np.asarray(len_y, dtype=float)
    if transform == "log_ratio":
        sd = float(np.std(diff, ddof=1)) if diff.size > 1 else float("nan")
        del diff
        ratio = np.asarray(len_x, dtype=float) + 1
        ratio /= np.asarray(len_y, dtype=float) + 1
        return np.log2(ratio, out=ratio), sd
    return design_length(diff, transform)


def length_regression(
    verdicts: pd.DataFrame,
    *,
    by: Sequence[str] = ("judge",),
    transform: str = "log_ratio",
    level: float = 0.95,
    cluster: str | None = clusters.COLUMN,
    inference: str = "cr2",
    wild: str = "interval",
    n_boot: int = wild.N_BOOT,
    seed: int = 0,
) -> pd.DataFrame:
    """Logistic regression of "the judge chose response X" on length, position and gold.

    Per group, over verdicts that pick pos or neg:

    - when the judge saw both orders, X = the response shown first (A): the intercept is
      the position-A preference (log-odds), `length` the effect of A being longer, and, with
      gold, `gold` = +½ when A is the gold positive and −½ otherwise (the judge's skill);
    - otherwise (one presentation order, e.g. AlpacaEval) X = the `pos` slot: the intercept
      absorbs position and gold, and only `length` is separated.

    The length term (`length_term`) is bounded by default: log2(len_X / len_Y) (`log_ratio`;
    coef = log-odds per doubling of the ratio); `linear` (legacy: len_X − len_Y per SD in
    the group, unbounded, so a few extreme pairs dominate under heavy tails) and `tanh` of
    it (AlpacaEval) are options, side by side in `length_sensitivity`.

    Inference clusters by `cluster` (the two orders of an item, and items sharing a
    question, are not independent; `cluster=None`: items only, the issue-20 legacy). By
    default (`inference="cr2"`) `ci_low`, `ci_high`, `p_value` are CR2 with Bell–McCaffrey
    degrees of freedom (`dof`), and the length term also gets the restricted wild cluster
    score bootstrap beside it (`wild_low`, `wild_high`, `wild_p`: the interval inverts the
    test); `inference="wild"` reports the bootstrap as the interval (every term), and
    `inference="cluster"` the earlier CR1 errors with t(G − 1). `coef_per_100` converts the
    linear length coefficient to log-odds per 100 length units.

    Args:
        verdicts: `pairwise_verdicts` output.
        by: Group columns.
        transform: `log_ratio` (default), `linear` or `tanh`.
        level: Confidence level of the intervals.
        cluster: Column of the clusters (None: items).
        inference: `glm.INFERENCE`: `cr2` (default), `wild` or `cluster` (earlier default).
        wild: `glm.WILD`: the length term's wild bootstrap beside the default — `interval`
            (with p; dozens of restricted refits), `p` (one refit) or `none`.
        n_boot: Wild bootstrap replicates.
        seed: Seed of the wild bootstrap weights (with the group key).

    Returns:
        One row per group × term (`intercept`, `length`, `gold`): the `by` columns, `group`
        (the `by` values as one label), `transform`, `term`,
        `coef`, `ci_low`, `ci_high`, `p_value`, `odds_ratio`, `n` (verdicts), `n_items`,
        `n_clusters`, `x` (what X is), `sd_length`, `coef_per_100`, `len_unit`, `note`,
        `std_error` (CR2), `dof` (Bell–McCaffrey), `cr2_low`, `cr2_high`, `cr2_p`, `wild_low`,
        `wild_high`, `wild_p`, `n_eff_clusters`, `few_clusters`, `method`.
    """
    check_choice("transform", transform, TRANSFORMS)
    kw = dict(level=level, inference=inference, wild=wild, n_boot=n_boot, seed=seed)
    table = _regressions(verdicts, list(by), [transform], cluster, **kw)[0]
    # what the fits were, so that `length_sensitivity(known=...)` can take them as they are
    table.attrs[_FITTED] = {"by": list(by), "cluster": cluster, "transform": transform, **kw}
    return table


_FITTED = "length_regression"


def _reusable(known: pd.DataFrame, by: list[str], cluster: str | None, kw: dict) -> str | None:
    """The transform of a `length_regression` table fitted as `length_sensitivity` asks."""
    fitted = dict(known.attrs.get(_FITTED, {}))
    # its wild p-value is the same test with either "interval" or "p" (the weights are drawn
    # first; the interval inverts that test): an interval table serves a p-only request
    if fitted.get("wild") == "interval" and kw["wild"] == "p":
        fitted["wild"] = "p"
    transform = fitted.pop("transform", None)
    return transform if fitted == {"by": by, "cluster": cluster, **kw} else None


def _regressions(
    verdicts: Any,
    by: list[str],
    transforms: Sequence[str],
    cluster: str | None,
    **kw: Any,
) -> list[pd.DataFrame]:
    """`length_regression` under each of `transforms`, the data read once (one pass)."""
    check_choice("inference", kw["inference"], INFERENCE)
    unit = length_unit(verdicts)
    frames = _lazy_frames(verdicts, by, cluster) if lazy.is_lazy(verdicts) else None
    if frames is None:
        _require(
            verdicts,
            [*by, "chosen", "order", "len_pos", "len_neg", "correct", *KEYS],
            "length_regression",
        )
        frames = [_frame(verdicts, by, cluster)]

    def pieces() -> Iterator[tuple[str, tuple, pd.DataFrame]]:
        for key, g in groups_of(frames, by):
            for t in transforms:
                yield t, key, g

    def fit(piece: tuple[str, tuple, pd.DataFrame]) -> tuple[str, list[dict[str, Any]]]:
        t, key, g = piece
        got = _choice_regression(
            g,
            transform=t,
            level=kw["level"],
            inference=kw["inference"],
            wild_mode=kw["wild"],
            n_boot=kw["n_boot"],
            rng=estimates.seeded(kw["seed"], "length_regression", t, *key),
        )
        base = dict(zip(by, key, strict=True))
        return t, [{**base, **row, "transform": t, "len_unit": unit} for row in got]

    rows: dict[str, list[dict[str, Any]]] = {t: [] for t in transforms}
    # the groups' fits at once on the machine's cores (each its own seeded generator)
    for t, fitted in threads.ordered_map(fit, pieces()):
        rows[t].extend(fitted)
    out = []
    for t in transforms:
        table = pd.DataFrame(rows[t], columns=[*by, *_REGRESSION_COLUMNS])
        table.insert(len(by), "group", group_label(table, by))
        out.append(table)
    return out


def _frame(verdicts: pd.DataFrame, by: list[str], cluster: str | None) -> pd.DataFrame:
    """The `by` columns and what the fit needs, per verdict that picks pos or neg (pandas)."""
    data = verdicts[verdicts["chosen"].isin(["pos", "neg"])]
    frame = pd.DataFrame(
        {
            "order": data["order"].to_numpy(dtype=int),
            "chose_pos": data["chosen"].astype(str).to_numpy() == "pos",
            "len_pos": data["len_pos"].to_numpy(dtype=float),
            "len_neg": data["len_neg"].to_numpy(dtype=float),
            "gold": data["correct"].notna().to_numpy(),
            "unit": clusters.codes(data, cluster),
            "item": item_key(data),
        }
    )
    for b in by:  # each group column with its dtype
        frame[b] = data[b].values
    return frame


def _lazy_frames(
    verdicts: lazy.LazyVerdicts, by: list[str], cluster: str | None
) -> Iterator[pd.DataFrame]:
    """`_frame`'s columns judge by judge from a lazy table."""
    columns = {
        "order": pl.col("order"),
        "chose_pos": pl.col("chosen").cast(pl.String) == "pos",
        "len_pos": pl.col("len_pos"),
        "len_neg": pl.col("len_neg"),
        "gold": pl.col("correct").is_not_null(),
    }
    where = pl.col("chosen").cast(pl.String).is_in(["pos", "neg"])
    return lazy.chunks(verdicts, by, columns, where=where, cluster=cluster)


def _choice_design(
    g: pd.DataFrame, transform: str
) -> tuple[np.ndarray, np.ndarray, list[str], str, float]:
    """Return y (chose X), the design, its column names, what X is, and SD(length).

    The design (intercept, length[, gold]) is one float64 array (n × p, column-major), which
    the fit, CR2 and the wild bootstrap all read (2·10^6 rows: 48 MB, not a frame and its
    copies).
    """
    order = g["order"].to_numpy()
    chose_pos = g["chose_pos"].to_numpy(dtype=bool)
    lp, ln = g["len_pos"].to_numpy(float), g["len_neg"].to_numpy(float)
    both = clusters.n_distinct(order) == 2
    gold_known = bool(g["gold"].all())
    first_pos = order == 0
    if both:
        y = np.where(first_pos, chose_pos, ~chose_pos).astype(float)
        len_x, len_y = np.where(first_pos, lp, ln), np.where(first_pos, ln, lp)
        x_name = "response shown first (A)"
    else:
        y = chose_pos.astype(float)
        len_x, len_y = lp, ln
        x_name = "pos slot (single presentation order)"
    names = ["intercept", "length", *(["gold"] if both and gold_known else [])]
    X = np.empty((len(y), len(names)), order="F")  # a column at a time, as pandas lays it out
    X[:, 0] = 1.0
    X[:, 1], sd = length_term(len_x, len_y, transform)
    del len_x, len_y
    if len(names) == 3:
        X[:, 2] = np.where(first_pos, 0.5, -0.5)
    return y, X, names, x_name, sd


def _choice_regression(
    g: pd.DataFrame,
    *,
    transform: str,
    level: float,
    inference: str,
    wild_mode: str,
    n_boot: int,
    rng: np.random.Generator,
) -> list[dict[str, Any]]:
    """Fit `length_regression` on one group; return one row per term (no `by`, no unit)."""
    y, X, names, x_name, sd = _choice_design(g, transform)
    units = g["unit"].to_numpy()
    terms, note = term_inference(
        y,
        X,
        units,
        terms=names,
        columns=names,
        overwrite=True,  # the design is this fit's own
        inference=inference,
        wild_mode=wild_mode,
        wild_terms=("length",),
        level=level,
        n_boot=n_boot,
        rng=rng,
    )
    n_items = clusters.n_distinct(g["item"].to_numpy())
    n_clusters = clusters.n_distinct(units)
    rows = []
    for row in terms:
        row = {**row, "odds_ratio": float(np.exp(row["coef"])), "n": len(g)}
        coef = row["coef"]
        per100 = coef / sd * 100 if row["term"] == "length" and transform == "linear" else np.nan
        rows.append(
            {
                **row,
                "n_items": n_items,
                "n_clusters": n_clusters,
                "x": x_name,
                "sd_length": sd,
                "coef_per_100": per100,
                "note": note,
            }
        )
    return rows


def length_sensitivity(
    verdicts: pd.DataFrame,
    *,
    by: Sequence[str] = ("judge",),
    transforms: Sequence[str] = TRANSFORMS,
    level: float = 0.95,
    cluster: str | None = clusters.COLUMN,
    inference: str = "cr2",
    wild: str = "p",
    seed: int = 0,
    known: Sequence[pd.DataFrame] = (),
) -> pd.DataFrame:
    """Return the `length` rows of `length_regression` under each length term, side by side.

    The default bounded `log_ratio` term first, then the sensitivity rows (`linear`, the
    legacy default, and `tanh`). The coefficients are on different scales (per doubling of
    the ratio; per SD of the difference; per tanh unit); compare signs and p-values. The
    wild bootstrap beside CR2 gives its p-value only by default (`wild="p"`).

    `known`: `length_regression` tables of these `verdicts` already computed; one fitted
    with these options (any `wild` when this one is `p`: the same p-value) gives its
    transform's rows as they are, without fitting again (notebook 03's default term).

    Returns:
        `length_regression` columns, one row per group × transform (term `length`).
    """
    for t in transforms:
        check_choice("transform", t, TRANSFORMS)
    kw = dict(level=level, inference=inference, wild=wild, n_boot=wild_mod.N_BOOT, seed=seed)
    have = {}
    for table in known:
        t = _reusable(table, list(by), cluster, kw)
        if t in transforms:
            have[t] = table.assign(wild_low=np.nan, wild_high=np.nan) if wild == "p" else table
    todo = [t for t in transforms if t not in have]
    fitted = _regressions(verdicts, list(by), todo, cluster, **kw) if todo else []
    fitted = dict(zip(todo, fitted, strict=True))
    parts = [have[t] if t in have else fitted[t] for t in transforms]
    out = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
    return out[out["term"] == "length"].reset_index(drop=True)
