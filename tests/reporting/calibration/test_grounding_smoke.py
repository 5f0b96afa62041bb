"""Small-R smoke of the grounding calibration checks on two grid cells (issue 33 item 3)."""

from dataclasses import replace

import pytest

from judgelab.reporting.calibration import run, summarise
from judgelab.reporting.calibration.checks import all_checks, grounding
from judgelab.simulate.base import scenario

R = 24
SCENARIOS = [scenario("balanced/constant/G50/n100"), scenario("unequal/varying/G8/n48")]


def test_checks_are_registered_with_their_estimands():
    names = {c.name for c in all_checks(["grounding"])}
    assert names == {c.name for c in grounding.CHECKS} and len(names) == 6
    assert all(c.before is not None and not c.test for c in grounding.CHECKS)
    by = {c.name: c for c in grounding.CHECKS}
    assert by["grounding.ppi_binary_items"].estimand == "items_mean"
    assert by["grounding.ppi_binary_population"].estimand == "mean"
    assert (
        grounding.labels(48) == 25 and grounding.labels(240) == 96 and grounding.labels(300) == 100
    )


@pytest.fixture(scope="module")
def table():
    checks = [replace(c, options={**c.options, "n_boot": 399}) for c in grounding.CHECKS
              if "numeric" not in c.name]  # fmt: skip
    reps = run(checks, scenarios=SCENARIOS, reps=R, variants=("after", "before"))
    assert (reps["error"] == "").all(), reps.loc[reps["error"] != "", "error"].iloc[0]
    return summarise(reps, checks).set_index(["check", "scenario", "variant"])


def test_inf2_3_every_interval_is_reported_with_its_effective_units(table):
    assert (table["failed"] == 0).all() and (table["declined"] == 0).all()
    after = table.xs("after", level="variant")
    assert after["n_eff"].notna().all()
    hard = after.xs("unequal/varying/G8/n48", level="scenario")
    # the population rows stand on a handful of effective clusters, the items rows on labels
    assert hard.loc["grounding.ppi_binary_population", "n_eff"] < 6
    assert hard.loc["grounding.ppi_binary_items", "n_eff"] == 25


@pytest.mark.parametrize("name", ["grounding.ppi_binary_population", "grounding.ppi_binary_items",
                                  "grounding.ppi_binary_iid"])  # fmt: skip
def test_inf2_3_the_defaults_cover_on_both_cells(table, name):
    for scen in SCENARIOS:
        after = table.loc[(name, scen.name, "after")]
        assert after["coverage"] >= 0.85, (name, scen.name, after["coverage"])


def test_inf2_3_the_earlier_choices_do_worse_where_they_should(table):
    hard = "unequal/varying/G8/n48"
    # the judge alone misses; the cluster bootstrap-t over-covers these items' mean
    assert table.loc[("grounding.ppi_binary_iid", hard, "before"), "coverage_alt"] < 0.8
    items_before = table.loc[("grounding.ppi_binary_items", hard, "before")]
    items_after = table.loc[("grounding.ppi_binary_items", hard, "after")]
    assert items_after["width"] < 0.5 * items_before["width"]
