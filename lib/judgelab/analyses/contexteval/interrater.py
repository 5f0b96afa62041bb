"""Inter-evaluator agreement of Contextualized Evaluations (spec 002 §2.3-2.4, Tables 4-5).

- `agreement`: the three agreement variants, named explicitly (§2.3): `A_all` (the paper's
  main number, which it labels "excluding ties"), `A_nontie` (the parenthesised number, which
  it labels "including ties"), `A_excl_tie_votes` ([X], Tie votes dropped); deltas against
  NoCtxGen-NoCtxEval with the repo's tests (paired t-test for A_all, Student t for the others).
- `kappa_table`: Fleiss' and Randolph's kappa per cell ([X]).
- `cross_source_agreement`: human vs autorater majority labels on the same queries ([X]).
- `constraint_subset_agreement`: Table 5 (human A_all on examples whose responses differ by at
  least one satisfied follow-up QA).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats as sps

from judgelab.analyses.contexteval.verdicts import (
    BASELINE,
    EXAMPLE_KEYS,
    LABELS,
    SETTINGS,
    setting_name,
)
from judgelab.core import stats
from judgelab.core.schema import require_columns as _require
from judgelab.errors import check_choice

VARIANTS = ("A_all", "A_nontie", "A_excl_tie_votes")
#: How each variant appears in the paper's Table 4 (spec 002 §2.3: the labels look swapped).
PAPER_LABELS = {
    "A_all": 'main number (paper label: "excluding ties")',
    "A_nontie": 'in parentheses (paper label: "including ties")',
    "A_excl_tie_votes": "not in the paper [X]: Tie votes dropped",
}
PAIRINGS = ("query", "example_key", "position")
_TABLE5_COLUMNS = [
    "pair",
    "setting",
    "n_subset",
    "n_with_labels",
    "agreement",
    "baseline_human",
    "baseline_autorater",
    "delta_vs_human_baseline",
    "delta_vs_autorater_baseline",
]


def _variant_values(ex: pd.DataFrame, variant: str) -> pd.Series:
    check_choice("variant", variant, VARIANTS)
    if variant == "A_all":
        return ex["plurality_share"]
    if variant == "A_nontie":
        return ex.loc[ex["nontie"], "plurality_share"]
    return ex["share_excl_tie_votes"].dropna()


def _paired(base: pd.DataFrame, cell: pd.DataFrame, pairing: str) -> tuple[np.ndarray, ...]:
    check_choice("pairing", pairing, PAIRINGS)
    if pairing == "position":
        if len(base) != len(cell):
            return np.array([]), np.array([])
        return base["plurality_share"].to_numpy(), cell["plurality_share"].to_numpy()
    b = base.assign(_k=base[pairing]).drop_duplicates("_k", keep=False)
    c = cell.assign(_k=cell[pairing]).drop_duplicates("_k", keep=False)
    m = b.merge(c, on="_k", suffixes=("_b", "_c"))
    return m["plurality_share_b"].to_numpy(), m["plurality_share_c"].to_numpy()


def agreement(
    examples: pd.DataFrame,
    *,
    variants: Sequence[str] = VARIANTS,
    baseline: str = BASELINE,
    pairing: str = "query",
    alpha: float = 0.05,
    n_boot: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> pd.DataFrame:
    """Return inter-evaluator agreement per source, pair, setting and variant (Table 4).

    Args:
        examples: The output of `example_table`.
        variants: Which of `A_all`, `A_nontie`, `A_excl_tie_votes` (see module docstring).
        baseline: The setting every delta and test compares with.
        pairing: How A_all examples are paired for the t-test: `query` (normalised query
            text, spec's recommendation), `example_key`, or `position` (the repo: list
            position; no test when the lengths differ).
        alpha: Significance level of the `significant` flag.
        n_boot: Bootstrap resamples (over examples) for the interval.
        seed: Bootstrap seed.
        level: Confidence level.

    Returns:
        `source, pair, setting, variant, paper_label, agreement` (percent), `n`, `ci_low`,
        `ci_high` (percent), `delta` (points vs `baseline`), `test`, `n_test`, `p_value`,
        `significant`.
    """
    _require(
        examples, [*EXAMPLE_KEYS, "plurality_share", "nontie", "share_excl_tie_votes"], "examples"
    )
    boot = {"n_boot": n_boot, "seed": seed, "level": level}
    rows = []
    for (source, pair), block in examples.groupby(["source", "pair"], sort=False):
        cells = {s: g for s, g in block.groupby("setting", sort=False)}
        order = [s for s in SETTINGS if s in cells] + [s for s in cells if s not in SETTINGS]
        for variant in variants:
            base_vals = _variant_values(cells[baseline], variant) if baseline in cells else None
            for setting in order:
                row = _agreement_row(cells[setting], variant, boot)
                row = {"source": source, "pair": pair, "setting": setting, **row}
                if base_vals is not None and setting != baseline and row["n"]:
                    row.update(_delta_test(cells, baseline, setting, variant, base_vals, pairing))
                    row["delta"] = row["agreement"] - 100 * float(np.mean(base_vals))
                rows.append(row)
    out = pd.DataFrame(rows)
    if out.empty:
        return out
    out["significant"] = out["p_value"] < alpha
    return out


def _agreement_row(cell: pd.DataFrame, variant: str, boot: dict[str, Any]) -> dict[str, Any]:
    """Return one cell's agreement (percent) with its bootstrap interval, no delta yet."""
    vals = _variant_values(cell, variant).to_numpy(dtype=float)
    est = stats.bootstrap_mean(vals, **boot)
    return {
        "variant": variant,
        "paper_label": PAPER_LABELS[variant],
        "agreement": 100 * est.estimate,
        "n": len(vals),
        "ci_low": 100 * est.low,
        "ci_high": 100 * est.high,
        "delta": np.nan,
        "test": "",
        "n_test": 0,
        "p_value": np.nan,
    }


def _delta_test(
    cells: dict[str, pd.DataFrame],
    baseline: str,
    setting: str,
    variant: str,
    base_vals: pd.Series,
    pairing: str,
) -> dict[str, Any]:
    """Return the repo's test of a setting against the baseline: `test, n_test, p_value`."""
    if variant == "A_all":
        x, y = _paired(cells[baseline], cells[setting], pairing)
        ok = len(x) > 1 and np.any(x != y)
        return {
            "test": f"ttest_rel (pairing={pairing})",
            "n_test": len(x),
            "p_value": float(sps.ttest_rel(x, y).pvalue) if ok else np.nan,
        }
    vals = _variant_values(cells[setting], variant)
    ok = len(vals) > 1 and len(base_vals) > 1
    return {
        "test": "ttest_ind",
        "n_test": len(vals) + len(base_vals),
        "p_value": float(sps.ttest_ind(base_vals, vals.to_numpy(dtype=float)).pvalue)
        if ok
        else np.nan,
    }


def kappa_table(examples: pd.DataFrame) -> pd.DataFrame:
    """Return Fleiss' and Randolph's (free-marginal) kappa per source, pair, setting ([X]).

    The repo prints `fleiss_kappa(table, method="rand")`, which is Randolph's kappa. Only
    examples with the cell's most common number of judges enter (kappa needs equal counts).

    Returns:
        `source, pair, setting, n, n_judges, fleiss_kappa, randolph_kappa`.
    """
    from statsmodels.stats.inter_rater import fleiss_kappa  # heavy: imported when used

    _require(examples, [*EXAMPLE_KEYS, "n_c1", "n_c2", "n_tie", "n_judges"], "examples")
    rows = []
    for (source, pair, setting), g in examples.groupby(["source", "pair", "setting"], sort=False):
        k = int(g["n_judges"].mode().iloc[0])
        table = g.loc[g["n_judges"] == k, ["n_c1", "n_c2", "n_tie"]].to_numpy(dtype=float)
        with np.errstate(divide="ignore", invalid="ignore"):
            fk = float(fleiss_kappa(table, method="fleiss")) if len(table) else np.nan
            rk = float(fleiss_kappa(table, method="rand")) if len(table) else np.nan
        rows.append(
            {
                "source": source,
                "pair": pair,
                "setting": setting,
                "n": len(table),
                "n_judges": k,
                "fleiss_kappa": fk,
                "randolph_kappa": rk,
            }
        )
    return pd.DataFrame(rows)


def _label_kappa(a: Sequence[str], b: Sequence[str]) -> float:
    """Return Cohen's kappa of two C1/C2/Tie label sequences of equal length."""
    index = {lab: k for k, lab in enumerate(LABELS)}
    conf = np.zeros((len(LABELS), len(LABELS)))
    np.add.at(conf, ([index[x] for x in a], [index[x] for x in b]), 1)
    return float(stats.kappa_from_confusion(conf))


def cross_source_agreement(
    examples: pd.DataFrame, *, a: str = "human", b: str = "autorater"
) -> pd.DataFrame:
    """Return agreement between two evaluator types' majority labels on the same queries ([X]).

    Examples are matched on pair, setting and normalised query text; only examples where both
    sides have a majority label enter. Not reported in the paper (spec 002 §2.3).

    Returns:
        `pair, setting, n_matched, agreement` (percent of equal majority labels), `kappa`
        (Cohen's, over C1/C2/Tie).
    """
    _require(examples, ["source", "pair", "setting", "query", "majority_label"], "examples")
    ex = examples[examples["majority_label"].notna() & (examples["query"] != "")]
    left = ex[ex["source"] == a].drop_duplicates(["pair", "setting", "query"], keep=False)
    right = ex[ex["source"] == b].drop_duplicates(["pair", "setting", "query"], keep=False)
    m = left.merge(right, on=["pair", "setting", "query"], suffixes=("_a", "_b"))
    rows = []
    for (pair, setting), g in m.groupby(["pair", "setting"], sort=False):
        la, lb = g["majority_label_a"].tolist(), g["majority_label_b"].tolist()
        rows.append(
            {
                "pair": pair,
                "setting": setting,
                "n_matched": len(g),
                "agreement": 100 * float(np.mean(np.array(la) == np.array(lb))),
                "kappa": _label_kappa(la, lb),
            }
        )
    return pd.DataFrame(rows, columns=["pair", "setting", "n_matched", "agreement", "kappa"])


def constraint_subset_agreement(
    examples: pd.DataFrame,
    followups: pd.DataFrame,
    *,
    min_abs_mean_diff: float = 1.0,
    baseline: str = BASELINE,
) -> pd.DataFrame:
    """Return human A_all on the constraint-difference subset (Table 5, spec 002 §2.4).

    An example enters when |mean over its annotators of (satisfied QAs of Response 1 −
    satisfied QAs of Response 2)| >= `min_abs_mean_diff`; only context-aware settings have
    the labels. Deltas are given against both baselines the spec names: the human A_all of
    the no-context setting (`delta_vs_human_baseline`) and the autorater A_all the paper
    printed as its baseline row (`delta_vs_autorater_baseline`, "as printed").

    Args:
        examples: The output of `example_table`.
        followups: Satisfied follow-up QAs per human annotation (as
            `catalog.contexteval.load_followups` returns): `example_key`, `setting` (the
            repo's id or the paper's name), `diff`.
        min_abs_mean_diff: The subset's threshold on |mean diff|.
        baseline: The no-context setting of the baselines.

    Returns:
        `pair, setting, n_subset, n_with_labels, agreement` (percent), `baseline_human`,
        `baseline_autorater`, `delta_vs_human_baseline`, `delta_vs_autorater_baseline`.
    """
    _require(followups, ["example_key", "setting", "diff"], "followups")
    named = followups.assign(setting=[setting_name(str(s)) for s in followups["setting"]])
    mean_diff = named.groupby(["setting", "example_key"])["diff"].mean()
    human = examples[examples["source"] == "human"]
    rows = []
    for (pair, setting), g in human.groupby(["pair", "setting"], sort=False):
        if setting == baseline:
            continue
        d = pd.Series(
            [mean_diff.get((setting, k), np.nan) for k in g["example_key"]], index=g.index
        )
        subset = g[d.abs() >= min_abs_mean_diff]
        agree = 100 * subset["plurality_share"].mean() if len(subset) else np.nan
        bh = _baseline_agreement(examples, "human", pair, baseline)
        ba = _baseline_agreement(examples, "autorater", pair, baseline)
        rows.append(
            {
                "pair": pair,
                "setting": setting,
                "n_subset": len(subset),
                "n_with_labels": int(d.notna().sum()),
                "agreement": agree,
                "baseline_human": bh,
                "baseline_autorater": ba,
                "delta_vs_human_baseline": agree - bh,
                "delta_vs_autorater_baseline": agree - ba,
            }
        )
    return pd.DataFrame(rows, columns=_TABLE5_COLUMNS)


def _baseline_agreement(examples: pd.DataFrame, source: str, pair: str, baseline: str) -> float:
    """Return A_all (percent) of one source and pair in the baseline setting (NaN if none)."""
    shares = examples[
        (examples["source"] == source)
        & (examples["pair"] == pair)
        & (examples["setting"] == baseline)
    ]["plurality_share"]
    return 100 * shares.mean() if len(shares) else np.nan
