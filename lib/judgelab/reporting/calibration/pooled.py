"""Each check's coverage and type-I error pooled over the scenario grid (a screen that decides).

`make calibrate` fits its hour by running each of the grid's 24 cells at R ≈ 20: a cell's
coverage is then known to ± 10 points, and nearly every cell is *inconclusive*. Pooled over
the cells — 480 replicates per hypothesis per check — the same replicates measure each
estimator's *average* coverage and type-I error over the grid to ± 2 points, and over the
hardest cells (unequal sizes with cluster-varying effects, 6 cells) to ± 4. A pooled pass does
not make every cell pass (an over-covering cell can hide an under-covering one); a pooled fail
shows a real miss. `pooled` runs `harness.summarise` on the replicates relabelled by group, so
the rates, Monte-Carlo intervals and verdicts are computed exactly as per cell.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import pandas as pd

from judgelab.reporting.calibration.harness import Check, summarise

#: Groups of scenarios pooled: every cell, and the hardest shape (unequal and varying).
GROUPS: Mapping[str, str] = {"grid (all cells)": "", "unequal/varying cells": "unequal/varying/"}


def pooled(
    replicates: pd.DataFrame,
    checks: Iterable[Check],
    *,
    alpha: float = 0.05,
    groups: Mapping[str, str] = GROUPS,
) -> pd.DataFrame:
    """Return `summarise`'s rows with `scenario` = a group of cells (scenario name prefix).

    Replicates keep their identity across cells (`r` is renumbered per cell), so `reps` counts
    every replicate pooled; `cells` says how many cells each row pools.
    """
    checks = list(checks)
    frames = []
    for label, prefix in groups.items():
        part = replicates[replicates["scenario"].astype(str).str.startswith(prefix)]
        if part.empty:
            continue
        cell = part.groupby("scenario", sort=False).ngroup().to_numpy()
        span = int(part["r"].max()) + 1
        frame = summarise(
            part.assign(scenario=label, r=cell * span + part["r"]), checks, alpha=alpha
        )
        cells = part.groupby(["check", "variant"])["scenario"].nunique()
        frame["cells"] = [
            cells.get((c, v), 0) for c, v in zip(frame["check"], frame["variant"], strict=True)
        ]
        frames.append(frame)
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


__all__ = ["GROUPS", "pooled"]
