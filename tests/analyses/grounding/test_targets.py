"""Issue 33 item 3: PPI++ names its estimand — these items (finite) or items like these."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from judgelab.analyses import grounding
from judgelab.analyses.grounding import clustered, ppi
from judgelab.core import estimates
from judgelab.simulate import grounding as sim_grounding
from judgelab.simulate.base import Design

NAN = np.nan


def _clustered(seed=0, n_clusters=12, per=10, n_lab=40):
    rng = np.random.default_rng(seed)
    sim = sim_grounding.grounding_sim(
        rng, design=Design(n_clusters, per, icc=0.4, size_spread=1.0, effect_sd=0.5),
        n_labelled=n_lab, invalid_rate=0.05, invalid_if_wrong=0.2, tables=False,
    )  # fmt: skip
    labels = sim.extra["labels"]
    return labels["judge"].to_numpy(), labels["human"].to_numpy(), labels["cluster"].to_numpy()


def test_inf2_3_the_target_names_the_estimand_and_changes_only_the_interval():
    f, h, c = _clustered()
    pop = grounding.estimates(f, h, cluster=c, n_boot=999).set_index("method")
    items = grounding.estimates(f, h, cluster=c, target="items").set_index("method")
    assert (pop["target"] == "population").all() and (items["target"] == "items").all()
    assert pop["estimate"].tolist() == pytest.approx(items["estimate"].tolist())
    assert pop.loc["ppi", "interval"].startswith("wild cluster bootstrap")
    assert items.loc["ppi", "interval"] == "finite jackknife t(39)"
    # these items are a narrower target than the population they were drawn from
    for m in ("ppi", "ppi_plain", "classical"):
        assert items.loc[m, "width"] < pop.loc[m, "width"]
    # the population row says how few independent clusters stand behind it
    assert pop.loc["ppi", "n_eff_clusters"] < 12 and pop.loc["ppi", "few_clusters"]
    assert items.loc["ppi", "n_eff_clusters"] == 40 and not items.loc["ppi", "few_clusters"]


def test_inf2_3_every_item_labelled_leaves_nothing_unknown_about_these_items():
    f, h, c = _clustered()
    y = np.where(np.isnan(h), (f > 0.5).astype(float), h)  # a label on every item
    items = grounding.estimates(f, y, cluster=c, target="items").set_index("method")
    assert items.loc["ppi", "estimate"] == pytest.approx(y.mean())
    assert items.loc["ppi", "width"] == pytest.approx(0.0, abs=1e-12)
    assert items.loc["classical", "ci_low"] <= y.mean() <= items.loc["classical", "ci_high"]


def test_inf2_3_the_items_interval_is_the_finite_population_jackknife():
    rng = np.random.default_rng(3)
    n = 30
    y = rng.normal(3.0, 1.0, n)
    f = 0.5 + 0.8 * y + rng.normal(0, 0.5, n)
    lab = np.zeros(n, bool)
    lab[:12] = True
    row = grounding.ppi_mean(f, np.where(lab, y, NAN), target="items")
    # by hand: move each labelled item to the unlabelled set, re-tune λ, re-estimate
    theta = []
    for i in np.flatnonzero(lab):
        keep = lab.copy()
        keep[i] = False
        theta.append(grounding.ppi_mean(f, np.where(keep, y, NAN), interval="z")["estimate"])
    theta = np.array(theta)
    var = (1 - 12 / 30) * 11 / 12 * np.sum((theta - theta.mean()) ** 2)
    assert row["se"] == pytest.approx(np.sqrt(var), rel=1e-9)
    q = ppi.z_quantile(0.95, 11)
    assert row["ci_high"] - row["ci_low"] == pytest.approx(2 * q * np.sqrt(var), rel=1e-9)


def test_inf2_3_the_population_interval_is_the_wild_contrast_of_core_estimates():
    f, h, c = _clustered(seed=1)
    row = grounding.ppi_mean(f, h, cluster=c, n_boot=499, seed=7)
    lab = ~np.isnan(h)
    units = ppi.unit_codes(c, len(f))
    num, group, item = clustered._groups(f[:, None], np.nan_to_num(h)[:, None], lab,
                                         np.zeros(len(f), int), 0)  # fmt: skip
    lam = row["lambda"]
    e = estimates.contrast(num, np.ones(len(num)), group, units[item], [lam, 1.0, -lam],
                           n_boot=499, rng=estimates.seeded(7, "grounding", "ppi"),
                           bounds=(0.0, 1.0))  # fmt: skip
    assert (row["estimate"], row["ci_low"], row["ci_high"]) == pytest.approx(
        (e.value, e.ci_low, e.ci_high)
    )
    assert row["n_eff_clusters"] == pytest.approx(e.n_eff_clusters)


def test_inf2_3_labels_drawn_by_whole_clusters_jackknife_the_clusters():
    f, h, c = _clustered(seed=2)
    y = np.where(np.isnan(h), (f > 0.5).astype(float), h)
    codes = ppi.unit_codes(c, len(f))
    chosen = np.isin(codes, [0, 2, 3, 5, 7, 9])
    table = grounding.estimates(f, np.where(chosen, y, NAN), cluster=c, target="items",
                                labels_by="cluster").set_index("method")  # fmt: skip
    assert table.loc["ppi", "interval"] == "finite jackknife by cluster t(5)"
    assert table.loc["classical", "interval"] == "finite jackknife by cluster t(5)"
    with pytest.raises(ValueError, match="needs whole clusters labelled"):
        grounding.estimates(f, h, cluster=c, target="items", labels_by="cluster")


def test_inf2_3_a_win_rate_with_ties_dropped_gets_a_fieller_interval_with_clusters():
    rng = np.random.default_rng(4)
    n = 240
    c = np.repeat(np.arange(24), 10)
    human = rng.choice(["A", "B", "tie"], size=n, p=[0.5, 0.3, 0.2])
    judge = np.where(rng.random(n) < 0.25, rng.choice(["A", "B", "tie"], size=n), human)
    shown = np.where(rng.random(n) < 0.4, human, None)
    pop = grounding.ppi_winrate(list(judge), list(shown), ties="drop", cluster=c, n_boot=499)
    assert pop["interval"].startswith("wild cluster bootstrap, restricted, Fieller")
    assert 0 <= pop["ci_low"] < pop["estimate"] < pop["ci_high"] <= 1
    items = grounding.ppi_winrate(list(judge), list(shown), ties="drop", cluster=c,
                                  target="items")  # fmt: skip
    assert items["estimate"] == pytest.approx(pop["estimate"])
    assert items["width"] < pop["width"]


def test_inf2_3_budget_curves_cover_these_items_up_to_full_labelling():
    rng = np.random.default_rng(5)
    y = (rng.random(120) < 0.7).astype(float)
    f = np.where(rng.random(120) < np.where(y == 1, 0.05, 0.4), 1 - y, y)
    df = pd.DataFrame({"judge": f, "human": y})
    items = grounding.budget_curve(df, "judge", "human", budgets=(25, 110), reps=200)
    pop = grounding.budget_curve(df, "judge", "human", budgets=(110,), reps=200,
                                 target="population")  # fmt: skip
    it = items.set_index(["method", "budget"])
    # at 110 of 120 items labelled the population interval over-covers these items' mean
    assert pop.set_index("method").loc["ppi", "coverage"] == 1.0
    assert (
        it.loc[("ppi", 110), "mean_width"] < 0.5 * pop.set_index("method").loc["ppi", "mean_width"]
    )
    assert 0.88 <= it.loc[("ppi", 25), "coverage"] <= 1.0
