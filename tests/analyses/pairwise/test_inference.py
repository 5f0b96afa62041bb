"""Issue 33: every pairwise row is one `core.estimates` row; its p-value inverts its interval."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from judgelab.analyses import pairwise
from judgelab.analyses.pairwise import rates as rates_mod
from judgelab.core import estimates, schema, wild

SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def clustered(seed, n_clusters, n_items, judges=("J1",), bias_sd=0.8, spread=1.5):
    """Judgments of unequal clusters whose position bias varies by cluster (δ_c ~ N(0, sd))."""
    rng = np.random.default_rng(seed)
    w = np.exp(spread * rng.standard_normal(n_clusters))
    sizes = 1 + rng.multinomial(max(n_items - n_clusters, 0), w / w.sum())
    cluster = np.repeat(np.arange(n_clusters), sizes)
    delta = rng.normal(0.0, bias_sd, n_clusters)[cluster]
    rows = []
    for judge in judges:
        skill = rng.normal(0.8, 0.7, n_clusters)[cluster]
        for i in range(len(cluster)):
            for order, sign in ((0, 1.0), (1, -1.0)):
                u = rng.random()
                p_pos = 1 / (1 + np.exp(-(skill[i] + sign * delta[i])))
                chosen = "tie" if u < 0.08 else ("pos" if rng.random() < p_pos else "neg")
                chosen = None if rng.random() < 0.05 else chosen
                rows.append(
                    dict(benchmark="b", split="s", item_id=f"i{i}", judge=judge, order=order,
                         sample=0, valid=chosen is not None, chosen=chosen,
                         correct=None if chosen is None else chosen == "pos")
                )  # fmt: skip
    table = schema.new_judgments(rows)
    table["cluster"] = [f"c{cluster[int(i[1:])]}" for i in table["item_id"]]
    return table


def _agrees(low: float, high: float, p: float, null: float, level: float = 0.95) -> bool:
    """p < 1 − level exactly when `null` lies outside [low, high] — up to an atom.

    With few clusters the randomization distribution has atoms: at the null itself clusters
    whose restricted residual is exactly 0 drop out, so p there may differ from p a hair
    away; the interval's end then sits on the null (within 1e-3 of its width).
    """
    inside = low <= null <= high
    on_edge = min(abs(null - low), abs(null - high)) <= 1e-3 * (high - low) + 1e-12
    return on_edge or inside == (p >= 1 - level)


@SETTINGS
@given(seed=st.integers(0, 10_000), G=st.integers(3, 20), per=st.integers(2, 8))
def test_rel3_33_position_p_value_inverts_its_interval(seed, G, per):
    table = clustered(seed, G, G * per)
    rates = pairwise.pairwise_rates(
        pairwise.item_outcomes(table), across=None, n_boot=399, seed=seed,
        metrics=pairwise.position.NEEDED,
    )  # fmt: skip
    row = pairwise.position_preference(rates).iloc[0]
    if not np.isfinite(row["p_value"]):
        return
    assert _agrees(row["decisive_low"], row["decisive_high"], row["p_value"], 0.5)
    assert row["n_eff_clusters"] <= row["n_clusters"] + 1e-9
    assert row["few_clusters"] == (row["n_eff_clusters"] < 20)


@SETTINGS
@given(seed=st.integers(0, 10_000), G=st.integers(3, 15), per=st.integers(2, 6))
def test_rel3_33_judge_difference_p_value_inverts_its_interval(seed, G, per):
    table = clustered(seed, G, G * per, judges=("J1", "J2"))
    row = pairwise.compare_judges(
        pairwise.item_outcomes(table), across=None, n_boot=399, seed=seed
    ).iloc[0]
    if not np.isfinite(row["p_value"]):
        return
    assert _agrees(row["ci_low"], row["ci_high"], row["p_value"], 0.0)
    assert -1.0 <= row["ci_low"] <= row["diff"] <= row["ci_high"] <= 1.0


def test_rel3_33_an_interior_dip_of_p_no_longer_hides_behind_the_interval():
    """5 unequal clusters (A/decisive: 2/7, 0/2, 3/8, 0/1, 13/26; 2.4 effective): p(1/2) was
    0.038 while the reported interval was [0, 1] — p(r) dips below 0.05 around 0.5 only.
    The exact step function of p (core.wild_hull) reports the hull and its hull p-value."""
    table = clustered(50, 5, 25)
    rates = pairwise.pairwise_rates(
        pairwise.item_outcomes(table), across=None, n_boot=399, seed=50,
        metrics=pairwise.position.NEEDED,
    )  # fmt: skip
    row = pairwise.position_preference(rates).iloc[0]
    assert row["n_eff_clusters"] < 3
    assert _agrees(row["decisive_low"], row["decisive_high"], row["p_value"], 0.5)


def test_rel3_33_unit_sums_are_the_engine_sums_of_the_item_rows():
    """`pairwise_rates`' per-unit moments hand `estimates.from_sums` exactly what
    `estimates.ratio` builds from the item rows: same row, same seed, same numbers."""
    table = clustered(3, 9, 70)
    out = pairwise.item_outcomes(table)
    got = pairwise.pairwise_rates(out, across=None, n_boot=299, seed=4).set_index("metric")
    values, names = rates_mod._value_matrix(out)
    complete = out["complete"].to_numpy(dtype=bool)
    for metric in ("ca", "pos_a_rate_decisive", "run_gap", "flip_rate"):
        num_col, den_col, _ = rates_mod.METRICS[metric]
        num = values[complete, names.index(num_col)]
        den = values[complete, names.index(den_col)]
        null = 0.5 if metric == "pos_a_rate_decisive" else float("nan")
        bounds = (-1.0, 1.0) if metric == "run_gap" else (0.0, 1.0)
        key = ("split", "J1", "b", "s", "0", metric)
        want = estimates.ratio(
            num, den, out["cluster"].to_numpy()[complete], null=null, n_boot=299,
            rng=estimates.seeded(4, *key), bounds=bounds,
        )  # fmt: skip
        row = got.loc[metric]
        assert (row["value"], row["ci_low"], row["ci_high"]) == (
            want.value,
            want.ci_low,
            want.ci_high,
        ), metric
        assert row["n_eff_clusters"] == want.n_eff_clusters and row["method"] == want.method
        assert np.array_equal(row["p_value"], want.p_value, equal_nan=True)


def test_rel3_33_every_row_says_what_stands_behind_it():
    table = clustered(8, 6, 40)
    rates = pairwise.pairwise_rates(pairwise.item_outcomes(table), n_boot=199)
    for col in ("n", "n_clusters", "n_eff_clusters", "few_clusters", "method"):
        assert col in rates.columns
    defined = rates[rates["value"].notna()]
    assert (defined["n_clusters"] <= 6).all() and defined["few_clusters"].all()
    assert defined["method"].str.match(r"wild cluster bootstrap|Wilson").all()
    # the earlier default stays reachable, and says so
    old = pairwise.pairwise_rates(pairwise.item_outcomes(table), n_boot=199, inference="bootstrap")
    assert old["method"].str.startswith("cluster bootstrap, percentile").all()
    assert np.allclose(old["value"], rates["value"], equal_nan=True)


def test_rel3_33_wald_fallback_agrees_with_the_wild_interval_with_many_clusters(monkeypatch):
    table = clustered(11, 400, 1200, bias_sd=0.3, spread=0.2)  # ~400 effective clusters
    out = pairwise.item_outcomes(table)
    kw = dict(across=None, n_boot=999, metrics=["ca", "pos_a_rate_decisive"])
    boot = pairwise.pairwise_rates(out, **kw).set_index("metric")
    monkeypatch.setattr(wild, "MAX_CELLS", 1000)
    wald = pairwise.pairwise_rates(out, **kw).set_index("metric")
    assert (wald["method"] == estimates.WALD).all()
    for m in ("ca", "pos_a_rate_decisive"):
        w_width = boot.loc[m, "ci_high"] - boot.loc[m, "ci_low"]
        assert wald.loc[m, "ci_high"] - wald.loc[m, "ci_low"] == pytest.approx(w_width, rel=0.1)
        assert wald.loc[m, "n_eff_clusters"] == pytest.approx(boot.loc[m, "n_eff_clusters"])
    assert wald.loc["pos_a_rate_decisive", "p_value"] == pytest.approx(
        boot.loc["pos_a_rate_decisive", "p_value"], abs=0.05
    )


def test_rel3_33_pooled_row_is_one_ratio_over_the_union_of_sources():
    a = clustered(1, 6, 40)
    b = clustered(2, 5, 30).assign(split="t")
    b["cluster"] = b["cluster"] + "/t"
    both = pd.concat([a, b], ignore_index=True)
    out = pairwise.item_outcomes(both)
    rates = pairwise.pairwise_rates(out, n_boot=199, metrics=["ca"], seed=3)
    pooled = rates[rates["aggregation"] == "pooled"].iloc[0]
    split = rates[rates["aggregation"] == "split"]
    assert pooled["value"] == pytest.approx(split["k"].sum() / split["n"].sum())
    assert pooled["n_clusters"] == 11 and pooled["ci_low"] < pooled["value"] < pooled["ci_high"]
    # the engine's ratio over every complete item of both splits, sources as units
    comp = out[out["complete"].astype(bool)]
    want = estimates.ratio(
        comp["consistently_correct"].astype(float).to_numpy(), np.ones(len(comp)),
        comp["cluster"].to_numpy(), n_boot=199,
        rng=estimates.seeded(3, "pooled", "J1", "b", "0", "pooled", "ca"),
    )  # fmt: skip
    assert (pooled["ci_low"], pooled["ci_high"]) == (want.ci_low, want.ci_high)
    mean = rates[rates["aggregation"] == "mean_of_splits"].iloc[0]
    assert mean["value"] == pytest.approx(split["value"].mean())
