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

from judgelab.analyses.grounding import ppi, strata
from judgelab.core import stats
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
    level: float = 0.95,
    lambda_: float | str = "tuned",
    interval: str = "auto",
    bootstrap_ci: str = "t",
    n_boot: int = 2000,
    seed: int = 0,
) -> pd.DataFrame:
    """Return the naive, classical, PPI++ and plain-PPI estimates with their intervals.

    Args:
        judge: Judge label of every item (n, or n × 2 for a ratio).
        human: Human label, NaN where the item is unlabelled (same shape).
        labelled: Which items count as labelled (default: the human label is present).
        cluster: Resampling unit of every item (None: items are independent).
        stratum: Stratum the human subset was drawn in, per item (None: one stratum).
        ratio: Estimate mean(col 0) / mean(col 1) (two columns) instead of a mean.
        level: Confidence level.
        lambda_: "tuned" (PPI++), 1.0 (plain PPI) or a fixed λ in [0, 1] for the `ppi` row.
        interval: `auto` (cluster bootstrap when `cluster` groups items, else z), `z`, or
            `bootstrap`. Closed-form rows of 0/1 rates (classical, naive) are Wilson.
        bootstrap_ci: Bootstrap interval: `t` (θ̂ ± t_{G−1} · SE) or `percentile`.
        n_boot: Cluster-bootstrap replicates.
        seed: Bootstrap seed.

    Returns:
        One row per method (`ppi.METHODS`) with `ppi.COLUMNS`.
    """
    lam = ppi.check_lambda(lambda_)
    check_choice("bootstrap_ci", bootstrap_ci, ppi.BOOTSTRAP_CIS)
    f, y, lab = ppi.prepare(judge, human, labelled)
    k = f.shape[1]
    if ratio != (k == 2):
        raise ValueError(f"ratio={ratio} needs {2 if ratio else 1} label column(s), got {k}")
    n, n_lab = len(f), int(lab.sum())
    if n_lab < 2:
        raise ValueError(f"{n_lab} labelled item(s); need at least 2")
    units = ppi.unit_codes(cluster, n)
    n_units = int(units.max()) + 1 if n else 0
    how = ppi.resolve_interval(interval, n, n_units, cluster is not None)
    counts = {"n_labelled": n_lab, "n_total": n, "n_clusters": n_units}
    binary = {"classical": ratio or ppi.is_binary(y[lab]), "naive": ratio or ppi.is_binary(f)}
    # Scores are centred (θ̂ is shift-equivariant) so moment sums lose no precision.
    shift = 0.0 if any(binary.values()) else float(np.median(f))
    f, y = f - shift, y - shift
    if stratum is not None:
        if ratio:
            raise ValueError("strata with a ratio estimand (ties='drop') are not supported")
        rows = strata.stratified_rows(
            f, y, lab, np.asarray(stratum), units, lam=lam, how=how, level=level,
            n_boot=n_boot, seed=seed, counts=counts, bootstrap_ci=bootstrap_ci,
        )  # fmt: skip
        return _shifted(rows, shift)
    item_rows = ppi.moment_rows(y, f, lab)
    sums = item_rows.sum(axis=0)[None]
    point = ppi.all_methods(sums, k, lam=lam, ratio=ratio)
    reps, wilson = None, None
    if how == "bootstrap":
        rng = stats.rng_for(seed, "grounding")
        reps = ppi.bootstrap_methods(
            item_rows, units, k, lam=lam, ratio=ratio, n_boot=n_boot, rng=rng
        )
    else:
        counts_w = ppi.wilson_counts(sums, k, ratio=ratio)
        wilson = {m: counts_w[m] for m, ok in binary.items() if ok}
    rows = ppi.method_rows(point, reps=reps, wilson=wilson, level=level, counts=counts,
                           bootstrap_ci=bootstrap_ci, df=n_units - 1)  # fmt: skip
    return _shifted(rows, shift)


def _shifted(rows: list[dict[str, Any]], shift: float) -> pd.DataFrame:
    table = pd.DataFrame(rows, columns=list(ppi.COLUMNS))
    table[["estimate", "ci_low", "ci_high"]] += shift
    return table


def ppi_mean(judge: np.ndarray, human: np.ndarray, **options: Any) -> dict[str, Any]:
    """Return the PPI++ estimate of the mean human label as a dict (`ppi.COLUMNS`).

    Takes the arguments of `estimates` (`cluster`, `stratum`, `level`, `lambda_`,
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
        **options: `level`, `lambda_`, `interval`, `n_boot`, `seed` of `estimates`.

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
