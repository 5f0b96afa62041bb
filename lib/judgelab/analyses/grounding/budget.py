"""Label-budget curves: how wide each method's interval is, and how often it covers, at n labels.

For a table where every item carries a human label (UMass TriviaQA judges, say), the truth is
the all-human value (the mean of every human label, or its win-rate ratio), and a study with a
budget of n labels is replayed `reps` times: n items drawn at random without replacement
(whole clusters, drawn in random order until n items are reached, when `cluster_col` is
given) keep their human label, the rest keep only the judge's. Each replay runs every method
of `compare` and the curve reports, per budget × method, the mean interval width and the
coverage of the truth, each with its Monte-Carlo standard error, and the replays behind them.

The truth is the mean of these items, so the intervals that match it are those of the
`items` target (the default: finite-population intervals for labels drawn one by one, or by
whole clusters when `cluster_col` is given). With `target="population"` the intervals aim at
the super-population the items came from, a wider target: against the all-human value they
over-cover, more so as the budget nears the table's size.
Budgets below 2 or above n_items − 2 are left out (PPI needs unlabelled items).

Without clusters the replays are one matrix product (a labelled-mask matrix times the
per-item moment rows) and one vectorised `ppi.solve`; with clusters each replay runs
`methods.estimates` (the wild cluster bootstrap for the population, `n_boot` replicates).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from judgelab.analyses.grounding import intervals, ppi
from judgelab.analyses.grounding import methods as _methods
from judgelab.core import inference, stats
from judgelab.errors import check_choice

#: Columns of a budget curve.
COLUMNS = (
    "budget",
    "method",
    "reps",
    "n_labelled",
    "mean_width",
    "width_se",
    "coverage",
    "coverage_se",
    "mean_estimate",
    "rmse",
    "truth",
    "interval",
)


def _masks(rng: np.random.Generator, units: np.ndarray, budget: int, reps: int) -> np.ndarray:
    """Return (reps × n) 0/1 labelled masks: `budget` items, or whole units up to `budget`."""
    n_units = int(units.max()) + 1
    if n_units == len(units):
        keys = rng.random((reps, len(units)))
        chosen = np.argpartition(keys, budget - 1, axis=1)[:, :budget]
        mask = np.zeros((reps, len(units)))
        np.put_along_axis(mask, chosen, 1.0, axis=1)
        return mask
    sizes = np.bincount(units, minlength=n_units)
    order = np.argsort(rng.random((reps, n_units)), axis=1)
    before = np.cumsum(sizes[order], axis=1) - sizes[order]
    take = np.zeros((reps, n_units), dtype=bool)
    np.put_along_axis(take, order, before < budget, axis=1)
    return take[:, units].astype(np.float64)


def _jackknifed(
    masks: np.ndarray,
    sums: np.ndarray,
    lab_rows: np.ndarray,
    unl_rows: np.ndarray,
    k: int,
    *,
    lam: float | str,
    ratio: bool,
    target: str,
    chunk_cells: int = 4_000_000,
) -> dict[str, np.ndarray]:
    """Return the jackknife variance of `ppi.JACKKNIFED` methods in every replay.

    Items are drawn one by one: the deletions are the labelled items (`items`) or every item
    (`population`); replays are processed in chunks of about `chunk_cells` numbers.
    """
    R, n = masks.shape
    p = lab_rows.shape[1]
    lab = masks.astype(bool)
    out = {m: np.empty(R) for m in ppi.JACKKNIFED}
    per = n if target == "population" else int(lab[0].sum())
    step = max(1, chunk_cells // max(1, per * p))
    for start in range(0, R, step):
        sl = slice(start, min(R, start + step))
        if target == "items":
            idx = np.argsort(~lab[sl], axis=1, kind="stable")[:, :per]
            dele = sums[sl, None, :] - (lab_rows - unl_rows)[idx]
            fpc = 1.0 - per / n
        else:
            rows = np.where(lab[sl, :, None], lab_rows[None], unl_rows[None])
            dele = sums[sl, None, :] - rows
            fpc = 1.0
        var = intervals.jackknife(sums[sl], dele, k, lam=lam, ratio=ratio, target=target, fpc=fpc)
        for m in ppi.JACKKNIFED:
            out[m][sl] = var[m]
    return out


def _intervals(
    fits: dict,
    sums: np.ndarray,
    *,
    binary: dict[str, bool],
    ratio: bool,
    level: float,
    target: str,
    n_lab: int,
    jack: dict[str, np.ndarray] | None = None,
) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Return {method: (θ, low, high)} over replays.

    The jackknife t (n_lab − 1 df) for the PPI rows given `jack`, Wilson for 0/1 rates, else
    z (finite t for the items target).
    """
    z = ppi.z_quantile(level)
    zt = ppi.z_quantile(level, max(n_lab - 1, 1))
    wilson = ppi.wilson_counts(sums, 1 + int(ratio), ratio=ratio, target=target)
    out = {}
    for method in ppi.METHODS:
        theta, var = fits[method][0], fits[method][1]
        if jack is not None and method in jack:
            se = np.sqrt(jack[method])
            low, high = theta - zt * se, theta + zt * se
        elif binary.get(method, False):
            low, high = stats.wilson_interval(*wilson[method], level=level)
        else:
            q = zt if target == "items" and method != "naive" else z
            se = np.sqrt(np.where(var >= 0, var, np.nan))
            low, high = theta - q * se, theta + q * se
        out[method] = (theta, low, high)
    return out


def _replayed(
    masks: np.ndarray,
    f: np.ndarray,
    y: np.ndarray,
    units: np.ndarray,
    *,
    ratio: bool,
    options: dict[str, Any],
    rng: np.random.Generator,
) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Return {method: (θ, low, high)} over replays, each running `methods.estimates`."""
    reps = len(masks)
    seeds = rng.integers(0, 2**31 - 1, size=reps)
    out = {m: (np.empty(reps), np.empty(reps), np.empty(reps)) for m in ppi.METHODS}
    for r, mask in enumerate(masks):
        lab = mask.astype(bool)
        human = np.where(lab[:, None], y, np.nan)
        table = _methods.estimates(f, human, cluster=units, ratio=ratio, seed=int(seeds[r]),
                                   **options)  # fmt: skip
        for i, method in enumerate(table["method"]):
            row = table.iloc[i]
            for j, col in enumerate(("estimate", "ci_low", "ci_high")):
                out[method][j][r] = row[col]
    return out


def _summary(budget: int, n_lab: float, fits: dict, truth: float, how: str) -> list[dict]:
    rows = []
    for method, (theta, low, high) in fits.items():
        reps = len(theta)
        width = high - low
        covered = np.where(np.isfinite(width), (low <= truth) & (truth <= high), False)
        cov = float(covered.mean())
        ok = np.isfinite(width)
        rows.append(
            {
                "budget": budget,
                "method": method,
                "reps": reps,
                "n_labelled": n_lab,
                "mean_width": float(width[ok].mean()) if ok.any() else np.nan,
                "width_se": float(width[ok].std(ddof=1) / np.sqrt(ok.sum()))
                if ok.sum() > 1
                else np.nan,
                "coverage": cov,
                "coverage_se": inference.mc_se(cov, reps),
                "mean_estimate": float(np.nanmean(theta)),
                "rmse": float(np.sqrt(np.nanmean((theta - truth) ** 2))),
                "truth": truth,
                "interval": how,
            }
        )
    return rows


def budget_curve(
    df: pd.DataFrame,
    judge_col: str,
    human_col: str,
    *,
    cluster_col: str | None = None,
    budgets: Sequence[int] = (25, 50, 100, 200, 400, 800),
    reps: int = 200,
    seed: int = 0,
    truth: float | None = None,
    level: float = 0.95,
    lambda_: float | str = "tuned",
    kind: str = "auto",
    ties: str = "half",
    outcomes: Sequence[str] = _methods.OUTCOMES,
    n_boot: int = 999,
    bootstrap_ci: str = "t",
    target: str = "items",
    interval: str = "auto",
) -> pd.DataFrame:
    """Return interval width and coverage of every method at each label budget (replayed).

    Args:
        df: One row per item, every item with its human label.
        judge_col: The judge's label.
        human_col: The human label.
        cluster_col: Unit of the label draws: labels are drawn by whole clusters (the items
            target's interval is then by cluster, the population's the wild cluster
            bootstrap); None: items drawn one by one, closed-form intervals.
        budgets: Numbers of human labels (out-of-range budgets are left out).
        reps: Replays per budget.
        seed: Seed of the draws (each budget draws from `rng_for(seed, budget)`).
        truth: The value intervals should cover (default: the all-human value).
        level: Confidence level.
        lambda_: λ of the `ppi` method ("tuned" or a fixed float).
        kind: Label kind (`methods.KINDS`).
        ties: Pairwise tie rule.
        outcomes: Pairwise labels for A wins, B wins, tie.
        n_boot: Bootstrap replicates per replay (clustered tables, population target).
        bootstrap_ci: Cluster-bootstrap interval, `t` or `percentile` (`interval="bootstrap"`).
        target: `items` (these items: the all-human value, the default) or `population`
            (`ppi.TARGETS`).
        interval: The interval construction of `methods.estimates` (`auto` by `target`).

    Returns:
        One row per budget × method with `COLUMNS`.
    """
    lam = ppi.check_lambda(lambda_)
    check_choice("bootstrap_ci", bootstrap_ci, ppi.BOOTSTRAP_CIS)
    f, y, ratio = _methods.label_arrays(
        df, judge_col, human_col, kind=kind, ties=ties, outcomes=outcomes
    )
    f, y, _ = ppi.prepare(f, y)
    if not np.isfinite(y).all():
        raise ValueError("budget_curve needs a human label on every item")
    k, n = f.shape[1], len(f)
    units = ppi.unit_codes(None if cluster_col is None else df[cluster_col].to_numpy(object), n)
    clustered = cluster_col is not None and units.max() + 1 < n
    how = intervals.resolve_interval(interval, n, int(units.max()) + 1, clustered, target)
    if truth is None:
        truth = float(y[:, 0].sum() / (y[:, 1].sum() if ratio else n))
    binary = {"classical": ratio or ppi.is_binary(y), "naive": ratio or ppi.is_binary(f)}
    shift = 0.0 if any(binary.values()) else float(np.median(f))  # centred, as `estimates`
    lab_rows = ppi.moment_rows(y - shift, f - shift, np.ones(n, bool))
    unl_rows = ppi.moment_rows(y - shift, f - shift, np.zeros(n, bool))
    options = {"target": target, "labels_by": "cluster", "interval": how, "level": level,
               "lambda_": lam, "n_boot": n_boot, "bootstrap_ci": bootstrap_ci}  # fmt: skip
    rows: list[dict[str, Any]] = []
    for budget in sorted({int(b) for b in budgets if 2 <= int(b) <= n - 2}):
        rng = stats.rng_for(seed, "grounding.budget", budget)
        masks = _masks(rng, units, budget, reps)
        if clustered:
            fits = _replayed(masks, f, y, units, ratio=ratio, options=options, rng=rng)
            label = {"finite": "finite jackknife by cluster", "wild": "wild cluster bootstrap",
                     "bootstrap": f"bootstrap_{bootstrap_ci}"}.get(how, how)  # fmt: skip
        else:
            sums = masks @ lab_rows + (1.0 - masks) @ unl_rows
            methods = ppi.all_methods(sums, k, lam=lam, ratio=ratio, target=target)
            jack = None
            if how in ("jackknife", "finite"):
                jack = _jackknifed(masks, sums, lab_rows, unl_rows, k, lam=lam, ratio=ratio,
                                   target=target)  # fmt: skip
            fits = _intervals(methods, sums, binary=binary, ratio=ratio, level=level,
                              target=target, n_lab=budget, jack=jack)  # fmt: skip
            fits = {m: tuple(v + shift for v in fit) for m, fit in fits.items()}
            label = {"finite": "finite jackknife/wilson", "jackknife": "jackknife/wilson"}.get(
                how, "z/wilson"
            )
        n_lab = float(masks.sum(axis=1).mean())
        rows.extend(_summary(budget, n_lab, fits, truth, label))
    return pd.DataFrame(rows, columns=list(COLUMNS))


#: Label allocations across strata `allocate` compares.
ALLOCATIONS = ("proportional", "neyman")
#: Columns of an allocation plan (one row per stratum, then the `all` row).
PLAN_COLUMNS = (
    "stratum", "n_items", "share", "pilot_labels", "lambda", "resid_sd", "judge_sd",
    "proportional", "neyman", "se_proportional", "se_neyman",
)  # fmt: skip


def _spread(share: np.ndarray, budget: int, low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """Return integers n_h in [low_h, high_h] summing to `budget`, closest to share_h · budget.

    Largest remainders: the floor of the ideal counts (clipped), then one label at a time to
    the stratum furthest below its ideal (or from the one furthest above it).
    """
    ideal = share * budget
    n = np.clip(np.floor(ideal), low, high).astype(np.int64)
    while n.sum() < budget:
        gap = np.where(n < high, ideal - n, -np.inf)
        n[int(np.argmax(gap))] += 1
    while n.sum() > budget:
        gap = np.where(n > low, n - ideal, -np.inf)
        n[int(np.argmax(gap))] -= 1
    return n


def _expected_se(n: np.ndarray, shares, resid_var, lam, judge_var, n_items) -> float:
    """Return √Σ_h W_h² (s²_h / n_h + λ_h² v_h / (N_h − n_h)): the PPI++ SE at allocation n."""
    unl = np.maximum(n_items - n, 1)
    return float(np.sqrt(np.sum(shares**2 * (resid_var / n + lam**2 * judge_var / unl))))


def allocate(
    judge: np.ndarray,
    human: np.ndarray,
    stratum: np.ndarray,
    budget: int,
    *,
    min_labels: int = 2,
    prior_labels: float = 2.0,
) -> pd.DataFrame:
    """Plan where `budget` human labels go across strata, from a pilot: proportional vs Neyman.

    Every item of stratum h carries the judge's label; the pilot's human labels (NaN where
    unlabelled) give its PPI++ λ̂_h (`ppi.solve` on the stratum) and the residual SD s_h of
    the rectifier Y − λ̂_h f over its pilot labels, shrunk towards the pooled residual
    variance by `prior_labels` pseudo-labels ((m_h − 1) s²_h + k s²) / (m_h − 1 + k), so a
    pilot of a few labels that all agree with the judge does not plan a stratum at zero.
    The stratified PPI++ estimate Σ_h W_h θ̂_h (W_h = N_h / N) has, with n_h labels in h
    drawn one by one, SE² = Σ_h W_h² (s²_h / n_h + λ̂_h² v_h / (N_h − n_h)), v_h the
    variance of the judge's labels in h. Proportional allocation puts n_h ∝ N_h; Neyman
    allocation n_h ∝ N_h s_h (what minimises the first, dominant term). Both are rounded
    to integers in [`min_labels`, N_h − 1] by largest remainders. With clustered items the
    SE is that of labels drawn one by one (a design effect would scale both alike).

    Args:
        judge: Judge label of every item.
        human: Human label, NaN where the pilot did not label the item.
        stratum: Stratum (slice) of every item.
        budget: Total human labels to place (the pilot's count towards it).
        min_labels: The fewest labels a stratum gets (the stratified estimate needs 2).
        prior_labels: Pseudo-labels of the shrinkage of s²_h (0: none).

    Returns:
        One row per stratum with `PLAN_COLUMNS` (its labels under each allocation; the SE
        columns are the stratum's own SE at those labels), then the `all` row: the totals
        and the expected SE of the population estimate under each allocation.

    Raises:
        ValueError: The budget cannot give every stratum `min_labels` labels and leave one
            item unlabelled in each, or a stratum's pilot has fewer than 2 labels.
    """
    f, y, lab = ppi.prepare(judge, human)
    if f.shape[1] != 1:
        raise ValueError("allocate plans a mean (one label column), not a ratio")
    s = np.asarray(stratum, dtype=object).astype(str)
    if s.shape != (len(f),):
        raise ValueError(f"stratum has {s.shape} entries for {len(f)} items")
    names, codes = np.unique(s, return_inverse=True)
    n_items = np.bincount(codes, minlength=len(names)).astype(float)
    low, high = np.minimum(min_labels, n_items - 1), n_items - 1
    budget = int(budget)
    if not low.sum() <= budget <= high.sum():
        raise ValueError(
            f"label budget {budget} outside [{int(low.sum())}, {int(high.sum())}]: "
            f"{len(names)} strata need {min_labels} labels each and one unlabelled item each"
        )
    lam, resid_var, judge_var, pilot = (np.zeros(len(names)) for _ in range(4))
    for h, name in enumerate(names):
        idx = codes == h
        pilot[h] = int(lab[idx].sum())
        if pilot[h] < 2:
            raise ValueError(f"stratum {name!r} has {int(pilot[h])} pilot label(s); need >= 2")
        sums = ppi.moment_rows(y[idx], f[idx], lab[idx]).sum(axis=0)[None]
        lam[h] = float(ppi.solve(sums, 1)["ppi"][2][0])
        resid_var[h] = float(np.var(y[idx & lab, 0] - lam[h] * f[idx & lab, 0], ddof=1))
        judge_var[h] = float(np.var(f[idx, 0], ddof=1)) if idx.sum() > 1 else 0.0
    pooled = float(np.sum((pilot - 1) * resid_var) / np.sum(pilot - 1))
    shrunk = ((pilot - 1) * resid_var + prior_labels * pooled) / (pilot - 1 + prior_labels)
    shares = n_items / n_items.sum()
    plans = {
        "proportional": _spread(shares, budget, low, high),
        "neyman": _spread(shares * np.sqrt(shrunk) / np.sum(shares * np.sqrt(shrunk)),
                          budget, low, high),
    }  # fmt: skip
    rows = [
        {"stratum": str(name), "n_items": int(n_items[h]), "share": float(shares[h]),
         "pilot_labels": int(pilot[h]), "lambda": float(lam[h]),
         "resid_sd": float(np.sqrt(shrunk[h])), "judge_sd": float(np.sqrt(judge_var[h])),
         **{a: int(plans[a][h]) for a in ALLOCATIONS},
         **{f"se_{a}": _expected_se(plans[a][h : h + 1], np.ones(1),
                                    *(t[h : h + 1] for t in (shrunk, lam, judge_var)),
                                    n_items[h : h + 1]) for a in ALLOCATIONS}}
        for h, name in enumerate(names)
    ]  # fmt: skip
    rows.append(
        {"stratum": "all", "n_items": int(n_items.sum()), "share": 1.0,
         "pilot_labels": int(pilot.sum()), "lambda": float(np.sum(shares * lam)),
         "resid_sd": float(np.sqrt(pooled)), "judge_sd": float(np.std(f[:, 0], ddof=1)),
         **{a: int(plans[a].sum()) for a in ALLOCATIONS},
         **{f"se_{a}": _expected_se(plans[a], shares, shrunk, lam, judge_var, n_items)
            for a in ALLOCATIONS}}
    )  # fmt: skip
    return pd.DataFrame(rows, columns=list(PLAN_COLUMNS))
