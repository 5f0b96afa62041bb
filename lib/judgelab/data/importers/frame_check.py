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

from collections.abc import Callable, Iterable

import numpy as np
import pandas as pd

from judgelab.core.stats import wilson_interval

MIN_N = 10
_ITEM = ["benchmark", "split", "item_id", "judge", "condition", "sample"]
#: The columns the checks (and the import summary) count by: `tally` keeps only these.
TALLY = ("judge", "valid", "correct", "chosen", "order", "shown_first")


def tally(judgments: pd.DataFrame) -> pd.DataFrame:
    """Count the rows of each combination of the `TALLY` columns (`n`): all the checks read.

    A big import is tallied part by part (`add_tallies`), never held whole.
    """
    cols = [c for c in TALLY if c in judgments.columns]
    return judgments.groupby(cols, sort=False, dropna=False).size().rename("n").reset_index()


def add_tallies(parts: Iterable[pd.DataFrame]) -> pd.DataFrame:
    """One tally from the tallies of several parts of a table."""
    parts = list(parts)
    t = pd.concat([p for p in parts if len(p)] or parts[:1], ignore_index=True)
    cols = [c for c in t.columns if c != "n"]
    return t.groupby(cols, sort=False, dropna=False)["n"].sum().reset_index()


def _graded(judgments: pd.DataFrame) -> pd.DataFrame:
    j = judgments[judgments["correct"].notna() & judgments["valid"].astype(bool)]
    return j.assign(correct=j["correct"].astype(bool))


def _acc(t: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """Accuracy per group of the graded tally `t` (Wilson interval)."""
    hits = t.assign(correct=t["n"].where(t["correct"], 0))
    g = hits.groupby(by, sort=True, dropna=False)
    out = pd.DataFrame({"n": g["n"].sum(), "correct": g["correct"].sum().astype(int)})
    out = out.reset_index()
    out["accuracy"] = out["correct"] / out["n"]
    low, high = wilson_interval(out["correct"].to_numpy(), out["n"].to_numpy())
    return out.assign(ci_low=low, ci_high=high)


def presentation_accuracy(judgments: pd.DataFrame) -> pd.DataFrame:
    """Accuracy of valid verdicts per judge and source slot shown first (`shown_first`).

    Returns columns judge, shown_first, n, correct, accuracy, ci_low, ci_high (Wilson 95 %);
    empty when the import has no gold or no `shown_first`.
    """
    return tallied_presentation(None if judgments is None else tally(judgments))


def tallied_presentation(t: pd.DataFrame | None) -> pd.DataFrame:
    """`presentation_accuracy` from the judgments' `tally`."""
    cols = ["judge", "shown_first", "n", "correct", "accuracy", "ci_low", "ci_high"]
    if t is None or "shown_first" not in t.columns:
        return pd.DataFrame(columns=cols)
    j = _graded(t)
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

    def decisive(judge: str) -> pd.DataFrame:
        j = _graded(judgments)
        return j[(j["judge"] == judge) & (j["chosen"] != "tie")]

    return tallied_warnings(tally(judgments), decisive)


def tallied_warnings(t: pd.DataFrame, decisive: Callable[[str], pd.DataFrame]) -> list[str]:
    """`frame_warnings` from the judgments' `tally`.

    `decisive(judge)`: the judge's graded rows without ties, in table order; read only for a
    judge below chance in both orders (the consistency across orders needs the rows).
    """
    out: list[str] = []
    graded = _graded(t)
    for judge, j in graded.groupby("judge", sort=True):
        by_order = _acc(j[j["chosen"] != "tie"], ["order"]).set_index("order")
        if (
            {0, 1} <= set(by_order.index)
            and (by_order["n"] >= MIN_N).all()
            and (by_order["ci_high"] < 0.5).all()
        ):
            same, both_right, pairs = _consistency(decisive(judge))
            if pairs >= MIN_N and same >= 0.5:
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


__all__ = [
    "MIN_N",
    "TALLY",
    "add_tallies",
    "frame_warnings",
    "presentation_accuracy",
    "tallied_presentation",
    "tallied_warnings",
    "tally",
]
