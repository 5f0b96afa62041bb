"""Plans for several judges of a pilot source at once (what notebook 17 shows)."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from judgelab.analyses.design import pilot, planner


def _judges(judgments: pd.DataFrame, judges: Sequence[str]) -> list[str]:
    have = sorted(set(judgments["judge"]))
    if not judges:
        return have
    missing = [j for j in judges if j not in have]
    if missing:
        raise ValueError(f"judges {missing} are not in the pilot (has: {', '.join(have[:20])})")
    return list(judges)


def position_pilots(judgments: pd.DataFrame, judges: Sequence[str] = ()) -> pd.DataFrame:
    """One row of `pilot.position` figures per judge."""
    rows = [
        {"judge": j, **pilot.position(judgments[judgments["judge"] == j])}
        for j in _judges(judgments, judges)
    ]
    return pd.DataFrame(rows)


def rate_pilots(judgments: pd.DataFrame, judges: Sequence[str] = ()) -> pd.DataFrame:
    """One row of `pilot.rate` figures (of `correct`) per judge."""
    rows = [
        {"judge": j, **pilot.rate(judgments[judgments["judge"] == j])}
        for j in _judges(judgments, judges)
    ]
    return pd.DataFrame(rows)


def position_plans(
    pilots: pd.DataFrame,
    delta: float,
    *,
    judgments: pd.DataFrame | None = None,
    **kwargs,
) -> pd.DataFrame:
    """`planner.position_bias_plan` for each judge's pilot row (a `judge` column first).

    With the pilot's `judgments` every plan is verified by replaying that judge's
    judgments (`verify.replay`; `reps`, `seed` in `kwargs`).
    """
    frames = []
    for _, row in pilots.iterrows():
        own = None if judgments is None else judgments[judgments["judge"] == row["judge"]]
        plan = planner.position_bias_plan(delta, pilot=row.to_dict(), judgments=own, **kwargs)
        frames.append(plan.assign(judge=row["judge"]))
    return _judge_first(pd.concat(frames, ignore_index=True))


def power_curves(pilots: pd.DataFrame, delta: float, ns: Sequence[int], **kwargs) -> pd.DataFrame:
    """Power against items for each judge's pilot, both orders and one random order."""
    frames = []
    for _, row in pilots.iterrows():
        for both in (True, False):
            curve = planner.power_curve(ns, delta, pilot=row.to_dict(), both_orders=both, **kwargs)
            label = "both orders" if both else "one random order"
            frames.append(curve.assign(judge=row["judge"], design=label))
    return _judge_first(pd.concat(frames, ignore_index=True))


def rate_plans(pilots: pd.DataFrame, widths: Sequence[float], **kwargs) -> pd.DataFrame:
    """`planner.rate_plan` for each judge's rate pilot."""
    frames = [
        planner.rate_plan(widths, pilot=row.to_dict(), **kwargs).assign(judge=row["judge"])
        for _, row in pilots.iterrows()
    ]
    return _judge_first(pd.concat(frames, ignore_index=True))


def label_plans(labels: pd.DataFrame, width: float, n_total: int, **kwargs) -> pd.DataFrame:
    """`planner.human_labels_plan` for each judge of a `pilot.labels` table.

    A rate the pilot saw as 0 or 1 (no false positive among few negatives) is planned at
    1 % / 99 %, since a width cannot be planned for a rate with no variance.
    """
    frames = []
    for _, row in labels.dropna(subset=["corr", "fpr"]).iterrows():
        plan = planner.human_labels_plan(
            width,
            p_o=_inside(row["p_o"]),
            p_e=_inside(row["p_e"]),
            error_rate=_inside(row["fpr"]),
            prevalence=_inside(1 - row["human_rate"]),
            var_y=row["var_y"],
            corr=row["corr"],
            n_total=n_total,
            **kwargs,
        )
        frames.append(plan.assign(judge=row["judge"]))
    return _judge_first(pd.concat(frames, ignore_index=True)) if frames else pd.DataFrame()


def _inside(p: float, eps: float = 0.01) -> float:
    return float(min(max(p, eps), 1 - eps))


def _judge_first(df: pd.DataFrame) -> pd.DataFrame:
    return df[["judge", *[c for c in df.columns if c != "judge"]]]


__all__ = [
    "label_plans",
    "position_pilots",
    "position_plans",
    "power_curves",
    "rate_pilots",
    "rate_plans",
]
