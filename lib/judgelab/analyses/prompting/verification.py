"""Criteria verification: are correct verdicts reached for the right reasons? (spec 000 §4.4).

A verifier (the `cjb.verify` template, spec §3.6) decides for each *correct* run whether the
judge's explanation used the split's criterion. With `d_r ∈ {0, 1}` that decision and `c_r`
the run's correctness, `u_r = c_r · d_r`; verified consistent accuracy VCA = mean(u_1 · u_2),
verified optimistic accuracy VOA = mean(max(u_1, u_2)) (spec §4.4; Figs. 4, 12).
`verification_items` turns judgments into the verifier's input items, `decisions_from_verifier`
turns the verifier's judgments back into decisions (a `DECISION_COLUMNS` table; decisions
files are read by `judgelab.data.catalog.prompting`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import numpy as np
import pandas as pd

from judgelab.analyses import pairwise
from judgelab.analyses.prompting.fit import fit_coefficients
from judgelab.core import clusters, estimates, schema, stats
from judgelab.core.schema import DECISION_COLUMNS as DECISION_COLUMNS
from judgelab.core.schema import read_meta
from judgelab.core.schema import require_columns as _require
from judgelab.errors import check_choice

#: Criteria named by ContextualJudgeBench; a split's criterion is the first found in its id.
CRITERIA: tuple[str, ...] = ("refusal", "faithfulness", "completeness", "conciseness")
MISSING_POLICIES = ("error", "unverified", "verified")
UNDECIDED_POLICIES = ("verified", "unverified", "missing")
VERIFY_BY: tuple[str, ...] = ("criterion", "split")
#: The accuracies of `verified_accuracy`, in the order of its value columns.
VERIFIED_RATES: tuple[str, ...] = ("ca", "vca", "oa", "voa")
VERIFIED_COLUMNS: tuple[str, ...] = (
    "judge",
    "group",
    *(f"{name}{end}" for name in VERIFIED_RATES for end in ("", "_low", "_high")),
    "drop_ca",
    "drop_oa",
    "n",
    "n_correct_runs",
    "n_missing_decisions",
    "n_clusters",
    "n_eff_clusters",
    "few_clusters",
    "method",
)
VERIFY_INTERVALS: tuple[str, ...] = ("wild", "percentile")
_ID_SEP = "|"


def criterion_of(split: str) -> str | None:
    """Return the ContextualJudgeBench criterion named in a split id, None if none is.

    >>> criterion_of("conciseness_qa"), criterion_of("Natural")
    ('conciseness', None)
    """
    low = str(split).lower()
    return next((c for c in CRITERIA if c in low), None)


def verification_items(
    judgments: pd.DataFrame,
    *,
    judges: Sequence[str] = (),
    criterion: str | None = None,
) -> pd.DataFrame:
    """Return the verifier's input: one pointwise item per correct run with an explanation.

    Only runs with the correct outcome are sent (spec §3.6). Each item carries the judge's
    output as `response` (the critique) and, in `meta`, the outcome shown to the verifier
    ("Response A" for order 0, "Response B" for order 1: the position of the positive
    response), the criterion and the source keys; its benchmark is `<benchmark>.verify` so
    verifier tables never mix with judge tables. Judge it with the `cjb.verify` template.

    Args:
        judgments: A judgments table (pairwise, with gold and `output`).
        judges: Only these judges (empty: all).
        criterion: Force one criterion (else taken from the split id; splits naming none
            are left out).
    """
    _require(judgments, ["judge", "output", "correct", "order", "sample"], "verification_items")
    if criterion is not None:
        check_choice("criterion", criterion, CRITERIA)
    data = pairwise.select_judges(judgments, list(judges))
    ok = data["correct"].astype("boolean").fillna(False).to_numpy(dtype=bool)
    has_text = data["output"].notna().to_numpy() & (data["output"].astype(str).str.strip() != "")
    data = data[ok & has_text]
    rows = []
    for r in data.itertuples(index=False):
        crit = criterion or criterion_of(r.split)
        if crit is not None:
            rows.append(_verification_item(r, crit))
    return schema.new_items(rows) if rows else schema.empty(schema.ITEMS)


def _verification_item(r: tuple, criterion: str) -> dict:
    """Return the verifier's item for one correct run (a judgments row tuple)."""
    order, sample = int(r.order), int(r.sample)
    source = {
        "benchmark": r.benchmark,
        "split": r.split,
        "item_id": r.item_id,
        "judge": r.judge,
        "order": order,
        "sample": sample,
    }
    return {
        "benchmark": f"{r.benchmark}.verify",
        "split": r.split,
        "item_id": _ID_SEP.join([str(r.item_id), str(r.judge), str(order), str(sample)]),
        "task": "pointwise",
        "response": r.output,
        "meta": json.dumps(
            {
                "judgment": "Response A" if order == 0 else "Response B",
                "criterion": criterion,
                "source": source,
            }
        ),
    }


def decisions_from_verifier(
    verifier_judgments: pd.DataFrame,
    items: pd.DataFrame,
    *,
    undecided: str = "verified",
) -> pd.DataFrame:
    """Map the verifier's judgments back onto the judged runs: one decision per run.

    Args:
        verifier_judgments: Judgments of the `cjb.verify` template over `items`; `verdict`
            is Yes/No, null when the output was unparseable.
        items: The `verification_items` that were verified.
        undecided: What an unparseable decision (both or neither of yes/no) counts as:
            `verified` (the repo's "benefit of the doubt"), `unverified`, or `missing`.

    Returns:
        A decisions table: `benchmark`, `split`, `item_id`, `judge`, `order`, `sample` (of
        the judged run) and `verified` (nullable boolean).
    """
    check_choice("undecided", undecided, UNDECIDED_POLICIES)
    _require(verifier_judgments, ["benchmark", "split", "item_id", "verdict"], "verifier")
    _require(items, ["benchmark", "split", "item_id", "meta"], "verification items")
    meta = items.set_index(["benchmark", "split", "item_id"])["meta"]
    rows = []
    for r in verifier_judgments.itertuples(index=False):
        key = (r.benchmark, r.split, r.item_id)
        if key not in meta.index:
            raise KeyError(f"verifier judgment for unknown verification item {key}")
        source = read_meta(meta.loc[key])["source"]
        verdict = None if pd.isna(r.verdict) else str(r.verdict).strip().lower()
        if verdict in ("yes", "no"):
            verified: bool | None = verdict == "yes"
        else:
            verified = {"verified": True, "unverified": False, "missing": None}[undecided]
        rows.append({**source, "verified": verified})
    out = pd.DataFrame(rows, columns=list(DECISION_COLUMNS))
    out["verified"] = out["verified"].astype("boolean")
    return out


def verified_accuracy(
    judgments: pd.DataFrame,
    decisions: pd.DataFrame,
    *,
    by: str = "criterion",
    missing: str = "error",
    cluster: str | None = "cluster",
    n_boot: int = 1000,
    seed: int = 0,
    level: float = 0.95,
    interval: str = "wild",
) -> pd.DataFrame:
    """Return CA, OA and their verified versions VCA, VOA per judge × criterion (or split).

    Intervals (`interval="wild"`, issue 33): every rate is a ratio of sums over the judge's
    items with the restricted wild cluster bootstrap interval of `core.estimates` — the
    judge's clusters (the `cluster` column the data layer attaches; items without one are
    their own cluster) are the independent units, the pooled row included — and each row
    reports its effective clusters and `few_clusters`. `interval="percentile"` (the default
    before issue 33): the percentile cluster bootstrap per judge, every rate a ratio of
    resampled sums. `cluster=None` is the legacy bootstrap of independent items within each
    judge × group cell (fixed n).

    Args:
        judgments: A judgments table with gold (the judged runs).
        decisions: A decisions table (`DECISION_COLUMNS`); `verified` matters only for
            correct runs.
        by: `criterion` (splits pooled per criterion named in their id, as Fig. 4; splits
            naming none keep their own name) or `split`.
        missing: A correct run without a decision: `error` (raise), `unverified` (d = 0) or
            `verified` (d = 1).
        cluster: The resampling-unit column (None: independent items, the legacy).
        n_boot: Bootstrap resamples B (`percentile`, or `cluster=None`).
        seed: Seed of the bootstrap.
        level: Confidence level.
        interval: `wild` (default) or `percentile`.

    Returns:
        `judge`, `group` (criterion or split, or `pooled`), and for each of `ca`, `vca`, `oa`,
        `voa` the value and `_low`/`_high`; `drop_ca` = ca − vca, `drop_oa` = oa − voa; `n`
        (items with gold judged in both orders), `n_correct_runs`, `n_missing_decisions`,
        `n_clusters`, `n_eff_clusters` (of `ca`), `few_clusters`, `method`.
    """
    check_choice("by", by, VERIFY_BY)
    check_choice("interval", interval, VERIFY_INTERVALS)
    check_choice("missing", missing, MISSING_POLICIES)
    _require(decisions, DECISION_COLUMNS, "verified_accuracy decisions")
    out = pairwise.item_outcomes(judgments)
    out = out[out["complete"].astype(bool) & out["has_gold"].astype(bool)].reset_index(drop=True)
    values = _verified_values(out, decisions, missing=missing)
    group = (
        out["split"].map(criterion_of).fillna(out["split"]) if by == "criterion" else out["split"]
    )
    frame = pd.DataFrame({"judge": out["judge"], "group": group.to_numpy()})
    if cluster is not None and interval == "wild":
        rows = _wild_rows(frame, values, clusters.codes(out, cluster), seed=seed, level=level)
        return pd.DataFrame(rows, columns=list(VERIFIED_COLUMNS))
    if cluster is not None:
        unit = clusters.codes(out, cluster)
        cells = _cluster_cells(frame, values, unit, n_boot=n_boot, seed=seed)
    else:
        cells = _item_cells(frame, values, n_boot=n_boot, seed=seed)
    rows = [_verified_row(*cell, level=level) for cell in cells]
    return pd.DataFrame(rows, columns=list(VERIFIED_COLUMNS) if rows else None)


def _wild_rows(
    frame: pd.DataFrame, values: np.ndarray, unit: np.ndarray, *, seed: int, level: float
) -> list[dict]:
    """Per judge × group (then pooled per judge): the rates by `core.estimates.ratio`."""
    rows = []
    for judge, jdx in frame.groupby("judge", sort=True).indices.items():
        groups = frame["group"].to_numpy()[jdx]
        cells = [(name, jdx[groups == name]) for name in sorted(set(groups))]
        for name, idx in [*cells, (pairwise.POOLED, jdx)]:
            v, u = values[idx], unit[idx]
            n = len(idx)
            row: dict = {"judge": judge, "group": name}
            first = None
            for i, rate in enumerate(VERIFIED_RATES):
                rng = estimates.seeded(seed, "verified", judge, name, rate)
                e = estimates.ratio(v[:, i], np.ones(n), u, level=level, rng=rng)
                first = first or e
                row |= {rate: e.value, f"{rate}_low": e.ci_low, f"{rate}_high": e.ci_high}
            sums = v.sum(axis=0)
            rows.append(
                row
                | {
                    "drop_ca": (sums[0] - sums[1]) / n,
                    "drop_oa": (sums[2] - sums[3]) / n,
                    "n": n,
                    "n_correct_runs": int(sums[4]),
                    "n_missing_decisions": int(sums[5]),
                    "n_clusters": first.n_clusters,
                    "n_eff_clusters": first.n_eff_clusters,
                    "few_clusters": first.few_clusters,
                    "method": first.method,
                }
            )
    return rows


def _cluster_cells(
    frame: pd.DataFrame, values: np.ndarray, unit: np.ndarray, *, n_boot: int, seed: int
) -> list[tuple]:
    """Per judge × group (then pooled per judge): sums, cluster-bootstrap sums, n.

    Each judge's clusters are resampled once for all its groups; the replicate columns are
    the group's sums plus its item count (last column), so rates are ratios of sums.
    """
    vals = np.column_stack([values, np.ones(len(values))])
    cells = []
    for judge, jdx in frame.groupby("judge", sort=True).indices.items():
        groups = frame["group"].to_numpy()[jdx]
        names = sorted(set(groups))
        wide = np.zeros((len(jdx), len(names) * vals.shape[1]))
        for g, name in enumerate(names):
            inside = groups == name
            wide[inside, g * vals.shape[1] : (g + 1) * vals.shape[1]] = vals[jdx][inside]
        per = clusters.sum_by(wide, pd.factorize(unit[jdx])[0])
        reps = stats.bootstrap_sums(per, n_boot=n_boot, rng=stats.rng_for(seed, "verified", judge))
        m = vals.shape[1]
        blocks = [
            (per.sum(axis=0)[g * m : (g + 1) * m], reps[:, g * m : (g + 1) * m])
            for g in range(len(names))
        ]
        for name, (tot, rep) in zip(names, blocks, strict=True):
            cells.append((judge, name, tot[:-1], rep[:, :-1], int(tot[-1]), rep[:, -1]))
        tot = np.sum([b[0] for b in blocks], axis=0)
        rep = np.sum([b[1] for b in blocks], axis=0)
        cells.append((judge, pairwise.POOLED, tot[:-1], rep[:, :-1], int(tot[-1]), rep[:, -1]))
    return cells


def _item_cells(frame: pd.DataFrame, values: np.ndarray, *, n_boot: int, seed: int) -> list[tuple]:
    """Legacy cells: items resampled independently within each judge × group (fixed n)."""
    cells = []
    for (judge, grp), idx in frame.groupby(["judge", "group"], sort=True).indices.items():
        v = values[idx]
        reps = stats.bootstrap_sums(
            v, n_boot=n_boot, rng=stats.rng_for(seed, "verified", judge, grp)
        )
        cells.append((judge, grp, v.sum(axis=0), reps, len(v), None))
    by_judge: dict[str, list] = {}
    for c in cells:
        by_judge.setdefault(c[0], []).append(c)
    for judge, members in by_judge.items():
        cells.append(
            (
                judge,
                pairwise.POOLED,
                np.sum([m[2] for m in members], axis=0),
                np.sum([m[3] for m in members], axis=0),
                sum(m[4] for m in members),
                None,
            )
        )
    return cells


def _verified_values(out: pd.DataFrame, decisions: pd.DataFrame, *, missing: str) -> np.ndarray:
    """Return per item c0·c1, u0·u1, max(c0, c1), max(u0, u1), c0 + c1, missing decisions.

    Raises:
        ValueError: with `missing="error"`, a correct run has no decision.
    """
    keys = ["benchmark", "split", "item_id", "judge", "sample"]
    dec = decisions.astype({"item_id": str, "order": int, "sample": int})
    d = {}
    n_missing = np.zeros(len(out), dtype=int)
    for o in (0, 1):
        part = dec[dec["order"] == o].set_index(keys)["verified"]
        joined = out.astype({"item_id": str}).join(part, on=keys)["verified"]
        correct = out[f"correct_{o}"].astype("boolean").fillna(False).to_numpy(dtype=bool)
        lacking = correct & joined.isna().to_numpy()
        n_missing += lacking
        fill = {"error": False, "unverified": False, "verified": True}[missing]
        d[o] = correct & joined.astype("boolean").fillna(fill).to_numpy(dtype=bool)
    if missing == "error" and n_missing.any():
        i = int(np.flatnonzero(n_missing)[0])
        row = out.iloc[i]
        raise ValueError(
            f"{int(n_missing.sum())} correct run(s) have no verifier decision, e.g. judge="
            f"{row['judge']!r} split={row['split']!r} item_id={row['item_id']!r}; run the "
            "verifier on them or pass missing='unverified'/'verified'"
        )
    c0 = out["correct_0"].astype("boolean").fillna(False).to_numpy(dtype=float)
    c1 = out["correct_1"].astype("boolean").fillna(False).to_numpy(dtype=float)
    u0, u1 = d[0].astype(float), d[1].astype(float)
    return np.column_stack(
        [c0 * c1, u0 * u1, np.maximum(c0, c1), np.maximum(u0, u1), c0 + c1, n_missing]
    )


def _verified_row(
    judge: str,
    grp: str,
    sums: np.ndarray,
    reps: np.ndarray,
    n: int,
    reps_n: np.ndarray | None,
    *,
    level: float,
) -> dict:
    """Return one `verified_accuracy` row from a cell's sums and bootstrap replicates.

    `reps_n`: the cell's item count in each replicate (None: fixed at n, the legacy).
    """
    row = {"judge": judge, "group": grp}
    den = n if reps_n is None else reps_n
    for i, name in enumerate(VERIFIED_RATES):
        names = (name, f"{name}_low", f"{name}_high")
        boot = stats.ratio_replicates(reps[:, i], np.broadcast_to(den, reps[:, i].shape))
        row |= stats.interval_fields(sums[i] / n, boot, level=level, names=names)
    return row | {
        "drop_ca": (sums[0] - sums[1]) / n,
        "drop_oa": (sums[2] - sums[3]) / n,
        "n": n,
        "n_correct_runs": int(sums[4]),
        "n_missing_decisions": int(sums[5]),
        "n_clusters": np.nan,
        "n_eff_clusters": np.nan,
        "few_clusters": True,
        "method": f"percentile bootstrap (B={len(reps)})",
    }


def verification_summary(table: pd.DataFrame) -> pd.DataFrame:
    """Return the Fig. 4 numbers over the judge × group points (pooled rows left out).

    Returns:
        Two rows (`pair` = "CA→VCA" and "OA→VOA"): `mean_drop` (mean of x − y over points),
        the `fit_coefficients` columns, and `n` points.
    """
    _require(table, ["group", "ca", "vca", "oa", "voa"], "verification_summary")
    pts = table[table["group"] != pairwise.POOLED]
    rows = []
    for pair, x, y in (("CA→VCA", "ca", "vca"), ("OA→VOA", "oa", "voa")):
        fit = fit_coefficients(pts, x=x, y=y).iloc[0].to_dict()
        rows.append({"pair": pair, "mean_drop": float((pts[x] - pts[y]).mean()), **fit})
    return pd.DataFrame(rows)
