"""Justification criteria of Contextualized Evaluations (Figure 4, spec 002 §2.6, §4.12).

`justification_shares` gives the shares of surface-level (code 2) and content-level (code 1)
justifications per group, with Wilson intervals and the change of the surface share against
the baseline setting; `parse_codes` reads one coder output.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from judgelab.analyses.contexteval.verdicts import BASELINE, setting_name
from judgelab.core import stats
from judgelab.core.schema import require_columns as _require
from judgelab.errors import check_choice

NORMALIZATIONS = ("share_of_justifications", "share_of_code_mentions")


def parse_codes(text: Any) -> tuple[bool, bool, bool]:
    """Return (content, surface, parse_ok) from a justification-coding output (spec §4.12).

    >>> parse_codes("Codes: 1, 2")
    (True, True, True)
    >>> parse_codes("none")
    (False, False, False)
    """
    digits = set(re.findall(r"\d", text)) if isinstance(text, str) else set()
    content, surface = "1" in digits, "2" in digits
    return content, surface, bool(digits)


def justification_shares(
    coded: pd.DataFrame,
    *,
    by: Sequence[str] = ("source", "setting"),
    normalization: str = "share_of_justifications",
    baseline: str = BASELINE,
    level: float = 0.95,
) -> pd.DataFrame:
    """Return the shares of surface- and content-level justifications (Figure 4, §2.6).

    Args:
        coded: One row per coded justification; needs `codes` (the coder's raw output) and
            the `by` columns (a `setting` may be the repo's id or the paper's name; the
            output names it the paper's way).
        by: Grouping columns (pairs pooled unless `pair` is among them).
        normalization: `share_of_justifications` (% of justifications carrying the code; a
            justification may carry both) or `share_of_code_mentions` (% of all parsed code
            mentions, so surface + content = 100).
        baseline: The setting `delta_surface` is measured against.
        level: Confidence level of the Wilson intervals.

    Returns:
        `by` columns, `n`, `pct_surface`, `pct_content`, `pct_both`, `pct_unparseable`,
        Wilson bounds for surface and content, and `delta_surface` (points vs `baseline`
        within the same other `by` values).
    """
    by = list(by)
    _require(coded, ["codes", *by], "coded justifications")
    check_choice("normalization", normalization, NORMALIZATIONS)
    parsed = [parse_codes(t) for t in coded["codes"]]
    df = coded.assign(
        content=[p[0] for p in parsed], surface=[p[1] for p in parsed], ok=[p[2] for p in parsed]
    )
    if "setting" in by:
        df["setting"] = [setting_name(str(s)) for s in df["setting"]]
    rows = []
    for key, g in df.groupby(by, sort=False):
        key = key if isinstance(key, tuple) else (key,)
        rows.append({**dict(zip(by, key, strict=True)), **_share_row(g, normalization, level)})
    out = pd.DataFrame(rows)
    if out.empty or "setting" not in by:
        return out
    out["delta_surface"] = _delta_surface(out, by, baseline)
    return out


def _share_row(g: pd.DataFrame, normalization: str, level: float) -> dict[str, Any]:
    """Return one group's counts, shares (percent) and Wilson bounds."""
    n = len(g)
    ks, kc = int(g["surface"].sum()), int(g["content"].sum())
    den = n if normalization == "share_of_justifications" else ks + kc
    row: dict[str, Any] = {"n": n, "n_denominator": den}
    for name, k in (("surface", ks), ("content", kc)):
        low, high = stats.wilson_interval(k, den, level=level)
        row[f"pct_{name}"] = 100 * k / den if den else np.nan
        row[f"pct_{name}_low"], row[f"pct_{name}_high"] = 100 * float(low), 100 * float(high)
    row["pct_both"] = 100 * float((g["surface"] & g["content"]).mean())
    row["pct_unparseable"] = 100 * float((~g["ok"]).mean())
    return row


def _delta_surface(out: pd.DataFrame, by: list[str], baseline: str) -> Any:
    """Return each row's surface share minus the baseline setting's, within its other keys."""
    others = [c for c in by if c != "setting"]
    if not others:
        b = out.loc[out["setting"] == baseline, "pct_surface"]
        return out["pct_surface"] - (b.iloc[0] if len(b) else np.nan)
    base = out[out["setting"] == baseline].set_index(others)["pct_surface"]
    keys = list(out[others].itertuples(index=False, name=None))
    keys = [k[0] if len(others) == 1 else k for k in keys]
    return out["pct_surface"].to_numpy() - np.array(
        [base.get(k, np.nan) for k in keys], dtype=float
    )
