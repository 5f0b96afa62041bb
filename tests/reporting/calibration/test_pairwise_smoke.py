"""Small-R smoke of the pairwise calibration checks on two grid scenarios: real assertions."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from judgelab.reporting.calibration import run, summarise
from judgelab.reporting.calibration.checks import all_checks
from judgelab.reporting.calibration.checks import pairwise as checks
from judgelab.simulate.base import scenario

SCENARIOS = [scenario("balanced/constant/G15/n60"), scenario("unequal/varying/G8/n48")]


def test_checks_are_registered_and_named():
    names = {c.name for c in all_checks(["pairwise"])}
    assert {"pairwise.ca", "pairwise.pos_a_rate", "pairwise.compare_ca"} <= names
    assert all(c.name.startswith("pairwise.") and c.family == "pairwise" for c in checks.CHECKS)
    assert all(c.before == {"inference": "bootstrap"} for c in checks.CHECKS)


def test_draws_follow_the_scenario():
    rng = np.random.default_rng(0)
    sim = checks.sim_one(rng, "null", SCENARIOS[1])
    sizes = sim.params["design"].sizes
    assert len(sizes) == 8 and sum(sizes) == 48 and max(sizes) >= 3 * min(sizes)
    assert sim.truth["pos_a_rate_decisive"] == pytest.approx(0.5, abs=0.002)
    split = checks.sim_splits(rng, "alternative", SCENARIOS[0])
    assert split.items["cluster"].nunique() == 15 and set(split.items["split"]) == {"s1", "s2"}


@pytest.fixture(scope="module")
def summary():
    fast = {"n_boot": 199}
    picked = [
        replace(c, options=fast, before={**c.before, **fast})
        for c in checks.CHECKS
        if c.name in ("pairwise.ca", "pairwise.pos_a_rate_decisive", "pairwise.compare_ca")
    ]
    reps = run(picked, scenarios=SCENARIOS, reps=12, seed=1, variants=("after",))
    return summarise(reps, picked).set_index(["check", "scenario", "variant"]), reps


def test_rel3_33_pairwise_checks_hold_at_small_r_on_balanced_and_unequal_varying(summary):
    s, reps = summary
    assert (s["failed"] == 0).all() and (s["declined"] == 0).all()
    after = s.xs("after", level="variant")
    # 12 replicates per hypothesis: a 95 % interval misses 3 or more with probability ~2 %
    assert (after["coverage_null"] >= 0.75).all(), after["coverage_null"]
    assert (after["coverage_alt"] >= 0.75).all(), after["coverage_alt"]
    tested = after.drop(index="pairwise.ca", level="check")
    assert (tested["type_i"] <= 3 / 12).all(), tested["type_i"]
    # every row says how many effective clusters stand behind it: few with 8 unequal ones
    eff = after.xs("unequal/varying/G8/n48", level="scenario")["n_eff"]
    assert (eff < 8).all() and (eff > 1).all()
    bal = after.xs("balanced/constant/G15/n60", level="scenario")["n_eff"]
    assert (bal > eff).all()
    # the engine's rows: the test and the interval agree on every null replicate
    mine = reps[(reps["variant"] == "after") & reps["p_value"].notna()]
    inside = (mine["low"] <= mine["truth"]) & (mine["truth"] <= mine["high"])
    null = mine["hypothesis"] == "null"
    assert ((mine["p_value"] >= 0.05) == inside)[null].mean() >= 0.95
