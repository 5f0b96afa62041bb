"""The pairs behind a probe cell: which verdicts a probe moved, for the explorer.

`cell_cases(pairs, judge=..., probe=..., kind=...)` returns one row per judge × original
item × probe × arm (both orders side by side) whose verdict the probe moved in the `kind`
way (`KINDS`): `toward` (in some order the control did not pick the probed response and the
variant does), `away` (the reverse), `changed` (the verdict differs in some order),
`unchanged` (the same valid verdicts in both orders). `reporting.explore.probe_cases` renders
them with the texts and raw outputs.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from judgelab.analyses.probes.effects import ALL, PAIR_COLUMNS, VALID
from judgelab.analyses.probes.variants import variant_id
from judgelab.core.schema import require_columns
from judgelab.errors import check_choice

KINDS = ("toward", "away", "changed", "unchanged")
_UNIT = ["judge", "condition", "sample", "benchmark", "split", "orig_item_id", "probe"]


def cell_cases(
    pairs: pd.DataFrame, *, judge: str | None = None, probe: str = ALL, kind: str = "toward"
) -> pd.DataFrame:
    """Return the arms whose verdicts `probe` moved the `kind` way (module docstring).

    Returns:
        One row per judge × condition × sample × original item × probe × arm: the keys,
        `probe_target`, `item_id` (the variant's id), `control_0`, `control_1`,
        `variant_0`, `variant_1` (per order; null when that order is absent).
    """
    require_columns(pairs, PAIR_COLUMNS, "cell_cases needs probe_pairs(...) output;")
    check_choice("kind", kind, KINDS)
    p = pairs[~pairs["noop"].to_numpy(dtype=bool)]
    if judge is not None:
        p = p[p["judge"] == judge]
    if probe != ALL:
        p = p[p["probe"] == probe]
    c, v, t = (p[k].to_numpy(dtype=object) for k in ("control", "variant", "probe_target"))
    valid = np.isin(c, VALID) & np.isin(v, VALID)
    flags = pd.DataFrame(
        {
            "toward": valid & (c != t) & (v == t),
            "away": valid & (c == t) & (v != t),
            "changed": valid & (c != v),
            "invalid": ~valid,
        },
        index=p.index,
    )
    keys = [*_UNIT, "probe_target"]
    per = flags.groupby([p[k] for k in keys], sort=False).any()
    if kind == "unchanged":
        keep = ~per["changed"] & ~per["invalid"]
    else:
        keep = per[kind]
    chosen = per.index[keep.to_numpy(dtype=bool)]
    sub = p.set_index(keys).loc[chosen].reset_index() if len(chosen) else p.iloc[0:0]
    wide = sub.pivot_table(
        index=keys, columns="order", values=["control", "variant"], aggfunc="first"
    )
    wide.columns = [f"{a}_{b}" for a, b in wide.columns]
    out = wide.reset_index()
    for col in ("control_0", "control_1", "variant_0", "variant_1"):
        if col not in out.columns:
            out[col] = None
    out["item_id"] = [
        variant_id(i, pr, tg)
        for i, pr, tg in zip(out["orig_item_id"], out["probe"], out["probe_target"], strict=True)
    ]
    return out


__all__ = ["KINDS", "cell_cases"]
