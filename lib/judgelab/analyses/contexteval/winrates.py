"""Win rates by majority vote and rank flips of Contextualized Evaluations (Table 6, §2.5, §3.8).

- `win_rates`: per source, pair and setting, the majority win rates of each candidate and Tie
  with Wilson intervals (examples without a majority excluded and counted);
- `rank_flips`: the leader per setting and whether it flips against the baseline, with an
  exact sign test and the bootstrap probability of a flip ([X]);
- `leaders_by_source`: the leaders of each evaluator type side by side.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from judgelab.analyses.contexteval.verdicts import BASELINE, LABELS, SETTINGS, candidates
from judgelab.core import stats
from judgelab.core.schema import require_columns as _require


def win_rates(examples: pd.DataFrame, *, level: float = 0.95) -> pd.DataFrame:
    """Return win rates by majority vote per source, pair and setting (Table 6, §2.5).

    Examples without a majority label (share <= 0.5) are excluded and counted.

    Returns:
        `source, pair, candidate_1, candidate_2, setting, n_majority` (|M|), `n_excluded`,
        `n_c1, n_c2, n_tie` (majority counts), `wr_c1, wr_c2, wr_tie` (percent of |M|) with
        Wilson intervals `*_low`, `*_high`, and `margin` = wr_c1 - wr_c2.
    """
    _require(examples, ["source", "pair", "setting", "majority_label"], "examples")
    rows = []
    for (source, pair, setting), g in examples.groupby(["source", "pair", "setting"], sort=False):
        maj = g["majority_label"].dropna()
        n = len(maj)
        c1, c2 = candidates(str(pair))
        row = {
            "source": source,
            "pair": pair,
            "candidate_1": c1,
            "candidate_2": c2,
            "setting": setting,
            "n_majority": n,
            "n_excluded": len(g) - n,
        }
        for lab, name in zip(LABELS, ("c1", "c2", "tie"), strict=True):
            k = int((maj == lab).sum())
            low, high = stats.wilson_interval(k, n, level=level)
            row[f"n_{name}"] = k
            row[f"wr_{name}"] = 100 * k / n if n else np.nan
            row[f"wr_{name}_low"], row[f"wr_{name}_high"] = 100 * float(low), 100 * float(high)
        row["margin"] = row["wr_c1"] - row["wr_c2"]
        rows.append(row)
    out = pd.DataFrame(rows)
    if len(out):
        out["_o"] = [SETTINGS.index(s) if s in SETTINGS else 99 for s in out["setting"]]
        out = out.sort_values(["source", "pair", "_o"], kind="stable").drop(columns="_o")
    return out.reset_index(drop=True)


def _leader(c1: str, c2: str, margin: float) -> str:
    if not np.isfinite(margin) or margin == 0:
        return "none"
    return c1 if margin > 0 else c2


def rank_flips(
    examples: pd.DataFrame,
    *,
    baseline: str = BASELINE,
    n_boot: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> pd.DataFrame:
    """Return leaders and rank flips against `baseline` per source and pair (Table 6, §3.8).

    The leader is the candidate with the higher majority win rate ("none" on equal rates); a
    flip is a leader different from the baseline's. [X] additions: an exact sign test of
    C1 vs C2 majority wins, and the bootstrap probability of a flip (examples of both
    settings resampled independently, `n_boot` times).

    Returns:
        The `win_rates` columns plus `leader`, `baseline_leader`, `delta_margin`,
        `delta_tie` (points vs the baseline), `flipped`, `sign_p`, `p_flip`.
    """
    rates = win_rates(examples, level=level)
    if rates.empty:
        return rates
    margins = _margin_signs(examples, n_boot=n_boot, seed=seed)
    out = []
    for _, r in rates.iterrows():
        base = rates[
            (rates["source"] == r["source"])
            & (rates["pair"] == r["pair"])
            & (rates["setting"] == baseline)
        ]
        row = r.to_dict()
        row["leader"] = _leader(r["candidate_1"], r["candidate_2"], r["margin"])
        row["sign_p"] = stats.sign_test(int(r["n_c1"]), int(r["n_c1"] + r["n_c2"])).p_value
        row.update(_flip(r, row["leader"], base, margins, baseline))
        out.append(row)
    return pd.DataFrame(out)


def _margin_signs(examples: pd.DataFrame, *, n_boot: int, seed: int) -> dict[tuple, np.ndarray]:
    """Return per (source, pair, setting) the sign of C1 − C2 majority wins in each resample."""
    ex = examples[examples["majority_label"].notna()]
    margins: dict[tuple, np.ndarray] = {}
    for key, g in ex.groupby(["source", "pair", "setting"], sort=False):
        onehot = np.column_stack([(g["majority_label"] == lab).to_numpy(float) for lab in LABELS])
        sums = stats.bootstrap_sums(onehot, n_boot=n_boot, rng=stats.rng_for(seed, *key))
        margins[key] = np.sign(sums[:, 0] - sums[:, 1])
    return margins


def _flip(
    r: pd.Series,
    leader: str,
    base: pd.DataFrame,
    margins: dict[tuple, np.ndarray],
    baseline: str,
) -> dict[str, Any]:
    """Return a cell's baseline leader, deltas against the baseline, flip and P(flip)."""
    if base.empty:
        return {
            "baseline_leader": None,
            "delta_margin": np.nan,
            "delta_tie": np.nan,
            "flipped": None,
            "p_flip": np.nan,
        }
    b = base.iloc[0]
    baseline_leader = _leader(b["candidate_1"], b["candidate_2"], b["margin"])
    ks = (r["source"], r["pair"], r["setting"])
    kb = (r["source"], r["pair"], baseline)
    return {
        "baseline_leader": baseline_leader,
        "delta_margin": r["margin"] - b["margin"],
        "delta_tie": r["wr_tie"] - b["wr_tie"],
        "flipped": bool(leader != baseline_leader),
        "p_flip": (
            float(np.mean(margins[ks] != margins[kb]))
            if ks in margins and kb in margins and r["setting"] != baseline
            else (0.0 if r["setting"] == baseline else np.nan)
        ),
    }


def leaders_by_source(flips: pd.DataFrame) -> pd.DataFrame:
    """Return the leader per pair and setting side by side for each evaluator type.

    Returns:
        One row per `pair, setting`; a `leader_<source>` column per source, and `agree`
        (True when every source names the same leader).
    """
    _require(flips, ["source", "pair", "setting", "leader"], "flips")
    wide = flips.pivot_table(
        index=["pair", "setting"], columns="source", values="leader", aggfunc="first", sort=False
    )
    wide.columns = [f"leader_{c}" for c in wide.columns]
    wide["agree"] = wide.nunique(axis=1, dropna=False) == 1
    return wide.reset_index()
