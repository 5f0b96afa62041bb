"""Import-time checks of a pairwise import with gold: per-presentation accuracy and frame traps.

Mapping verdicts to the wrong frame (a file's slots `1`/`2` read as positions `A`/`B`, or a
reversed map) imports without an error but with wrong numbers. Two signatures are looked
for, per judge, among valid verdicts on items with gold (Wilson 95 % intervals, at least
`MIN_N` verdicts in each group):

- *inverted*: among its decisive verdicts (ties left out: a tie is neither frame's pick, and
  a judge that ties 36 % of the time would otherwise look below chance on a correct map),
  accuracy is below chance in both gold-relative orders (the upper bound under 0.5) while
  the judge is consistent across orders (it picks the same response in both orders at least
  half the time): the verdict or gold map is likely reversed;
- *slot/position*: in the source's own frame (`shown_first`), accuracy is above chance when
  one slot is shown first and below chance when the other is: verdicts naming the slot were
  likely mapped as positions, or the other way round (a strong position bias on a gold that
  sits mostly in one slot gives the same figures, so it is a warning, not an error).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from judgelab.core.stats import wilson_interval

MIN_N = 10
_ITEM = ["benchmark", "split", "item_id", "judge", "condition", "sample"]


def _graded(judgments: pd.DataFrame) -> pd.DataFrame:
    j = judgments[judgments["correct"].notna() & judgments["valid"].astype(bool)]
    return j.assign(correct=j["correct"].astype(bool))


def _acc(df: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    g = df.groupby(by, sort=True, dropna=False)["correct"]
    out = pd.DataFrame({"n": g.size(), "correct": g.sum().astype(int)}).reset_index()
    out["accuracy"] = out["correct"] / out["n"]
    low, high = wilson_interval(out["correct"].to_numpy(), out["n"].to_numpy())
    return out.assign(ci_low=low, ci_high=high)


def presentation_accuracy(judgments: pd.DataFrame) -> pd.DataFrame:
    """Accuracy of valid verdicts per judge and source slot shown first (`shown_first`).

    Returns columns judge, shown_first, n, correct, accuracy, ci_low, ci_high (Wilson 95 %);
    empty when the import has no gold or no `shown_first`.
    """
    cols = ["judge", "shown_first", "n", "correct", "accuracy", "ci_low", "ci_high"]
    if judgments is None or "shown_first" not in judgments.columns:
        return pd.DataFrame(columns=cols)
    j = _graded(judgments)
    if j.empty:
        return pd.DataFrame(columns=cols)
    return _acc(j, ["judge", "shown_first"])[cols]


def _consistency(j: pd.DataFrame) -> tuple[float, float, int]:
    """Return (share choosing the same response in both orders, share correct in both, pairs)."""
    wide = j.pivot_table(index=_ITEM, columns="order", values="chosen", aggfunc="first")
    right = j.pivot_table(index=_ITEM, columns="order", values="correct", aggfunc="first")
    if 0 not in wide.columns or 1 not in wide.columns:
        return np.nan, np.nan, 0
    both = wide[[0, 1]].notna().all(axis=1)
    if not both.any():
        return np.nan, np.nan, 0
    same = (wide.loc[both, 0] == wide.loc[both, 1]).mean()
    good = (right.loc[both, 0].astype(bool) & right.loc[both, 1].astype(bool)).mean()
    return float(same), float(good), int(both.sum())


def _fig(row: pd.Series) -> str:
    return f"{row['accuracy']:.3f} (n={int(row['n'])})"


def frame_warnings(judgments: pd.DataFrame | None) -> list[str]:
    """Return one warning per judge whose accuracies look like a wrong verdict frame."""
    if judgments is None or judgments.empty:
        return []
    out: list[str] = []
    graded = _graded(judgments)
    for judge, j in graded.groupby("judge", sort=True):
        decisive = j[j["chosen"] != "tie"]
        by_order = _acc(decisive, ["order"]).set_index("order")
        if {0, 1} <= set(by_order.index) and (by_order["n"] >= MIN_N).all():
            same, both_right, pairs = _consistency(decisive)
            if (by_order["ci_high"] < 0.5).all() and pairs >= MIN_N and same >= 0.5:
                a0, a1 = (_fig(by_order.loc[o]) for o in (0, 1))
                out.append(
                    f"judge {judge!r}: accuracy {a0} with the gold response shown first and "
                    f"{a1} shown second (ties left out), both "
                    f"far below chance, while it picks the same response in both orders "
                    f"{same:.3f} of the time ({pairs} pairs; right in both {both_right:.3f}): "
                    "the verdict or gold map looks reversed"
                )
                continue
        if "shown_first" not in j.columns:
            continue
        shown = _acc(j, ["shown_first"]).set_index("shown_first")
        shown = shown[shown["n"] >= MIN_N]
        if len(shown) == 2 and shown["ci_low"].max() > 0.5 and shown["ci_high"].min() < 0.5:
            hi, lo = shown["accuracy"].idxmax(), shown["accuracy"].idxmin()
            out.append(
                f"judge {judge!r}: accuracy {_fig(shown.loc[hi])} when slot {hi!r} is shown "
                f"first but {_fig(shown.loc[lo])} when slot {lo!r} is: "
                "verdicts that name the slot (1/2) may be mapped as positions (A/B) or the "
                "other way round (or the judge has a strong position bias on a gold that sits "
                "mostly in one slot)"
            )
    return out


__all__ = ["MIN_N", "frame_warnings", "presentation_accuracy"]
