"""Two groups of one judge's graded answers compared in shared clusters.

The engine behind `self_vs_others` (own answers vs others', spec 001 §4.3) and
`answered_gap` (questions the judge answered correctly vs incorrectly, §4.5). Each row's six
confusion cells go to side A or side B; a metric on each side is a ratio of sums of per-row
parts (`rates.parts`; kappa through its linearization).

**Default (`inference="wild"`, DESIGN §9).** The difference A − B is
`core.estimates.difference` over the rows of both sides with the clusters as units — the two
sides share clusters (a question cluster holds own and other answers), so the comparison is
paired where they do and unpaired where they do not — with the interval that inverts the
restricted wild cluster bootstrap test of A − B = 0 and that test's p-value; each side's
rate gets `core.estimates.ratio`'s interval. Every row reports the effective clusters behind
the difference and `few_clusters`.

**Kappa** (issue 33): the wild interval of the linearized kappa difference is joined with
a delete-one-cluster jackknife t(G − 1) interval around the same difference (each side's
kappa recomputed without each cluster: the jackknife sees kappa's nonlinearity, which the
linearization misses); the row's interval is their union and its p-value the larger of the
two (the test rejects only where both do, so the p-value still inverts the interval). A
kappa side holding fewer than `MIN_KAPPA_CLASS` answers of either human label gets no test:
its kappa then hangs on one answer (null draws of 50 clusters, n = 100: 10–20 % rejected).

**Declined rows.** Where a side holds too few rows of the metric's denominator, or too few
clusters hold them (`min_a`, `min_a_clusters`: e.g. own-model negatives for a self − others
FPR), or the metric is undefined, the row keeps its point estimates but gets no interval and
no test, and `declined` says why — never a silent NaN.

**Earlier default (`inference="bootstrap"`).** One cluster bootstrap resamples both sides
together (a drawn cluster brings its rows of both sides); the difference gets the percentile
interval of its replicates and a two-sided bootstrap p-value resolved by
`inference.adaptive_p` (more replicates until its Monte-Carlo error is below 10 % of p, else
reported as a bound).

**Invalid verdicts** (`policies`, `mark_policy_sensitive`): with `missing_as_error`, the
comparison under `invalid_policy="exclude"` is repeated counting invalid verdicts as errors
(`error`), a row per policy; `policy_sensitive` marks a group × metric whose conclusion (the
test at 1 − level, or whether it could be tested) differs between the two.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from judgelab.analyses.correctness.rates import (
    BOUNDS,
    INFERENCE,
    RATE_METRICS,
    cluster_matrix,
    parts,
    rates_from_counts,
    resolve_cluster,
)
from judgelab.analyses.correctness.table import confusion_counts
from judgelab.core import clusters, estimates, inference, stats
from judgelab.core.jackknife import jackknife, leave_one_out
from judgelab.errors import check_choice

#: Bootstrap replicates at most behind one adaptive p-value (`inference="bootstrap"`).
MAX_BOOT = 20_000
#: What the rows of a metric's denominator are, for the reasons of declined rows.
DENOMINATOR_ROWS = {"fpr": "negatives", "fnr": "positives", "agreement": "answers",
                    "kappa": "answers"}  # fmt: skip
#: Fewest answers of each human label on each side for a kappa comparison's test.
MIN_KAPPA_CLASS = 2


def check_metrics(metrics: Sequence[str]) -> None:
    """Raise ValueError naming metrics that are not rate metrics."""
    unknown = [m for m in metrics if m not in RATE_METRICS]
    if unknown:
        raise ValueError(f"unknown metric(s) {unknown}; known: {RATE_METRICS}")


def policies(block: pd.DataFrame, invalid_policy: str, sensitivity: bool) -> list[str]:
    """Return the invalid policies to report: the chosen one, plus `error` beside `exclude`.

    The `error` row is added when invalid verdicts are excluded, `sensitivity` is on and the
    block holds any invalid verdict (excluding them is then a choice a conclusion may hang on).
    """
    if not sensitivity or invalid_policy != "exclude":
        return [invalid_policy]
    return ["exclude", "error"] if block["verdict"].isna().any() else ["exclude"]


def two_sides(
    block: pd.DataFrame,
    side_a: np.ndarray,
    *,
    names: tuple[str, str],
    metrics: Sequence[str],
    invalid_policy: str,
    cluster: str | None,
    n_boot: int,
    seed: int,
    key: tuple,
    level: float,
    inference: str = "wild",
    min_a: int = 1,
    min_a_clusters: int = 1,
    label_a: str = "",
) -> list[dict]:
    """Return one row per metric comparing side A (`side_a` True) with side B of `block`.

    Args:
        block: Correctness-table rows of one group (one judge).
        side_a: Boolean per row: side A (True) or B.
        names: Column stems of the two sides, e.g. ("self", "others").
        metrics: Rate metrics.
        invalid_policy: `exclude` or `error`.
        cluster: Cluster column (`rates.resolve_cluster`); None = rows.
        n_boot: Bootstrap replicates (wild: B; bootstrap: the first ones of each p-value).
        seed: The user's seed; each estimate's generator is seeded by it and `key`.
        key: The row's key (the group's values and the policy).
        level: Confidence level.
        inference: `wild` (default) or `bootstrap` (the earlier default).
        min_a: Fewest side-A rows in the metric's denominator for a test.
        min_a_clusters: Fewest clusters holding them for a test.
        label_a: How side A's rows are named in a reason (e.g. "own-model").

    Returns:
        Dicts with the fields of `columns(names)` (after `invalid_policy`).
    """
    check_choice("inference", inference, INFERENCE)
    a, b = names
    cells = confusion_counts(block)
    unit = clusters.codes(block, resolve_cluster(block, cluster))
    has_a = np.zeros(int(unit.max()) + 1 if unit.size else 0, dtype=bool)
    has_b = has_a.copy()
    has_a[unit[side_a]] = True
    has_b[unit[~side_a]] = True
    common = {
        f"n_invalid_{a}": int(cells[side_a, 4:].sum()),
        f"n_invalid_{b}": int(cells[~side_a, 4:].sum()),
        "n_clusters": int(np.sum(has_a | has_b)),
        "n_clusters_both": int(np.sum(has_a & has_b)),
    }
    boot = {}
    if inference == "bootstrap":
        boot = _bootstrap_fields(block, cells, side_a, names, metrics, invalid_policy, cluster,
                                 n_boot, seed, key, level)  # fmt: skip
    out = []
    for m in metrics:
        num_a, den_a, val_a = parts(cells[side_a], m, invalid_policy)
        num_b, den_b, val_b = parts(cells[~side_a], m, invalid_policy)
        k_a = int(np.unique(unit[side_a][den_a > 0]).size)
        k_b = int(np.unique(unit[~side_a][den_b > 0]).size)
        row = {
            "metric": m,
            a: val_a,
            f"n_{a}": int(den_a.sum()),
            b: val_b,
            f"n_{b}": int(den_b.sum()),
            "diff": val_a - val_b,
            **common,
            f"n_clusters_{a}": k_a,
            f"n_clusters_{b}": k_b,
        }
        why = _declined(m, row, names, val_a, val_b, min_a, min_a_clusters, label_a)
        if not why and m == "kappa":
            why = _flat_kappa(((a, num_a, den_a, val_a), (b, num_b, den_b, val_b)))
            why = why or _thin_kappa(cells, side_a, names, invalid_policy)
        if inference == "bootstrap":
            row.update(boot[m])
        else:
            row.update(
                _wild_fields(
                    (num_a, den_a, unit[side_a]),
                    (num_b, den_b, unit[~side_a]),
                    names,
                    m,
                    n_boot=n_boot,
                    seed=seed,
                    key=(*key, m),
                    level=level,
                    test=not why,
                )
            )
            if not why and m == "kappa":
                why = _join_jackknife(row, cells, side_a, unit, invalid_policy, level)
            if not why and not np.isfinite(row["p_value"]):
                why = f"no test: {row['method']}"
        if why:
            nan = float("nan")
            row.update({"diff_low": nan, "diff_high": nan, "p_value": nan, "p_bound": False})
        row["declined"] = why
        out.append(row)
    return out


def _flat_kappa(sides: Sequence[tuple[str, np.ndarray, np.ndarray, float]]) -> str:
    """Return why a kappa comparison gets no test when a side's linearization is flat.

    Kappa's linearized scores (`rates.parts`) vanish on every row where the side's kappa
    sits at a point that no single row can move: every answer of the side agrees with its
    human label (κ = 1), or the side holds one human label class only (κ ≡ 0 whatever the
    judge says). That side then brings no sampling variance to the difference, and the wild
    test of it collapses to a point interval with p = 0 at every other value (issue 33: 6 %
    of draws with 8 very unequal clusters, type-I 0.12 at 5 %). Such a row gets no test.
    """
    for side, num, den, value in sides:
        scores = num - den * value
        if den.sum() > 0 and np.all(np.abs(scores) <= 1e-9 * max(1.0, float(den.sum()))):
            return (
                f"kappa {value:.3g} on {side} cannot vary in its linearization (every answer "
                "agrees, or one human label class only): no test"
            )
    return ""


def _thin_kappa(
    cells: np.ndarray, side_a: np.ndarray, names: tuple[str, str], invalid_policy: str
) -> str:
    """Return why a kappa comparison has no test: a side with < `MIN_KAPPA_CLASS` of a label."""
    counted = 1.0 if invalid_policy == "error" else 0.0  # invalid verdicts in kappa's table
    for side, rows in zip(names, (side_a, ~side_a), strict=True):
        tp, fn, fp, tn, ip, ineg = np.asarray(cells, dtype=np.float64)[rows].sum(axis=0)
        fewest = min(tp + fn + counted * ip, fp + tn + counted * ineg)
        if fewest < MIN_KAPPA_CLASS:
            return (
                f"kappa on {side} rests on {int(fewest)} answer(s) of one human label "
                f"(< {MIN_KAPPA_CLASS}): no test"
            )
    return ""


def _join_jackknife(
    row: dict,
    cells: np.ndarray,
    side_a: np.ndarray,
    unit: np.ndarray,
    invalid_policy: str,
    level: float,
) -> str:
    """Widen `row`'s kappa difference test to the union with its cluster jackknife test.

    The jackknife recomputes both sides' kappa without each cluster (`unit` codes every
    cluster of the block: `core.jackknife`); its interval is diff ± t(G − 1)·SE and its
    p-value inverts it. The row keeps the union of the two intervals and the larger
    p-value; returns why there is no test when the jackknife is undefined (fewer than two
    leave-one-out values).
    """
    from scipy import stats as sps

    def kappa(sums: np.ndarray) -> np.ndarray:
        return rates_from_counts(sums, invalid_policy=invalid_policy)["kappa"]

    per = [clusters.sum_by(np.where(rows[:, None], cells, 0.0), unit)
           for rows in (side_a, ~side_a)]  # fmt: skip
    leave = leave_one_out(per[0], kappa) - leave_one_out(per[1], kappa)
    lo, hi = BOUNDS["kappa"]
    jk = jackknife(row["diff"], leave, level=level, bounds=(lo - hi, hi - lo),
                   bias_corrected=False)  # fmt: skip
    if not (np.isfinite(jk.se) and jk.se > 0):
        return "no test: the cluster jackknife of the kappa difference is undefined"
    p = float(2.0 * sps.t.sf(abs(row["diff"]) / jk.se, jk.df))
    row["diff_low"] = min(row["diff_low"], jk.ci_low)
    row["diff_high"] = max(row["diff_high"], jk.ci_high)
    row["p_value"] = max(row["p_value"], p)
    row["method"] += (
        f", joined with a delete-one-cluster jackknife t({jk.df:.0f}) interval (union; the "
        "test rejects only where both do)"
    )
    return ""


def _declined(
    metric: str,
    row: dict,
    names: tuple[str, str],
    val_a: float,
    val_b: float,
    min_a: int,
    min_a_clusters: int,
    label_a: str,
) -> str:
    """Return why a row gets no test (empty when it gets one)."""
    a, b = names
    what = DENOMINATOR_ROWS[metric]
    label = f"{label_a} {what}" if label_a else f"{what} ({a})"
    if row[f"n_{a}"] == 0:
        return f"no {label}"
    if row[f"n_{b}"] == 0:
        return f"no {what} ({b})"
    if row[f"n_{a}"] < min_a:
        return f"too few {label}: {row[f'n_{a}']} < {min_a}"
    if row[f"n_clusters_{a}"] < min_a_clusters:
        return f"too few clusters holding {label}: {row[f'n_clusters_{a}']} < {min_a_clusters}"
    if not (np.isfinite(val_a) and np.isfinite(val_b)):
        side = a if not np.isfinite(val_a) else b
        return f"{metric} undefined on {side} (one class only)"
    return ""


def _wild_fields(
    side_a: tuple[np.ndarray, ...],
    side_b: tuple[np.ndarray, ...],
    names: tuple[str, str],
    metric: str,
    *,
    n_boot: int,
    seed: int,
    key: tuple,
    level: float,
    test: bool,
) -> dict:
    """Return both sides' intervals and the difference's interval and test (`core.estimates`)."""
    a, b = names
    lo, hi = BOUNDS[metric]
    out: dict = {}
    for stem, (num, den, unit) in ((a, side_a), (b, side_b)):
        ok = bool(den.sum() > 0) and bool(np.all(np.isfinite(num)))
        est = (
            estimates.ratio(num, den, unit, level=level, n_boot=n_boot, bounds=(lo, hi),
                            rng=estimates.seeded(seed, *key, stem))
            if ok else None
        )  # fmt: skip
        out[f"{stem}_low"] = est.ci_low if est else float("nan")
        out[f"{stem}_high"] = est.ci_high if est else float("nan")
    nan = float("nan")
    base = {"diff_low": nan, "diff_high": nan, "p_value": nan, "p_bound": False,
            "n_boot_p": 0, "n_eff_clusters": nan, "few_clusters": True}  # fmt: skip
    if not test:
        return {**out, **base, "method": "no test"}
    num = np.concatenate([side_a[0], side_b[0]])
    den = np.concatenate([side_a[1], side_b[1]])
    group = np.concatenate([np.ones(len(side_a[0]), dtype=np.int64),
                            np.zeros(len(side_b[0]), dtype=np.int64)])  # fmt: skip
    unit = np.concatenate([side_a[2], side_b[2]])
    est = estimates.difference(
        num,
        den,
        group,
        unit,
        null=0.0,
        level=level,
        n_boot=n_boot,
        rng=estimates.seeded(seed, *key, "diff"),
        bounds=(lo - hi, hi - lo),
    )
    linear = " of the linearized kappa" if metric == "kappa" else ""
    return {
        **out,
        "diff_low": est.ci_low,
        "diff_high": est.ci_high,
        "p_value": est.p_value,
        "p_bound": False,
        "n_boot_p": n_boot,
        "n_eff_clusters": est.n_eff_clusters,
        "few_clusters": est.few_clusters,
        "method": est.method + linear,
    }


def _bootstrap_fields(
    block: pd.DataFrame,
    cells: np.ndarray,
    side_a: np.ndarray,
    names: tuple[str, str],
    metrics: Sequence[str],
    invalid_policy: str,
    cluster: str | None,
    n_boot: int,
    seed: int,
    key: tuple,
    level: float,
) -> dict[str, dict]:
    """Return per metric the earlier default's fields: paired percentile cluster bootstrap."""
    a, b = names
    both = np.hstack([cells * side_a[:, None], cells * ~side_a[:, None]])
    mat = cluster_matrix(block, both, cluster)
    rng = stats.rng_for(seed, "two_sides", *key)
    reps = stats.bootstrap_sums(mat, n_boot=n_boot, rng=rng)

    def rates(counts: np.ndarray) -> tuple[dict, dict]:
        return (
            rates_from_counts(counts[..., :6], invalid_policy=invalid_policy),
            rates_from_counts(counts[..., 6:], invalid_policy=invalid_policy),
        )

    b_a, b_b = rates(reps)
    out = {}
    for m in metrics:
        delta = b_a[m] - b_b[m]

        def draw(k: int, m: str = m) -> np.ndarray:
            more_a, more_b = rates(stats.bootstrap_sums(mat, n_boot=k, rng=rng))
            return more_a[m] - more_b[m]

        pv = _p_value(delta, draw, n_boot)
        lo_a, hi_a = stats.percentile_interval(b_a[m], level=level)
        lo_b, hi_b = stats.percentile_interval(b_b[m], level=level)
        lo_d, hi_d = stats.percentile_interval(delta, level=level)
        out[m] = {
            f"{a}_low": float(lo_a), f"{a}_high": float(hi_a),
            f"{b}_low": float(lo_b), f"{b}_high": float(hi_b),
            "diff_low": float(lo_d), "diff_high": float(hi_d),
            "p_value": pv.p, "p_bound": pv.bound, "n_boot_p": pv.n_boot,
            "n_eff_clusters": float("nan"), "few_clusters": True,
            "method": f"paired cluster bootstrap, percentile (B={n_boot}), adaptive p",
        }  # fmt: skip
    return out


def _p_value(first: np.ndarray, draw, n_boot: int) -> inference.PValue:
    if np.all(np.isnan(first)):
        return inference.PValue(float("nan"), 0, float("nan"), False)
    return inference.adaptive_p(draw, first=first, n_boot=n_boot, max_boot=max(MAX_BOOT, n_boot))


def mark_policy_sensitive(rows: pd.DataFrame, keys: Sequence[str], level: float) -> pd.Series:
    """Return, per row, whether its conclusion differs between the invalid policies.

    Within each `keys` × `metric` group holding an `exclude` and an `error` row: True when
    one row is significant at 1 − `level` and the other is not, or one is tested and the
    other declined. Groups with one policy only are False.
    """
    if rows.empty:
        return pd.Series([], dtype=bool, index=rows.index)
    alpha = 1.0 - level
    p = rows["p_value"].astype(float)
    verdict = np.where(p.isna(), "declined", np.where(p < alpha, "significant", "not"))
    frame = rows[[*keys, "metric"]].astype(str).assign(_v=verdict)
    groups = frame.groupby([*keys, "metric"], sort=False)["_v"]
    return (groups.transform("nunique") > 1).astype(bool)


def columns(names: tuple[str, str]) -> list[str]:
    """Return the columns `two_sides` fills, in order (after the group columns)."""
    a, b = names
    sides = [f"{s}{x}" for s in (a, b) for x in ("", "_low", "_high")]
    return ["metric", "invalid_policy", *sides[:3], f"n_{a}", *sides[3:], f"n_{b}", "diff",
            "diff_low", "diff_high", "p_value", "p_bound", "n_boot_p", f"n_invalid_{a}",
            f"n_invalid_{b}", "n_clusters", "n_clusters_both", f"n_clusters_{a}",
            f"n_clusters_{b}", "n_eff_clusters", "few_clusters", "method", "declined",
            "policy_sensitive"]  # fmt: skip
