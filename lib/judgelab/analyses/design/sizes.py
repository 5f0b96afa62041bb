"""Closed-form sample sizes for judge studies: items, clusters, orders, repeats, human labels.

Every function returns a `Size`: the number of independent units a normal-approximation
formula asks for, inflated by the design effects of the study's dependence, with the
formula and its assumptions spelled out.

The design effects (`verdict_design_effect`, `design_effect`) are in `effects`.

Formulas (z_x the standard normal quantile; two-sided tests at α; power 1 − β):

- rate interval of full width w: `n = z²_{1−α/2} p(1−p) / (w/2)²`;
- one-sample proportion test p₀ → p₁: `n = [(z_{1−α/2}√(p₀q₀) + z_{1−β}√(p₁q₁)) / (p₁ − p₀)]²`;
- position bias (`position_bias`): the same test on decisive verdicts with t_{G−1}
  quantiles in place of z (G the planned clusters, solved by iteration: the test run is a
  cluster test with G − 1 degrees of freedom), times deff_v (never below `deff_floor`),
  divided by v for items;
- two proportions (groups of relative size r = n₂/n₁):
  `n₁ = [z_{1−α/2}√(p̄q̄(1 + 1/r)) + z_{1−β}√(p₁q₁ + p₂q₂/r)]² / (p₁ − p₂)²`;
- paired difference of two judges (McNemar, discordant share ψ, difference d):
  `n = [z_{1−α/2}√ψ + z_{1−β}√(ψ − d²)]² / d²` (Connor 1987);
- logistic slope β per SD of a covariate, event rate p: `n = (z_{1−α/2} + z_{1−β})² /
  (p(1−p)β²)` (Hsieh, Bloch & Larsen 1998, one covariate);
- Cohen's κ interval of width w: `n = z² p_o(1 − p_o) / ((1 − p_e)² (w/2)²)` (the
  large-sample SE of κ with p_e treated as known);
- prediction-powered mean with N judge labels and n human labels, judge-human correlation
  ρ: `n = z² σ_Y² (1 − ρ²) / ((w/2)² − z² ρ² σ_Y² / N)` (PPI++ with the tuned λ ≈ ρσ_Y/σ_f;
  Angelopoulos et al. 2023), against `z² σ_Y² / (w/2)²` for humans alone.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy import special  # the quantiles scipy.stats calls, without its 1-3 s import

from judgelab.analyses.design.effects import design_effect, verdict_design_effect


@dataclass(frozen=True)
class Size:
    """What a formula asks for: units, the design effect applied, and how it was derived."""

    target: str
    n: int  # independent units (items, or human labels), design effects applied
    n_clusters: int | None
    deff: float
    formula: str
    assumptions: dict[str, float | int | str] = field(default_factory=dict)


def z(p: float) -> float:
    """Return the standard normal quantile at `p`."""
    return float(special.ndtri(p))


def _check_prob(name: str, p: float, *, open_: bool = True) -> None:
    ok = 0.0 < p < 1.0 if open_ else 0.0 <= p <= 1.0
    if not ok:
        raise ValueError(f"{name} must be in {'(0, 1)' if open_ else '[0, 1]'}, got {p}")


def _sized(
    target: str, n_raw: float, deff: float, cluster_size: float, formula: str, **assume
) -> Size:
    n = max(1, math.ceil(n_raw * deff - 1e-9))
    n_clusters = math.ceil(n / cluster_size) if cluster_size > 1 else None
    return Size(target, n, n_clusters, deff, formula, {k: v for k, v in assume.items()})


def rate_width(
    p: float, width: float, *, level: float = 0.95, deff: float = 1.0, cluster_size: float = 1
) -> Size:
    """Items for an interval of full `width` around a rate near `p`."""
    _check_prob("p", p)
    if not 0 < width < 1:
        raise ValueError(f"width must be in (0, 1), got {width}")
    n = z(0.5 + level / 2) ** 2 * p * (1 - p) / (width / 2) ** 2
    return _sized(
        "rate_width", n, deff, cluster_size, "z² p(1−p)/(w/2)²", p=p, width=width, level=level
    )


def one_proportion(
    p0: float,
    p1: float,
    *,
    alpha: float = 0.05,
    power: float = 0.8,
    deff: float = 1.0,
    cluster_size: float = 1,
    target: str = "one_proportion",
) -> Size:
    """Units to detect a rate `p1` against `p0` (two-sided test at `alpha`)."""
    _check_prob("p0", p0)
    _check_prob("p1", p1)
    if p0 == p1:
        raise ValueError("p1 must differ from p0")
    za, zb = z(1 - alpha / 2), z(power)
    n = ((za * math.sqrt(p0 * (1 - p0)) + zb * math.sqrt(p1 * (1 - p1))) / (p1 - p0)) ** 2
    return _sized(
        target,
        n,
        deff,
        cluster_size,
        "[(z_{1−α/2}√(p₀q₀) + z_{1−β}√(p₁q₁))/(p₁−p₀)]²",
        p0=p0,
        p1=p1,
        alpha=alpha,
        power=power,
    )


def _t(p: float, df: float | None) -> float:
    """Return the quantile at `p` of Student's t with `df` degrees of freedom (None: normal)."""
    return z(p) if df is None else float(special.stdtrit(max(df, 1.0), p))


def position_bias(
    delta: float,
    *,
    alpha: float = 0.05,
    power: float = 0.8,
    cluster_size: float = 1,
    icc: float = 0.0,
    both_orders: bool = True,
    order_corr: float = 0.0,
    repeats: int = 1,
    repeat_corr: float = 1.0,
    size_cv: float = 0.0,
    decisive_share: float = 1.0,
    deff_floor: float = 1.0,
    t_quantiles: bool = True,
    pilot_df: float | None = None,
) -> Size:
    """Items to detect |P(A | decisive) − 0.5| ≥ `delta` with the clustered test.

    Decisive verdicts needed: n_v = [(t_{1−α/2}√(p₀q₀) + t_{1−β}√(p₁q₁)) / δ]² ·
    max(deff_floor, deff_v) (`verdict_design_effect`), t with G − 1 degrees of freedom for
    the G = ⌈n_items / m̄⌉ clusters of the plan (iterated to a fixed point; `t_quantiles`
    False: z); items = n_v / (k·r·s), k orders, r samples, s the decisive share. The floor
    keeps an estimated negative order correlation (or ICC) from planning fewer verdicts
    than independent ones would need (`deff_floor` 1, the default).

    `pilot_df`: the degrees of freedom behind the *estimated* clustering term of deff_v
    (a pilot's effective clusters − 1: unequal clusters inform it less). The plan then
    reaches `power` on average over what the pilot leaves unknown (assurance; O'Hagan,
    Stevens & Campbell 2005): the between-cluster part
    ((1 + CV²)·m̄ − 1)·v·ICC (taken as 0 when estimated negative) is drawn as its estimate
    · ν / χ²_ν (the pivot of a variance component estimated with ν degrees of freedom; 200
    quantiles), the within-item part w kept (it rests on every item), the sum floored,
    and the expected power `position_power` is solved for n. Without it a plan from a pilot
    of a few clusters falls short of its power about half the time.
    """
    if not 0.0 < decisive_share <= 1.0:
        raise ValueError(f"decisive_share must be in (0, 1], got {decisive_share}")
    if deff_floor < 0:
        raise ValueError(f"deff_floor must be >= 0, got {deff_floor}")
    if pilot_df is not None and not pilot_df > 0:
        raise ValueError(f"pilot_df must be > 0, got {pilot_df}")
    orders = 2 if both_orders else 1
    raw = verdict_design_effect(
        cluster_size, icc, size_cv=size_cv, orders=orders, order_corr=order_corr,
        repeats=repeats, repeat_corr=repeat_corr, decisive_share=decisive_share,
    )  # fmt: skip
    deff = max(deff_floor, raw, 1e-3)
    per_item = orders * repeats * decisive_share
    p0, p1 = 0.5, 0.5 + abs(delta)
    _check_prob("p1", p1)
    df: float | None = None
    n_items = 1
    for _ in range(50):
        ta, tb = _t(1 - alpha / 2, df), _t(power, df)
        n_v = ((ta * math.sqrt(p0 * (1 - p0)) + tb * math.sqrt(p1 * (1 - p1))) / (p1 - p0)) ** 2
        n_items = max(2, math.ceil(n_v * deff / per_item - 1e-9))
        g = max(2, math.ceil(n_items / cluster_size))
        if not t_quantiles or df == g - 1:
            break
        df = g - 1
    point = n_items
    if pilot_df is not None:
        q = (np.arange(200) + 0.5) / 200
        within = verdict_design_effect(
            1.0, 0.0, orders=orders, order_corr=order_corr, repeats=repeats,
            repeat_corr=repeat_corr, decisive_share=decisive_share,
        )  # fmt: skip
        between = max(raw - within, 0.0) * pilot_df / special.chdtri(pilot_df, 1 - q)
        draws = np.maximum(max(deff_floor, 1e-3), within + between)

        def expected(n: int) -> float:
            return float(np.mean(position_power(n, delta, alpha=alpha, cluster_size=cluster_size,
                                                deff=draws, per_item=per_item,
                                                t_quantiles=t_quantiles)))  # fmt: skip

        low, high = 1, max(2, point)
        while expected(high) < power and high < 10**8:
            low, high = high, high * 2
        while high - low > 1:
            mid = (low + high) // 2
            low, high = (mid, high) if expected(mid) < power else (low, mid)
        n_items = max(2, high)
    n_clusters = math.ceil(n_items / cluster_size) if cluster_size > 1 else None
    quant = "t_{G−1}" if t_quantiles else "z"
    formula = f"[({quant},1−α/2 √(p₀q₀) + {quant},1−β √(p₁q₁))/δ]² · max(floor, deff_v) / (k·r·s)"
    if pilot_df is not None:
        formula += ", E[power] over deff_v ~ deff̂·ν/χ²_ν"
    return Size(
        "position_bias",
        n_items,
        n_clusters,
        deff,
        formula,
        {
            "p0": p0, "p1": p1, "alpha": alpha, "power": power, "icc": icc,
            "cluster_size": cluster_size, "size_cv": size_cv, "both_orders": str(both_orders),
            "order_corr": order_corr, "repeats": repeats, "decisive_share": decisive_share,
            "deff_estimated": raw, "deff_floor": deff_floor,
            "pilot_df": "none" if pilot_df is None else pilot_df,
            "uncertainty_factor": n_items / point,
        },
    )  # fmt: skip


def position_power(
    n_items: float | np.ndarray,
    delta: float,
    *,
    alpha: float = 0.05,
    cluster_size: float = 1,
    deff: float | np.ndarray = 1.0,
    per_item: float = 1.0,
    t_quantiles: bool = True,
) -> np.ndarray:
    """Closed-form power of the position test with `n_items` items (inverts `position_bias`).

    `deff` the design effect applied (floor included), `per_item` the decisive verdicts per
    item (k·r·s); t with G − 1 degrees of freedom, G = ⌈n / m̄⌉.
    """
    n = np.asarray(n_items, dtype=float)
    p0, p1 = 0.5, 0.5 + abs(delta)
    n_v = n * per_item / np.asarray(deff, dtype=float)
    g = np.maximum(2.0, np.ceil(n / max(cluster_size, 1.0)))
    df = g - 1 if t_quantiles else np.inf
    crit = special.stdtrit(df, 1 - alpha / 2)
    num = abs(p1 - p0) * np.sqrt(n_v) - crit * math.sqrt(p0 * (1 - p0))
    return special.stdtr(df, num / math.sqrt(p1 * (1 - p1)))


def two_proportions(
    p1: float,
    p2: float,
    *,
    ratio: float = 1.0,
    alpha: float = 0.05,
    power: float = 0.8,
    deff: float = 1.0,
    target: str = "two_proportions",
) -> Size:
    """Units in the first group (the second has `ratio` times as many) to detect p1 ≠ p2."""
    _check_prob("p1", p1)
    _check_prob("p2", p2)
    if p1 == p2 or ratio <= 0:
        raise ValueError("p1 must differ from p2 and ratio be positive")
    za, zb = z(1 - alpha / 2), z(power)
    pbar = (p1 + ratio * p2) / (1 + ratio)
    num = za * math.sqrt(pbar * (1 - pbar) * (1 + 1 / ratio)) + zb * math.sqrt(
        p1 * (1 - p1) + p2 * (1 - p2) / ratio
    )
    n = num**2 / (p1 - p2) ** 2
    return _sized(
        target,
        n,
        deff,
        1,
        "[z√(p̄q̄(1+1/r)) + z_{1−β}√(p₁q₁+p₂q₂/r)]²/(p₁−p₂)²",
        p1=p1,
        p2=p2,
        ratio=ratio,
        alpha=alpha,
        power=power,
    )


def self_preference(
    fpr_other: float,
    shift: float,
    *,
    share_self: float,
    negative_rate: float,
    alpha: float = 0.05,
    power: float = 0.8,
    deff: float = 1.0,
) -> Size:
    """Graded answers to detect a judge's FPR on its own model's wrong answers `shift` higher.

    `share_self` is the share of answers from the judge's own model, `negative_rate` the
    share of answers that are wrong (FPR is measured on those). Returns total answers.
    """
    _check_prob("share_self", share_self)
    _check_prob("negative_rate", negative_rate)
    ratio = (1 - share_self) / share_self
    per_self = two_proportions(
        min(fpr_other + shift, 0.999), fpr_other, ratio=ratio, alpha=alpha, power=power, deff=deff
    )
    n = per_self.n / (share_self * negative_rate)
    return _sized(
        "self_preference",
        n,
        1.0,
        1,
        per_self.formula + " ÷ (share_self · negative_rate)",
        fpr_other=fpr_other,
        shift=shift,
        share_self=share_self,
        negative_rate=negative_rate,
        design_effect=deff,
    )


def judge_difference(
    diff: float,
    discordant: float,
    *,
    alpha: float = 0.05,
    power: float = 0.8,
    deff: float = 1.0,
    cluster_size: float = 1,
) -> Size:
    """Items to detect a paired accuracy difference `diff` between two judges (McNemar)."""
    if not 0 < abs(diff) < discordant <= 1:
        raise ValueError(f"need 0 < |diff| < discordant <= 1, got {diff}, {discordant}")
    za, zb = z(1 - alpha / 2), z(power)
    n = (za * math.sqrt(discordant) + zb * math.sqrt(discordant - diff**2)) ** 2 / diff**2
    return _sized(
        "judge_difference",
        n,
        deff,
        cluster_size,
        "[z_{1−α/2}√ψ + z_{1−β}√(ψ−d²)]²/d²",
        diff=diff,
        discordant=discordant,
        alpha=alpha,
        power=power,
    )


def length_slope(
    log_odds_per_sd: float,
    *,
    rate: float = 0.5,
    alpha: float = 0.05,
    power: float = 0.8,
    deff: float = 1.0,
    cluster_size: float = 1,
) -> Size:
    """Judgments to detect a length log-odds slope per SD of log length ratio."""
    _check_prob("rate", rate)
    if log_odds_per_sd == 0:
        raise ValueError("the slope must be non-zero")
    n = (z(1 - alpha / 2) + z(power)) ** 2 / (rate * (1 - rate) * log_odds_per_sd**2)
    return _sized(
        "length_slope",
        n,
        deff,
        cluster_size,
        "(z_{1−α/2}+z_{1−β})²/(p(1−p)β²)",
        slope=log_odds_per_sd,
        rate=rate,
        alpha=alpha,
        power=power,
    )


def kappa_width(p_o: float, p_e: float, width: float, *, level: float = 0.95) -> Size:
    """Human labels for a Cohen's κ interval of full `width` (agreement p_o, chance p_e)."""
    _check_prob("p_o", p_o)
    _check_prob("p_e", p_e)
    n = z(0.5 + level / 2) ** 2 * p_o * (1 - p_o) / ((1 - p_e) ** 2 * (width / 2) ** 2)
    return _sized(
        "kappa_width", n, 1.0, 1, "z² p_o(1−p_o)/((1−p_e)²(w/2)²)", p_o=p_o, p_e=p_e, width=width
    )


def error_rate_width(rate: float, width: float, prevalence: float, *, level: float = 0.95) -> Size:
    """Human labels for an FPR/FNR interval of `width` (only `prevalence` of labels count)."""
    _check_prob("prevalence", prevalence)
    base = rate_width(rate, width, level=level)
    return _sized(
        "error_rate_width",
        base.n / prevalence,
        1.0,
        1,
        "z² r(1−r)/(w/2)² ÷ prevalence",
        rate=rate,
        width=width,
        prevalence=prevalence,
    )


def ppi_labels(
    width: float,
    *,
    var_y: float,
    corr: float,
    n_total: int,
    level: float = 0.95,
    deff: float = 1.0,
) -> tuple[Size, Size]:
    """Human labels for a mean of width `width`: (prediction-powered, humans alone).

    The PPI size is None-like (n = n_total + 1) when even infinitely many judge labels
    cannot reach the width with humans on every item.
    """
    if not -1 <= corr <= 1 or var_y <= 0 or n_total < 2:
        raise ValueError("need corr in [-1, 1], var_y > 0 and n_total >= 2")
    zz, h2 = z(0.5 + level / 2) ** 2, (width / 2) ** 2
    classical = _sized(
        "human_only", zz * var_y / h2, deff, 1, "z² σ²/(w/2)²", var_y=var_y, width=width
    )
    room = h2 - zz * corr**2 * var_y / n_total
    n = zz * var_y * (1 - corr**2) / room if room > 0 else float(n_total + 1)
    ppi = _sized(
        "ppi_labels",
        n,
        deff,
        1,
        "z² σ²(1−ρ²)/((w/2)² − z²ρ²σ²/N)",
        var_y=var_y,
        corr=corr,
        n_total=n_total,
        width=width,
    )
    return ppi, classical


__all__ = [
    "Size",
    "design_effect",
    "error_rate_width",
    "judge_difference",
    "kappa_width",
    "length_slope",
    "one_proportion",
    "position_bias",
    "position_power",
    "ppi_labels",
    "rate_width",
    "self_preference",
    "two_proportions",
    "verdict_design_effect",
    "z",
]
