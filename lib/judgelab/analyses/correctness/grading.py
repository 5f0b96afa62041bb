"""Correctness grading against human labels: agreement, Cohen's kappa, FPR/FNR (spec 001 §4).

A *correctness table* (`correctness_table`) has one row per judge × condition × item with the
human label (`human`, Correct/Incorrect) and the judge's verdict (`verdict`, Correct /
Incorrect, null = invalid). The positive class is "Correct" (spec 001 §4.3):

- FPR = P(judge says Correct | human says Incorrect) = FP / (FP + TN);
- FNR = P(judge says Incorrect | human says Correct) = FN / (FN + TP);
- agreement = (TP + TN) / N; Cohen's kappa = (p_o − p_e) / (1 − p_e), NaN when p_e = 1.

Every rate is computed from six confusion counts (`CELLS`), so a cluster ("block") bootstrap
over questions (spec 001 §4.4) is one `stats.bootstrap_sums` over per-question counts: the
resampled sums are the counts of a resample, and every metric follows by arithmetic.
Invalid verdicts follow `invalid_policy`: `exclude` drops them from every denominator;
`error` keeps them as a third judge category that never agrees (kappa, agreement) and counts
them as errors in FPR/FNR. Either way `n_invalid` reports them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from fnmatch import fnmatchcase

import numpy as np
import pandas as pd

from judgelab.core import stats
from judgelab.core.schema import require_columns as _require

LABELS = ("Correct", "Incorrect")
#: Confusion cells: human Correct × judge {Correct, Incorrect}, human Incorrect × judge
#: {Correct, Incorrect}, then invalid verdicts on human-Correct and human-Incorrect items.
CELLS = ("tp", "fn", "fp", "tn", "inv_pos", "inv_neg")
RATE_METRICS = ("agreement", "kappa", "fpr", "fnr")
INVALID_POLICIES = ("exclude", "error")
SUBSETS = ("overall", "answered_correctly", "answered_incorrectly")
_TABLE_COLUMNS = (
    "judge",
    "condition",
    "benchmark",
    "split",
    "item_id",
    "question_uid",
    "candidate_model",
    "human",
    "verdict",
)


def cohen_kappa(
    human: Sequence[object], judge: Sequence[object], *, labels: Sequence[object] | None = None
) -> float:
    """Return unweighted Cohen's kappa of two label sequences (NaN when p_e = 1 or empty).

    A label that only one rater uses (e.g. an `invalid` verdict) is a category of its own: it
    lowers p_o and enters p_e with the other rater's marginal 0. When both raters put every
    item in one and the same class, p_e = 1 and kappa is undefined: NaN (spec 001 §4.1).

    >>> cohen_kappa(["C", "C", "I", "I"], ["C", "I", "I", "I"])  # p_o=3/4, p_e=.5·.25+.5·.75
    0.5
    """
    h = np.asarray(list(human), dtype=object)
    j = np.asarray(list(judge), dtype=object)
    if h.shape != j.shape:
        raise ValueError(f"cohen_kappa: {len(h)} human labels but {len(j)} judge labels")
    if h.size == 0:
        return float("nan")
    cats = list(labels) if labels is not None else sorted({*h, *j}, key=str)
    index = {c: i for i, c in enumerate(cats)}
    conf = np.zeros((len(cats), len(cats)))
    np.add.at(conf, ([index[x] for x in h], [index[x] for x in j]), 1)
    return float(stats.kappa_from_confusion(conf))


def _split_cells(c: np.ndarray, invalid_policy: str) -> tuple[np.ndarray, ...]:
    c = np.asarray(c, dtype=np.float64)
    tp, fn, fp, tn, ip, ineg = (c[..., i] for i in range(6))
    if invalid_policy == "exclude":
        ip, ineg = np.zeros_like(ip), np.zeros_like(ineg)
    elif invalid_policy != "error":
        raise ValueError(
            f"invalid_policy must be one of {INVALID_POLICIES}, got {invalid_policy!r}"
        )
    return tp, fn, fp, tn, ip, ineg


def rates_from_counts(counts: np.ndarray, *, invalid_policy: str = "exclude") -> dict:
    """Return agreement, kappa, FPR and FNR from confusion counts (last axis = `CELLS`).

    Vectorised over leading axes (e.g. bootstrap replicates); a rate with an empty
    denominator, and kappa with p_e = 1, is NaN.

    >>> r = rates_from_counts(np.array([40, 10, 5, 45, 0, 0]))
    >>> round(float(r["kappa"]), 4), float(r["fpr"]), float(r["fnr"])  # p_o=.85, p_e=.5
    (0.7, 0.1, 0.2)
    """
    tp, fn, fp, tn, ip, ineg = _split_cells(counts, invalid_policy)
    n = tp + fn + fp + tn + ip + ineg
    # Human Correct/Incorrect x judge Correct/Incorrect/invalid (invalid is never agreement).
    zero = np.zeros_like(tp)
    conf = np.stack(
        [np.stack(row, axis=-1) for row in ((tp, fn, ip), (fp, tn, ineg), (zero, zero, zero))],
        axis=-2,
    )
    return {
        "agreement": stats.ratio_replicates(tp + tn, n),
        "kappa": stats.kappa_from_confusion(conf),
        "fpr": stats.ratio_replicates(fp + ineg, fp + tn + ineg),
        "fnr": stats.ratio_replicates(fn + ip, tp + fn + ip),
    }


def _denominators(counts: np.ndarray, invalid_policy: str) -> dict:
    tp, fn, fp, tn, ip, ineg = _split_cells(counts, invalid_policy)
    n = tp + fn + fp + tn + ip + ineg
    return {"agreement": n, "kappa": n, "fpr": fp + tn + ineg, "fnr": tp + fn + ip}


def _meta_field(meta: pd.Series, key: str) -> list:
    cache: dict[str, object] = {}
    out = []
    for m in meta.astype(object):
        if not isinstance(m, str):
            out.append(None)
            continue
        if m not in cache:
            cache[m] = json.loads(m).get(key)
        out.append(cache[m])
    return out


def correctness_table(
    items: pd.DataFrame,
    judgments: pd.DataFrame,
    *,
    judges: Sequence[str] = (),
    splits: Sequence[str] = (),
) -> pd.DataFrame:
    """Join pointwise correctness verdicts with the human labels: one row per judgment unit.

    Items without a human label (`gold` null) are dropped. Several samples of one judge ×
    condition × item are reduced to the majority of their valid verdicts (a tie is invalid,
    spec 001 §3.5).

    Args:
        items: An items table; needs `benchmark`, `split`, `item_id`, `question`, `gold`
            (Correct/Incorrect) and `meta` (its `candidate_model` names who answered).
        judgments: A judgments table; needs `benchmark`, `split`, `item_id`, `judge`,
            `condition`, `sample`, `valid`, `verdict` (Correct/Incorrect when valid).
        judges: Judges to keep (all when empty).
        splits: Splits to keep (all when empty).

    Returns:
        `judge`, `condition`, `benchmark`, `split`, `item_id`, `question_uid` (benchmark |
        split | question: the bootstrap cluster), `candidate_model`, `human`, `verdict`
        (null = invalid).

    Raises:
        ValueError: a valid verdict or a gold label is not Correct/Incorrect, or a named
            judge or split has no rows.
    """
    _require(items, ["benchmark", "split", "item_id", "question", "gold", "meta"], "items")
    _require(
        judgments,
        ["benchmark", "split", "item_id", "judge", "condition", "sample", "valid", "verdict"],
        "judgments",
    )
    keys = ["benchmark", "split", "item_id"]
    it = items[items["gold"].notna()]
    for name, values, col in (
        ("judge", judges, judgments["judge"]),
        ("split", splits, it["split"]),
    ):
        unknown = sorted(set(values) - set(col.dropna().unique()))
        if unknown:
            raise ValueError(
                f"unknown {name}(s) {unknown}; known: {sorted(col.dropna().unique())}"
            )
    if splits:
        it = it[it["split"].isin(list(splits))]
    bad = ~it["gold"].isin(LABELS)
    if bad.any():
        raise ValueError(
            f"items: gold {it['gold'][bad].iloc[0]!r} at item {it['item_id'][bad].iloc[0]!r} "
            f"is not one of {LABELS}"
        )
    it = pd.DataFrame(
        {
            **{k: it[k].astype(str).to_numpy() for k in keys},
            "question_uid": (
                it["benchmark"].astype(str)
                + "|"
                + it["split"].astype(str)
                + "|"
                + it["question"].fillna("").astype(str)
            ).to_numpy(),
            "candidate_model": _meta_field(it["meta"], "candidate_model"),
            "human": it["gold"].astype(str).to_numpy(),
        }
    )
    j = judgments if not judges else judgments[judgments["judge"].isin(list(judges))]
    valid = j["valid"].astype("boolean").fillna(False).to_numpy(dtype=bool) & j["verdict"].notna()
    verdict = j["verdict"].astype(object).where(valid, None)
    odd = verdict.notna() & ~verdict.isin(LABELS)
    if odd.any():
        row = j[odd.to_numpy()].iloc[0]
        raise ValueError(
            f"judgments: verdict {row['verdict']!r} of judge {row['judge']!r} at item "
            f"{row['item_id']!r} is not one of {LABELS} (is this a correctness judge?)"
        )
    votes = pd.DataFrame(
        {
            "judge": j["judge"].astype(str).to_numpy(),
            "condition": j["condition"].fillna("").astype(str).to_numpy(),
            **{k: j[k].astype(str).to_numpy() for k in keys},
            "pos": (verdict == "Correct").to_numpy(dtype=int),
            "neg": (verdict == "Incorrect").to_numpy(dtype=int),
        }
    )
    agg = votes.groupby(["judge", "condition", *keys], sort=False).sum().reset_index()
    agg["verdict"] = np.where(
        agg["pos"] > agg["neg"], "Correct", np.where(agg["neg"] > agg["pos"], "Incorrect", None)
    )
    out = agg.merge(it, on=keys, how="inner")
    out["verdict"] = out["verdict"].astype(object).where(out["verdict"].notna(), None)
    return out[list(_TABLE_COLUMNS)].reset_index(drop=True)


def confusion_counts(table: pd.DataFrame) -> np.ndarray:
    """Return per-row one-hot confusion cells (n rows × 6, in `CELLS` order).

    Args:
        table: A correctness table; needs `human` and `verdict`.
    """
    _require(table, ["human", "verdict"], "confusion_counts")
    h = table["human"].astype(object).to_numpy()
    v = table["verdict"].astype(object).to_numpy()
    pos, neg = h == "Correct", h == "Incorrect"
    vc, vi = v == "Correct", v == "Incorrect"
    inv = ~(vc | vi)
    return np.column_stack([pos & vc, pos & vi, neg & vc, neg & vi, pos & inv, neg & inv]).astype(
        np.float64
    )


def _cluster_matrix(block: pd.DataFrame, cells: np.ndarray, cluster: str | None) -> np.ndarray:
    if cluster is None:
        return cells
    codes = pd.factorize(block[cluster], sort=True)[0]
    out = np.zeros((codes.max() + 1 if len(codes) else 0, cells.shape[1]))
    np.add.at(out, codes, cells)
    return out


def _groups(table: pd.DataFrame, by: Sequence[str]):
    if not by:
        yield (), table
        return
    for key, block in table.groupby(list(by), sort=True, dropna=False, observed=True):
        yield (key if isinstance(key, tuple) else (key,)), block


def correctness_rates(
    table: pd.DataFrame,
    *,
    by: Sequence[str] = ("judge",),
    invalid_policy: str = "exclude",
    cluster: str | None = "question_uid",
    n_boot: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> pd.DataFrame:
    """Return agreement, kappa, FPR and FNR per group with cluster-bootstrap intervals.

    The bootstrap resamples `cluster` values (questions; spec 001 §4.4 block bootstrap; None =
    i.i.d. over rows), seeded by `seed` and the group key; the interval is the percentile
    interval ignoring NaN replicates (counted in `n_boot_nan`); the point estimate is the
    statistic on the full data; `half_width` = max(value − low, high − value) is the paper's
    symmetric display (spec 001 §4.4 step 5).

    Args:
        table: A correctness table (`correctness_table`); needs `by`, `cluster`, `human`,
            `verdict`.
        by: Group columns.
        invalid_policy: `exclude` or `error` (see the module docstring).
        cluster: Column whose values are resampled, or None.
        n_boot: Bootstrap resamples B.
        seed: Seed of the bootstrap.
        level: Confidence level.

    Returns:
        One row per group × metric: the `by` columns, `metric` (agreement, kappa, fpr, fnr),
        `value`, `ci_low`, `ci_high`, `half_width`, `n` (the metric's denominator),
        `n_items`, `n_clusters`, `n_invalid`, `n_boot_nan`, `note` (why a value is NaN).
    """
    by = list(by)
    _require(table, [*by, "human", "verdict", *([cluster] if cluster else [])], "rates")
    rows = []
    for key, block in _groups(table, by):
        cells = confusion_counts(block)
        total = cells.sum(axis=0)
        mat = _cluster_matrix(block, cells, cluster)
        reps = stats.bootstrap_sums(mat, n_boot=n_boot, rng=stats.rng_for(seed, "rates", *key))
        point = rates_from_counts(total, invalid_policy=invalid_policy)
        boot = rates_from_counts(reps, invalid_policy=invalid_policy)
        dens = _denominators(total, invalid_policy)
        for m in RATE_METRICS:
            low, high = stats.percentile_interval(boot[m], level=level)
            value = float(point[m])
            rows.append(
                {
                    **dict(zip(by, key, strict=True)),
                    "metric": m,
                    "value": value,
                    "ci_low": float(low),
                    "ci_high": float(high),
                    "half_width": float(max(value - low, high - value)),
                    "n": int(dens[m]),
                    "n_items": len(block),
                    "n_clusters": len(mat),
                    "n_invalid": int(total[4] + total[5]),
                    "n_boot_nan": int(np.isnan(boot[m]).sum()),
                    "note": _note(m, total, value, invalid_policy),
                }
            )
    cols = [*by, "metric", "value", "ci_low", "ci_high", "half_width", "n", "n_items",
            "n_clusters", "n_invalid", "n_boot_nan", "note"]  # fmt: skip
    return pd.DataFrame(rows, columns=cols)


def _note(metric: str, total: np.ndarray, value: float, invalid_policy: str) -> str:
    if not np.isnan(value):
        return ""
    if metric == "kappa":
        return (
            "kappa undefined: p_e = 1 (both raters use one class only)"
            if total.sum()
            else ("no items")
        )
    return "no items in the denominator class"


def mark_self(
    table: pd.DataFrame,
    *,
    judge_family: Mapping[str, str],
    candidate_family: Mapping[str, str],
) -> pd.DataFrame:
    """Add `candidate_is_judge`: the answer comes from the judge's own model family.

    Args:
        table: A correctness table; needs `judge` and `candidate_model`.
        judge_family: Judge id → family (e.g. "GPT-4.umass" → "gpt-4").
        candidate_family: Candidate model (or a glob pattern such as "llama2-*") → family.
            Use one family per model to get model-level "self".

    Returns:
        A copy with `judge_family`, `candidate_family` and `candidate_is_judge` (null where
        either family is unknown).
    """
    _require(table, ["judge", "candidate_model"], "mark_self")

    def fam(model: object) -> str | None:
        if not isinstance(model, str):
            return None
        if model in candidate_family:
            return candidate_family[model]
        return next((f for p, f in candidate_family.items() if fnmatchcase(model, p)), None)

    out = table.copy()
    out["judge_family"] = out["judge"].map(dict(judge_family))
    out["candidate_family"] = [fam(m) for m in out["candidate_model"]]
    known = out["judge_family"].notna() & out["candidate_family"].notna()
    same = out["judge_family"] == out["candidate_family"]
    out["candidate_is_judge"] = pd.array(np.where(known, same, pd.NA), dtype="boolean")
    return out


def self_vs_others(
    table: pd.DataFrame,
    *,
    by: Sequence[str] = ("judge",),
    metrics: Sequence[str] = ("fpr", "fnr"),
    invalid_policy: str = "exclude",
    cluster: str = "question_uid",
    n_boot: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> pd.DataFrame:
    """Compare a rate on the judge's own answers with the same rate on other models' answers.

    Spec 001 §4.3 (Fig. 4/5). The difference self − others gets a *paired* cluster bootstrap:
    each replicate resamples questions once and recomputes both rates on the same resampled
    questions, so questions answered by both sides are compared with themselves. The p-value
    is two-sided from the bootstrap: 2 · min(P*(Δ ≤ 0), P*(Δ ≥ 0)), capped at 1. Groups with
    no self or no other rows are dropped.

    Args:
        table: Output of `mark_self`; needs `by`, `cluster`, `candidate_is_judge`, `human`,
            `verdict`.
        by: Group columns.
        metrics: Any of agreement, kappa, fpr, fnr.
        invalid_policy: `exclude` or `error` (see the module docstring).
        cluster: Column whose values are resampled.
        n_boot: Bootstrap resamples B.
        seed: Seed of the bootstrap.
        level: Confidence level.

    Returns:
        One row per group × metric: the `by` columns, `metric`, `self`, `self_low`,
        `self_high`, `n_self` (denominator), `others`, `others_low`, `others_high`,
        `n_others`, `diff` (self − others), `diff_low`, `diff_high`, `p_value`,
        `n_clusters` (questions with rows on both sides).
    """
    by = list(by)
    _require(table, [*by, cluster, "candidate_is_judge", "human", "verdict"], "self_vs_others")
    unknown = [m for m in metrics if m not in RATE_METRICS]
    if unknown:
        raise ValueError(f"unknown metric(s) {unknown}; known: {RATE_METRICS}")
    data = table[table["candidate_is_judge"].notna()]
    rows = []
    for key, block in _groups(data, by):
        is_self = block["candidate_is_judge"].astype(bool).to_numpy()
        if is_self.all() or not is_self.any():
            continue
        cells = confusion_counts(block)
        both = np.hstack([cells * is_self[:, None], cells * ~is_self[:, None]])
        mat = _cluster_matrix(block, both, cluster)
        paired = int(np.sum((mat[:, :6].sum(axis=1) > 0) & (mat[:, 6:].sum(axis=1) > 0)))
        reps = stats.bootstrap_sums(mat, n_boot=n_boot, rng=stats.rng_for(seed, "self", *key))
        total = mat.sum(axis=0)
        p_s = rates_from_counts(total[:6], invalid_policy=invalid_policy)
        p_o = rates_from_counts(total[6:], invalid_policy=invalid_policy)
        b_s = rates_from_counts(reps[:, :6], invalid_policy=invalid_policy)
        b_o = rates_from_counts(reps[:, 6:], invalid_policy=invalid_policy)
        d_s = _denominators(total[:6], invalid_policy)
        d_o = _denominators(total[6:], invalid_policy)
        for m in metrics:
            s_lo, s_hi = stats.percentile_interval(b_s[m], level=level)
            o_lo, o_hi = stats.percentile_interval(b_o[m], level=level)
            delta = b_s[m] - b_o[m]
            d_lo, d_hi = stats.percentile_interval(delta, level=level)
            ok = delta[~np.isnan(delta)]
            p = (
                float(min(1.0, 2 * min(np.mean(ok <= 0), np.mean(ok >= 0))))
                if ok.size
                else float("nan")
            )
            rows.append(
                {
                    **dict(zip(by, key, strict=True)),
                    "metric": m,
                    "self": float(p_s[m]),
                    "self_low": float(s_lo),
                    "self_high": float(s_hi),
                    "n_self": int(d_s[m]),
                    "others": float(p_o[m]),
                    "others_low": float(o_lo),
                    "others_high": float(o_hi),
                    "n_others": int(d_o[m]),
                    "diff": float(p_s[m] - p_o[m]),
                    "diff_low": float(d_lo),
                    "diff_high": float(d_hi),
                    "p_value": p,
                    "n_clusters": paired,
                }
            )
    sides = [f"{s}{x}" for s in ("self", "others") for x in ("", "_low", "_high")]
    cols = [*by, "metric", *sides[:3], "n_self", *sides[3:], "n_others", "diff", "diff_low",
            "diff_high", "p_value", "n_clusters"]  # fmt: skip
    return pd.DataFrame(rows, columns=cols)


def self_others_long(comparison: pd.DataFrame) -> pd.DataFrame:
    """Reshape `self_vs_others` output to long form for plotting: one row per side.

    Returns:
        The group columns, `metric`, `group` (self/others), `value`, `ci_low`, `ci_high`, `n`.
    """
    keys = list(comparison.columns[: list(comparison.columns).index("metric") + 1])
    parts = []
    for side in ("self", "others"):
        part = comparison[keys].copy()
        part["group"] = side
        part["value"] = comparison[side]
        part["ci_low"] = comparison[f"{side}_low"]
        part["ci_high"] = comparison[f"{side}_high"]
        part["n"] = comparison[f"n_{side}"]
        parts.append(part)
    return pd.concat(parts, ignore_index=True)


def mark_answered(
    table: pd.DataFrame,
    *,
    judge_candidate: Mapping[str, str],
    ambiguous: str = "exclude",
) -> pd.DataFrame:
    """Add `judge_answered`: did the judge, as a candidate, answer this question correctly?

    Spec 001 §4.2: the human label of the judge's own answer (candidate `judge_candidate[judge]`)
    to the same question (`question_uid`) puts every row of that question in the
    `answered_correctly` or `answered_incorrectly` subset. The split is a property of
    (judge, question), the same for every condition.

    Args:
        table: A correctness table; needs `judge`, `question_uid`, `candidate_model`, `human`.
        judge_candidate: Judge id → the candidate model that is the same model.
        ambiguous: What a question gets when the judge's own answer has no label or is
            missing: `exclude` (null) or `incorrect` (spec's `treat_as_incorrect`).

    Returns:
        A copy with `judge_answered` ∈ {correct, incorrect, null}; null also for judges
        without a candidate.
    """
    _require(table, ["judge", "question_uid", "candidate_model", "human"], "mark_answered")
    if ambiguous not in ("exclude", "incorrect"):
        raise ValueError(f"ambiguous must be 'exclude' or 'incorrect', got {ambiguous!r}")
    own = table[["question_uid", "candidate_model", "human"]].drop_duplicates(
        ["question_uid", "candidate_model"]
    )
    label = {
        (q, m): ("correct" if h == "Correct" else "incorrect")
        for q, m, h in own.itertuples(index=False)
    }
    fill = None if ambiguous == "exclude" else "incorrect"
    out = table.copy()
    out["judge_answered"] = [
        label.get((q, judge_candidate[j]), fill) if j in judge_candidate else None
        for j, q in zip(out["judge"], out["question_uid"], strict=True)
    ]
    return out


def kappa_by_answered(
    table: pd.DataFrame,
    *,
    by: Sequence[str] = ("judge",),
    invalid_policy: str = "exclude",
    cluster: str = "question_uid",
    n_boot: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> pd.DataFrame:
    """Return the Table 4 layout in long form: rates overall and per answered subset.

    Only judges with a known `judge_answered` on some question are kept; `overall` covers all
    their rows. Clusters are resampled within each subset (spec 001 §4.4 step 6).

    Args:
        table: Output of `mark_answered`.
        by: Group columns (the `subset` column is added).
        invalid_policy: `exclude` or `error`.
        cluster: Column whose values are resampled.
        n_boot: Bootstrap resamples B.
        seed: Seed of the bootstrap.
        level: Confidence level.

    Returns:
        `correctness_rates` output with a `subset` column (overall, answered_correctly,
        answered_incorrectly) after the `by` columns.
    """
    _require(table, ["judge_answered", *by], "kappa_by_answered")
    judges = table.loc[table["judge_answered"].notna(), "judge"].unique()
    data = table[table["judge"].isin(judges)]
    parts = [data.assign(subset="overall")]
    for answer in ("correct", "incorrect"):
        parts.append(data[data["judge_answered"] == answer].assign(subset=f"answered_{answer}ly"))
    stacked = pd.concat(parts, ignore_index=True)
    stacked["subset"] = pd.Categorical(stacked["subset"], categories=list(SUBSETS))
    return correctness_rates(
        stacked,
        by=[*by, "subset"],
        invalid_policy=invalid_policy,
        cluster=cluster,
        n_boot=n_boot,
        seed=seed,
        level=level,
    )


def rates_display(
    rates: pd.DataFrame, *, index: Sequence[str], columns: str = "metric", digits: int = 2
) -> pd.DataFrame:
    """Return a wide display table of "value±half_width (n)" strings (spec 001 §4.4).

    Args:
        rates: `correctness_rates` or `pairwise_kappa` output.
        index: Columns that form the rows.
        columns: The column whose values become table columns.
        digits: Decimals.
    """
    _require(rates, [*index, columns, "value", "half_width", "n"], "rates_display")

    def fmt(r: pd.Series) -> str:
        if pd.isna(r["value"]):
            return f"– (n={int(r['n'])})"
        return f"{r['value']:.{digits}f}±{r['half_width']:.{digits}f} (n={int(r['n'])})"

    data = rates.assign(_text=rates.apply(fmt, axis=1))
    wide = data.pivot_table(
        index=list(index), columns=columns, values="_text", aggfunc="first", observed=True
    )
    wide.columns.name = None
    return wide.reset_index()


def pairwise_final(judgments: pd.DataFrame, *, groups: Sequence[str] = ("judge",)) -> pd.DataFrame:
    """Reduce the presentation orders of each pairwise item to one final choice (spec 001 §3.4).

    The final choice is `pos` or `neg` when every valid verdict of the item agrees on it, `tie`
    when they disagree (order inconsistency) or a verdict is a tie, and `invalid` when no
    verdict is valid. Works for single-order data too (the one verdict is final).

    Args:
        judgments: A judgments table; needs `groups`, `item_id`, `valid`, `chosen`.
        groups: Columns that identify a judge run (add `condition`, `benchmark`, `split`).

    Returns:
        The `groups` columns, `item_id`, `final`, `n_orders`.
    """
    groups = list(groups)
    _require(judgments, [*groups, "item_id", "valid", "chosen"], "pairwise_final")
    valid = judgments["valid"].astype("boolean").fillna(False).to_numpy(dtype=bool)
    chosen = judgments["chosen"].astype(object).where(valid & judgments["chosen"].notna(), None)
    df = judgments[[*groups, "item_id"]].copy()
    df["pos"] = (chosen == "pos").to_numpy(dtype=int)
    df["neg"] = (chosen == "neg").to_numpy(dtype=int)
    df["tie"] = (chosen == "tie").to_numpy(dtype=int)
    df["n_orders"] = 1
    agg = df.groupby([*groups, "item_id"], sort=False, dropna=False, observed=True).sum()
    n_valid = agg["pos"] + agg["neg"] + agg["tie"]
    agg["final"] = np.select(
        [n_valid == 0, agg["pos"] == n_valid, agg["neg"] == n_valid],
        ["invalid", "pos", "neg"],
        default="tie",
    )
    return agg.reset_index()[[*groups, "item_id", "final", "n_orders"]]


def pairwise_kappa(
    final: pd.DataFrame,
    *,
    by: Sequence[str] = ("judge",),
    cluster: str | None = None,
    n_boot: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> pd.DataFrame:
    """Return the symmetrized pairwise kappa per group with a bootstrap interval (spec 001 §4.1).

    Every pair counts in both orientations, so the human marginals are 50/50 and
    κ = (acc − (1 − t)/2) / (1 − (1 − t)/2) = (acc − wrong) / (2 − acc − wrong), with acc the
    share of items whose final choice is the better response, wrong the share choosing the
    worse one, and t = 1 − acc − wrong the share of ties (order disagreements) and invalid
    items, which never agree.

    Args:
        final: Output of `pairwise_final` (gold = the `pos` response).
        by: Group columns.
        cluster: Column whose values are resampled (None = rows, i.e. items; pass a
            question column when several items share a question).
        n_boot: Bootstrap resamples B.
        seed: Seed of the bootstrap.
        level: Confidence level.

    Returns:
        One row per group: the `by` columns, `metric` ("kappa"), `value`, `ci_low`,
        `ci_high`, `half_width`, `n`, `acc`, `tie_rate`.
    """
    by = list(by)
    _require(final, [*by, "final", *([cluster] if cluster else [])], "pairwise_kappa")
    rows = []
    for key, block in _groups(final, by):
        f = block["final"].to_numpy()
        cells = np.column_stack([f == "pos", f == "neg", np.ones(len(f))]).astype(float)
        mat = _cluster_matrix(block, cells, cluster)
        reps = stats.bootstrap_sums(mat, n_boot=n_boot, rng=stats.rng_for(seed, "pkappa", *key))
        total = mat.sum(axis=0)
        value = float(_sym_kappa(total))
        low, high = stats.percentile_interval(_sym_kappa(reps), level=level)
        n = total[2]
        rows.append(
            {
                **dict(zip(by, key, strict=True)),
                "metric": "kappa",
                "value": value,
                "ci_low": float(low),
                "ci_high": float(high),
                "half_width": float(max(value - low, high - value)),
                "n": int(n),
                "acc": float(total[0] / n) if n else float("nan"),
                "tie_rate": float(1 - (total[0] + total[1]) / n) if n else float("nan"),
            }
        )
    cols = [*by, "metric", "value", "ci_low", "ci_high", "half_width", "n", "acc", "tie_rate"]
    return pd.DataFrame(rows, columns=cols)


def _sym_kappa(counts: np.ndarray) -> np.ndarray:
    c = np.asarray(counts, dtype=np.float64)
    acc = stats.ratio_replicates(c[..., 0], c[..., 2])
    wrong = stats.ratio_replicates(c[..., 1], c[..., 2])
    return stats.ratio_replicates(acc - wrong, 2.0 - acc - wrong)
