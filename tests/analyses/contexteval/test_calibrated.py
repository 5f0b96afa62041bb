"""The cluster-aware defaults on planted truth: clustered data, Holm, missing-as-error rows."""

import numpy as np

from judgelab.analyses import contexteval as ce
from judgelab.analyses.contexteval.weirdgap import adjust_p
from judgelab.core import inference
from judgelab.simulate import contexteval as sc
from judgelab.simulate.base import Design


def test_cluster_interval_is_wider_than_the_independent_one_on_clustered_gaps():
    # 5 raters per query share the query's value effects, and 4 queries a cluster's gap
    # (it varies by cluster): rows are not independent.
    design = Design(60, 4, 0.5, effect_sd=0.5)
    sim = sc.ratings(np.random.default_rng(0), design, tables=False)
    kw = {"weird_map": {"Age Group": sc.ATTRIBUTES["Age Group"][1]}, "per_rater": False}
    after = ce.weird_gap(sim.extra["ratings"], n_boot=400, **kw).iloc[0]
    before = ce.weird_gap(sim.extra["ratings"], n_boot=400, cluster=None, **kw).iloc[0]
    assert after["n_units"] == 60 and before["n_units"] == 240 * 5
    width = after["ci_high"] - after["ci_low"]
    assert width > 1.4 * (before["ci_high"] - before["ci_low"])
    assert after["test"].startswith("wild cluster bootstrap")
    assert after["n_clusters"] == 60 and 40 < after["n_eff_clusters"] <= 60


def test_holm_family_spans_attribute_and_rater_rows_and_is_stated():
    sim = sc.ratings(
        np.random.default_rng(1), Design(40, 4, 0.3), gaps={"Age Group": 0.6}, tables=False
    )
    g = ce.weird_gap(sim.extra["ratings"], n_boot=200, p_max_boot=2000)
    assert len(g) == 4 * 6 and (g["family_size"] == 24).all() and (g["adjust"] == "holm").all()
    assert np.allclose(g["p_adj"], inference.adjust(g["p_value"].to_numpy(), "holm"))
    assert (g["p_adj"] >= g["p_value"]).all()
    age = g[(g["attribute"] == "Age Group") & (g["rater"] == "all")].iloc[0]
    assert age["p_adj"] < 0.05
    bh = ce.weird_gap(sim.extra["ratings"], n_boot=200, p_max_boot=2000, adjust="bh")
    assert (bh["p_adj"] <= g["p_adj"] + 1e-12).all()


def test_adjust_p_matches_core():
    p = np.array([0.001, 0.2, np.nan, 0.03, 0.04])
    for m in ("holm", "bh", "none"):
        assert np.allclose(adjust_p(p, m), inference.adjust(p, m), equal_nan=True)


def test_missing_as_error_rows_only_where_missingness_differs(ratings):
    rows = [
        ("q1", "Age Group", v, x)
        for v, x in zip(sc.ATTRIBUTES["Age Group"][0], [2, 3, 5, 4, 1], strict=True)
    ]
    r = ratings(rows * 1)
    assert set(ce.weird_gap(r, n_boot=50)["missing"]) == {"dropped"}
    r.loc[r["value"] == "Young adults", "rating"] = np.nan  # a WEIRD value unparsed
    g = ce.weird_gap(r, n_boot=50).set_index("missing")
    # as error: Young adults counts 1 -> WEIRD mean (1 + 4) / 2 = 2.5, others 2 -> gap 0.5.
    assert g.loc["as_error", "gap"] == 0.5 and g.loc["dropped", "gap"] == 4 - 2


def test_win_rate_tests_and_context_rows_on_clustered_pairs():
    sim = sc.pairwise(
        np.random.default_rng(2),
        Design(40, 5, 0.4, "sim-ce"),
        quality=0.0,
        context_effect=0.6,
        tables=False,
    )
    ex = sim.extra["examples"]
    fl = ce.rank_flips(ex, n_boot=300, p_max_boot=4000)
    assert set(fl["missing"]) == {"as_tie", "as_error"}  # Invalid 2 % vs 6 %
    ctx = fl[(fl["setting"] == sc.SETTINGS[1]) & (fl["missing"] == "as_tie")].iloc[0]
    assert ctx["delta_low"] < sim.truth["delta_margin"] < ctx["delta_high"]
    assert ctx["test"].startswith("wild cluster bootstrap") and 0 <= ctx["sign_p"] <= 1
    legacy = ce.rank_flips(ex, cluster=None, test="sign", missing_as_error=False, n_boot=300)
    assert (legacy["interval"] == "wilson").all()
    assert np.allclose(legacy["p_value"], legacy["sign_p"])
    ag = ce.agreement(ex, variants=("A_all",), n_boot=300, p_max_boot=4000)
    assert set(ag["missing"]) == {"as_tie", "as_error"}
    row = ag[(ag["setting"] == sc.SETTINGS[1]) & (ag["missing"] == "as_tie")].iloc[0]
    assert row["test"].startswith("wild cluster bootstrap")
    assert row["ttest"].startswith("ttest_rel")
    assert row["delta_low"] <= row["delta"] <= row["delta_high"]
