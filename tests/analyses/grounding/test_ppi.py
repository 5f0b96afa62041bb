"""PPI++ estimates: hand-computed formulas, identities, and coverage on planted truth."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps
from scipy.special import expit

from judgelab.analyses import grounding
from judgelab.core import stats
from judgelab.errors import ChoiceError

Z95 = float(sps.norm.ppf(0.975))
NAN = np.nan


def rows(table: pd.DataFrame) -> pd.DataFrame:
    return table.set_index("method")


# -- (1) hand-computed examples ------------------------------------------------------------


def test_numeric_hand_example_every_method():
    # labelled: Y = (2, 4, 6), f = (1, 3, 2); unlabelled f = (2, 4): n = 3, N = 2.
    judge = np.array([1.0, 3.0, 2.0, 2.0, 4.0])
    human = np.array([2.0, 4.0, 6.0, NAN, NAN])
    t = rows(grounding.estimates(judge, human, interval="z"))
    # Cov_l(Y, f) = [(-2)(-1) + 0·1 + 2·0] / 3 = 2/3 (1/n);
    # Var_a(f): all f = 1, 3, 2, 2, 4, mean 2.4, SS = 5.2, / 4 = 1.3;
    # λ = (2/3) / ((1 + 3/2) · 1.3) = 8/39.
    lam = 8 / 39
    assert t.loc["ppi", "lambda"] == pytest.approx(lam)
    # θ = λ · mean_u(f) + mean_l(Y − λ f) = 3λ + 4 − 2λ = 4 + λ.
    assert t.loc["ppi", "estimate"] == pytest.approx(4 + lam)
    # Var_l(Y) = 4, Var_l(f) = 1, Cov_l = 1 (1/(n−1)); Var_u(f) = 2:
    # σ² = (4 − 2λ + λ²) / 3 + λ² · 2 / 2.
    se = np.sqrt((4 - 2 * lam + lam**2) / 3 + lam**2)
    assert t.loc["ppi", "se"] == pytest.approx(se)
    assert t.loc["ppi", "ci_low"] == pytest.approx(4 + lam - Z95 * se)
    assert t.loc["ppi", "width"] == pytest.approx(2 * Z95 * se)
    # plain PPI: 3 + (4 − 2) = 5; Var_l(Y − f) = Var(1, 1, 4) = 3, σ² = 3/3 + 2/2 = 2.
    assert t.loc["ppi_plain", "estimate"] == pytest.approx(5.0)
    assert t.loc["ppi_plain", "se"] == pytest.approx(np.sqrt(2.0))
    # classical: mean 4, σ² = 4 / 3; naive: mean 2.4, σ² = 1.3 / 5.
    assert t.loc["classical", ["estimate", "se"]].tolist() == pytest.approx([4, np.sqrt(4 / 3)])
    assert t.loc["naive", ["estimate", "se"]].tolist() == pytest.approx([2.4, np.sqrt(0.26)])
    assert set(t["interval"]) == {"z"}
    assert t["n_labelled"].unique().tolist() == [3] and t["n_total"].unique().tolist() == [5]


def test_estimates_shift_with_the_scores_without_losing_precision():
    judge = np.array([1.0, 3.0, 2.0, 2.0, 4.0])
    human = np.array([2.0, 4.0, 6.0, NAN, NAN])
    base = rows(grounding.estimates(judge, human))
    far = rows(grounding.estimates(judge + 1e9, human + 1e9))
    assert (far["estimate"] - 1e9).tolist() == pytest.approx(base["estimate"].tolist(), abs=1e-6)
    assert far["se"].tolist() == pytest.approx(base["se"].tolist(), rel=1e-9)


def test_binary_hand_example_and_wilson_rows():
    judge = np.array([1, 1, 0, 1, 1, 1.0])
    human = np.array([1, 0, 0, NAN, NAN, NAN])
    t = rows(grounding.estimates(judge, human, interval="z"))
    # Cov_l = 1/9; Var_a(f) = (5 · 1/36 + 25/36) / 5 = 1/6; λ = (1/9) / (2 · 1/6) = 1/3.
    assert t.loc["ppi", "lambda"] == pytest.approx(1 / 3)
    # θ = 1/3 · 1 + 1/3 − 1/3 · 2/3 = 4/9; Y − f/3 = (2/3, −1/3, 0): Var = 7/27, Var_u(f) = 0.
    assert t.loc["ppi", "estimate"] == pytest.approx(4 / 9)
    assert t.loc["ppi", "se"] == pytest.approx(np.sqrt(7 / 81))
    # classical 1/3 and naive 5/6 with Wilson intervals of 1 in 3 and 5 in 6.
    lo, hi = stats.wilson_interval(1, 3)
    assert t.loc["classical", ["estimate", "ci_low", "ci_high"]].tolist() == pytest.approx(
        [1 / 3, float(lo), float(hi)]
    )
    lo, hi = stats.wilson_interval(5, 6)
    assert t.loc["naive", ["ci_low", "ci_high"]].tolist() == pytest.approx([float(lo), float(hi)])
    assert t.loc["naive", "interval"] == "wilson" and t.loc["ppi", "interval"] == "z"


def test_pairwise_tie_rules_score_the_outcome():
    labels = ["A", "B", "tie", "A", None]
    assert grounding.pairwise_scores(labels).ravel()[:4].tolist() == [1, 0, 0.5, 1]
    assert grounding.pairwise_scores(labels, ties="loss").ravel()[:4].tolist() == [1, 0, 0, 1]
    assert np.isnan(grounding.pairwise_scores(labels)[4, 0])
    drop = grounding.pairwise_scores(labels, ties="drop")
    assert drop[:4].tolist() == [[1, 1], [0, 1], [0, 0], [1, 1]]
    custom = grounding.pairwise_scores(["x", "y"], outcomes=("x", "y", "="))
    assert custom.ravel().tolist() == [1.0, 0.0]
    with pytest.raises(ValueError, match="unknown pairwise label"):
        grounding.pairwise_scores(["A", "C"])
    with pytest.raises(ChoiceError):
        grounding.pairwise_scores(["A"], ties="coin")


def test_winrate_with_ties_dropped_is_a_ratio_with_delta_method_variance():
    judge = ["A", "A", "B", "tie", "A", "B", "A", "tie", "A", "B"]
    human = ["A", "B", "B", "tie", "A", "tie", None, None, None, None]
    got = grounding.ppi_winrate(judge, human, ties="drop", interval="z")
    f = grounding.pairwise_scores(judge, ties="drop")
    y = grounding.pairwise_scores(human, ties="drop")
    lab = ~np.isnan(y[:, 0])
    yl, fl, fu = y[lab], f[lab], f[~lab]
    n, big_n = len(yl), len(fu)
    # λ from the linearised outcome a·(g1, g2), a = (1/m2, −θ1/m2) at the λ = 1 estimate.
    m1 = fu.mean(0) + yl.mean(0) - fl.mean(0)
    a0 = np.array([1 / m1[1], -m1[0] / m1[1] ** 2])
    cov = np.mean((yl @ a0 - (yl @ a0).mean()) * (fl @ a0 - (fl @ a0).mean()))
    var_all = np.var(np.concatenate([fl, fu]) @ a0, ddof=1)
    lam = np.clip(cov / ((1 + n / big_n) * var_all), 0, 1)
    m = lam * fu.mean(0) + yl.mean(0) - lam * fl.mean(0)
    theta = m[0] / m[1]
    a = np.array([1 / m[1], -theta / m[1]])
    var = np.var((yl - lam * fl) @ a, ddof=1) / n + lam**2 * np.var(fu @ a, ddof=1) / big_n
    assert got["lambda"] == pytest.approx(lam)
    assert got["estimate"] == pytest.approx(theta)
    assert got["se"] == pytest.approx(np.sqrt(var))
    t = rows(grounding.estimates(f, y, ratio=True))
    # classical: 2 A wins among 4 decisive human labels (Wilson); naive: 5 of 8 decisive.
    assert t.loc["classical", "estimate"] == pytest.approx(2 / 4)
    lo, hi = stats.wilson_interval(2, 4)
    assert t.loc["classical", ["ci_low", "ci_high"]].tolist() == pytest.approx(
        [float(lo), float(hi)]
    )
    assert t.loc["naive", "estimate"] == pytest.approx(5 / 8)


def test_winrate_half_and_loss_are_means_of_scores():
    judge = ["A", "tie", "B", "A", "A", "tie", "B", "A"]
    human = ["A", "B", "B", "tie", None, None, None, None]
    half = grounding.ppi_winrate(judge, human)
    direct = grounding.ppi_mean(
        grounding.pairwise_scores(judge).ravel(), grounding.pairwise_scores(human).ravel()
    )
    assert half["estimate"] == pytest.approx(direct["estimate"])
    score = lambda x: grounding.pairwise_scores(x, ties="loss")  # noqa: E731
    loss = rows(grounding.estimates(score(judge), score(human)))
    assert loss.loc["classical", "estimate"] == pytest.approx(1 / 4)  # A won 1 of 4 labelled
    assert loss.loc["naive", "estimate"] == pytest.approx(4 / 8)


def test_stratified_estimate_combines_strata_by_population_share():
    rng = np.random.default_rng(4)
    n = 300
    stratum = np.where(np.arange(n) < 100, "hard", "easy")
    y = rng.normal(np.where(stratum == "hard", 2.0, 5.0), 1.0)
    f = y + rng.normal(0.5, 0.5, n)
    lab = rng.random(n) < np.where(stratum == "hard", 0.4, 0.1)
    human = np.where(lab, y, NAN)
    t = rows(grounding.estimates(f, human, stratum=stratum))
    parts = {h: rows(grounding.estimates(f[stratum == h], human[stratum == h]))
             for h in ("hard", "easy")}  # fmt: skip
    w = {"hard": 100 / 300, "easy": 200 / 300}
    for method in ("ppi", "ppi_plain", "classical", "naive"):
        est = sum(w[h] * parts[h].loc[method, "estimate"] for h in w)
        se = np.sqrt(sum(w[h] ** 2 * parts[h].loc[method, "se"] ** 2 for h in w))
        assert t.loc[method, "estimate"] == pytest.approx(est)
        assert t.loc[method, "se"] == pytest.approx(se)
    lam = sum(w[h] * parts[h].loc["ppi", "lambda"] for h in w)
    assert t.loc["ppi", "lambda"] == pytest.approx(lam)
    assert t.loc["naive", "estimate"] == pytest.approx(f.mean())


# -- (2) identities -------------------------------------------------------------------------


def _numeric(rng, n_total=400, n=60):
    y = rng.normal(3.0, 1.0, n_total)
    f = 0.4 + 0.8 * y + rng.normal(0, 0.6, n_total)
    lab = np.zeros(n_total, bool)
    lab[rng.choice(n_total, n, replace=False)] = True
    return f, np.where(lab, y, NAN), lab


def test_lambda_one_is_plain_ppi_and_lambda_zero_is_the_human_mean():
    f, human, lab = _numeric(np.random.default_rng(1))
    yl, fl, fu = human[lab], f[lab], f[~lab]
    one = rows(grounding.estimates(f, human, lambda_=1.0, interval="z"))
    # PPI (Angelopoulos et al. 2023): mean_u(f) + mean_l(Y − f), Var_l(Y − f)/n + Var_u(f)/N.
    assert one.loc["ppi", "estimate"] == pytest.approx(fu.mean() + (yl - fl).mean())
    se = np.sqrt(np.var(yl - fl, ddof=1) / len(yl) + np.var(fu, ddof=1) / len(fu))
    assert one.loc["ppi", "se"] == pytest.approx(se)
    assert one.loc["ppi", ["estimate", "se"]].tolist() == pytest.approx(
        one.loc["ppi_plain", ["estimate", "se"]].tolist()
    )
    zero = rows(grounding.estimates(f, human, lambda_=0.0, interval="z"))
    assert zero.loc["ppi", "estimate"] == pytest.approx(yl.mean())
    assert zero.loc["ppi", ["ci_low", "ci_high"]].tolist() == pytest.approx(
        zero.loc["classical", ["ci_low", "ci_high"]].tolist()
    )
    fixed = grounding.ppi_mean(f, human, lambda_=0.25)
    assert fixed["estimate"] == pytest.approx(0.25 * fu.mean() + (yl - 0.25 * fl).mean())


def test_tuned_lambda_matches_the_ppi_py_estimator():
    f, human, lab = _numeric(np.random.default_rng(2))
    yl, fl, fu = human[lab], f[lab], f[~lab]
    n, big_n = len(yl), len(fu)
    cov = np.mean((yl - yl.mean()) * (fl - fl.mean()))
    lam = np.clip(cov / ((1 + n / big_n) * np.var(f, ddof=1)), 0, 1)
    got = grounding.ppi_mean(f, human)
    assert got["lambda"] == pytest.approx(lam)
    assert got["estimate"] == pytest.approx(lam * fu.mean() + (yl - lam * fl).mean())
    # An anti-correlated judge is clipped to λ = 0: PPI++ falls back to the human mean.
    anti = grounding.ppi_mean(-f, human)
    assert anti["lambda"] == 0.0 and anti["estimate"] == pytest.approx(yl.mean())


def test_all_labelled_items_fall_back_to_the_human_mean():
    y = np.array([1.0, 2.0, 4.0, 7.0])
    got = grounding.ppi_mean(y + 1, y)
    assert got["lambda"] == 0.0 and got["estimate"] == pytest.approx(3.5)


# -- (3) a perfect judge --------------------------------------------------------------------


def test_perfect_judge_narrows_the_interval():
    rng = np.random.default_rng(3)
    y = (rng.random(1000) < 0.7).astype(float)
    lab = np.zeros(1000, bool)
    lab[:50] = True
    t = rows(grounding.estimates(y, np.where(lab, y, NAN)))
    # λ̂ ≈ 1 / (1 + n/N); the width shrinks by about √(n / N) ≈ 0.23.
    assert t.loc["ppi", "lambda"] >= 0.9  # clipped at 1 when Var_l(Y) > (1 + n/N) Var_a(f)
    assert t.loc["ppi", "width"] < 0.4 * t.loc["classical", "width"]
    assert t.loc["ppi", "estimate"] == pytest.approx(y.mean(), abs=0.01)


# -- intervals, options and errors ----------------------------------------------------------


def test_bootstrap_without_clusters_agrees_with_z_and_is_seeded():
    f, human, _ = _numeric(np.random.default_rng(5), n_total=600, n=150)
    z = rows(grounding.estimates(f, human, interval="z"))
    boot = rows(grounding.estimates(f, human, interval="bootstrap", n_boot=1000, seed=1))
    assert boot.loc["ppi", "interval"] == "bootstrap_t"
    assert boot.loc["ppi", "se"] == pytest.approx(z.loc["ppi", "se"], rel=0.12)
    again = grounding.estimates(f, human, interval="bootstrap", n_boot=1000, seed=1)
    pd.testing.assert_frame_equal(boot.reset_index(), again)
    pct = rows(grounding.estimates(f, human, interval="bootstrap", bootstrap_ci="percentile",
                                   n_boot=1000, seed=1))  # fmt: skip
    assert pct.loc["ppi", "interval"] == "bootstrap_percentile"
    assert pct.loc["ppi", "width"] == pytest.approx(z.loc["ppi", "width"], rel=0.15)


def test_auto_interval_uses_the_wild_bootstrap_only_when_clusters_group_items():
    f, human, _ = _numeric(np.random.default_rng(6), n_total=200, n=60)
    own = grounding.estimates(f, human, cluster=np.arange(200))
    assert own.set_index("method").loc["ppi", "interval"] == "jackknife t(59)"
    assert own["n_clusters"].iloc[0] == 200
    grouped = grounding.estimates(f, human, cluster=np.repeat(np.arange(40), 5), n_boot=199)
    assert grouped["interval"].str.startswith("wild cluster bootstrap").all()
    assert grouped["n_clusters"].iloc[0] == 40 and (grouped["target"] == "population").all()
    legacy = grounding.estimates(f, human, cluster=np.repeat(np.arange(40), 5), n_boot=200,
                                 interval="bootstrap")  # fmt: skip
    assert set(legacy["interval"]) == {"bootstrap_t"}


def test_compare_reads_a_table():
    df = pd.DataFrame(
        {"judge": ["A", "A", "B", "tie", "A", "B"], "human": ["A", "B", "B", None, None, None],
         "lab": [True, True, True, False, False, False], "c": [0, 0, 1, 1, 2, 2]}
    )  # fmt: skip
    t = grounding.compare(df, "judge", "human", labelled_col="lab")
    assert t["method"].tolist() == list(grounding.METHODS)
    assert list(t.columns) == list(grounding.COLUMNS)
    assert t.set_index("method").loc["classical", "estimate"] == pytest.approx(1 / 3)
    num = pd.DataFrame({"j": [True, False, True, True], "h": [1.0, 0.0, NAN, NAN]})
    assert grounding.compare(num, "j", "h")["n_labelled"].iloc[0] == 2
    with pytest.raises(KeyError, match="nope"):
        grounding.compare(df, "judge", "human", cluster_col="nope")


def test_bad_inputs_are_refused_with_a_clear_error():
    f, human = np.array([1.0, 0.0, NAN, 1.0]), np.array([1.0, 0.0, NAN, NAN])
    with pytest.raises(ValueError, match="judge label missing on 1 of 4"):
        grounding.ppi_mean(f, human)
    with pytest.raises(ValueError, match="need at least 2"):
        grounding.ppi_mean(np.ones(4), np.array([1.0, NAN, NAN, NAN]))
    with pytest.raises(ValueError, match="lambda_"):
        grounding.ppi_mean(np.ones(4), np.array([1.0, 0, NAN, NAN]), lambda_=1.5)
    with pytest.raises(ChoiceError):
        grounding.ppi_mean(np.ones(4), np.array([1.0, 0, NAN, NAN]), interval="exact")
    with pytest.raises(ValueError, match="no human label"):
        grounding.ppi_mean(np.ones(3), np.array([1.0, 0, NAN]), labelled=[True, True, True])
    with pytest.raises(ValueError, match="stratum 'b' has 1 labelled"):
        grounding.ppi_mean(np.ones(4), np.array([1.0, 0, 1, NAN]), stratum=["a", "a", "b", "b"])
    with pytest.raises(ValueError, match="not supported"):
        grounding.ppi_winrate(["A"] * 4, ["A", "B", None, None], ties="drop", stratum=[1] * 4)


# -- (4) coverage on planted truth ----------------------------------------------------------

R = 300
#: The clustered cases' cluster bootstrap costs ~0.25 s a replicate: 100 replicates here (a
#: 3-SE band of ±0.065); `make calibrate` runs the PPI++ cells on the full scenario grid.
R_CLUSTERED = 100


def _binary(rng, n_clusters, per, n_lab, sd):
    """Human pass P = σ(0.85 + u_c) (≈ 0.70 i.i.d.); the judge passes 40 % of fails, fails 5 %
    of passes (judge pass rate ≈ 0.79), its errors sharing a cluster effect e_c."""
    c = np.repeat(np.arange(n_clusters), per)
    u, e = rng.normal(0, sd, n_clusters)[c], rng.normal(0, sd, n_clusters)[c]
    y = (rng.random(c.size) < expit(0.85 + u)).astype(float)
    err = rng.random(c.size) < expit(np.where(y == 1, np.log(0.05 / 0.95), np.log(0.4 / 0.6)) + e)
    return np.where(err, 1 - y, y), y, c


def _num(rng, n_clusters, per, n_lab, sd):
    """Human score 5 + u_c + ε; the judge scores 1 + 0.9 · Y + e_c + η (mean ≈ 5.5)."""
    c = np.repeat(np.arange(n_clusters), per)
    u, e = rng.normal(0, sd, n_clusters)[c], rng.normal(0, sd, n_clusters)[c]
    y = 5 + u + rng.normal(0, 1, c.size)
    return 1 + 0.9 * y + e + rng.normal(0, 0.7, c.size), y, c


def _truth_binary(sd):
    u = np.random.default_rng(123).normal(0, sd, 2_000_000) if sd else 0.0
    return float(np.mean(expit(0.85 + u)))


@pytest.mark.parametrize(
    "name, draw, clusters, per, truth",
    [
        ("binary iid", _binary, 800, 1, _truth_binary(0)),
        ("numeric iid", _num, 800, 1, 5.0),
        ("binary clustered", _binary, 60, 10, _truth_binary(1.0)),
        ("numeric clustered", _num, 60, 10, 5.0),
    ],
)
def test_ppi_covers_the_planted_truth_and_the_judge_alone_does_not(
    name, draw, clusters, per, truth
):
    rng = np.random.default_rng(sum(map(ord, name)))
    sd = 1.0 if per > 1 else 0.0
    n_lab = 100 if per == 1 else 120
    reps = R if per == 1 else R_CLUSTERED
    hits = np.zeros(len(grounding.METHODS))
    for r in range(reps):
        f, y, c = draw(rng, clusters, per, n_lab, sd)
        lab = np.zeros(c.size, bool)
        lab[rng.choice(c.size, n_lab, replace=False)] = True
        t = grounding.estimates(f, np.where(lab, y, NAN), cluster=c if per > 1 else None,
                                n_boot=200, seed=r)  # fmt: skip
        low, high = t["ci_low"].to_numpy(), t["ci_high"].to_numpy()
        hits += (low <= truth) & (truth <= high)
    cov = dict(zip(t["method"], hits / reps, strict=True))
    se = np.sqrt(0.95 * 0.05 / reps)  # 0.0126 at R = 300
    assert cov["naive"] < 0.3, cov  # the judge's bias: its own interval misses
    assert 0.95 - 3 * se <= cov["ppi"] <= 0.95 + 3 * se, cov
    # Plain PPI and the human-only mean are valid too (a looser, 4-SE sanity bound).
    assert min(cov["ppi_plain"], cov["classical"]) >= 0.95 - 4 * se, cov


# -- (5) cross-check against ppi_py ---------------------------------------------------------


def test_matches_ppi_py_tuned():
    ppi_py = pytest.importorskip("ppi_py")
    f, human, lab = _numeric(np.random.default_rng(8), n_total=2000, n=500)
    y, yhat, yhat_u = human[lab], f[lab], f[~lab]
    ours = grounding.ppi_mean(f, human, level=0.9, interval="z")
    point = float(np.ravel(ppi_py.ppi_mean_pointestimate(y, yhat, yhat_u))[0])
    low, high = (float(np.ravel(v)[0]) for v in ppi_py.ppi_mean_ci(y, yhat, yhat_u, alpha=0.1))
    assert ours["estimate"] == pytest.approx(point, rel=1e-10)
    # ppi_py's standard deviations divide by n, ours by n − 1: widths agree to ~1/n.
    assert ours["ci_low"] == pytest.approx(low, abs=2e-3 * (high - low))
    assert ours["ci_high"] == pytest.approx(high, abs=2e-3 * (high - low))
