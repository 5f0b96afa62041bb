"""Win rates by majority vote and rank flips of Contextualized Evaluations (Table 6, §2.5, §3.8).

- `win_rates`: per source, pair and setting, the majority win rates of each candidate and Tie
  (examples without a majority excluded and counted) with cluster-bootstrap intervals;
- `rank_flips`: the leader per setting and whether it flips against the baseline; the test
  of "C1 and C2 win equally often" (margin = 0), the context effect (the margin's change
  against the baseline) with its interval and test, and the bootstrap probability of a flip;
- `leaders_by_source`: the leaders of each evaluator type side by side.

Dependence ([X], issues 20 and 33): examples of one query or conversation (the `cluster`
column, else the query text, else the example key) are one cluster, and the *same* cluster
in two settings keeps both settings' examples together (the comparison is paired: the
settings judge the same queries). Tests and intervals (`test`): by default the restricted
wild cluster bootstrap with the interval that inverts it (`resampling.wild_estimate`), each
row with its effective clusters and `few_clusters`; `cluster_bootstrap` is the earlier
default (pairs cluster bootstrap, units seen in different sets of settings resampled within
their own stratum, `reference` t or percentile); `cluster=None` (every example independent;
Wilson intervals under the earlier methods) and `test="sign"` (the exact sign test, which
assumes independent examples) are the legacy; `sign_p` is always shown. P(flip) is the
pairs cluster bootstrap's share of resamples whose leader differs from the baseline's.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from judgelab.analyses.contexteval.resampling import (
    boot_table,
    effective_clusters,
    margin,
    ratio,
    setting_strata,
    units,
    wild_estimate,
    wild_fields,
)
from judgelab.analyses.contexteval.verdicts import (
    BASELINE,
    LABELS,
    SETTINGS,
    candidates,
    invalid_as_error,
)
from judgelab.core import estimates, stats
from judgelab.core.schema import require_columns as _require
from judgelab.errors import check_choice

WR_TESTS = ("wild", "cluster_bootstrap", "sign")
#: Columns naming a unit when the examples carry no `cluster` column, in order.
UNIT_FALLBACK = ("query", "example_key")
_NAMES = ("c1", "c2", "tie")


def _order(settings: list[str]) -> list[str]:
    return [s for s in SETTINGS if s in settings] + [s for s in settings if s not in SETTINGS]


def _block_values(block: pd.DataFrame, settings: list[str]) -> np.ndarray:
    """Return per example 4 columns per setting: majority C1, C2, Tie, any majority."""
    maj = block["majority_label"]
    values = np.zeros((len(block), 4 * len(settings)))
    for k, s in enumerate(settings):
        inside = (block["setting"] == s).to_numpy()
        for j, lab in enumerate(LABELS):
            values[:, 4 * k + j] = inside & (maj == lab).to_numpy()
        values[:, 4 * k + 3] = inside & maj.notna().to_numpy()
    return values


def _statistics(
    settings: list[str], baseline: str, *, flips_only: bool = False
) -> dict[str, tuple[Any, float | None]]:
    """Return the pairs-bootstrap statistics of a block (only the flips: `flips_only`)."""
    out: dict[str, tuple[Any, float | None]] = {}
    b = settings.index(baseline) if baseline in settings else None
    for k, s in enumerate(settings):
        if not flips_only:
            for j, name in enumerate(_NAMES):
                out[f"{s}|wr_{name}"] = (ratio(4 * k + j, 4 * k + 3, 100.0), None)
            out[f"{s}|margin"] = (margin(4 * k, 4 * k + 1, 4 * k + 3, 100.0), 0.0)
        if b is not None and k != b:
            if not flips_only:
                out[f"{s}|delta"] = (_delta(k, b), 0.0)
            out[f"{s}|flip"] = (_flip_stat(k, b), None)
    return out


def _arrays(values: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Return per row the margin's numerator (C1 − C2) and denominator (any) of setting k."""
    return values[:, 4 * k] - values[:, 4 * k + 1], values[:, 4 * k + 3]


def _wild_statistics(
    values: np.ndarray,
    unit: np.ndarray,
    settings: list[str],
    baseline: str,
    opts: dict[str, Any],
    key: tuple[str, ...],
) -> dict[str, dict[str, Any]]:
    """Return the wild-bootstrap fields of every win rate, margin and change of margin."""
    kw = {"level": opts["level"], "n_boot": opts["n_boot"]}
    seed = opts["seed"]
    out: dict[str, dict[str, Any]] = {}
    b = settings.index(baseline) if baseline in settings else None
    for k, s in enumerate(settings):
        num, den = _arrays(values, k)
        for j, name in enumerate(_NAMES):
            rng = estimates.seeded(seed, "rank_flips", *key, s, name)
            e = wild_estimate(
                values[:, 4 * k + j], den, unit, scale=100.0, bounds=(0, 100), rng=rng, **kw
            )
            out[f"{s}|wr_{name}"] = wild_fields(e)
        rng = estimates.seeded(seed, "rank_flips", *key, s, "margin")
        e = wild_estimate(num, den, unit, null=0.0, scale=100.0, bounds=(-100, 100), rng=rng, **kw)
        out[f"{s}|margin"] = wild_fields(e)
        if b is None or k == b:
            continue
        num_b, den_b = _arrays(values, b)
        group = (den > 0).astype(np.int64)  # 1: this setting's rows, 0: the baseline's
        rng = estimates.seeded(seed, "rank_flips", *key, s, "delta")
        e = wild_estimate(
            num + num_b,
            den + den_b,
            unit,
            group=group,
            weights=(-1.0, 1.0),
            null=0.0,
            scale=100.0,
            bounds=(-200, 200),
            rng=rng,
            **kw,
        )
        out[f"{s}|delta"] = wild_fields(e)
    return out


def _boot_effective(values: np.ndarray, unit: np.ndarray, settings: list[str], baseline: str):
    """Return the effective-cluster fields of the margins and changes (earlier methods)."""
    out: dict[str, dict[str, Any]] = {}
    b = settings.index(baseline) if baseline in settings else None
    for k, s in enumerate(settings):
        num, den = _arrays(values, k)
        out[f"{s}|margin"] = effective_clusters(num, den, unit)
        if b is not None and k != b:
            num_b, den_b = _arrays(values, b)
            out[f"{s}|delta"] = effective_clusters(
                num + num_b,
                den + den_b,
                unit,
                group=(den > 0).astype(np.int64),
                weights=(-1.0, 1.0),
            )
    return out


def _delta(k: int, b: int) -> Any:
    mk, mb = margin(4 * k, 4 * k + 1, 4 * k + 3, 100.0), margin(4 * b, 4 * b + 1, 4 * b + 3, 100.0)
    return lambda s: mk(s) - mb(s)


def _flip_stat(k: int, b: int) -> Any:
    mk, mb = margin(4 * k, 4 * k + 1, 4 * k + 3), margin(4 * b, 4 * b + 1, 4 * b + 3)
    return lambda s: (np.sign(mk(s)) != np.sign(mb(s))).astype(float)


def _leader(c1: str, c2: str, value: float) -> str:
    if not np.isfinite(value) or value == 0:
        return "none"
    return c1 if value > 0 else c2


def _cell_row(g: pd.DataFrame, boot: dict[str, dict[str, Any]], s: str, wilson: bool, level):
    """Return one cell's counts, win rates and intervals (Wilson when `wilson`)."""
    maj = g["majority_label"].dropna()
    n = len(maj)
    row: dict[str, Any] = {"n_majority": n, "n_excluded": len(g) - n}
    for lab, name in zip(LABELS, _NAMES, strict=True):
        k = int((maj == lab).sum())
        row[f"n_{name}"] = k
        row[f"wr_{name}"] = 100 * k / n if n else np.nan
        if wilson:
            low, high = stats.wilson_interval(k, n, level=level)
            row[f"wr_{name}_low"], row[f"wr_{name}_high"] = 100 * float(low), 100 * float(high)
        else:
            b = boot[f"{s}|wr_{name}"]
            row[f"wr_{name}_low"], row[f"wr_{name}_high"] = b["low"], b["high"]
    row["margin"] = row["wr_c1"] - row["wr_c2"]
    row["interval"] = "wilson" if wilson else "cluster_bootstrap"
    return row


def _block_rows(
    block: pd.DataFrame, *, baseline: str, test: str, cluster: str | None, opts: dict[str, Any]
) -> list[dict[str, Any]]:
    """Return the rows of one source and pair: every setting against the baseline."""
    settings = _order(list(dict.fromkeys(block["setting"])))
    unit = units(block, cluster, UNIT_FALLBACK)
    strata = setting_strata(unit, block["setting"])
    key = tuple(str(x) for x in block.iloc[0][["source", "pair"]])
    rng = stats.rng_for(opts["seed"], "rank_flips", *key)
    values = _block_values(block, settings)
    wild = test == "wild"
    boot = boot_table(
        values,
        unit,
        _statistics(settings, baseline, flips_only=wild),
        n_boot=opts["n_boot"],
        rng=rng,
        level=opts["level"],
        max_boot=opts["max_boot"],
        strata=strata,
        reference=opts["reference"],
    )
    if wild:
        boot.update(_wild_statistics(values, unit, settings, baseline, opts, key))
    else:
        for name, extra in _boot_effective(values, unit, settings, baseline).items():
            method = f"pairs cluster bootstrap ({opts['reference']}, B={opts['n_boot']})"
            boot[name].update(extra, method=method if cluster is not None else "independent")
    c1, c2 = candidates(key[1])
    rows = []
    for s in settings:
        g = block[block["setting"] == s]
        row = {"source": key[0], "pair": key[1], "candidate_1": c1}
        row.update(candidate_2=c2, setting=s)
        row.update(_cell_row(g, boot, s, cluster is None and not wild, opts["level"]))
        if wild:
            row["interval"] = "wild"
        m = boot[f"{s}|margin"]
        row.update(
            margin_low=m["low"], margin_high=m["high"], leader=_leader(c1, c2, row["margin"])
        )
        sign = stats.sign_test(row["n_c1"], row["n_c1"] + row["n_c2"]).p_value
        by_boot = test != "sign"
        row.update(
            test=f"{_TEST_NAMES[test]} ({cluster})" if by_boot else "sign",
            p_value=m["p_value"] if by_boot else sign,
            p_bound=m["p_bound"] if by_boot else False,
            n_boot_p=m["n_boot_p"] if by_boot else 0,
            sign_p=sign,
        )
        row.update({k: m[k] for k in _EFFECTIVE}, n=row["n_majority"], method=m["method"])
        rows.append(row)
    return _with_baseline(rows, boot, baseline, c1, c2)


#: The effective-cluster fields of a row (the margin's; `delta_*` those of its change).
_EFFECTIVE = ("n_clusters", "n_eff_clusters", "few_clusters")
_TEST_NAMES = {"wild": "wild cluster bootstrap", "cluster_bootstrap": "cluster_bootstrap"}


def _with_baseline(rows, boot, baseline: str, c1: str, c2: str) -> list[dict[str, Any]]:
    """Add the baseline leader, the margin's change (interval, p) and the flip columns."""
    base = next((r for r in rows if r["setting"] == baseline), None)
    for r in rows:
        r.update(baseline_leader=None, delta_margin=np.nan, delta_low=np.nan, delta_high=np.nan)
        r.update(delta_p=np.nan, delta_p_bound=False, delta_tie=np.nan, flipped=None)
        r.update(delta_n_clusters=0, delta_n_eff_clusters=np.nan, delta_few_clusters=None)
        r.update(delta_method="", p_flip=np.nan)
        if base is None:
            continue
        r["baseline_leader"] = base["leader"]
        r["flipped"] = bool(r["leader"] != base["leader"])
        r["delta_tie"] = r["wr_tie"] - base["wr_tie"]
        if r["setting"] == baseline:
            r.update(delta_margin=0.0, p_flip=0.0)
            continue
        d = boot[f"{r['setting']}|delta"]
        r.update(
            delta_margin=r["margin"] - base["margin"], delta_low=d["low"], delta_high=d["high"]
        )
        r.update(delta_p=d["p_value"], delta_p_bound=d["p_bound"])
        r.update({f"delta_{k}": d[k] for k in _EFFECTIVE}, delta_method=d["method"])
        r["p_flip"] = boot[f"{r['setting']}|flip"]["boot_mean"]
    return rows


def rank_flips(
    examples: pd.DataFrame,
    *,
    baseline: str = BASELINE,
    test: str = "wild",
    cluster: str | None = "cluster",
    missing_as_error: bool = True,
    n_boot: int = 1999,
    p_max_boot: int = 40_000,
    seed: int = 0,
    level: float = 0.95,
    reference: str = "t",
) -> pd.DataFrame:
    """Return win rates, leaders, tests and rank flips against `baseline` (Table 6, §3.8).

    The leader is the candidate with the higher majority win rate ("none" on equal rates);
    a flip is a leader different from the baseline's. [X] additions: the test of margin = 0
    (C1 and C2 majority wins equally likely), the margin's change against the baseline
    (`delta_margin`, the context effect) with a paired interval and test, and P(flip).

    Args:
        examples: The output of `example_table`.
        baseline: The setting compared with.
        test: `wild` (default: the restricted wild cluster bootstrap and the intervals that
            invert it), `cluster_bootstrap` (the earlier default: pairs cluster bootstrap,
            `reference`), or `sign` (legacy, independent examples; intervals as
            `cluster_bootstrap`).
        cluster: Unit column (absent: query text, then example key); None: every example
            its own unit (legacy; Wilson intervals unless `test` is `wild`).
        missing_as_error: Add rows (`missing` = "as_error", `invalid_as_error`) for pairs
            whose share of Invalid outputs differs between settings.
        n_boot: Bootstrap replicates (wild: B; pairs: resamples, p-values add more).
        p_max_boot: Most pairs-bootstrap resamples behind a p-value (beyond: a bound).
        seed: Bootstrap seed (each estimate's generator is keyed by it and the row).
        level: Confidence level.
        reference: Pairs-bootstrap intervals and p-values from `t` (t_{G−s} with the
            bootstrap SE) or `percentile` (legacy; `resampling` module docstring).

    Returns:
        `source, pair, candidate_1, candidate_2, setting, n_majority, n_excluded, n_c1, n_c2,
        n_tie, wr_*` (percent of |M|) with `wr_*_low/high`, `margin` (wr_c1 − wr_c2) with
        `margin_low/high`, `interval, leader, test, p_value` (of margin = 0), `p_bound,
        n_boot_p, sign_p, n` (= n_majority), `n_clusters, n_eff_clusters, few_clusters,
        method` (the margin's), `baseline_leader, delta_margin, delta_low, delta_high,
        delta_p, delta_p_bound, delta_n_clusters, delta_n_eff_clusters, delta_few_clusters,
        delta_method, delta_tie, flipped, p_flip, missing` ("as_tie": the repo's coding,
        or "as_error").
    """
    _require(examples, ["source", "pair", "setting", "majority_label"], "examples")
    check_choice("test", test, WR_TESTS)
    opts = {"n_boot": n_boot, "seed": seed, "level": level, "max_boot": p_max_boot}
    opts["reference"] = reference
    kw = {"baseline": baseline, "test": test, "cluster": cluster, "opts": opts}
    rows = []
    for _, block in examples.groupby(["source", "pair"], sort=False):
        for r in _block_rows(block, **kw):
            rows.append({**r, "missing": "as_tie"})
        if missing_as_error and _invalid_differs(block):
            for r in _block_rows(invalid_as_error(block), **kw):
                rows.append({**r, "missing": "as_error"})
    return pd.DataFrame(rows)


def _invalid_differs(block: pd.DataFrame) -> bool:
    """True when the share of Invalid verdicts differs between the block's settings."""
    if "n_invalid" not in block.columns or "n_judges" not in block.columns:
        return False
    g = block.groupby("setting")
    share = g["n_invalid"].sum() / (g["n_judges"].sum() + g["n_invalid"].sum())
    return bool(share.max() - share.min() > 1e-12)


def win_rates(
    examples: pd.DataFrame,
    *,
    test: str = "wild",
    cluster: str | None = "cluster",
    n_boot: int = 1999,
    seed: int = 0,
    level: float = 0.95,
) -> pd.DataFrame:
    """Return win rates by majority vote per source, pair and setting (Table 6, §2.5).

    Examples without a majority label (share <= 0.5) are excluded and counted. Intervals:
    the wild cluster bootstrap's by default (`test`, see `rank_flips` and the module
    docstring); `test="cluster_bootstrap"` the earlier pairs bootstrap; with it,
    `cluster=None` gives the legacy Wilson intervals.

    Returns:
        `source, pair, candidate_1, candidate_2, setting, n_majority` (|M|), `n_excluded`,
        `n_c1, n_c2, n_tie`, `wr_c1, wr_c2, wr_tie` (percent of |M|) with `*_low`, `*_high`,
        `margin` = wr_c1 - wr_c2, `interval`, `n_clusters, n_eff_clusters, few_clusters`.
    """
    flips = rank_flips(
        examples,
        test=test,
        cluster=cluster,
        missing_as_error=False,
        n_boot=n_boot,
        seed=seed,
        level=level,
    )
    if flips.empty:
        return flips
    keep = ["source", "pair", "candidate_1", "candidate_2", "setting", "n_majority"]
    keep += ["n_excluded", "n_c1", "n_c2", "n_tie"]
    for name in _NAMES:
        keep += [f"wr_{name}", f"wr_{name}_low", f"wr_{name}_high"]
    keep += ["margin", "interval", "n_clusters", "n_eff_clusters", "few_clusters"]
    return flips[keep].reset_index(drop=True)


def leaders_by_source(flips: pd.DataFrame) -> pd.DataFrame:
    """Return the leader per pair and setting side by side for each evaluator type.

    Returns:
        One row per `pair, setting`; a `leader_<source>` column per source, and `agree`
        (True when every source names the same leader).
    """
    _require(flips, ["source", "pair", "setting", "leader"], "flips")
    if "missing" in flips.columns:
        flips = flips[flips["missing"] != "as_error"]
    wide = flips.pivot_table(
        index=["pair", "setting"], columns="source", values="leader", aggfunc="first", sort=False
    )
    wide.columns = [f"leader_{c}" for c in wide.columns]
    wide["agree"] = wide.nunique(axis=1, dropna=False) == 1
    return wide.reset_index()
