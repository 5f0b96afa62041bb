from __future__ import annotations

import numpy as np
import pytest

from judgelab.core import stats


def test_wilson_known_values():
    # 0 of 10, z = 1.959964: upper = z² / (n + z²) = 3.841459 / 13.841459 = 0.277533
    low, high = stats.wilson_interval(0, 10)
    assert low == 0.0
    assert high == pytest.approx(0.277533, abs=1e-6)
    # 5 of 10: centre 0.5; half = z·sqrt(0.025 + z²/400) / (1 + z²/10)
    #        = 1.959964 · sqrt(0.025 + 0.0096036) / 1.3841459 = 0.263407
    low, high = stats.wilson_interval(5, 10)
    assert (low, high) == pytest.approx((0.5 - 0.263407, 0.5 + 0.263407), abs=1e-6)


def test_wilson_vectorised_and_empty():
    low, high = stats.wilson_interval(np.array([0, 5, 0]), np.array([10, 10, 0]))
    assert high[0] == pytest.approx(0.277533, abs=1e-6)
    assert low[1] == pytest.approx(0.236593, abs=1e-6)
    assert np.isnan(low[2]) and np.isnan(high[2])


def test_wilson_rejects_bad_level():
    with pytest.raises(ValueError, match="confidence level"):
        stats.wilson_interval(1, 2, level=95)


def test_sign_test_known_case():
    # 9 of 10 against 1/2: P(X >= 9) = (10 + 1) / 1024; two-sided doubles it = 22/1024
    result = stats.sign_test(9, 10)
    assert result == (9, 10, pytest.approx(22 / 1024))
    # balanced: 1 of 2 -> p = 1
    assert stats.sign_test(1, 2).p_value == pytest.approx(1.0)
    assert np.isnan(stats.sign_test(0, 0).p_value)


def test_bootstrap_sums_few_patterns_has_binomial_spread():
    # 0/1 values -> multinomial over 2 patterns; SE of the mean ≈ sqrt(p(1-p)/n)
    n = 400
    x = (np.arange(n) < 120).astype(float)  # p = 0.3
    reps = stats.bootstrap_sums(x, n_boot=4000, rng=stats.rng_for(1, "t")) / n
    assert reps.shape == (4000, 1)
    assert reps.mean() == pytest.approx(0.3, abs=0.005)
    # sqrt(0.3 · 0.7 / 400) = 0.022913
    assert reps.std() == pytest.approx(0.022913, rel=0.08)


def test_bootstrap_sums_many_patterns_uses_item_draws(rng):
    # continuous values: every row distinct -> weights path; SE ≈ sd / sqrt(n)
    n = 300
    x = rng.normal(size=n)
    reps = stats.bootstrap_sums(x, n_boot=3000, rng=stats.rng_for(2, "t"))[:, 0] / n
    assert reps.mean() == pytest.approx(x.mean(), abs=0.01)
    assert reps.std() == pytest.approx(x.std() / np.sqrt(n), rel=0.08)


def test_bootstrap_weights_rows_sum_to_n():
    w = stats.bootstrap_weights(7, n_boot=5, rng=stats.rng_for(0))
    assert w.shape == (5, 7)
    assert (w.sum(axis=1) == 7).all()


def test_bootstrap_sums_same_resample_for_all_columns():
    # column 2 = 2 · column 1, so every replicate sum must be exactly double
    x = np.arange(50, dtype=float) % 3
    reps = stats.bootstrap_sums(np.column_stack([x, 2 * x]), n_boot=200, rng=stats.rng_for(0))
    assert np.array_equal(reps[:, 1], 2 * reps[:, 0])


def test_bootstrap_mean_reproducible_and_seed_sensitive(rng):
    x = (rng.random(200) < 0.4).astype(float)
    a = stats.bootstrap_mean(x, n_boot=500, seed=3)
    b = stats.bootstrap_mean(x, n_boot=500, seed=3)
    c = stats.bootstrap_mean(x, n_boot=500, seed=4)
    assert a == b
    assert (a.low, a.high) != (c.low, c.high)
    assert a.low < a.estimate < a.high


def test_bootstrap_interval_shrinks_with_n():
    # same proportion 0.3; width scales like 1/sqrt(n): 100x the items -> ~1/10 the width
    small = stats.bootstrap_mean(np.repeat([1.0, 0, 0, 0, 0, 0, 0, 1, 1, 0], 5), n_boot=2000)
    large = stats.bootstrap_mean(np.repeat([1.0, 0, 0, 0, 0, 0, 0, 1, 1, 0], 500), n_boot=2000)
    assert small.estimate == large.estimate == pytest.approx(0.3)
    ratio = (large.high - large.low) / (small.high - small.low)
    assert 0.07 < ratio < 0.14


def test_paired_difference_identical_is_zero_and_known_diff():
    x = np.array([1, 1, 1, 0], dtype=float)
    same = stats.paired_bootstrap_difference(x, x, n_boot=300)
    assert same == (0.0, 0.0, 0.0)
    y = np.array([1, 0, 0, 0], dtype=float)
    d = stats.paired_bootstrap_difference(x, y, n_boot=2000)
    assert d.estimate == pytest.approx(0.75 - 0.25)
    # per-item differences are (0, 1, 1, 0): a resample mean lies in [0, 1]
    assert 0.0 <= d.low <= 0.5 <= d.high <= 1.0
    with pytest.raises(ValueError, match="shape"):
        stats.paired_bootstrap_difference(x, y[:3])


def test_percentile_interval_all_nan_column():
    reps = np.column_stack([np.arange(101, dtype=float), np.full(101, np.nan)])
    low, high = stats.percentile_interval(reps, level=0.9)
    # 5th and 95th percentiles of 0..100
    assert low[0] == pytest.approx(5.0) and high[0] == pytest.approx(95.0)
    assert np.isnan(low[1]) and np.isnan(high[1])


def test_ratio_replicates_zero_denominator_is_nan():
    out = stats.ratio_replicates(np.array([1.0, 2.0]), np.array([2.0, 0.0]))
    assert out[0] == 0.5 and np.isnan(out[1])


# --- interval_fields, pairwise_matrix, glm_rows (shared table builders) ---


def test_interval_fields_names_half_width_and_n():
    reps = np.array([0.2, 0.4, 0.6, 0.8, np.nan])
    f = stats.interval_fields(0.5, reps, level=0.5, half_width=True, n=7)
    # nanquantile of [.2, .4, .6, .8] at .25 and .75: 0.35 and 0.65
    assert list(f) == ["value", "ci_low", "ci_high", "half_width", "n"]
    assert (f["value"], f["ci_low"], f["ci_high"]) == pytest.approx((0.5, 0.35, 0.65))
    assert f["half_width"] == pytest.approx(0.15) and f["n"] == 7
    named = stats.interval_fields(1.0, reps, names=("diff", "lo", "hi"))
    assert list(named) == ["diff", "lo", "hi"]
    empty = stats.interval_fields(np.nan, np.full(3, np.nan), half_width=True)
    assert all(np.isnan(v) for v in empty.values())


def test_pairwise_matrix_mirrors_swaps_and_fills_the_diagonal():
    def pair(a, b):
        return {"x_1": f"{a}1", "x_2": f"{b}2", "same": 0.0}

    m = stats.pairwise_matrix(
        ["c", "a", "b", "a"], pair, diagonal=lambda a: {"same": 1.0}, swap=[("x_1", "x_2")]
    )
    assert m[["judge_1", "judge_2"]].apply(tuple, axis=1).tolist() == [
        ("a", "b"), ("b", "a"), ("a", "c"), ("c", "a"), ("b", "c"), ("c", "b"),
        ("a", "a"), ("b", "b"), ("c", "c"),
    ]  # fmt: skip
    assert m.loc[1, ["x_1", "x_2"]].tolist() == ["b2", "a1"]  # swapped in the mirror
    assert m["same"].tolist() == [0.0] * 6 + [1.0] * 3
    assert m.loc[6:, "x_1"].isna().all()  # the diagonal has no pair columns
    assert list(stats.pairwise_matrix(["a"], pair).columns) == ["judge_1", "judge_2"]


def test_glm_rows_reads_terms_of_a_fit_and_nan_without_one():
    import pandas as pd
    import statsmodels.api as sm

    x = pd.DataFrame({"const": 1.0, "x": [0.0, 1.0, 2.0, 3.0, 4.0]})
    res = sm.OLS([0.1, 2.0, 3.9, 6.1, 8.0], x).fit()
    rows = stats.glm_rows(res, level=0.9)
    assert rows["term"].tolist() == ["const", "x"] and (rows["n"] == 5).all()
    ci = res.conf_int(alpha=0.1)
    assert rows["coef"].tolist() == pytest.approx(res.params.tolist())
    assert rows["ci_low"].tolist() == pytest.approx(ci[0].tolist())
    assert rows["p_value"].tolist() == pytest.approx(res.pvalues.tolist())
    assert "odds_ratio" not in rows
    odds = stats.glm_rows(res, terms=["x"], odds_ratio=True, n=9).iloc[0]
    assert odds["odds_ratio"] == pytest.approx(np.exp(res.params["x"])) and odds["n"] == 9
    failed = stats.glm_rows(None, terms=["x"], n=3).iloc[0]
    assert np.isnan(failed["coef"]) and failed["n"] == 3
    with pytest.raises(ValueError, match="terms"):
        stats.glm_rows(None)


def test_rescaled_bootstrap_is_unbiased_for_the_variance_of_a_sum():
    """Rao–Wu (n − 1 draws, weight n / (n − 1)): E[sum*] = sum, Var[sum*] = n·s² (not (n−1)·s²)."""
    x = np.array([0.0, 1.0, 3.0, 7.0, 2.0, 5.0])  # few units: where the naive bootstrap is short
    n, s2 = x.size, x.var(ddof=1)
    for rng_seed, many in ((1, False), (2, True)):
        vals = np.column_stack([x, np.arange(n)]) if many else x  # pattern and block paths
        sums = stats.bootstrap_sums(vals, n_boot=200_000, rng=np.random.default_rng(rng_seed))
        assert sums[:, 0].mean() == pytest.approx(x.sum(), rel=0.01)
        assert sums[:, 0].var() == pytest.approx(n * s2, rel=0.03)
    naive = stats.bootstrap_sums(x, n_boot=200_000, rng=np.random.default_rng(3), rescaled=False)
    assert naive[:, 0].var() == pytest.approx((n - 1) * s2, rel=0.03)
