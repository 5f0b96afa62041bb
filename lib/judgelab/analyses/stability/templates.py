"""Template sensitivity: does the verdict change when only the prompt does?

Per judge model (`within`), on the units rated under every one of its prompts (`by`): the
share of units whose verdict is not the same under all prompts — a ratio of sums through
`core.estimates.ratio`, with its clusters — and how many prompts stood behind it. The flip
between one prompt and another is `shift.verdict_shift(by="prompt", within=["model"])`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from judgelab.analyses.stability import units as _units
from judgelab.core import estimates, wild

#: Columns of `template_sensitivity`.
SENSITIVITY_COLUMNS: tuple[str, ...] = ("model", "n_prompts", "prompts", *estimates.FIELDS)


def template_sensitivity(
    judgments: pd.DataFrame,
    *,
    by: str = "prompt",
    within: str = "model",
    prompts: Sequence[str] | None = None,
    label: str | None = None,
    seed: int = 0,
    level: float = 0.95,
    n_boot: int = wild.N_BOOT,
) -> pd.DataFrame:
    """Return, per judge model, the share of units whose verdict changes with the prompt.

    Args:
        judgments: A judgments table (see `units.wide`).
        by: The column naming the prompt (template).
        within: The column naming the judge model held fixed.
        prompts: The prompts compared (None: every prompt of the model); only units rated
            under all of them count.
        label: The label column (default `chosen` for pairwise, else `verdict`).
        seed: Seed of the bootstraps.
        level: Confidence level.
        n_boot: Wild bootstrap replicates.

    Returns:
        `model` (the `within` value), `n_prompts`, `prompts` (comma-joined), then
        `estimates.FIELDS` of the share of units with more than one distinct verdict.
        Models with fewer than two prompts are left out.
    """
    rows = []
    for model, block in judgments.groupby(within, sort=True):
        if prompts is not None:
            block = block[block[by].isin(list(prompts))]
        w = _units.wide(block, by=by, label=label)
        cols = [c for c in w.columns if c not in (*_units.UNIT_KEYS, "cluster")]
        if len(cols) < 2:
            continue
        full = w[w[cols].notna().all(axis=1)]
        if full.empty:
            continue
        changed = (full[cols].nunique(axis=1) > 1).to_numpy(dtype=np.float64)
        e = estimates.ratio(
            changed, np.ones(len(changed)), _units.unit_codes(full), level=level,
            n_boot=n_boot, rng=estimates.seeded(seed, "template", model),
        )  # fmt: skip
        rows.append(
            {"model": model, "n_prompts": len(cols), "prompts": ",".join(cols)} | e.fields()
        )
    return pd.DataFrame(rows, columns=list(SENSITIVITY_COLUMNS))


def template_reason(sensitivity: pd.DataFrame) -> str | None:
    """Return why template sensitivity cannot be shown, None when a model has two prompts."""
    if not sensitivity.empty:
        return None
    return (
        "no judge model was run with two or more prompts on the same items, so no verdict "
        "can be set against another prompt's"
    )
