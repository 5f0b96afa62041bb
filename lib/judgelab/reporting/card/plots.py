"""Plots of the judge report card: headline forests over threshold bands, detail panels."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from judgelab.core.schema import require_columns as _check
from judgelab.reporting.card.lights import DEFAULT_THRESHOLDS, LIGHTS
from judgelab.reporting.card.measures import MEASURES

BAND_COLOURS = {"green": "#d9f0d3", "amber": "#fde9b5", "red": "#f6c6c0"}


def threshold_bands(
    how: str, green: float, amber: float, *, lo: float, hi: float
) -> list[tuple[float, float, str]]:
    """Return (start, end, light) spans of the value axis [lo, hi] for one grading rule.

    `how` is a `LIGHTS` rule: deviation (|v − 0.5|), drop (max(−v, 0)), abs
    (|v|), higher or lower.

    >>> threshold_bands("lower", 0.02, 0.1, lo=0.0, hi=1.0)
    [(0.0, 0.02, 'green'), (0.02, 0.1, 'amber'), (0.1, 1.0, 'red')]
    """
    if how == "deviation":
        c = 0.5
        spans = [
            (lo, c - amber, "red"),
            (c - amber, c - green, "amber"),
            (c - green, c + green, "green"),
            (c + green, c + amber, "amber"),
            (c + amber, hi, "red"),
        ]
    elif how == "abs":
        spans = [
            (lo, -amber, "red"),
            (-amber, -green, "amber"),
            (-green, green, "green"),
            (green, amber, "amber"),
            (amber, hi, "red"),
        ]
    elif how == "drop":
        spans = [(lo, -amber, "red"), (-amber, -green, "amber"), (-green, hi, "green")]
    elif how == "higher":
        spans = [(lo, amber, "red"), (amber, green, "amber"), (green, hi, "green")]
    elif how == "lower":
        spans = [(lo, green, "green"), (green, amber, "amber"), (amber, hi, "red")]
    else:
        raise ValueError(f"unknown grading rule {how!r}")
    out = []
    for a, b, light in spans:
        a, b = max(a, lo), min(b, hi)
        if b > a:
            out.append((a, b, light))
    return out


def headline_forest(
    lights: pd.DataFrame, *, thresholds: Mapping[str, Sequence[float]] | None = None
) -> Figure:
    """One small panel per graded bias: each judge's headline with its CI over the bands.

    Args:
        lights: `card.traffic_lights` output.
        thresholds: The thresholds the lights used (`DEFAULT_THRESHOLDS`).

    Returns:
        The figure; panels of biases no judge has data for are left out, and a figure with
        a note is returned when none applies.
    """
    _check(lights, ["source", "judge", "bias", "value", "ci_low", "ci_high", "n"], "forest")
    thresholds = dict(DEFAULT_THRESHOLDS if thresholds is None else thresholds)
    biases = [b for b in LIGHTS if lights.loc[lights["bias"] == b, "value"].notna().any()]
    judges = list(dict.fromkeys(lights["source"] + ":" + lights["judge"]))
    if not biases:
        fig = plt.figure(figsize=(6, 1.5))
        fig.text(0.5, 0.5, "no graded measure applies to these judges", ha="center")
        return fig
    ncol = min(4, len(biases))
    nrow = math.ceil(len(biases) / ncol)
    height = max(1.6, 0.28 * len(judges) + 1.0)
    fig, axes = plt.subplots(
        nrow, ncol, figsize=(3.4 * ncol, height * nrow), squeeze=False, sharey=True
    )
    y = np.arange(len(judges))
    for ax, bias in zip(axes.ravel(), biases, strict=False):
        tkey, measure, how = LIGHTS[bias]
        green, amber = (float(x) for x in thresholds[tkey])
        part = lights[lights["bias"] == bias].assign(key=lambda d: d["source"] + ":" + d["judge"])
        part = part.set_index("key").reindex(judges)
        vals = part["value"].astype(float)
        lows = part["ci_low"].astype(float).fillna(vals)
        highs = part["ci_high"].astype(float).fillna(vals)
        finite = np.concatenate([vals.dropna(), lows.dropna(), highs.dropna()])
        lo, hi = _limits(how, finite, green, amber)
        for a, b, light in threshold_bands(how, green, amber, lo=lo, hi=hi):
            ax.axvspan(a, b, color=BAND_COLOURS[light], zorder=0, lw=0)
        ok = vals.notna().to_numpy()
        ax.errorbar(
            vals[ok],
            y[ok],
            xerr=[(vals - lows)[ok].clip(lower=0), (highs - vals)[ok].clip(lower=0)],
            fmt="o",
            color="#222",
            ms=4,
            capsize=2,
            zorder=3,
        )
        for yi in y[~ok]:
            ax.text(lo + 0.02 * (hi - lo), yi, "n/a", va="center", fontsize=7, color="#777")
        ax.set_xlim(lo, hi)
        ax.set_title(f"{bias}\n{MEASURES[measure][0]}", fontsize=9)
        ax.tick_params(labelsize=7)
    for ax in axes.ravel()[len(biases) :]:
        ax.set_visible(False)
    axes[0, 0].set_yticks(y, judges, fontsize=7)
    axes[0, 0].invert_yaxis()
    fig.suptitle("Headline per bias (95% CI) over the traffic-light bands", fontsize=10)
    fig.tight_layout()
    return fig


def _limits(how: str, values: np.ndarray, green: float, amber: float) -> tuple[float, float]:
    if how == "deviation":
        lo, hi = 0.5 - 2 * amber, 0.5 + 2 * amber
    elif how == "abs":
        lo, hi = -2 * amber, 2 * amber
    elif how == "drop":
        lo, hi = -2 * amber, amber
    elif how == "higher":
        lo, hi = min(0.0, amber - (green - amber)), 1.0
    else:
        lo, hi = 0.0, 2 * amber
    if values.size:
        span = max(hi - lo, 1e-6)
        lo = min(lo, float(values.min()) - 0.05 * span)
        hi = max(hi, float(values.max()) + 0.05 * span)
    return lo, hi


#: Measures shown in the detail panels (scoped rows: per split, condition or subset).
DETAIL_MEASURES = (
    "ca",
    "consistency",
    "pos_a_rate",
    "p_longer",
    "kappa_reference",
    "kappa_answered",
    "self_gap",
    "alpha_peers",
)


def _scope_points(ax: plt.Axes, part: pd.DataFrame, scopes: list, measure: str) -> None:
    """Draw one judge's values of `measure` per scope with their intervals and n."""
    pos = np.arange(len(scopes))
    p = part.set_index("scope").reindex(scopes)
    v = p["value"].astype(float)
    lo = p["ci_low"].astype(float).fillna(v)
    hi = p["ci_high"].astype(float).fillna(v)
    ax.errorbar(
        v,
        pos,
        xerr=[(v - lo).clip(lower=0), (hi - v).clip(lower=0)],
        fmt="o",
        color="#1f77b4",
        ms=4,
        capsize=2,
    )
    for i, n in enumerate(p["n"]):
        ax.annotate(f"n={int(n)}", (1.0, i), xycoords=("axes fraction", "data"),
                    xytext=(3, 0), textcoords="offset points", fontsize=6,
                    va="center")  # fmt: skip
    ax.set_yticks(pos, [str(s) for s in scopes], fontsize=7)
    ax.invert_yaxis()
    if measure in ("pos_a_rate", "p_longer"):
        ax.axvline(0.5, color="#888", lw=0.8, ls="--")
    elif measure in ("self_gap",):
        ax.axvline(0.0, color="#888", lw=0.8, ls="--")
    ax.set_xlabel(MEASURES[measure][0], fontsize=8)


def _scope_heatmap(
    fig: Figure, ax: plt.Axes, part: pd.DataFrame, scopes: list, judges: list[str]
) -> None:
    """Draw the judges × scopes heatmap of one measure's values."""
    grid = part.pivot_table(
        index="key", columns="scope", values="value", aggfunc="first", sort=False
    ).reindex(index=[j for j in judges if j in set(part["key"])], columns=scopes)
    im = ax.imshow(grid.to_numpy(dtype=float), aspect="auto", cmap="viridis")
    ax.set_xticks(range(len(scopes)), [str(s) for s in scopes], rotation=45, ha="right",
                  fontsize=6)  # fmt: skip
    ax.set_yticks(range(len(grid.index)), grid.index, fontsize=6)
    fig.colorbar(im, ax=ax, shrink=0.8)


def detail_panels(measures: pd.DataFrame, *, max_scopes: int = 14) -> Figure:
    """Small multiples of the scoped rows behind the headlines.

    One judge: each measure's value per scope (split, condition, subset) with its 95% CI.
    Several judges: one heatmap per measure, judges × scopes (the per-judge cards hold the
    intervals).

    Args:
        measures: `card.collect` / `collect_measures` output.
        max_scopes: Scopes shown per panel at most (the headline scope is always kept).
    """
    _check(measures, ["source", "judge", "measure", "scope", "value", "status"], "details")
    data = measures[
        measures["measure"].isin(DETAIL_MEASURES) & (measures["status"] == "ok")
    ].assign(key=lambda d: d["source"] + ":" + d["judge"])
    # a pooled row over a single split repeats that split: such a measure has nothing behind it
    scopes_of = {
        m: set(data.loc[data["measure"] == m, "scope"]) - {"pooled"} for m in DETAIL_MEASURES
    }
    shown = [m for m in DETAIL_MEASURES if len(scopes_of[m]) > 1]
    judges = list(dict.fromkeys(measures["source"] + ":" + measures["judge"]))
    if not shown:
        fig = plt.figure(figsize=(6, 1.5))
        fig.text(0.5, 0.5, "no measure with several splits, conditions or subsets", ha="center")
        return fig
    ncol = min(3, len(shown))
    nrow = math.ceil(len(shown) / ncol)
    single = len(judges) == 1
    per = 2.6 if single else max(2.0, 0.22 * len(judges) + 1.2)
    fig, axes = plt.subplots(nrow, ncol, figsize=(4.6 * ncol, per * nrow), squeeze=False)
    for ax, m in zip(axes.ravel(), shown, strict=False):
        part = data[data["measure"] == m]
        scopes = list(dict.fromkeys(part["scope"]))
        if len(scopes) > max_scopes:
            head = part.loc[part["headline"].astype(bool), "scope"].tolist()
            scopes = list(dict.fromkeys([*scopes[: max_scopes - 1], *head]))
            part = part[part["scope"].isin(scopes)]
        label = MEASURES[m][0]
        if single:
            _scope_points(ax, part, scopes, m)
        else:
            _scope_heatmap(fig, ax, part, scopes, judges)
        ax.set_title(label, fontsize=9)
        ax.tick_params(labelsize=7)
    for ax in axes.ravel()[len(shown) :]:
        ax.set_visible(False)
    title = "Behind the headlines: per split, condition and subset"
    fig.suptitle(title + (" (95% CI)" if single else ""), fontsize=10)
    fig.tight_layout()
    return fig
