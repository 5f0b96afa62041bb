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
from scipy import special

from judgelab.analyses.design import pilot as _pilot
from judgelab.analyses.design import sizes, verify
from judgelab.analyses.design.sizes import Size
from judgelab.core import wild

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


#: Extra columns of a position-bias plan: the closed form's power at the planned size and
#: the replay's (`verify.replay`), each with its Monte-Carlo SE.
VERIFIED = (
    "power",
    "verified_power",
    "verified_power_se",
    "verified_type_i",
    "verified_type_i_se",
    "replays",
    "note",
)


def position_bias_plan(
    delta: float = 0.05,
    *,
    pilot: Mapping[str, Any] | None = None,
    judgments: pd.DataFrame | None = None,
    icc: float | None = None,
    cluster_size: float | None = None,
    size_cv: float | None = None,
    order_corr: float | None = None,
    decisive_share: float | None = None,
    alpha: float = 0.05,
    power: float = 0.8,
    repeats: Iterable[int] = (1,),
    repeat_corr: float = 1.0,
    deff_floor: float = 1.0,
    assurance: bool = True,
    reps: int = 200,
    seed: int = 0,
    n_boot: int = wild.N_BOOT,
) -> pd.DataFrame:
    """Items (and judgments) to detect |P(A | decisive) − ½| ≥ `delta`: one order vs both.

    The closed form is `sizes.position_bias`: decisive verdicts inflated by the pilot's
    decisive share, a design effect with the cluster-size spread, never below `deff_floor`,
    and t quantiles with the plan's G − 1 degrees of freedom. With the pilot's `judgments`
    every plan (one sample per judgment) is also *verified*: `reps` replays of the pilot at
    the planned number of clusters run the test the study will run (`verify.replay`), and
    the achieved power and type-I error stand beside the closed form's power.

    Args:
        delta: The position bias to detect, on the P(A | decisive) scale.
        pilot: Pilot figures (`pilot.position`); read from `judgments` when None.
        judgments: The pilot's pairwise judgments (for the figures and the replays).
        icc: Between-item ICC of decisive verdicts (overrides the pilot; default 0).
        cluster_size: Mean items per cluster (default the pilot's, else 1).
        size_cv: Coefficient of variation of items per cluster (default the pilot's, else 0).
        order_corr: Effective correlation of an item's two orders (default pilot, else 0).
        decisive_share: Share of verdicts that are valid and not ties (default pilot, else 1).
        alpha: Two-sided level of the test.
        power: Power to reach.
        repeats: Samples per judgment to compare.
        repeat_corr: Correlation of repeated samples.
        deff_floor: The design effect is never taken below this (1: both orders are not
            counted as better than independent verdicts; lower it to bank on the pilot's
            order correlation).
        assurance: With a pilot, plan for the power on average over what the pilot leaves
            unknown (`sizes.position_bias`'s `pilot_df`: the pilot's effective clusters − 1);
            False: plug the pilot's figures in as if they were exact.
        reps: Replays per plan (verification; 0 skips it).
        seed: Seed of the replays.
        n_boot: Wild bootstrap replicates of each replayed test.

    Returns:
        One row per design (`COLUMNS` + `VERIFIED`).
    """
    if pilot is None and judgments is not None:
        pilot = _pilot.position(judgments)
    icc = _get(pilot, "icc", icc, 0.0)
    m = _get(pilot, "cluster_size", cluster_size, 1.0)
    cv = _get(pilot, "size_cv", size_cv, 0.0)
    rho = _get(pilot, "order_corr", order_corr, 0.0)
    share = _get(pilot, "decisive_share", decisive_share, 1.0)
    g_eff = _get(pilot, "n_eff_clusters", None, float("nan"))
    pilot_df = g_eff - 1 if assurance and np.isfinite(g_eff) and g_eff > 1 else None
    counts = _pilot.position_counts(judgments) if judgments is not None and reps > 0 else None
    rows, extra = [], []
    for k in repeats:
        for both in (False, True):
            s = sizes.position_bias(
                delta, alpha=alpha, power=power, cluster_size=m,
                icc=float(np.clip(icc, -0.99, 0.99)), both_orders=both,
                order_corr=float(np.clip(rho, -1.0, 1.0)), repeats=k,
                repeat_corr=repeat_corr, size_cv=cv, decisive_share=share, deff_floor=deff_floor,
                pilot_df=pilot_df,
            )  # fmt: skip
            label = ("both orders" if both else "one random order") + (
                f", {k} samples" if k > 1 else ""
            )
            per_item = (2 if both else 1) * k
            rows.append((label, s, per_item))
            closed = sizes.position_power(
                s.n, delta, alpha=alpha, cluster_size=m, deff=s.deff, per_item=per_item * share
            )
            check = _verify(counts, s, m, delta, both, k, alpha, reps, seed, n_boot)
            extra.append({"power": float(closed), **check})
    table = to_frame(rows)
    return pd.concat([table, pd.DataFrame(extra, columns=list(VERIFIED))], axis=1)


def _verify(
    counts: pd.DataFrame | None,
    size: Size,
    m: float,
    delta: float,
    both: bool,
    repeats: int,
    alpha: float,
    reps: int,
    seed: int,
    n_boot: int,
) -> dict[str, Any]:
    nan = float("nan")
    empty = {"verified_power": nan, "verified_power_se": nan, "verified_type_i": nan,
             "verified_type_i_se": nan, "replays": 0}  # fmt: skip
    if counts is None:
        return {**empty, "note": "closed form only (no pilot judgments to replay)"}
    if repeats > 1:
        return {**empty, "note": "repeated samples are not replayed (the pilot has one)"}
    n_clusters = size.n_clusters or max(2, math.ceil(size.n / max(m, 1.0)))
    res = verify.replay(counts, n_clusters=n_clusters, delta=delta,
                        orders="both" if both else "one", alpha=alpha, reps=reps, seed=seed,
                        n_boot=n_boot)  # fmt: skip
    return {
        "verified_power": res["power"],
        "verified_power_se": res["power_se"],
        "verified_type_i": res["type_i"],
        "verified_type_i_se": res["type_i_se"],
        "replays": res["reps"],
        "note": res["note"],
    }


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
    za = special.ndtri(1 - alpha / 2)
    num = abs(p1 - p0) * np.sqrt(n_eff) - za * math.sqrt(p0 * (1 - p0))
    return special.ndtr(num / math.sqrt(p1 * (1 - p1)))


def power_curve(
    ns: Iterable[int],
    delta: float,
    *,
    pilot: Mapping[str, Any] | None = None,
    alpha: float = 0.05,
    both_orders: bool = True,
    icc: float | None = None,
    cluster_size: float | None = None,
    size_cv: float | None = None,
    order_corr: float | None = None,
    decisive_share: float | None = None,
    deff_floor: float = 1.0,
) -> pd.DataFrame:
    """Power to detect position bias `delta` for each number of items (`sizes.position_power`)."""
    m = _get(pilot, "cluster_size", cluster_size, 1.0)
    share = _get(pilot, "decisive_share", decisive_share, 1.0)
    orders = 2 if both_orders else 1
    raw = sizes.verdict_design_effect(
        m, float(np.clip(_get(pilot, "icc", icc, 0.0), -0.99, 0.99)),
        size_cv=_get(pilot, "size_cv", size_cv, 0.0), orders=orders,
        order_corr=float(np.clip(_get(pilot, "order_corr", order_corr, 0.0), -1.0, 1.0)),
        decisive_share=share,
    )  # fmt: skip
    deff = max(deff_floor, raw)
    ns = np.asarray(list(ns), dtype=int)
    p = sizes.position_power(ns, delta, alpha=alpha, cluster_size=m, deff=deff,
                             per_item=orders * share)  # fmt: skip
    return pd.DataFrame({"n_items": ns, "power": p, "deff": deff, "delta": delta})


__all__ = [
    "COLUMNS",
    "VERIFIED",
    "human_labels_plan",
    "judges_plan",
    "position_bias_plan",
    "power_at",
    "power_curve",
    "rate_plan",
    "to_frame",
]
