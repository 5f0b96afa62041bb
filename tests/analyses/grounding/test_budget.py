"""Label-budget curves: replayed studies at n human labels, their widths and coverage."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from judgelab.analyses import grounding
from judgelab.analyses.grounding import budget


def _table(n=400, per=1, seed=0):
    """Every item human-labelled (pass rate ≈ 0.7); the judge passes 40 % of the fails."""
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < 0.7).astype(float)
    f = np.where(rng.random(n) < np.where(y == 1, 0.05, 0.4), 1 - y, y)
    return pd.DataFrame({"judge": f, "human": y, "cluster": np.arange(n) // per})


def test_masks_label_exactly_the_budget_or_whole_clusters():
    rng = np.random.default_rng(1)
    items = np.arange(50)
    m = budget._masks(rng, items, 7, 30)
    assert m.shape == (30, 50) and (m.sum(axis=1) == 7).all()
    units = np.repeat(np.arange(10), 5)
    m = budget._masks(rng, units, 12, 30)
    per_cluster = m.reshape(30, 10, 5)
    assert (per_cluster.min(axis=2) == per_cluster.max(axis=2)).all()  # whole clusters
    assert (m.sum(axis=1) == 15).all()  # clusters drawn until >= 12 items: 3 of 5


def test_iid_curve_columns_budgets_and_the_methods_shape():
    df = _table()
    curve = grounding.budget_curve(df, "judge", "human", budgets=(1, 25, 100, 200, 399, 800),
                                   reps=200)  # fmt: skip
    assert list(curve.columns) == list(budget.COLUMNS)
    assert sorted(curve["budget"].unique()) == [25, 100, 200]  # 1, 399, 800 out of range
    assert (curve["reps"] == 200).all() and (curve["n_labelled"] == curve["budget"]).all()
    assert curve["truth"].unique().tolist() == [pytest.approx(df["human"].mean())]
    c = curve.set_index(["method", "budget"])
    # the biased judge alone misses; its interval does not depend on the budget
    assert (c.loc["naive", "coverage"] == 0).all()
    assert c.loc["naive", "mean_width"].nunique() == 1
    widths = c.loc["classical", "mean_width"]
    assert widths.is_monotonic_decreasing and widths[25] > 2 * widths[200] * 0.9
    for b in (25, 100, 200):
        assert c.loc[("ppi", b), "mean_width"] < c.loc[("classical", b), "mean_width"]
        assert c.loc[("ppi", b), "coverage"] >= 0.85
        assert c.loc[("ppi", b), "coverage_se"] == pytest.approx(
            np.sqrt(c.loc[("ppi", b), "coverage"] * (1 - c.loc[("ppi", b), "coverage"]) / 200)
        )
    assert set(curve["interval"]) == {"finite jackknife/wilson"}  # the items target


def test_curve_is_seeded_and_takes_a_given_truth():
    df = _table(n=200)
    one = grounding.budget_curve(df, "judge", "human", budgets=(50,), reps=50, seed=3)
    two = grounding.budget_curve(df, "judge", "human", budgets=(50,), reps=50, seed=3)
    pd.testing.assert_frame_equal(one, two)
    far = grounding.budget_curve(df, "judge", "human", budgets=(50,), reps=50, truth=0.0)
    assert (far["coverage"] == 0).all() and (far["truth"] == 0).all()


def test_a_perfect_judge_gives_narrow_ppi_intervals_at_every_budget():
    df = _table()
    df["judge"] = df["human"]
    c = grounding.budget_curve(df, "judge", "human", budgets=(25, 50), reps=100)
    c = c.set_index(["method", "budget"])
    for b in (25, 50):
        assert c.loc[("ppi", b), "mean_width"] < 0.5 * c.loc[("classical", b), "mean_width"]


def test_clustered_curve_draws_clusters_and_targets_these_items_or_the_population():
    df = _table(n=300, per=5)
    curve = grounding.budget_curve(df, "judge", "human", cluster_col="cluster",
                                   budgets=(50, 100), reps=40)  # fmt: skip
    assert set(curve["interval"]) == {"finite jackknife by cluster"}
    assert (curve["n_labelled"] == curve["budget"]).all()  # 5-item clusters fill it exactly
    c = curve.set_index(["method", "budget"])
    assert c.loc[("ppi", 100), "mean_width"] < c.loc[("ppi", 50), "mean_width"]
    assert c.loc[("ppi", 100), "coverage"] >= 0.8
    pop = grounding.budget_curve(df, "judge", "human", cluster_col="cluster", budgets=(100,),
                                 reps=20, n_boot=199, target="population")  # fmt: skip
    assert set(pop["interval"]) == {"wild cluster bootstrap"}
    # the population is a wider target than these items: wider intervals at the same budget
    p = pop.set_index("method").loc["ppi"]
    assert p["mean_width"] > c.loc[("ppi", 100), "mean_width"]
    legacy = grounding.budget_curve(df, "judge", "human", cluster_col="cluster",
                                    budgets=(50,), reps=10, n_boot=200,
                                    interval="bootstrap", target="population")  # fmt: skip
    assert set(legacy["interval"]) == {"bootstrap_t"}


def test_pairwise_curve_with_ties_dropped():
    rng = np.random.default_rng(5)
    human = rng.choice(["A", "B", "tie"], size=300, p=[0.5, 0.3, 0.2])
    judge = np.where(rng.random(300) < 0.2, "A", human)  # leans to A
    df = pd.DataFrame({"j": judge, "h": human})
    curve = grounding.budget_curve(df, "j", "h", ties="drop", budgets=(60,), reps=100)
    truth = (human == "A").sum() / (human != "tie").sum()
    assert curve["truth"].iloc[0] == pytest.approx(truth)
    row = curve.set_index("method").loc["ppi"]
    assert row["coverage"] >= 0.85 and abs(row["mean_estimate"] - truth) < 0.03


def test_budget_curve_needs_every_human_label():
    df = _table(n=50)
    df.loc[3, "human"] = np.nan
    with pytest.raises(ValueError, match="human label on every item"):
        grounding.budget_curve(df, "judge", "human", budgets=(10,), reps=5)
