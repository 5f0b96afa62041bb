"""Traffic lights: each bias graded from its headline measure against two thresholds.

A light row names a bias, its threshold key and its headline measure; how the value is graded
comes from the measure's registered `direction` (`deviation` grades |value − 0.5|, `drop`
max(−value, 0), `abs` |value|, `higher` wants value ≥ the thresholds, `lower` ≤ them).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from judgelab.analyses import registry
from judgelab.core import clusters
from judgelab.reporting.card.measures import MEASURES, headlines
from judgelab.reporting.palette import LIGHT_COLOURS as LIGHT_COLOURS

#: Traffic-light rows: bias → (threshold key, headline measure). Order = order on the page.
LIGHT_ROWS: dict[str, tuple[str, str]] = {
    "Position bias": ("position", "pos_a_rate"),
    "Order consistency": ("consistency", "consistency"),
    "Length bias": ("length", "p_longer"),
    "Context length": ("context", "context_trend"),
    "Self-preference": ("self_preference", "self_gap"),
    "Answerability": ("answerability", "answered_gap"),
    "Agreement with humans": ("human_agreement", "kappa_human"),
    "Invalid outputs": ("invalid", "invalid_rate"),
    "Stability": ("stability", "stability"),
}


def _direction(measure: str) -> str:
    direction = registry.get(measure).direction
    if direction is None:
        raise ValueError(f"measure {measure!r} has no direction to grade a traffic light by")
    return direction


#: Bias → (threshold key, headline measure, how the value is graded: the measure's direction).
LIGHTS: dict[str, tuple[str, str, str]] = {
    bias: (tkey, m, _direction(m)) for bias, (tkey, m) in LIGHT_ROWS.items()
}

#: Default thresholds [green limit, amber limit] per traffic-light row (workbench choices,
#: not paper values; notebooks pass their own and show them on the page).
DEFAULT_THRESHOLDS: dict[str, list[float]] = {
    "position": [0.05, 0.15],
    "consistency": [0.8, 0.6],
    "length": [0.05, 0.15],
    "context": [0.1, 0.3],
    "self_preference": [0.05, 0.15],
    "answerability": [0.1, 0.25],
    "human_agreement": [0.6, 0.4],
    "invalid": [0.02, 0.1],
    "stability": [0.1, 0.2],
}

#: Measures whose light reads their test: not significant at `alpha` -> green; significant ->
#: graded by magnitude, at least amber (the point estimate alone never makes a light red).
TESTED = ("self_gap", "answered_gap")

_EPS = 1e-9  # rates such as 0.55 − 0.5 carry float noise; a boundary value counts as inside


def traffic_light(value: float, *, green: float, amber: float, higher_is_better: bool) -> str:
    """Grade one value: green, amber or red; grey when the value is NaN.

    Boundaries are inclusive: a value exactly at the green limit is green, exactly at the
    amber limit amber (within 1e-9, so 0.55 − 0.5 counts as 0.05).

    >>> traffic_light(0.05, green=0.05, amber=0.15, higher_is_better=False)
    'green'
    >>> traffic_light(0.6, green=0.8, amber=0.6, higher_is_better=True)
    'amber'
    """
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "grey"
    if higher_is_better:
        if green < amber:
            raise ValueError(f"higher-is-better thresholds need green ≥ amber ({green}, {amber})")
        return "green" if value >= green - _EPS else "amber" if value >= amber - _EPS else "red"
    if green > amber:
        raise ValueError(f"lower-is-better thresholds need green ≤ amber ({green}, {amber})")
    return "green" if value <= green + _EPS else "amber" if value <= amber + _EPS else "red"


def _graded(value: float, how: str) -> float:
    if how == "deviation":
        return abs(value - 0.5)
    if how == "drop":
        return max(-value, 0.0)
    if how == "abs":
        return abs(value)
    return value


def _few_clusters(r: pd.Series, least: float) -> bool:
    """Whether a headline rests on fewer than `least` effective clusters (NaN: unknown)."""
    g = r.get("n_eff_clusters", np.nan)
    return bool(np.isfinite(float(g)) and float(g) < least) if g is not None else False


def tested_light(graded: str, p_value: float, alpha: float) -> tuple[str, str]:
    """Return (light, note) of a `TESTED` measure from its magnitude grade and its p-value.

    No p-value: the magnitude grade. p ≥ alpha: green ("not significant"). p < alpha: the
    magnitude grade, at least amber.

    >>> tested_light("red", 0.2, 0.05)
    ('green', 'not significant at α = 0.05 (p = 0.2)')
    >>> tested_light("green", 0.001, 0.05)[0]
    'amber'
    """
    if p_value is None or math.isnan(p_value):
        return graded, ""
    if p_value >= alpha:
        return "green", f"not significant at α = {alpha:g} (p = {p_value:.3g})"
    light = "amber" if graded == "green" else graded
    return light, f"significant at α = {alpha:g} (p = {p_value:.3g})"


def _rule_text(how: str, measure: str, green: float, amber: float) -> str:
    label = MEASURES[measure][0]
    quantity = {
        "deviation": f"|{label} − 0.5|",
        "drop": f"max(−{label}, 0)",
        "abs": f"|{label}|",
    }.get(how, label)
    if how == "higher":
        return f"green: {quantity} ≥ {green:g}; amber: ≥ {amber:g}; red: below"
    rule = f"green: {quantity} ≤ {green:g}; amber: ≤ {amber:g}; red: above"
    if measure in TESTED:
        rule += "; green whenever its test is not significant, at least amber when it is"
    return rule


def threshold_table(thresholds: Mapping[str, Sequence[float]]) -> pd.DataFrame:
    """Return the traffic-light rules as shown on the page: bias, measure, rule.

    Raises:
        KeyError: a threshold the lights need is missing.
    """
    rows = []
    for bias, (tkey, measure, how) in LIGHTS.items():
        if tkey not in thresholds:
            raise KeyError(f"thresholds: missing {tkey!r} (needed for {bias!r})")
        green, amber = (float(x) for x in thresholds[tkey])
        rows.append(
            {
                "bias": bias,
                "threshold": tkey,
                "measure": MEASURES[measure][0],
                "rule": _rule_text(how, measure, green, amber),
            }
        )
    return pd.DataFrame(rows)


def traffic_lights(
    measures: pd.DataFrame,
    *,
    thresholds: Mapping[str, Sequence[float]] | None = None,
    min_n: int = 30,
    alpha: float = 0.05,
    min_eff_clusters: float = clusters.FEW_EFFECTIVE,
) -> pd.DataFrame:
    """Grade each judge's headline per bias: one row per judge × `LIGHTS` row.

    A bias whose measure does not apply gets `light = "n/a"` with the reason; one with fewer
    than `min_n` units (n) gets `grey` ("too few"); one whose number rests on fewer than
    `min_eff_clusters` effective clusters gets `uncertain` instead of a colour (its interval
    is honest, but a colour would read as settled).

    Args:
        measures: `collect_measures` / `collect` output.
        thresholds: Threshold key → [green limit, amber limit] (`DEFAULT_THRESHOLDS`).
        min_n: Smallest n graded.
        alpha: Level of the tests behind the `TESTED` measures' lights (`tested_light`).
        min_eff_clusters: Fewest effective clusters graded with a colour.

    Returns:
        `source`, `judge`, `bias`, `measure`, `value`, `ci_low`, `ci_high`, `n`, `graded`
        (the quantity compared with the thresholds), `light`, `rule`, `note`.
    """
    thresholds = dict(DEFAULT_THRESHOLDS if thresholds is None else thresholds)
    rules = threshold_table(thresholds).set_index("bias")["rule"]
    head = headlines(measures).set_index(["source", "judge", "measure"])
    judges = measures[["source", "judge"]].drop_duplicates().itertuples(index=False)
    rows = []
    for source, judge in judges:
        for bias, (tkey, measure, how) in LIGHTS.items():
            green, amber = (float(x) for x in thresholds[tkey])
            base = {"source": source, "judge": judge, "bias": bias, "measure": measure}
            key = (source, judge, measure)
            if key not in head.index:
                rows.append({**base, "light": "n/a", "note": "not collected", "n": 0})
                continue
            r = head.loc[key]
            out = {
                **base,
                "value": r["value"],
                "ci_low": r["ci_low"],
                "ci_high": r["ci_high"],
                "n": int(r["n"]),
                "n_eff_clusters": r.get("n_eff_clusters", np.nan),
                "rule": rules[bias],
                "note": r["note"],
            }
            if r["status"] != "ok":
                out["light"] = "n/a"
            elif int(r["n"]) < min_n:
                out["light"] = "grey"
                out["note"] = f"too few to grade (n {int(r['n'])} < {min_n})"
            elif _few_clusters(r, min_eff_clusters):
                out["light"] = "uncertain"
                g = float(r["n_eff_clusters"])
                out["note"] = (
                    f"uncertain: few effective clusters ({g:.1f} < {min_eff_clusters:g}); "
                    f"the interval is the honest answer"
                )
            else:
                graded = _graded(float(r["value"]), how)
                out["graded"] = graded
                out["light"] = traffic_light(
                    graded, green=green, amber=amber, higher_is_better=how == "higher"
                )
                if measure in TESTED:
                    p = float(r["p_value"]) if "p_value" in r.index else float("nan")
                    out["light"], why = tested_light(out["light"], p, alpha)
                    note = r["note"] if isinstance(r["note"], str) else ""
                    out["note"] = "; ".join(x for x in (note, why) if x)
            rows.append(out)
    cols = ["source", "judge", "bias", "measure", "value", "ci_low", "ci_high", "n",
            "n_eff_clusters", "graded", "light", "rule", "note"]  # fmt: skip
    return pd.DataFrame(rows, columns=cols)
