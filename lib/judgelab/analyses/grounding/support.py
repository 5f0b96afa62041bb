"""Refusal outside the labelled range: a level estimate only where the human labels reach.

A correction learned from human labels (the PPI rectifier, a calibration map) says nothing
about items whose judge score, or category, no labelled item has: there it can only
extrapolate. `support` counts the unlabelled items outside what the labelled ones cover —
for scores, outside [min, max] of the labelled items' scores; for categories, in a category
no labelled item is in — and `support_reason` turns a non-zero count into the sentence a
notebook shows (`out.applies(...)`) instead of the number. `level_estimates` is
`methods.estimates` behind that check: refused rows carry the reason and the count, never an
extrapolated value.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from judgelab.analyses.grounding import methods, ppi
from judgelab.errors import check_choice

#: What is compared: judge scores (a range) or categories (a set); `auto` picks by dtype.
KINDS = ("auto", "score", "category")


class Support(NamedTuple):
    """How far the labelled items cover the unlabelled ones."""

    n_outside: int
    n_unlabelled: int
    n_labelled: int
    kind: str
    covered: str  # the labelled range "[lo, hi]" or the labelled categories
    reason: str | None  # None when every unlabelled item is covered


def _kind(values: np.ndarray, kind: str) -> str:
    check_choice("kind", kind, KINDS)
    if kind != "auto":
        return kind
    try:
        np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        return "category"
    return "score"


def support(
    labelled: np.ndarray | pd.Series, unlabelled: np.ndarray | pd.Series, *, kind: str = "auto"
) -> Support:
    """Return how many `unlabelled` values fall outside what the `labelled` values cover.

    Args:
        labelled: Judge scores (or categories) of the items with a human label.
        unlabelled: Those of the items the estimate is about but without one.
        kind: `score` (outside the labelled [min, max]), `category` (not among the
            labelled categories) or `auto` (numbers are scores, anything else categories).

    >>> support(np.array([0.2, 0.9]), np.array([0.5, 0.95, 0.1])).n_outside
    2
    >>> support(np.array(["a", "b"]), np.array(["a", "c"])).reason[:40]
    '1 of 2 unlabelled items are in categorie'
    """
    lab = np.asarray(labelled, dtype=object)
    unl = np.asarray(unlabelled, dtype=object)
    k = _kind(np.concatenate([lab, unl]), kind)
    n_l, n_u = len(lab), len(unl)
    if n_l == 0:
        why = f"no labelled item: the {n_u} unlabelled items have nothing to be corrected by"
        return Support(n_u, n_u, 0, k, "", why)
    if k == "score":
        lv, uv = lab.astype(np.float64), unl.astype(np.float64)
        lo, hi = float(np.nanmin(lv)), float(np.nanmax(lv))
        outside = (uv < lo) | (uv > hi)
        n_out, covered = int(outside.sum()), f"[{lo:.4g}, {hi:.4g}]"
        why = (
            f"{n_out} of {n_u} unlabelled items have judge scores outside {covered}, the range "
            f"the {n_l} labelled items cover (lowest outside {np.min(uv[outside]):.4g}, highest "
            f"{np.max(uv[outside]):.4g}); the correction would be extrapolated there — label "
            "some items in that range, or estimate only within it"
            if n_out
            else None
        )
        return Support(n_out, n_u, n_l, k, covered, why)
    cats = {str(v) for v in lab}
    names = np.array([str(v) for v in unl], dtype=object)
    outside = ~np.isin(names, sorted(cats))
    n_out = int(outside.sum())
    missing = sorted(set(names[outside]))
    shown = ", ".join(missing[:5]) + (f" and {len(missing) - 5} more" if len(missing) > 5 else "")
    why = (
        f"{n_out} of {n_u} unlabelled items are in categories no labelled item is in ({shown}); "
        "a correction learned elsewhere would be extrapolated to them — label some of each"
        if n_out
        else None
    )
    return Support(n_out, n_u, n_l, k, ", ".join(sorted(cats)[:10]), why)


def support_reason(
    labelled: np.ndarray | pd.Series, unlabelled: np.ndarray | pd.Series, *, kind: str = "auto"
) -> str | None:
    """Return why a level estimate is refused (`support`), None when the labels cover it."""
    return support(labelled, unlabelled, kind=kind).reason


def level_estimates(
    judge: np.ndarray,
    human: np.ndarray,
    *,
    category: np.ndarray | None = None,
    labelled: np.ndarray | None = None,
    **options: Any,
) -> pd.DataFrame:
    """Return `methods.estimates` rows, or refused rows where the labels do not cover the items.

    The judge scores of the unlabelled items must lie in the labelled items' range, and
    (with `category`) every unlabelled item's category must have a labelled item. Refused
    rows keep the counts and carry NaN estimates, the reason (`refused`) and the number of
    items outside (`n_outside`); accepted rows have `refused` empty and `n_outside` 0.

    Args:
        judge: Judge score of every item (n).
        human: Human label, NaN where unlabelled (n).
        category: Category of every item (None: scores only).
        labelled: Which items count as labelled (default: the human label is present).
        **options: The other arguments of `methods.estimates`.
    """
    f, y, lab = ppi.prepare(judge, human, labelled)
    checks = [support(f[lab, 0], f[~lab, 0], kind="score")]
    if category is not None:
        cat = np.asarray(category, dtype=object)
        if cat.shape != (len(f),):
            raise ValueError(f"category has {cat.shape} entries for {len(f)} items")
        checks.append(support(cat[lab], cat[~lab], kind="category"))
    refused = [c for c in checks if c.reason]
    if not refused:
        table = methods.estimates(f[:, 0], y[:, 0], labelled=lab, **options)
        return table.assign(refused="", n_outside=0)
    wanted = options.get("methods", ppi.METHODS)
    rows = [
        {"method": m, "n_labelled": int(lab.sum()), "n_total": len(f),
         "target": options.get("target", "population")}
        for m in wanted
    ]  # fmt: skip
    table = pd.DataFrame(rows, columns=list(ppi.COLUMNS))
    return table.assign(
        refused="; ".join(c.reason for c in refused),
        n_outside=max(c.n_outside for c in refused),
    )


def replay(
    table: pd.DataFrame,
    *,
    budget: int,
    seed: int = 0,
    judge: str = "judge",
    **options: Any,
) -> pd.DataFrame:
    """Return per judge the PPI++ level estimate with `budget` random labels, or its refusal.

    Per judge of a grounding table, `budget` human labels are drawn at random and
    `level_estimates` gives the PPI++ row or refuses it (the reason, the count outside).
    `options` go to `methods.estimates` (`target`, `n_boot`, …); items' clusters are used.
    """
    rows = []
    for name, g in table.groupby(judge, sort=True):
        g = g.reset_index(drop=True)
        rng = np.random.default_rng([int(seed), len(g)])
        pick = np.zeros(len(g), dtype=bool)
        pick[rng.choice(len(g), size=min(budget, len(g) - 2), replace=False)] = True
        human = np.where(pick, g["human_label"].to_numpy(np.float64), np.nan)
        est = level_estimates(g["judge_label"].to_numpy(np.float64), human,
                              cluster=g["cluster"].to_numpy(dtype=object), seed=seed,
                              methods=("ppi",), **options)  # fmt: skip
        rows.append(est.assign(judge=name, all_human=float(g["human_label"].mean())))
    out = pd.concat(rows, ignore_index=True)
    return out[["judge", *[c for c in out.columns if c != "judge"]]]


__all__ = ["KINDS", "Support", "level_estimates", "replay", "support", "support_reason"]
