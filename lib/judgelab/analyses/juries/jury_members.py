"""The Fig. 6 (top) bars of one jury: each member's CA beside the jury's, per split."""

from __future__ import annotations

import pandas as pd

from judgelab.analyses import pairwise
from judgelab.analyses.juries.jury_tables import JURY_SEP
from judgelab.core.schema import require_columns as _require


def jury_members_long(table: pd.DataFrame, *, pool: str, jury: str | None = None) -> pd.DataFrame:
    """Return the Fig. 6 (top) bars of one jury: each member's CA and the jury's, per split.

    Args:
        table: A `jury_table` with sizes 1 and the jury's size, one vote rule.
        pool: The pool to show.
        jury: The jury (members joined by " + "); None picks the best pooled jury of the
            largest size.

    Returns:
        Per split (no pooled row): `split`, `who` (a member, or "jury (<rule>)"), `value`,
        `ci_low`, `ci_high`, `n`;
        empty when the pool has no scored jury (e.g. no gold labels).
    """
    _require(table, ["pool", "size", "jury", "split", "ca"], "jury_members_long")
    columns = ["split", "who", "value", "ci_low", "ci_high", "n"]
    data = table[table["pool"] == pool]
    if data.empty:  # no jury could be scored (e.g. a source without gold labels)
        return pd.DataFrame(columns=columns)
    if data["vote_rule"].nunique() > 1:
        raise ValueError("jury_members_long: filter the table to one vote rule first")
    if jury is None:
        big = data[data["size"] == data["size"].max()]
        ref = big[big["aggregation"] == pairwise.POOLED]
        ref = ref if len(ref) else big
        jury = str(ref.sort_values("ca", ascending=False, kind="stable")["jury"].iloc[0])
    members = jury.split(JURY_SEP)
    rule = str(data["vote_rule"].iloc[0])
    parts = []
    for name, who in [(m, m) for m in members] + [(jury, f"jury ({rule})")]:
        part = data[data["jury"] == name]
        if part.empty:
            raise ValueError(f"jury/judge {name!r} not in pool {pool!r}")
        parts.append(part.assign(who=who))
    out = pd.concat(parts, ignore_index=True)
    # members are shown on the jury's items: keep splits where the jury was scored, and no
    # pooled row (a member's pooled row may cover splits the jury was not scored on)
    out = out[out["split"].isin(set(out.loc[out["who"].str.startswith("jury"), "split"]))]
    out = out[out["aggregation"] == "split"]
    out = out.rename(columns={"ca": "value", "ca_low": "ci_low", "ca_high": "ci_high"})
    return out[columns].reset_index(drop=True)
