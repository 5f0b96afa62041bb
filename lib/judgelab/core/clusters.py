"""Resampling units: which rows of a table are independent of each other (DESIGN §8).

Items that share a question, a source document or a conversation are not independent: a
judge that misreads one long document misreads all ten summaries of it. Every source declares
its unit as a *cluster rule* and the importer writes the items table's `cluster` column from
it; every bootstrap resamples clusters and every cluster-robust standard error groups by them.

Rules (`derive`):

- ``item`` — each item is its own unit (the default when a source declares nothing);
- ``question`` / ``context`` — items with the same question / context text;
- ``meta.<key>`` — items with the same value of one `meta` field (e.g. ``meta.source_id``).

Items where the rule yields nothing (an empty question, a missing meta key) fall back to the
item itself, never to one cluster for the whole table. Cluster values are prefixed with the
benchmark (not the split: the same query judged in two settings — ContextEval's splits — is one
unit); an item that is its own unit is named by benchmark, split and id (its key).

`codes(frame)` turns a frame's `cluster` column into integer codes for the bootstrap (rows
without a cluster become their own unit: by `item_id` when the frame has one, else by row);
`sum_by(values, codes)` sums per-row values per unit, the matrix a cluster bootstrap
resamples (`stats.bootstrap_sums`); `attach(frame, items)` copies the items' clusters onto a
judgments-like frame by key.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import numpy as np
import pandas as pd

from judgelab.core.cluster_rules import COLUMN as COLUMN
from judgelab.core.cluster_rules import KEYS as KEYS
from judgelab.core.cluster_rules import RULES as RULES
from judgelab.core.cluster_rules import check_rule as check_rule


def _meta_values(meta: pd.Series, key: str) -> np.ndarray:
    out = []
    for raw in meta.tolist():
        try:
            obj = json.loads(raw) if isinstance(raw, str) and raw else {}
        except json.JSONDecodeError:
            obj = {}
        value = obj.get(key) if isinstance(obj, dict) else None
        out.append("" if value is None else str(value))
    return np.array(out, dtype=object)


def derive(items: pd.DataFrame, rule: str = "item") -> pd.Series:
    """Return the cluster of every item under `rule` (see the module docstring).

    >>> it = pd.DataFrame({"benchmark": "b", "split": "s", "item_id": ["1", "2", "3"],
    ...                    "question": ["q", "q", ""]})
    >>> derive(it, "question").tolist()
    ['b|question|q', 'b|question|q', 'b|s|item|3']
    """
    check_rule(rule)
    ids = items["item_id"].astype(str).to_numpy(dtype=object)
    if rule == "item":
        values = np.full(len(items), "", dtype=object)
    elif rule.startswith("meta."):
        meta = items["meta"] if "meta" in items.columns else pd.Series([None] * len(items))
        values = _meta_values(meta, rule[len("meta.") :])
    else:
        col = items[rule] if rule in items.columns else pd.Series([""] * len(items))
        values = col.fillna("").astype(str).to_numpy(dtype=object)
    label = "meta" if rule.startswith("meta.") else rule
    bench = items["benchmark"].astype(str).to_numpy(dtype=object) + "|"
    split = items["split"].astype(str).to_numpy(dtype=object) + "|"
    has = values != ""
    unit = np.where(
        has, bench + label + "|" + values.astype(str), bench + split + "item|" + ids.astype(str)
    )
    return pd.Series(unit, index=items.index, name=COLUMN)


def attach(
    frame: pd.DataFrame, items: pd.DataFrame, *, keys: Sequence[str] = KEYS
) -> pd.DataFrame:
    """Return `frame` with the `cluster` of its item (by key) added or replaced.

    Items without a `cluster` column (or rows without a value) give each item its own unit.
    Rows of `frame` whose item is absent from `items` get their item as unit.
    """
    keys = list(keys)
    it = items[keys].astype(str).copy()
    own = it["benchmark"] + "|" + it["split"] + "|item|" + it["item_id"]
    if COLUMN in items.columns:
        given = items[COLUMN].astype("string")
        it[COLUMN] = given.where(given.notna() & (given != ""), own).astype(str).to_numpy()
    else:
        it[COLUMN] = own
    it = it.drop_duplicates(keys)
    base = frame.drop(columns=[COLUMN], errors="ignore")
    left = base[keys].astype(str)
    merged = left.merge(it, on=keys, how="left", validate="many_to_one")
    fallback = left["benchmark"] + "|" + left["split"] + "|item|" + left["item_id"]
    out = base.copy()
    out[COLUMN] = merged[COLUMN].fillna(fallback).to_numpy()
    return out


def codes(frame: pd.DataFrame, column: str | None = COLUMN) -> np.ndarray:
    """Return integer unit codes per row: by `column`, falling back to `item_id`, then rows.

    `column` None (or absent from `frame`) makes every item (or, without `item_id`, every row)
    its own unit — the independent-items bootstrap.
    """
    n = len(frame)
    if n == 0:  # an empty frame's row-wise join is a frame, not a Series
        return np.zeros(0, dtype=np.int64)
    if column is not None and column in frame.columns:
        values = frame[column].astype("string")
        if "item_id" in frame.columns:
            fallback = "item|" + frame["item_id"].astype(str)
        else:
            fallback = pd.Series([f"row|{i}" for i in range(n)], index=frame.index)
        values = values.where(values.notna() & (values != ""), fallback)
        return pd.factorize(values.astype(str), sort=True)[0]
    if "item_id" in frame.columns:
        keys = [k for k in KEYS if k in frame.columns]
        joined = frame[keys].astype(str).agg("|".join, axis=1) if keys else frame["item_id"]
        return pd.factorize(joined, sort=True)[0]
    return np.arange(n)


#: From this many values `sum_by` takes the sparse product (np.add.at below: no scipy import).
SPARSE_FROM = 100_000


def sum_by(values: np.ndarray, unit: np.ndarray) -> np.ndarray:
    """Return per-unit sums of per-row `values` (n × m, or n): the rows a cluster bootstrap draws.

    >>> sum_by(np.array([[1.0, 0.0], [1.0, 1.0], [0.0, 1.0]]), np.array([0, 0, 1])).tolist()
    [[2.0, 1.0], [0.0, 1.0]]
    """
    values = np.asarray(values, dtype=np.float64)
    flat = values.ndim == 1
    if flat:
        values = values[:, None]
    unit = np.asarray(unit, dtype=np.int64)
    k = int(unit.max()) + 1 if unit.size else 0
    # every way below adds each unit's rows in row order: the same sums, bit for bit
    if unit.size * values.shape[1] < SPARSE_FROM:
        out = np.zeros((k, values.shape[1]))
        np.add.at(out, unit, values)
    elif values.flags.f_contiguous:  # columns side by side (polars' to_numpy): one pass each
        out = np.column_stack([np.bincount(unit, weights=v, minlength=k) for v in values.T])
    else:  # a unit × row indicator product: 4-5x np.add.at's speed
        from scipy import sparse

        n = len(unit)
        pick = sparse.csr_matrix((np.ones(n), (unit, np.arange(n))), shape=(k, n))
        out = np.asarray(pick @ np.ascontiguousarray(values))
    return out[:, 0] if flat else out


def _small_ints(values: np.ndarray) -> bool:
    """Non-negative integers no larger than twice their number (codes: counted by bincount)."""
    return (
        values.dtype.kind in "iu" and values.size > 0 and int(values.min()) >= 0
        and int(values.max()) <= 2 * values.size + 1024
    )  # fmt: skip


def n_distinct(values: np.ndarray) -> int:
    """Return how many distinct values there are; integer codes by one bincount (10^6: ms).

    >>> n_distinct(np.array([3, 1, 3, 0])), n_distinct(np.array(["a", "b", "a"]))
    (3, 2)
    """
    values = np.asarray(values)
    if _small_ints(values):
        return int(np.count_nonzero(np.bincount(values)))
    return len(pd.unique(values.ravel()))  # hashed: mixed objects need no order


def sorted_codes(values: np.ndarray) -> np.ndarray:
    """Return `np.unique(values, return_inverse=True)[1]` (codes in sorted-value order).

    >>> sorted_codes(np.array([7, 2, 7, 5])).tolist()
    [2, 0, 2, 1]
    """
    values = np.asarray(values)
    if _small_ints(values):
        seen = np.bincount(values) > 0
        return (np.cumsum(seen) - 1)[values]
    return np.unique(values, return_inverse=True)[1].ravel()


def count(frame: pd.DataFrame, column: str | None = COLUMN) -> int:
    """Return the number of resampling units of `frame` (see `codes`)."""
    c = codes(frame, column)
    return int(c.max()) + 1 if c.size else 0


#: Below this many effective clusters an interval is flagged as uncertain (DESIGN §9).
FEW_EFFECTIVE = 20


def icc_from_sums(n_g: np.ndarray, s_g: np.ndarray, q_g: np.ndarray) -> float:
    """Return the ANOVA intra-cluster correlation from per-cluster rows, Σ x and Σ x² (in [0, 1]).

    With unequal sizes the ANOVA estimator uses n0 = (N − Σ n_g² / N) / (G − 1); 0 when there
    is no within-cluster replication or no variance.
    """
    n_g = np.asarray(n_g, dtype=np.float64)
    keep = n_g > 0
    n_g, s_g, q_g = n_g[keep], np.asarray(s_g, float)[keep], np.asarray(q_g, float)[keep]
    G, N = len(n_g), float(n_g.sum())
    if G < 2 or N <= G:
        return 0.0
    means = s_g / n_g
    grand = float(s_g.sum()) / N
    msb = float(np.sum(n_g * (means - grand) ** 2) / (G - 1))
    msw = float(np.sum(q_g - s_g**2 / n_g) / (N - G))
    n0 = (N - float(np.sum(n_g**2)) / N) / (G - 1)
    denom = msb + (n0 - 1.0) * msw
    if denom <= 0:
        return 0.0
    return float(np.clip((msb - msw) / denom, 0.0, 1.0))


def icc_anova(values: np.ndarray, unit: np.ndarray) -> float:
    """Return the one-way ANOVA intra-cluster correlation of `values`, clipped to [0, 1].

    >>> icc_anova(np.array([1.0, 1.0, 0.0, 0.0]), np.array([0, 0, 1, 1]))
    1.0
    """
    x = np.asarray(values, dtype=np.float64)
    unit = np.asarray(unit, dtype=np.int64)
    return icc_from_sums(
        np.bincount(unit), np.bincount(unit, weights=x), np.bincount(unit, weights=x * x)
    )


def effective_from_sums(s1: np.ndarray, s2: np.ndarray, icc: float) -> float:
    """Return G* from per-cluster Σ a_i (`s1`) and Σ a_i² (`s2`); see `effective`."""
    s1 = np.asarray(s1, dtype=np.float64)
    s2 = np.asarray(s2, dtype=np.float64)
    rho = float(np.clip(icc, 0.0, 1.0))
    gamma = ((1.0 - rho) * s2 + rho * s1 * s1)[s2 > 0]
    if gamma.size == 0 or gamma.mean() <= 0:
        return 0.0
    return float(len(gamma) / (1.0 + float(np.var(gamma)) / float(gamma.mean()) ** 2))


def effective(
    influence: np.ndarray,
    unit: np.ndarray,
    *,
    resid: np.ndarray | None = None,
    icc: float | None = None,
) -> float:
    """Return the effective number of clusters of an estimator (Carter, Schnepel & Steigerwald).

    G* = G / (1 + Γ), Γ the squared coefficient of variation over clusters of
    γ_g = (1 − ρ) Σ_i a_i² + ρ (Σ_i a_i)², where a_i is row i's weight in the estimator
    (`influence`: e.g. its denominator in a ratio of sums) and ρ the intra-cluster
    correlation (`icc`, else `icc_anova` of `resid`, else 1: the conservative choice).
    Equal clusters give G* = G; one cluster holding most of the weight gives G* near 1.

    >>> round(effective(np.ones(6), np.array([0, 0, 1, 1, 2, 2])), 6)
    3.0
    >>> round(effective(np.ones(6), np.array([0, 0, 0, 0, 1, 2])), 3)
    1.256
    """
    a = np.asarray(influence, dtype=np.float64)
    unit = np.asarray(unit, dtype=np.int64)
    if unit.size == 0:
        return 0.0
    if icc is None:
        icc = icc_anova(resid, unit) if resid is not None else 1.0
    k = int(unit.max()) + 1
    s1 = np.bincount(unit, weights=a, minlength=k)
    s2 = np.bincount(unit, weights=a * a, minlength=k)
    return effective_from_sums(s1, s2, icc)


def kish_n_eff(unit: np.ndarray, icc: float) -> float:
    """Return the effective number of independent rows: n / (1 + (Σ m_g² / n − 1) · ICC).

    Kish's design effect with unequal cluster sizes m_g (Σ m_g² / n = (1 + CV²)·m̄, the
    size-weighted mean size; `analyses.design.effects` writes it with CV and m̄), kept
    between the clusters (ICC 1) and the rows (ICC 0).

    >>> kish_n_eff(np.array([0, 0, 0, 0, 1, 2]), 0.5)  # 6 / (1 + (18/6 − 1)·0.5)
    3.0
    """
    m = np.bincount(np.asarray(unit, dtype=np.int64)).astype(np.float64)
    m = m[m > 0]
    n = float(m.sum())
    if n == 0:
        return 0.0
    deff = 1.0 + (float(np.sum(m * m)) / n - 1.0) * float(np.clip(icc, 0.0, 1.0))
    return float(np.clip(n / deff, len(m), n))
