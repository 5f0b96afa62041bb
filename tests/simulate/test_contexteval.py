"""The ContextEval generators plant what they say (large draws, fast)."""

import numpy as np
import pytest

from judgelab.analyses import contexteval as ce
from judgelab.simulate import contexteval as sc
from judgelab.simulate.base import Design


def test_pairwise_tables_give_the_examples_the_checks_read():
    sim = sc.pairwise(np.random.default_rng(3), Design(8, 5, 0.3, "sim-ce"), quality=0.4)
    ex = ce.example_table(ce.verdict_table(sim.judgments, sim.items))
    fast = sim.extra["examples"]
    cols = ["setting", "example_key", "n_c1", "n_c2", "n_tie", "plurality_label", "n_invalid"]
    assert (ex[cols].to_numpy() == fast[cols].to_numpy()).all()
    assert (ex["majority_label"].isna() == fast["majority_label"].isna()).all()
    ok = ex["majority_label"].notna()
    assert (ex.loc[ok, "majority_label"] == fast.loc[ok, "majority_label"]).all()
    # One conversation is one unit in both settings (the comparison is paired).
    assert ex["cluster"].nunique() == 8 and set(ex["cluster"]) == set(fast["cluster"])


def test_pairwise_plants_margins_and_context_effect():
    big = Design(600, 5, 0.3, "sim-ce")
    null = sc.pairwise(np.random.default_rng(1), big, tables=False)
    assert null.truth[f"{sc.SETTINGS[0]}|margin"] == pytest.approx(0.0, abs=0.6)
    alt = sc.pairwise(np.random.default_rng(2), big, context_effect=0.5, tables=False)
    fl = ce.rank_flips(alt.extra["examples"], missing_as_error=False, n_boot=200)
    ctx = fl[fl["setting"] == sc.SETTINGS[1]].iloc[0]
    assert alt.truth["delta_margin"] > 15
    assert ctx["delta_margin"] == pytest.approx(alt.truth["delta_margin"], abs=5)
    ex = alt.extra["examples"]
    share = ex.groupby("setting")["n_invalid"].mean() / 5
    assert share[sc.SETTINGS[0]] == pytest.approx(0.02, abs=0.01)
    assert share[sc.SETTINGS[1]] == pytest.approx(0.06, abs=0.01)


def test_ratings_tables_parse_to_the_long_ratings_and_plant_gaps():
    sim = sc.ratings(np.random.default_rng(4), Design(6, 4, 0.3), gaps={"Age Group": 1.0})
    parsed = ce.ratings_table(sim.judgments, sim.items)
    keys = ["attribute", "query_id", "rater", "value"]
    a = parsed.sort_values(keys).reset_index(drop=True)
    b = sim.extra["ratings"].sort_values(keys).reset_index(drop=True)
    assert (a[keys].to_numpy() == b[keys].to_numpy()).all()
    assert np.allclose(a["rating"], b["rating"], equal_nan=True)
    big = sc.ratings(
        np.random.default_rng(5), Design(3000, 4, 0.3), gaps={"Age Group": 0.5}, tables=False
    )
    g = ce.weird_gap(big.extra["ratings"], per_rater=False, n_boot=100).set_index("attribute")
    assert g.loc["Age Group", "gap"] == pytest.approx(big.truth["Age Group"], abs=0.05)
    assert big.truth["Age Group"] > 0.3
    assert g.loc["Cultural Context", "gap"] == pytest.approx(0.0, abs=0.05)
