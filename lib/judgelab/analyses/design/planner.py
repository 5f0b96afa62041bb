"""Study plans as tables: how many items, clusters, orders, repeats and human labels.

Each `*_plan` takes the target and either a pilot (the dict `pilot.position` / `pilot.rate`
return, from the user's own judgments) or stated assumptions, and returns one row per design
alternative, so the trade-offs (one order vs both, repeats, clustering) sit side by side.
`power_curve` inverts the same formulas: the power a given number of items buys.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats as sps

from judgelab.analyses.design import sizes
from judgelab.analyses.design.sizes import Size

COLUMNS = ("target", "design", "n", "n_clusters", "n_judgments", "deff", "formula", "assumes")


def to_frame(rows: Iterable[tuple[str, Size, int | None]]) -> pd.DataFrame:
    """Return (design label, size, judgments per unit) rows as a plan table."""
    out = []
    for label, s, per in rows:
        out.append(
            {
                "target": s.target,
                "design": label,
                "n": s.n,
                "n_clusters": s.n_clusters,
                "n_judgments": None if per is None else s.n * per,
                "deff": round(s.deff, 4),
                "formula": s.formula,
                "assumes": ", ".join(f"{k}={_fmt(v)}" for k, v in s.assumptions.items()),
            }
        )
    return pd.DataFrame(out, columns=list(COLUMNS))


def _fmt(v: Any) -> str:
    return f"{v:.4g}" if isinstance(v, float) else str(v)


def _get(pilot: Mapping[str, Any] | None, key: str, given: Any, default: Any) -> Any:
    if given is not None:
        return given
    if pilot is not None and key in pilot and not _nan(pilot[key]):
        return pilot[key]
    return default


def _nan(x: Any) -> bool:
    return isinstance(x, float) and math.isnan(x)


def position_bias_plan(
    delta: float = 0.05,
    *,
    pilot: Mapping[str, Any] | None = None,
    icc: float | None = None,
    cluster_size: float | None = None,
    order_corr: float | None = None,
    alpha: float = 0.05,
    power: float = 0.8,
    repeats: Iterable[int] = (1,),
    repeat_corr: float = 1.0,
) -> pd.DataFrame:
    """Items (and judgments) to detect |P(A) − 0.5| ≥ `delta`: one order vs both orders."""
    icc = _get(pilot, "icc", icc, 0.0)
    m = _get(pilot, "cluster_size", cluster_size, 1.0)
    rho = _get(pilot, "order_corr", order_corr, 0.0)
    rows = []
    for k in repeats:
        for both in (False, True):
            s = sizes.position_bias(
                delta,
                alpha=alpha,
                power=power,
                cluster_size=m,
                icc=icc,
                both_orders=both,
                order_corr=rho,
                repeats=k,
                repeat_corr=repeat_corr,
            )
            label = ("both orders" if both else "one random order") + (
                f", {k} samples" if k > 1 else ""
            )
            rows.append((label, s, (2 if both else 1) * k))
    return to_frame(rows)


def rate_plan(
    widths: Iterable[float] = (0.2, 0.1, 0.05),
    *,
    p: float | None = None,
    pilot: Mapping[str, Any] | None = None,
    icc: float | None = None,
    cluster_size: float | None = None,
    level: float = 0.95,
) -> pd.DataFrame:
    """Items for a rate interval of each full width, with and without the clustering."""
    p = _get(pilot, "p", p, 0.5)
    icc = _get(pilot, "icc", icc, 0.0)
    m = _get(pilot, "cluster_size", cluster_size, 1.0)
    rows = []
    for w in widths:
        rows.append((f"±{w / 2:g}, independent items", sizes.rate_width(p, w, level=level), 1))
        deff = sizes.design_effect(m, icc)
        s = sizes.rate_width(p, w, level=level, deff=deff, cluster_size=m)
        rows.append((f"±{w / 2:g}, clusters of {m:.3g} (ICC {icc:.3g})", s, 1))
    return to_frame(rows)


def human_labels_plan(
    width: float = 0.1,
    *,
    p_o: float = 0.8,
    p_e: float = 0.5,
    error_rate: float = 0.1,
    prevalence: float = 0.5,
    var_y: float = 0.25,
    corr: float = 0.6,
    n_total: int = 1000,
    level: float = 0.95,
) -> pd.DataFrame:
    """Human labels for κ, an FPR/FNR and a mean (prediction-powered vs humans alone)."""
    ppi, classical = sizes.ppi_labels(width, var_y=var_y, corr=corr, n_total=n_total, level=level)
    rows = [
        (f"Cohen's κ ±{width / 2:g}", sizes.kappa_width(p_o, p_e, width, level=level), None),
        (
            f"FPR/FNR ±{width / 2:g}",
            sizes.error_rate_width(error_rate, width, prevalence, level=level),
            None,
        ),
        (f"mean ±{width / 2:g}, humans alone", classical, None),
        (f"mean ±{width / 2:g}, PPI with {n_total} judge labels", ppi, None),
    ]
    return to_frame(rows)


def judges_plan(
    diffs: Iterable[float] = (0.02, 0.05, 0.1),
    *,
    discordant: float = 0.2,
    pilot: Mapping[str, Any] | None = None,
    alpha: float = 0.05,
    power: float = 0.8,
    deff: float = 1.0,
) -> pd.DataFrame:
    """Items to detect a paired accuracy difference between two judges."""
    psi = _get(pilot, "discordant", None, discordant)
    rows = [
        (
            f"difference {d:g}",
            sizes.judge_difference(d, psi, alpha=alpha, power=power, deff=deff),
            2,
        )
        for d in diffs
        if abs(d) < psi
    ]
    return to_frame(rows)


def power_at(n: np.ndarray | float, p0: float, p1: float, *, alpha: float, deff: float) -> Any:
    """Power of the two-sided one-proportion test with `n` units (design effect `deff`)."""
    n_eff = np.asarray(n, dtype=float) / deff
    za = sps.norm.ppf(1 - alpha / 2)
    num = abs(p1 - p0) * np.sqrt(n_eff) - za * math.sqrt(p0 * (1 - p0))
    return sps.norm.cdf(num / math.sqrt(p1 * (1 - p1)))


def power_curve(
    ns: Iterable[int],
    delta: float,
    *,
    pilot: Mapping[str, Any] | None = None,
    alpha: float = 0.05,
    both_orders: bool = True,
    icc: float | None = None,
    cluster_size: float | None = None,
    order_corr: float | None = None,
) -> pd.DataFrame:
    """Power to detect position bias `delta` for each number of items."""
    deff = sizes.design_effect(
        _get(pilot, "cluster_size", cluster_size, 1.0),
        _get(pilot, "icc", icc, 0.0),
        both_orders=both_orders,
        order_corr=_get(pilot, "order_corr", order_corr, 0.0),
    )
    ns = np.asarray(list(ns), dtype=int)
    p = power_at(ns, 0.5, 0.5 + abs(delta), alpha=alpha, deff=deff)
    return pd.DataFrame({"n_items": ns, "power": p, "deff": deff, "delta": delta})


__all__ = [
    "COLUMNS",
    "human_labels_plan",
    "judges_plan",
    "position_bias_plan",
    "power_at",
    "power_curve",
    "rate_plan",
    "to_frame",
]
