"""Human alignment of each judging method on faithfulness pairs (spec 004 §2.5, Table 1).

Human alignment is the share of contrastive pairs in which the method prefers the
human-preferred candidate. Pairs of one source are dependent, so the default interval and
test resample source documents (the `cluster` column, else `group`; issue 20): by default
(`reference="wild"`, issue 33) alignment and the margin (pos − neg) / decided are ratios of
sums with the restricted wild cluster bootstrap of `core.estimates` — the test of margin 0
inverts the margin's interval shown beside it — and every row reports its effective
clusters and `few_clusters`. Tie policies
(spec 004 §2.2): `miss` (a tie counts as not aligned; reproduces the paper's near-0 % cells),
`half` (half a success), `random` (a seeded coin). An unparseable verdict is always a miss.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats as sps

from judgelab.analyses.faithfulness.grouped import Rows, per_group
from judgelab.analyses.faithfulness.ragas_scores import METRIC_LABELS
from judgelab.core import clusters, estimates, inference, stats, wild
from judgelab.core.schema import require_columns as _need
from judgelab.data import targets
from judgelab.errors import check_choice

TIE_POLICIES = ("miss", "half", "random")
CIS = ("boot", "wilson", "exact")
TESTS = ("bootstrap", "sign")
#: Interval / p-value references: the wild cluster bootstrap (`core.estimates`), the cluster
#: bootstrap's t_{G−1} with its SE (the default before issue 33), or its percentiles.
REFERENCES = ("wild", "t", "percentile")


def _t_fields(
    est: float, reps: np.ndarray, *, df: int, level: float, null: float | None = None
) -> tuple[float, float, float]:
    """Return (low, high, p) of estimate ± t_{df} · SE(reps), clipped to the replicates' range.

    p (NaN without `null`) is 2 · P(T_df > |est − null| / SE), the test the interval inverts.
    """
    r = np.asarray(reps, dtype=np.float64)
    r = r[np.isfinite(r)]
    if r.size < 2 or not np.isfinite(est):
        return math.nan, math.nan, math.nan
    se = float(np.std(r, ddof=1))
    q = float(sps.t.ppf(0.5 + level / 2, max(df, 1)))
    low, high = (float(np.clip(est + k * q * se, r.min(), r.max())) for k in (-1, 1))
    if null is None:
        return low, high, math.nan
    if se == 0:
        return low, high, 1.0 if est == null else 0.0
    return low, high, float(2 * sps.t.sf(abs(est - null) / se, max(df, 1)))


def _exact_ci(k: float, n: int, level: float) -> tuple[float, float]:
    if n == 0 or k != int(k):
        return math.nan, math.nan
    ci = sps.binomtest(int(k), n).proportion_ci(confidence_level=level, method="exact")
    return float(ci.low), float(ci.high)


def _successes(pref: np.ndarray, key: tuple[Any, ...], tie_policy: str, seed: int) -> np.ndarray:
    """1 per aligned pair, ties per `tie_policy`, 0 otherwise (invalid verdicts included)."""
    ties = pref == "tie"
    success = (pref == "pos").astype(float)
    if tie_policy == "half":
        success[ties] = 0.5
    elif tie_policy == "random":
        rng = stats.rng_for(seed, "ties", *key)
        success[ties] = rng.integers(0, 2, size=int(ties.sum()))
    return success


def _units(g: pd.DataFrame, cluster: str | None) -> np.ndarray:
    """Resampling unit of each pair: `cluster` (else the source `group`), or the pair itself."""
    if cluster is None:
        return np.arange(len(g))
    col = cluster if cluster in g.columns else "group"
    return pd.factorize(g[col].astype(str), sort=True)[0]


def _margin(sums: np.ndarray) -> np.ndarray:
    """(Σ pos − Σ neg) / Σ decided per replicate (columns: success, n, pos, neg)."""
    return stats.ratio_replicates(sums[:, 2] - sums[:, 3], sums[:, 2] + sums[:, 3])


def _aligned(
    g: pd.DataFrame,
    key: tuple[Any, ...],
    *,
    tie_policy: str,
    cluster: str | None,
    test: str,
    n_boot: int,
    seed: int,
    level: float,
    reference: str,
) -> Rows:
    """One group's alignment with its Wilson, exact and cluster bootstrap intervals and tests."""
    pref = g["pref"].to_numpy()
    success = _successes(pref, key, tie_policy, seed)
    n = len(pref)
    k = float(success.sum())
    wl, wh = stats.wilson_interval(k, n, level=level)
    el, eh = _exact_ci(k, n, level)
    n_pos, n_neg = int((pref == "pos").sum()), int((pref == "neg").sum())
    unit = _units(g, cluster)
    per = clusters.sum_by(
        np.column_stack([success, np.ones(n), pref == "pos", pref == "neg"]), unit
    )
    rng = stats.rng_for(seed, "boot", *key)
    sums = stats.bootstrap_sums(per, n_boot=n_boot, rng=rng)
    aligned = stats.ratio_replicates(sums[:, 0], sums[:, 1])
    decided = n_pos + n_neg
    est_margin = (n_pos - n_neg) / decided if decided else math.nan
    wild_fields: dict[str, Any] = {}
    if reference == "wild":
        boot, bl, bh, wild_fields = _wild_alignment(success, pref, unit, key, seed, level)
    elif reference == "t":
        df = per.shape[0] - 1
        bl, bh, _ = _t_fields(k / n if n else math.nan, aligned, df=df, level=level)
        _, _, p_t = _t_fields(est_margin, _margin(sums), df=df, level=level, null=0.0)
        boot = inference.PValue(p_t, n_boot, math.nan, False)
    else:
        bl, bh = stats.percentile_interval(aligned, level=level)
        boot = inference.adaptive_p(
            lambda b: _margin(stats.bootstrap_sums(per, n_boot=b, rng=rng)),
            first=_margin(sums),
            n_boot=n_boot,
        )
    sign = stats.sign_test(n_pos, n_pos + n_neg).p_value
    return [
        {
            "n": n,
            "n_clusters": int(per.shape[0]),
            "aligned": k,
            "ties": int((pref == "tie").sum()),
            "invalid": int((pref == "invalid").sum()),
            "alignment": k / n if n else math.nan,
            "ci_low": float(bl),
            "ci_high": float(bh),
            "wilson_low": float(wl),
            "wilson_high": float(wh),
            "exact_low": el,
            "exact_high": eh,
            "boot_low": float(bl),
            "boot_high": float(bh),
            "margin": est_margin,
            "p_value": boot.p if test == "bootstrap" else sign,
            "p_bound": bool(boot.bound) if test == "bootstrap" else False,
            "n_boot_p": int(boot.n_boot),
            "p_sign": sign,
            "unit": "pair" if cluster is None else "source",
            "reference": reference,
            "tie_policy": tie_policy,
            "margin_low": wild_fields.get("margin_low", math.nan),
            "margin_high": wild_fields.get("margin_high", math.nan),
            "n_eff_clusters": wild_fields.get("n_eff_clusters", math.nan),
            "few_clusters": wild_fields.get("few_clusters", True),
            "method": wild_fields.get("method", f"cluster bootstrap ({reference}, B={n_boot})"),
        }
    ]


def _wild_alignment(
    success: np.ndarray,
    pref: np.ndarray,
    unit: np.ndarray,
    key: tuple[Any, ...],
    seed: int,
    level: float,
) -> tuple[inference.PValue, float, float, dict[str, Any]]:
    """Alignment's interval and the margin's test and interval, by the wild cluster bootstrap.

    Alignment = Σ success / Σ pairs; margin = Σ (pos − neg) / Σ decided, tested against 0
    (its interval inverts the test). Returns (p, alignment low, high, extra row fields).
    """
    n = len(success)
    pos = (pref == "pos").astype(float)
    neg = (pref == "neg").astype(float)
    aligned = estimates.ratio(
        success, np.ones(n), unit, level=level, rng=estimates.seeded(seed, "align", *key)
    )
    margin = estimates.contrast(
        pos - neg,
        pos + neg,
        np.zeros(n, dtype=np.int64),
        unit,
        [1.0],
        null=0.0,
        level=level,
        bounds=(-1.0, 1.0),
        rng=estimates.seeded(seed, "margin", *key),
    )
    p = inference.PValue(margin.p_value, wild.N_BOOT, math.nan, False)
    method = aligned.method
    if not np.isfinite(margin.p_value):  # e.g. every decided pair in one cluster
        method += f"; margin: no test ({margin.method})"
    extra = {
        "margin_low": margin.ci_low,
        "margin_high": margin.ci_high,
        "n_eff_clusters": aligned.n_eff_clusters,
        "few_clusters": aligned.few_clusters,
        "method": method,
    }
    return p, aligned.ci_low, aligned.ci_high, extra


def alignment(
    prefs: pd.DataFrame,
    *,
    tie_policy: str = "miss",
    by: Sequence[str] = ("judge", "method", "metric"),
    cluster: str | None = "cluster",
    test: str = "bootstrap",
    n_boot: int = 1000,
    seed: int = 0,
    level: float = 0.95,
    reference: str = "wild",
) -> pd.DataFrame:
    """Human alignment: the share of pairs where the method prefers the human-preferred item.

    Pairs of one source document are not independent (FaithBench has ten summaries per
    source and every cross-label pair of a source reuses them), so by default the interval
    (`ci_low/high`) and the test resample source documents (cluster bootstrap; issue 20).
    The test asks whether the method prefers the human-preferred member more often than the
    other (`margin` = (pos − neg) / decided pairs, null 0). By default (`reference="wild"`,
    issue 33) alignment and margin are ratios of sums with the restricted wild cluster
    bootstrap of `core.estimates`: `p_value` tests margin = 0 and inverts the margin's
    interval (`margin_low/high`). `reference="t"` (the default before issue 33): the
    t_{G−1} reference with the cluster-bootstrap SE (G sources), estimate ± t · SE clipped
    to the replicates' range, p = 2 · P(T > |margin| / SE). `reference="percentile"`: the
    percentile interval and the bootstrap p-value resolved adaptively
    (`inference.adaptive_p`). The exact sign test, which assumes independent pairs, stays as
    the legacy column `p_sign`.

    Args:
        prefs: Preferences (`pointwise_preferences` / `template_preferences`); `pref` is
            pos (aligned), neg, tie or invalid; `group` numbers the FaithBench source.
        tie_policy: `miss` (a tie counts 0), `half` (0.5) or `random` (a seeded coin per
            tie); invalid verdicts always count 0.
        by: Group columns.
        cluster: The resampling unit's column (default `cluster`; absent: the source
            `group`); None resamples pairs as independent (the legacy interval).
        test: `bootstrap` (default: `p_value` from the cluster bootstrap) or `sign` (legacy:
            `p_value` = the exact sign test of pos vs neg).
        n_boot: Bootstrap resamples of the interval (the p-value draws more when needed).
        seed: Seed of the random tie-break and of the bootstrap.
        level: Confidence level of every interval.
        reference: `wild` (default), `t` (before issue 33) or `percentile` (legacy) for the
            interval and test.

    Returns:
        One row per group: the `by` columns, `n` (pairs), `n_clusters` (units resampled),
        `aligned` (successes; fractional under `half`), `ties`, `invalid`, `alignment`,
        `ci_low/high` (the default interval: bootstrap over the units), `wilson_low/high`,
        `exact_low/high` (Clopper–Pearson; NaN for a fractional count), `boot_low/high`
        (= `ci_*`), `margin`, `p_value`, `p_bound` (p is an upper bound), `n_boot_p`,
        `p_sign` (exact sign test, assumes independent pairs), `unit`, `reference`,
        `tie_policy`, `margin_low/high` (the interval `p_value` inverts; `wild` only),
        `n_eff_clusters`, `few_clusters`, `method`.
    """
    check_choice("tie_policy", tie_policy, TIE_POLICIES)
    check_choice("test", test, TESTS)
    check_choice("reference", reference, REFERENCES)
    _need(prefs, [*by, "pref", "group"], "preferences")
    return per_group(
        prefs,
        by,
        lambda key, g: _aligned(
            g,
            key,
            tie_policy=tie_policy,
            cluster=cluster,
            test=test,
            n_boot=n_boot,
            seed=seed,
            level=level,
            reference=reference,
        ),
    )


def alignment_by_tie_policy(prefs: pd.DataFrame, **kwargs: object) -> pd.DataFrame:
    """Return `alignment` under every tie policy, stacked (column `tie_policy`)."""
    return pd.concat(
        [alignment(prefs, tie_policy=p, **kwargs) for p in TIE_POLICIES],  # type: ignore[arg-type]
        ignore_index=True,
    )


def _cell(a: float, lo: float, hi: float, n: float) -> str:
    if pd.isna(a):
        return ""
    ci = f" [{100 * lo:.0f}–{100 * hi:.0f}]" if pd.notna(lo) and pd.notna(hi) else ""
    size = f" n={int(n)}" if pd.notna(n) else ""
    return f"{100 * a:.1f}{ci}{size}"


def _your_rows(aligned: pd.DataFrame, ci: str) -> list[dict[str, str]]:
    """Table 1 rows of your judges: one cell per metric label, empty where not measured."""
    rows = []
    for (judge, method), g in aligned.groupby(["judge", "method"], sort=True):
        row = {"source": "yours", "judge": judge, "method": method}
        for m, lab in METRIC_LABELS.items():
            hit = g[g["metric"] == m]
            row[lab] = (
                ""
                if hit.empty
                else _cell(
                    hit["alignment"].iloc[0],
                    hit[f"{ci}_low"].iloc[0],
                    hit[f"{ci}_high"].iloc[0],
                    hit["n"].iloc[0],
                )
            )
        rows.append(row)
    return rows


def _paper_rows(level: float, targets_root: str | None) -> list[dict[str, str]]:
    """Table 1 rows of the paper, per language; Wilson intervals where it gives n."""
    t = targets.load_targets("ragas_romanian", "table1", root=targets_root)
    parts = t["row"].str.split(" | ", regex=False)
    t = t.assign(
        judge=parts.str[0],
        method=parts.str[1],
        language=t["column"].str.split(" | ", regex=False).str[0],
        metric=t["column"].str.split(" | ", regex=False).str[1],
    )
    rows = []
    for (lang, judge, method), g in t.groupby(["language", "judge", "method"], sort=False):
        row = {"source": f"paper · {lang}", "judge": judge, "method": method}
        for lab in METRIC_LABELS.values():
            hit = g[g["metric"] == lab]
            if hit.empty:
                row[lab] = ""
                continue
            v, n = hit["value"].iloc[0] / 100, hit["n"].iloc[0]
            lo, hi = stats.wilson_interval(v * n, n, level=level) if pd.notna(n) else (None, None)
            row[lab] = _cell(
                v, lo if lo is not None else np.nan, hi if hi is not None else np.nan, n
            )
        rows.append(row)
    return rows


def table1(
    aligned: pd.DataFrame,
    *,
    ci: str = "boot",
    with_paper: bool = True,
    level: float = 0.95,
    targets_root: str | None = None,
) -> pd.DataFrame:
    """The paper's Table 1 layout: alignment % [CI] n per judge × method (rows) and metric.

    Args:
        aligned: Output of `alignment` (by judge, method, metric).
        ci: Interval shown: `boot` (default: the source-clustered bootstrap), `wilson` or
            `exact` (both assume independent pairs).
        with_paper: Add the paper's rows (Romanian and English) from
            `data/targets/ragas_romanian/table1.csv`; the Romanian cells get the Wilson
            interval at the paper's n = 100.
        level: Confidence level of the paper rows' intervals.
        targets_root: Folder of the target CSVs (default: the project's).

    Returns:
        One row per (source, judge, method): `source`, `judge`, `method`, then one text
        column per metric label (`Faithfulness`, `Answer Relevancy`, `Context Relevancy`);
        empty where the metric was not measured.
    """
    check_choice("ci", ci, CIS)
    rows = _your_rows(aligned, ci)
    if with_paper:
        rows += _paper_rows(level, targets_root)
    return pd.DataFrame(rows, columns=["source", "judge", "method", *METRIC_LABELS.values()])
