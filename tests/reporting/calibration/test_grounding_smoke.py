"""Small-R smoke of the grounding calibration checks, and the generator's planted truth."""

from dataclasses import replace

import numpy as np
import pytest

from judgelab.core import schema
from judgelab.reporting.calibration import run, summarise
from judgelab.reporting.calibration.checks import all_checks, grounding
from judgelab.simulate import grounding as sim_grounding
from judgelab.simulate.base import BALANCED, Design

R = 10


def test_checks_are_registered():
    names = {c.name for c in all_checks(["grounding"])}
    assert names == {c.name for c in grounding.CHECKS} and len(names) == 4
    assert all(c.before is not None and not c.test for c in grounding.CHECKS)


def test_generator_plants_what_it_says():
    rng = np.random.default_rng(0)
    sim = sim_grounding.grounding_sim(rng, design=Design(400, 10, 0.3), n_labelled=50)
    schema.validate(sim.items[[c for c in schema.ITEMS.names if c in sim.items]], schema.ITEMS)
    assert sim.items["labelled"].sum() == 50
    assert sim.items["human"].mean() == pytest.approx(sim.truth["mean"], abs=0.03)
    judge = sim_grounding.judge_values(sim)
    # judge pass rate: P(pass)·0.95 + P(fail)·FPR 0.4 > the human pass rate
    assert judge.mean() > sim.truth["mean"] + 0.05
    num = sim_grounding.grounding_sim(
        rng,
        design=Design(2000, 1, 0.0),
        kind="numeric",
        shifts=(0.0, 2.0),
        label_rates=(0.2, 0.05),
    )
    assert num.truth["mean"] == pytest.approx(6.0)  # strata of equal size: 5 and 7
    lab = num.items.groupby("stratum")["labelled"].mean()
    assert lab.tolist() == pytest.approx([0.2, 0.05])
    with pytest.raises(ValueError, match="unknown kind"):
        sim_grounding.grounding_sim(rng, kind="ordinal")


@pytest.fixture(scope="module")
def table():
    checks = [replace(c, options={"n_boot": 200}, before={**c.before, "n_boot": 200})
              for c in grounding.CHECKS]  # fmt: skip
    reps = run(checks, scenarios=[BALANCED], reps=R, variants=("after", "before"))
    assert (reps["error"] == "").all(), reps.loc[reps["error"] != "", "error"].iloc[0]
    return summarise(reps, checks).set_index(["check", "variant"])


@pytest.mark.parametrize("name", [c.name for c in grounding.CHECKS])
def test_ppi_covers_and_the_legacy_choice_does_worse(table, name):
    after, before = table.loc[(name, "after")], table.loc[(name, "before")]
    assert after["coverage"] >= 0.85
    if "clustered" in name:  # ignoring the clusters: intervals too narrow
        assert before["width"] < 0.9 * after["width"]
    else:  # the judge alone, or one unstratified estimate: biased
        assert before["coverage"] < 0.75
