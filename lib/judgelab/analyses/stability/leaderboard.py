"""Leaderboard stability: does the ranking of the systems move when the judge does?

Input is long: one row per (system, rater, unit) with a numeric `value` (1/0 for a verdict
judged correct, or a score) and the unit's `cluster`; the raters are judges and, where the
corpus has them, the humans (`scores_from_judgments`). A system's score under a rater is the
mean of its values (`core.estimates.ratio`: the restricted wild cluster bootstrap, inverted);
its rank is 1 for the best. The clusters (questions shared by every system) are resampled
together (`core.stats.bootstrap_sums`, rescaled) for what depends on the whole board:
Kendall's τ-b between two raters' scores over the systems (its interval: `tau`), each
system's 95 % rank set and its probability of leading, and P(leader changes) — the share of
resamples in which the rater's leader is not the one it leads with on the full data.

Read P(leader changes) as a forecast of "the sample's leader is not the population's": on
planted truth (`calibration.checks.stability`, R = 200–400 per cell, six systems 0.3 logits
apart) its mean matches that event's frequency within 5 points pooled over the grid (+3.7
[3.1, 4.2]) and at n = 48–100, but over-forecasts by 5–8 points at n = 240–250, where the
resamples' extra noise separates close systems less than the sample does.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pandas as pd

from judgelab.analyses.stability import tau
from judgelab.analyses.stability.tau import kendall_tau_b
from judgelab.core import clusters, estimates, stats, wild
from judgelab.core.schema import meta_field, require_columns
from judgelab.errors import check_choice

#: The rater name of the human labels in `scores_from_judgments`.
HUMANS = "humans"


class Leaderboard(NamedTuple):
    """The three tables of `leaderboard_stability`."""

    board: pd.DataFrame  # rater × system: score, interval, rank, rank set, P(lead)
    taus: pd.DataFrame  # rater pair: Kendall's τ-b with its interval
    leaders: pd.DataFrame  # rater: leader, P(leader changes)


def scores_from_judgments(
    judgments: pd.DataFrame,
    items: pd.DataFrame,
    *,
    system: str,
    positive: str | None = None,
    human: str | None = None,
) -> pd.DataFrame:
    """Return the long (system, rater, unit, value) table a leaderboard is read from.

    Args:
        judgments: A judgments table (sample 0 and valid rows are used).
        items: Its items table (`cluster`, and `meta` / the `human` column when used).
        system: Where each item's system is named: a judgments column (e.g. `split`) or
            `meta.<key>` of the items (e.g. `meta.candidate_model`).
        positive: The verdict counted as 1 (e.g. `Correct`; None: the verdict is a number).
        human: An items column holding the human label (compared with `positive`): adds
            the rater `humans`, on the items the judgments cover.

    Returns:
        `system`, `rater` (the judge, or `humans`), `benchmark`, `split`, `item_id`,
        `cluster`, `value`.
    """
    keys = ["benchmark", "split", "item_id"]
    require_columns(judgments, [*keys, "judge", "verdict"], "scores_from_judgments")
    rows = judgments
    if "valid" in rows.columns:
        rows = rows[rows["valid"].fillna(False).astype(bool)]
    if "sample" in rows.columns:
        rows = rows[rows["sample"].fillna(0).astype(int) == 0]
    item_cols = [*keys, "cluster"] if "cluster" in items.columns else keys
    base = items[item_cols].copy()
    if system.startswith("meta."):
        base["system"] = meta_field(items["meta"], system.removeprefix("meta.")).to_numpy()
    if human is not None:
        require_columns(items, [human], "scores_from_judgments")
        base["_human"] = items[human].to_numpy()
    merged = rows[
        [*keys, "judge", "verdict", *([system] if system in rows and system not in keys else [])]
    ].merge(base, on=keys, how="inner")
    if not system.startswith("meta."):
        merged["system"] = merged[system]
    merged["value"] = _values(merged["verdict"], positive)
    out = merged.rename(columns={"judge": "rater"})
    parts = [out]
    if human is not None:  # the humans rate the items the judges were read on
        judged = base.merge(rows[keys].drop_duplicates(), on=keys, how="inner")
        hum = judged.drop_duplicates(keys).assign(rater=HUMANS)
        hum["value"] = _values(hum["_human"], positive)
        parts.append(hum)
    full = pd.concat(parts, ignore_index=True)
    if "cluster" not in full.columns:
        full["cluster"] = None
    full = full[full["value"].notna() & full["system"].notna()]
    cols = ["system", "rater", *keys, "cluster", "value"]
    return full[cols].reset_index(drop=True)


def _values(labels: pd.Series, positive: str | None) -> pd.Series:
    if positive is None:
        return pd.to_numeric(labels, errors="coerce")
    return (labels.astype(str) == positive).astype(float).where(labels.notna())


def ranks(scores: np.ndarray) -> np.ndarray:
    """Return ranks along the last axis, 1 = highest score, ties sharing their mean rank.

    >>> ranks(np.array([0.2, 0.9, 0.2])).tolist()
    [2.5, 1.0, 2.5]
    """
    s = np.asarray(scores, dtype=np.float64)
    above = (s[..., None, :] > s[..., :, None]).sum(axis=-1)
    ties = (s[..., None, :] == s[..., :, None]).sum(axis=-1)
    return above + (ties + 1) / 2.0


def leaderboard_stability(
    scores: pd.DataFrame,
    *,
    reference: str | None = HUMANS,
    seed: int = 0,
    level: float = 0.95,
    n_boot: int = 999,
    n_boot_wild: int = wild.N_BOOT,
    tau_interval: str = "extended",
) -> Leaderboard:
    """Return each rater's board, Kendall's τ between raters and P(leader changes).

    Args:
        scores: `system`, `rater`, `cluster`, `value` (see `scores_from_judgments`); every
            rater should score every system (a system a rater did not score is left out of
            its board rows and of its τ; two raters with under two systems in common get
            no τ row).
        reference: The rater every other is compared with in `taus` first (its rows come
            first; None or absent: only rater pairs in name order). Every pair is reported.
        seed: Seed of the bootstraps.
        level: Confidence level.
        n_boot: Cluster bootstrap resamples for τ, rank sets and P(leader changes).
        n_boot_wild: Wild bootstrap replicates of each score's interval.
        tau_interval: τ's interval (`stability.tau`): `extended` (default: the percentile
            interval, its end away from 0 moved out to the projection's), `projection` (the
            τ range the unsettled system pairs leave open; wide) or `percentile` (of the
            resampled sample τ-b; misses a population τ near 1 where systems are close).

    Returns:
        A `Leaderboard`: `board` (`rater`, `system`, `estimates.FIELDS` of the score,
        `rank`, `rank_low`, `rank_high`, `p_lead`), `taus` (`rater_1`, `rater_2`, `tau`,
        `ci_low`, `ci_high`, `n_systems`, `n_clusters`, `n_eff_clusters`, `few_clusters`,
        `method`), `leaders` (`rater`, `leader`, `p_leader_changes`, `runner_up`, `n_boot`).
    """
    require_columns(scores, ["system", "rater", "cluster", "value"], "leaderboard_stability")
    check_choice("tau_interval", tau_interval, tau.TAU_INTERVALS)
    systems = sorted(scores["system"].astype(str).unique())
    raters = sorted(scores["rater"].astype(str).unique())
    if reference in raters:
        raters = [reference, *[r for r in raters if r != reference]]
    S, R = len(systems), len(raters)
    codes = clusters.codes(scores)
    G = int(codes.max()) + 1 if len(codes) else 0
    si = pd.Categorical(scores["system"].astype(str), categories=systems).codes.astype(np.int64)
    ri = pd.Categorical(scores["rater"].astype(str), categories=raters).codes.astype(np.int64)
    value = scores["value"].to_numpy(dtype=np.float64)
    cell = si * R + ri
    per = np.zeros((G, 2 * S * R))
    np.add.at(per, (codes, cell), value)
    np.add.at(per, (codes, S * R + cell), 1.0)
    tot_num, tot_den = per[:, : S * R].sum(0), per[:, S * R :].sum(0)
    point = stats.ratio_replicates(tot_num, tot_den).reshape(S, R).T  # R × S
    reps = stats.bootstrap_sums(per, n_boot=n_boot, rng=stats.rng_for(seed, "board"))
    boot = stats.ratio_replicates(reps[:, : S * R], reps[:, S * R :]).reshape(n_boot, S, R)
    boot = boot.transpose(0, 2, 1)  # B × R × S
    fitted = point.T.ravel()[cell]
    n_eff = clusters.effective(np.ones(len(codes)), codes, resid=value - fitted) if G else 0.0
    few = bool(n_eff < clusters.FEW_EFFECTIVE)
    board = _board(scores, systems, raters, point, boot, codes, seed, level, n_boot_wild)
    taus = _taus(raters, point, boot, G, n_eff, few, level, n_boot, tau_interval)
    leaders = _leaders(raters, systems, point, boot, n_boot)
    return Leaderboard(board, taus, leaders)


def _board(scores, systems, raters, point, boot, codes, seed, level, n_boot_wild):
    rk_point = ranks(point)
    rk_boot = ranks(np.nan_to_num(boot, nan=-np.inf))
    lo, hi = stats.percentile_interval(rk_boot, level=level)
    lead = (rk_boot == rk_boot.min(axis=-1, keepdims=True)).mean(axis=0)
    sys_col = scores["system"].astype(str).to_numpy()
    rat_col = scores["rater"].astype(str).to_numpy()
    value = scores["value"].to_numpy(dtype=np.float64)
    span = (np.nanmin(value), np.nanmax(value)) if len(value) else (0.0, 1.0)
    bounds = (0.0, 1.0) if span[0] >= 0 and span[1] <= 1 else None
    rows = []
    for r, rater in enumerate(raters):
        for s, system in enumerate(systems):
            m = (sys_col == system) & (rat_col == rater)
            if not m.any():  # a rater that did not score this system (e.g. its own anchor)
                continue
            est = estimates.ratio(
                value[m], np.ones(int(m.sum())), codes[m], level=level, n_boot=n_boot_wild,
                bounds=bounds, rng=estimates.seeded(seed, "board", rater, system),
            )  # fmt: skip
            rows.append(
                {"rater": rater, "system": system}
                | est.fields()
                | {"rank": rk_point[r, s], "rank_low": np.floor(lo[r, s])}
                | {"rank_high": np.ceil(hi[r, s]), "p_lead": lead[r, s]}
            )
    return pd.DataFrame(rows)


def _taus(raters, point, boot, G, n_eff, few, level, n_boot, method):
    rows = []
    for i in range(len(raters)):
        for j in range(i + 1, len(raters)):
            ok = np.isfinite(point[i]) & np.isfinite(point[j])
            if ok.sum() < 2:  # no system pair both raters scored: no τ
                continue
            two_point = point[[i, j]][:, ok]
            two_boot = boot[:, [i, j]][:, :, ok]
            sample = float(kendall_tau_b(two_point[0], two_point[1]))
            pairs = ""
            if method != "percentile":
                proj_lo, proj_hi, open_ = tau.projection_interval(two_point, two_boot, level=level)
                pairs = f"{open_} of {int(ok.sum()) * (int(ok.sum()) - 1) // 2} pairs unsettled"
            if method == "projection":
                lo, hi = proj_lo, proj_hi
                how = f"projection of simultaneous pair orders ({pairs}; B={n_boot})"
            elif method == "extended":
                pct = tau.percentile_interval(two_boot, level=level)
                lo, hi = tau.extended_interval(sample, pct, (proj_lo, proj_hi))
                how = f"percentile, far end to the projection's ({pairs}; B={n_boot})"
            else:
                lo, hi = tau.percentile_interval(two_boot, level=level)
                how = f"percentile cluster bootstrap (rescaled, B={n_boot})"
            rows.append(
                {"rater_1": raters[i], "rater_2": raters[j]}
                | {"tau": sample}
                | {"ci_low": lo, "ci_high": hi, "n_systems": int(ok.sum())}
                | {"n_clusters": G, "n_eff_clusters": n_eff, "few_clusters": few}
                | {"method": how}
            )
    cols = ["rater_1", "rater_2", "tau", "ci_low", "ci_high", "n_systems", "n_clusters"]
    return pd.DataFrame(rows, columns=[*cols, "n_eff_clusters", "few_clusters", "method"])


def _leaders(raters, systems, point, boot, n_boot):
    rows = []
    for r, rater in enumerate(raters):
        order = np.argsort(-np.nan_to_num(point[r], nan=-np.inf), kind="stable")
        top = int(order[0])
        best = np.nanargmax(np.nan_to_num(boot[:, r], nan=-np.inf), axis=-1)
        rows.append(
            {
                "rater": rater,
                "leader": systems[top],
                "runner_up": systems[int(order[1])] if len(order) > 1 else None,
                "p_leader_changes": float(np.mean(best != top)),
                "n_boot": n_boot,
            }
        )
    return pd.DataFrame(rows)


def tau_table(board: Leaderboard, *, reference: str = HUMANS) -> pd.DataFrame:
    """Return the τ rows that compare each rater with `reference` (rater_2 = the other)."""
    t = board.taus
    one = t[t["rater_1"] == reference]
    two = t[t["rater_2"] == reference].rename(columns={"rater_1": "rater_2", "rater_2": "rater_1"})
    return pd.concat([one, two], ignore_index=True).sort_values("tau", ascending=False)


def leaderboard_reason(scores: pd.DataFrame, *, min_systems: int = 3) -> str | None:
    """Return why no leaderboard can be ranked, None when one rater scores enough systems."""
    if not scores.empty and scores.groupby("rater")["system"].nunique().max() >= min_systems:
        return None
    return (
        f"no rater scored at least {min_systems} systems on shared items, so there is no "
        "ranking to compare; a benchmark with several graded systems (exam-takers, models "
        "against one baseline) shows it"
    )
