"""Design effects of judge studies: variance inflation from clusters, orders and repeats.

**Design effect, per decisive verdict** (`verdict_design_effect`): the variance of a rate
over D decisive verdicts (valid, not ties) relative to D independent ones, when items come
in clusters of m̄ items on average (coefficient of variation CV), each item judged in k
orders with r samples each of which a share s is decisive:

    deff_v = w + ((1 + CV²)·m̄ − 1) · v · ICC,   v = k·r·s decisive verdicts per item,
    w = 1 + s·(r − 1)·ρ_r + (k − 1)·r·s·ρ_o

- ICC is the correlation of two decisive verdicts on *different* items of one cluster and
  (1 + CV²)·m̄ = Σ m_g² / Σ m_g the size-weighted mean cluster size (Kish 1965; unequal
  clusters cost more than equal ones of the same mean); `n_clusters = ⌈n_items / m̄⌉`;
- w is the within-item part: the other verdicts of an item, r − 1 repeated samples in the
  same order correlated ρ_r and the other order's correlated ρ_o (ρ_o < 0 for "picked A"
  when the judge is consistent, which is why both orders pay off for position bias).
  Averaging orders or repeats shrinks only w: the clustering term stays.

`design_effect` is the same quantity relative to *one judgment per independent item*
(every verdict decisive): deff_v / v, i.e. w / (k·r) + ((1 + CV²)·m̄ − 1)·ICC.
"""

from __future__ import annotations


def verdict_design_effect(
    cluster_size: float = 1.0,
    icc: float = 0.0,
    *,
    size_cv: float = 0.0,
    orders: int = 1,
    order_corr: float = 0.0,
    repeats: int = 1,
    repeat_corr: float = 1.0,
    decisive_share: float = 1.0,
) -> float:
    """Return the variance inflation relative to independent decisive verdicts (deff_v).

    >>> round(verdict_design_effect(5, 0.25), 3)  # one order, equal clusters: 1 + 4·0.25
    2.0
    >>> round(verdict_design_effect(5, 0.25, size_cv=1.0), 3)  # 1 + (2·5 − 1)·0.25
    3.25
    >>> round(verdict_design_effect(orders=2, order_corr=-0.5, decisive_share=0.8), 3)
    0.6
    """
    if cluster_size < 1 or not -1.0 < icc < 1.0 or repeats < 1 or orders not in (1, 2):
        raise ValueError("cluster_size >= 1, icc in (-1, 1), repeats >= 1, orders 1 or 2")
    if not -1.0 <= order_corr <= 1.0 or not -1.0 <= repeat_corr <= 1.0:
        raise ValueError("correlations must be in [-1, 1]")
    if not 0.0 < decisive_share <= 1.0 or size_cv < 0:
        raise ValueError("decisive_share must be in (0, 1] and size_cv >= 0")
    s = decisive_share
    per_item = orders * repeats * s
    within = 1.0 + s * (repeats - 1) * repeat_corr + (orders - 1) * repeats * s * order_corr
    return within + ((1.0 + size_cv**2) * cluster_size - 1.0) * per_item * icc


def design_effect(
    cluster_size: float = 1.0,
    icc: float = 0.0,
    *,
    repeats: int = 1,
    repeat_corr: float = 1.0,
    both_orders: bool = False,
    order_corr: float = 0.0,
    size_cv: float = 0.0,
) -> float:
    """Return the variance inflation relative to one judgment per independent item.

    `verdict_design_effect` with every verdict decisive, divided by the k·r judgments an
    item gets.

    >>> round(design_effect(5, 0.25), 3)
    2.0
    >>> round(design_effect(both_orders=True, order_corr=-0.5), 3)
    0.25
    >>> round(design_effect(5, 0.25, both_orders=True, order_corr=-0.5), 3)
    1.25
    """
    orders = 2 if both_orders else 1
    deff_v = verdict_design_effect(
        cluster_size, icc, size_cv=size_cv, orders=orders, order_corr=order_corr,
        repeats=repeats, repeat_corr=repeat_corr,
    )  # fmt: skip
    return deff_v / (orders * repeats)
