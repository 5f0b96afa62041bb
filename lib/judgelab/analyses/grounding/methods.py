"""Judge-only, human-only and prediction-powered estimates side by side.

`estimates` works on arrays (judge labels on every item, human labels NaN where unlabelled);
`compare` on a table, one row per item. Labels are

- binary (a pass rate, the accuracy of a graded model): 0/1 or booleans;
- numeric (a mean score);
- pairwise with ties (`pairwise_scores`): the win rate of A over B. `ties="half"` (default)
  scores A = 1, B = 0, tie = ½, so the win rate is P(A) + ½ P(tie); `"loss"` scores a tie
  0 (P(A)); `"drop"` estimates P(A) / P(A or B), a ratio of two means (see `ppi`).

`ppi_mean` and `ppi_winrate` return the PPI++ row alone, as a dict.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from judgelab.analyses.grounding import clustered, intervals, ppi, strata
from judgelab.core import clusters, stats, wild
from judgelab.core.schema import require_columns
from judgelab.errors import check_choice

#: How a pairwise tie is scored (see the module docstring).
TIE_RULES = ("half", "drop", "loss")
#: Label kinds `compare` reads (`auto`: strings are pairwise outcomes, numbers numeric).
KINDS = ("auto", "numeric", "pairwise")
#: Pairwise labels: A wins, B wins, tie.
OUTCOMES = ("A", "B", "tie")


def pairwise_scores(
    labels: Sequence[object], *, ties: str = "half", outcomes: Sequence[str] = OUTCOMES
) -> np.ndarray:
    """Return the scored outcome of every pairwise label (NaN rows where a label is missing).

    `half`/`loss` give one column (A = 1, B = 0, tie = ½ or 0); `drop` two: 1{A wins} and
    1{A or B wins}, whose means' ratio is the win rate among decisive items.

    >>> pairwise_scores(["A", "tie", None]).ravel().tolist()
    [1.0, 0.5, nan]
    >>> pairwise_scores(["A", "B", "tie"], ties="drop").tolist()
    [[1.0, 1.0], [0.0, 1.0], [0.0, 0.0]]
    """
    check_choice("ties", ties, TIE_RULES)
    a, b, tie = outcomes
    arr = np.asarray(list(labels), dtype=object)
    missing = np.array([v is None or (isinstance(v, float) and v != v) for v in arr], bool)
    known = np.isin(arr, [a, b, tie]) | missing
    if not known.all():
        bad = sorted({str(v) for v in arr[~known]})[:5]
        raise ValueError(f"unknown pairwise label(s) {bad}; known: {[a, b, tie]} or missing")
    win, decisive = (arr == a).astype(float), (arr != tie).astype(float)
    if ties == "drop":
        out = np.column_stack([win, decisive])
    else:
        out = (win + (0.5 if ties == "half" else 0.0) * (arr == tie))[:, None]
    out[missing] = np.nan
    return out


def estimates(
    judge: np.ndarray,
    human: np.ndarray,
    *,
    labelled: np.ndarray | None = None,
    cluster: np.ndarray | None = None,
    stratum: np.ndarray | None = None,
    ratio: bool = False,
    target: str = "population",
    labels_by: str = "item",
    level: float = 0.95,
    lambda_: float | str = "tuned",
    interval: str = "auto",
    bootstrap_ci: str = "t",
    n_boot: int = wild.N_BOOT,
    seed: int = 0,
    methods: Sequence[str] = ppi.METHODS,
    strata_combine: str = "mover",
) -> pd.DataFrame:
    """Return the naive, classical, PPI++ and plain-PPI estimates with their intervals.

    The estimates do not depend on `target`; the intervals do. `population` (items like
    these: the super-population the items and their clusters come from) is what a finding
    about the judge needs; `items` (these items: the finite set at hand) is what a replay
    of labels among them measures (`budget_curve`). The judge-only row's interval is its
    own sampling interval under both: it says nothing of the judge's bias.

    Args:
        judge: Judge label of every item (n, or n × 2 for a ratio).
        human: Human label, NaN where the item is unlabelled (same shape).
        labelled: Which items count as labelled (default: the human label is present).
        cluster: Resampling unit of every item (None: items are independent).
        stratum: Stratum the human subset was drawn in, per item (None: one stratum).
        ratio: Estimate mean(col 0) / mean(col 1) (two columns) instead of a mean.
        target: `population` or `items` (`ppi.TARGETS`; see the module docstring of `ppi`).
        labels_by: `item` (labels drawn one by one) or `cluster` (whole clusters drawn):
            the design of the `items` target's interval.
        level: Confidence level.
        lambda_: "tuned" (PPI++), 1.0 (plain PPI) or a fixed λ in [0, 1] for the `ppi` row.
        interval: `auto` (`items`: finite-population t; `population`: the wild cluster
            bootstrap when `cluster` groups items, else z), `z`, `wild`, `finite`, or
            `bootstrap` (the cluster bootstrap, the earlier clustered default). Closed-form
            rows of 0/1 rates (classical, naive) are Wilson.
        bootstrap_ci: Cluster-bootstrap interval: `t` (θ̂ ± t_{G−1} · SE) or `percentile`.
        n_boot: Wild (or cluster) bootstrap replicates.
        seed: Bootstrap seed.
        methods: The rows to report (`ppi.METHODS`, all by default; fewer is faster with
            the wild cluster bootstrap, which runs once per row).
        strata_combine: With `stratum` and the wild interval: `mover` (each stratum's own
            interval, combined by MOVER; a stratum whose labels all sit at one bound gets
            the Wilson interval with one trial per cluster) or `joint` (the earlier default:
            one wild bootstrap of the weighted sum); `strata.COMBINES`.

    Returns:
        One row per method asked for (`ppi.METHODS` order) with `ppi.COLUMNS`: the
        interval's construction in `interval`, the estimand in `target`, and the effective
        number of independent units behind the row (`n_eff_clusters`; `few_clusters`
        below `core.clusters.FEW_EFFECTIVE`).
    """
    lam = ppi.check_lambda(lambda_)
    check_choice("bootstrap_ci", bootstrap_ci, ppi.BOOTSTRAP_CIS)
    check_choice("target", target, ppi.TARGETS)
    for method in methods:
        check_choice("method", method, ppi.METHODS)
    check_choice("labels_by", labels_by, ppi.LABELS_BY)
    check_choice("strata_combine", strata_combine, strata.COMBINES)
    f, y, lab = ppi.prepare(judge, human, labelled)
    k = f.shape[1]
    if ratio != (k == 2):
        raise ValueError(f"ratio={ratio} needs {2 if ratio else 1} label column(s), got {k}")
    n, n_lab = len(f), int(lab.sum())
    if n_lab < 2:
        raise ValueError(f"{n_lab} labelled item(s); need at least 2")
    units = ppi.unit_codes(cluster, n)
    n_units = int(units.max()) + 1 if n else 0
    how = intervals.resolve_interval(interval, n, n_units, cluster is not None, target)
    if how == "finite" and target != "items":
        raise ValueError("interval='finite' is the items target's interval (target='items')")
    counts = {"n_labelled": n_lab, "n_total": n, "n_clusters": n_units}
    binary = {"classical": ratio or ppi.is_binary(y[lab]), "naive": ratio or ppi.is_binary(f)}
    # Scores are centred (θ̂ is shift-equivariant) so moment sums lose no precision.
    shift = 0.0 if any(binary.values()) else float(np.median(f))
    f, y = f - shift, y - shift
    in_unit = bool(np.all((f >= 0) & (f <= 1))) if binary["classical"] else False
    bounds = (0.0, 1.0) if ratio or in_unit else None  # a mean of 0/1 human labels
    if stratum is not None:
        if ratio:
            raise ValueError("strata with a ratio estimand (ties='drop') are not supported")
        if target == "items" and labels_by == "cluster":
            raise ValueError("strata with labels drawn by cluster are not supported")
        rows = strata.stratified_rows(
            f, y, lab, np.asarray(stratum), units, lam=lam, how=how, level=level,
            n_boot=n_boot, seed=seed, counts=counts, bootstrap_ci=bootstrap_ci,
            target=target, bounds=bounds, methods=methods, combine=strata_combine,
        )  # fmt: skip
        return _shifted(_with_units(rows, how, lab, units, labels_by), shift, target, methods)
    item_rows = ppi.moment_rows(y, f, lab)
    sums = item_rows.sum(axis=0)[None]
    point = ppi.all_methods(sums, k, lam=lam, ratio=ratio, target=target)
    if how == "wild":
        lams = {m: np.ravel(point[m][2])[:1] for m in ("ppi", "ppi_plain")}
        wild_rows = clustered.wild_rows(f, y, lab, units, lams=lams, level=level,
                                        n_boot=n_boot, seed=seed, bounds=bounds,
                                        methods=methods)  # fmt: skip
        lam_col = {m: float(np.ravel(point[m][2])[0]) for m in ppi.METHODS}
        return _shifted(clustered.as_rows(wild_rows, lam_col, counts), shift, target, methods)
    reps, wilson, jack, jack_df = None, None, None, None
    if how == "bootstrap":
        rng = stats.rng_for(seed, "grounding")
        reps = intervals.bootstrap_methods(
            item_rows, units, k, lam=lam, ratio=ratio, n_boot=n_boot, rng=rng
        )
    else:
        counts_w = ppi.wilson_counts(sums, k, ratio=ratio, target=target)
        wilson = {m: counts_w[m] for m, ok in binary.items() if ok}
    label = "jackknife"
    if how in ("jackknife", "finite"):
        by_cluster = target == "items" and labels_by == "cluster"
        jack, jack_df, label = _jackknifed(y, f, lab, units, cluster, by_cluster=by_cluster, k=k,
                                           lam=lam, ratio=ratio, target=target)  # fmt: skip
        if by_cluster:
            wilson = {mm: w for mm, w in (wilson or {}).items() if mm == "naive"}
    rows = intervals.method_rows(point, reps=reps, wilson=wilson, level=level, counts=counts,
                                 bootstrap_ci=bootstrap_ci, df=n_units - 1,
                                 finite_df=n_lab - 1 if how == "finite" else None, jack=jack,
                                 jack_df=jack_df, jack_label=label)  # fmt: skip
    return _shifted(_with_units(rows, how, lab, units, labels_by), shift, target, methods)


def _jackknifed(
    y: np.ndarray,
    f: np.ndarray,
    lab: np.ndarray,
    units: np.ndarray,
    cluster: Any,
    *,
    by_cluster: bool,
    k: int,
    lam: float | str,
    ratio: bool,
    target: str,
) -> tuple[dict[str, float], int, str]:
    """Return the jackknife variances, their degrees of freedom and the interval's name.

    Deletions are items, or whole labelled clusters when labels were drawn by cluster
    (`by_cluster`, which jackknifes the classical row too).
    """
    n = len(f)
    if by_cluster:
        _check_whole_clusters(lab, units, cluster)
    jack_units = units if by_cluster else np.arange(n)
    lab_rows = ppi.moment_rows(y, f, np.ones(n, dtype=bool))
    unl_rows = ppi.moment_rows(y, f, np.zeros(n, dtype=bool))
    tot, dele, fpc, m = intervals.deletions(lab_rows, unl_rows, lab, jack_units, target=target)
    which = (*ppi.JACKKNIFED, "classical") if by_cluster else ppi.JACKKNIFED
    var = intervals.jackknife(tot, dele, k, lam=lam, ratio=ratio, target=target, fpc=fpc,
                              methods=which)  # fmt: skip
    jack = {meth: float(v[0]) for meth, v in var.items()}
    jack_df = (m if by_cluster else int(lab.sum())) - 1
    if target != "items":
        return jack, jack_df, "jackknife"
    return jack, jack_df, "finite jackknife" + (" by cluster" if by_cluster else "")


def _check_whole_clusters(lab: np.ndarray, units: np.ndarray, cluster: Any) -> None:
    """Refuse `labels_by="cluster"` unless every cluster is wholly labelled or unlabelled."""
    size = np.bincount(units)
    done = np.bincount(units, weights=lab.astype(float))
    part = np.flatnonzero((done > 0) & (done < size))
    if part.size:
        c = part[0]
        name = str(np.asarray(cluster)[np.argmax(units == c)] if cluster is not None else c)
        raise ValueError(
            f"labels_by='cluster' needs whole clusters labelled, but cluster '{name}' has "
            f"{int(done[c])} of {int(size[c])} items labelled ({part.size} such clusters); "
            "use labels_by='item' when labels were drawn item by item"
        )


def _with_units(
    rows: list[dict[str, Any]],
    how: str,
    lab: np.ndarray,
    units: np.ndarray,
    labels_by: str = "item",
) -> list[dict[str, Any]]:
    """Add `n_eff_clusters` / `few_clusters` to closed-form, jackknife and bootstrap rows.

    The independent units: labelled draws for the `items` target (items, or clusters when
    labels come by cluster: their effective number), items for `z` / `jackknife`, clusters
    for `bootstrap` (each method's weight per unit; ICC 1 for clusters, the conservative
    choice of `core.clusters.effective`).
    """
    n, n_lab = len(lab), int(lab.sum())
    out = []
    for row in rows:
        if "n_eff_clusters" in row:
            out.append(row)
            continue
        method = row["method"]
        lam = float(row["lambda"]) if method.startswith("ppi") else 0.0
        n_u = n - n_lab
        if method == "naive":
            influence = np.full(n, 1.0 / n)
        else:
            influence = np.where(lab, 1.0 / n_lab, lam / n_u if n_u else 0.0)
        if how == "finite" and method != "naive" and labels_by == "cluster":
            n_eff = clusters.effective(np.ones(n_lab), units[lab])
        elif how == "finite" and method != "naive":
            n_eff = float(n_lab)
        elif how == "bootstrap":
            n_eff = clusters.effective(influence, units)
        else:
            n_eff = clusters.effective(influence, np.arange(n), icc=0.0)
        out.append({**row, "n_eff_clusters": n_eff,
                    "few_clusters": bool(n_eff < clusters.FEW_EFFECTIVE)})  # fmt: skip
    return out


def _shifted(
    rows: list[dict[str, Any]], shift: float, target: str, methods: Sequence[str]
) -> pd.DataFrame:
    keep = [dict(r, target=target) for r in rows if r["method"] in methods]
    for r in keep:
        r["estimate"] += shift
        r["ci_low"] += shift
        r["ci_high"] += shift
        r["few_clusters"] = bool(r["few_clusters"])
    return pd.DataFrame(keep, columns=list(ppi.COLUMNS))


def ppi_mean(judge: np.ndarray, human: np.ndarray, **options: Any) -> dict[str, Any]:
    """Return the PPI++ estimate of the mean human label as a dict (`ppi.COLUMNS`).

    Takes the arguments of `estimates` (`cluster`, `stratum`, `target`, `level`, `lambda_`,
    `interval`, `n_boot`, `seed`, `labelled`).

    >>> r = ppi_mean(np.array([1, 1, 0, 1, 1, 1.]), np.array([1, 0, 0, np.nan, np.nan, np.nan]))
    >>> round(r["lambda"], 4), round(r["estimate"], 4)  # λ = (1/9) / (2 · 1/6); 1/3 + 1/3 − 2/9
    (0.3333, 0.4444)
    """
    table = estimates(judge, human, **options)
    return {"method": "ppi", **table.set_index("method").loc["ppi"].to_dict()}


def ppi_winrate(
    judge: Sequence[object],
    human: Sequence[object],
    *,
    ties: str = "half",
    outcomes: Sequence[str] = OUTCOMES,
    **options: Any,
) -> dict[str, Any]:
    """Return the PPI++ win rate of A over B from pairwise labels (None where unlabelled)."""
    f = pairwise_scores(judge, ties=ties, outcomes=outcomes)
    y = pairwise_scores(human, ties=ties, outcomes=outcomes)
    table = estimates(f, y, ratio=ties == "drop", **options)
    return {"method": "ppi", **table.set_index("method").loc["ppi"].to_dict()}


def label_arrays(
    df: pd.DataFrame,
    judge_col: str,
    human_col: str,
    *,
    kind: str = "auto",
    ties: str = "half",
    outcomes: Sequence[str] = OUTCOMES,
) -> tuple[np.ndarray, np.ndarray, bool]:
    """Return (judge, human, ratio) arrays of a table's label columns (see `compare`)."""
    check_choice("kind", kind, KINDS)
    require_columns(df, [judge_col, human_col], "grounding")
    if kind == "auto":
        numeric = all(pd.api.types.is_numeric_dtype(df[c]) or pd.api.types.is_bool_dtype(df[c])
                      for c in (judge_col, human_col))  # fmt: skip
        kind = "numeric" if numeric else "pairwise"
    if kind == "pairwise":
        f = pairwise_scores(df[judge_col].tolist(), ties=ties, outcomes=outcomes)
        y = pairwise_scores(df[human_col].tolist(), ties=ties, outcomes=outcomes)
        return f, y, ties == "drop"
    f = pd.to_numeric(df[judge_col].astype("float64"), errors="raise").to_numpy()
    y = pd.to_numeric(df[human_col].astype("float64"), errors="raise").to_numpy()
    return f, y, False


def compare(
    df: pd.DataFrame,
    judge_col: str,
    human_col: str,
    *,
    labelled_col: str | None = None,
    cluster_col: str | None = None,
    stratum_col: str | None = None,
    kind: str = "auto",
    ties: str = "half",
    outcomes: Sequence[str] = OUTCOMES,
    **options: Any,
) -> pd.DataFrame:
    """Return naive, classical, PPI++ and plain-PPI estimates of one table's human mean.

    Args:
        df: One row per item.
        judge_col: The judge's label (every row).
        human_col: The human label (missing where unlabelled).
        labelled_col: Boolean column of the labelled items (default: human label present).
        cluster_col: Resampling unit (items of one cluster are dependent), or None.
        stratum_col: Stratum the human subset was drawn in, or None.
        kind: `auto`, `numeric` (binary included) or `pairwise` (`outcomes` labels).
        ties: Pairwise tie rule (`TIE_RULES`).
        outcomes: Pairwise labels for A wins, B wins, tie.
        **options: `target`, `labels_by`, `level`, `lambda_`, `interval`, `n_boot`,
            `seed` of `estimates`.

    Returns:
        One row per method with `ppi.COLUMNS`.
    """
    require_columns(df, [labelled_col, cluster_col, stratum_col], "grounding.compare")
    f, y, ratio = label_arrays(df, judge_col, human_col, kind=kind, ties=ties, outcomes=outcomes)
    return estimates(
        f,
        y,
        labelled=None if labelled_col is None else df[labelled_col].astype(bool).to_numpy(),
        cluster=None if cluster_col is None else df[cluster_col].to_numpy(dtype=object),
        stratum=None if stratum_col is None else df[stratum_col].to_numpy(dtype=object),
        ratio=ratio,
        **options,
    )
