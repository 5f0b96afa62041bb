"""The calibration harness measures coverage and type-I error, and tells good from bad.

Two estimators of a mean on clustered data (40 clusters of 5 rows sharing a cluster effect):
the cluster bootstrap covers, the row bootstrap that ignores the clusters does not.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import pandas as pd
import pytest

from judgelab.core import clusters, inference, stats
from judgelab.reporting.calibration import Check, Outcome, extend, harness, results, run, summarise
from judgelab.reporting.calibration.checks import all_checks
from judgelab.simulate.base import BALANCED, GRID, Scenario, Simulation

ONE = [BALANCED]


def simulate_means(rng: np.random.Generator, hypothesis: str, shape: Scenario) -> Simulation:
    n_c, per = 40, 5
    shift = 0.0 if hypothesis == "null" else 0.5
    u = np.repeat(rng.normal(0, 1, n_c), per)
    frame = pd.DataFrame(
        {"x": shift + u + rng.normal(0, 0.5, n_c * per), "cluster": np.repeat(np.arange(n_c), per)}
    )
    return Simulation(frame, frame.iloc[:0], {"mean": shift}, {})


def estimate_mean(sim: Simulation, options: dict[str, Any]) -> Outcome:
    x = sim.items["x"].to_numpy()
    units = clusters.codes(sim.items, options.get("cluster", "cluster"))
    per = clusters.sum_by(np.column_stack([x, np.ones_like(x)]), units)
    reps = stats.bootstrap_sums(per, n_boot=400, rng=np.random.default_rng(0))
    means = reps[:, 0] / reps[:, 1]
    low, high = stats.percentile_interval(means)
    return Outcome(float(x.mean()), float(low), float(high), inference.bootstrap_p(means))


CHECK = Check(
    name="demo.mean",
    family="demo",
    estimator="cluster bootstrap of a mean",
    estimand="mean",
    simulate=simulate_means,
    estimate=estimate_mean,
    before={"cluster": None},
    effect="mean 0.5",
)


def test_harness_tells_the_cluster_bootstrap_from_the_naive_one():
    reps = run([CHECK], scenarios=ONE, reps=60, variants=("after", "before"))
    assert set(reps["error"]) == {""}
    summary = summarise(reps, [CHECK]).set_index("variant")
    assert summary.loc["after", "coverage_null"] >= 0.85
    assert summary.loc["before", "coverage"] <= 0.75  # ignoring the clusters under-covers
    assert summary.loc["before", "type_i"] >= 0.25
    assert summary.loc["after", "power"] > summary.loc["after", "type_i"]
    assert summary.loc["after", "reps"] == 60
    low, high = harness.mc_interval(summary.loc["after", "type_i"] * 60, 60)
    assert summary.loc["after", "type_i_low"] == pytest.approx(low)
    assert summary.loc["after", "type_i_high"] == pytest.approx(high)
    assert summary.loc["before", "type_i_verdict"] == "fail"
    assert summary.loc["after", "coverage_verdict"] == "inconclusive"  # R = 60 cannot tell


def test_null_and_alternative_are_reported_apart():
    reps = run([CHECK], scenarios=ONE, reps=30)
    s = summarise(reps, [CHECK]).iloc[0]
    null = reps[reps["hypothesis"] == "null"]
    covered = (null["low"] <= null["truth"]) & (null["truth"] <= null["high"])
    assert s["coverage_null"] == pytest.approx(covered.mean())
    assert s["type_i"] == pytest.approx((null["p_value"] < 0.05).mean())


def _nan_p(sim: Simulation, options: dict[str, Any]) -> Outcome:
    return estimate_mean(sim, options)._replace(p_value=float("nan"))


def _declines(sim: Simulation, options: dict[str, Any]) -> Outcome:
    return Outcome(float("nan"), declined="fewer than 2 own-model negatives")


def test_a_missing_p_value_is_a_failure_not_a_non_rejection():
    check = Check("demo.nan_p", "demo", "x", "mean", simulate_means, _nan_p)
    s = summarise(run([check], scenarios=ONE, reps=5), [check]).iloc[0]
    assert s["failed"] == 10 and np.isnan(s["type_i"]) and s["verdict"] == "fail"


def test_a_declined_estimate_is_counted_apart():
    check = Check("demo.declines", "demo", "x", "mean", simulate_means, _declines)
    s = summarise(run([check], scenarios=ONE, reps=4), [check]).iloc[0]
    assert s["declined"] == 8 and s["failed"] == 0


def test_checks_sharing_a_generator_share_each_draw():
    twin = Check("demo.twin", "demo", "x", "mean", simulate_means, estimate_mean)
    reps = run([CHECK, twin], scenarios=ONE, reps=3)
    a = reps[reps["check"] == "demo.mean"].reset_index(drop=True)
    b = reps[reps["check"] == "demo.twin"].reset_index(drop=True)
    assert a["estimate"].tolist() == b["estimate"].tolist()


def test_extend_adds_replicates_to_undecided_cells_only():
    reps = run([CHECK], scenarios=ONE, reps=20)
    more = extend(reps, [CHECK], max_reps=40)
    assert more["r"].max() == 39  # inconclusive at R = 20: doubled once, up to the cap
    again = run([CHECK], scenarios=ONE, reps=40)
    cols = ["hypothesis", "r", "estimate", "low", "high"]
    key = ["hypothesis", "r"]
    pd.testing.assert_frame_equal(
        more[cols].sort_values(key).reset_index(drop=True),
        again[cols].sort_values(key).reset_index(drop=True),
    )


def test_verdicts_read_the_monte_carlo_interval():
    assert harness.verdict(0.931, 0.969, harness.COVERAGE_TARGET) == "pass"
    assert harness.verdict(0.90, 0.929, harness.COVERAGE_TARGET) == "fail"
    assert harness.verdict(0.92, 0.95, harness.COVERAGE_TARGET) == "inconclusive"


def test_the_grid_crosses_sizes_effects_clusters_and_n():
    assert len(GRID) == 24
    assert {s.sizes for s in GRID} == {"balanced", "unequal"}
    assert {s.effects for s in GRID} == {"constant", "varying"}
    assert {s.n_clusters for s in GRID} == {8, 15, 50}
    assert min(s.n_items for s in GRID) <= 60


def test_harness_is_deterministic_and_parallel_safe():
    one = run([CHECK], scenarios=ONE, reps=6, variants=("after",), seed=3)
    two = run([CHECK], scenarios=ONE, reps=6, variants=("after",), seed=3, workers=2)
    cols = ["check", "scenario", "r", "estimate", "low", "high", "p_value"]
    pd.testing.assert_frame_equal(one[cols], two[cols])


def _broken(sim: Simulation, options: dict[str, Any]) -> Outcome:
    raise RuntimeError("estimator failed")


def test_a_failing_estimator_is_counted_not_raised():
    check = Check("demo.broken", "demo", "x", "mean", simulate_means, _broken)
    reps = run([check], scenarios=ONE, reps=3)
    assert reps["error"].str.contains("estimator failed").all()
    s = summarise(reps, [check]).iloc[0]
    assert s["failed"] == 6 and np.isnan(s["coverage_null"])  # nothing measured
    assert s["verdict"] == "fail"


def test_unknown_variant_is_refused():
    with pytest.raises(ValueError, match="unknown variant"):
        run([CHECK], scenarios=ONE, reps=1, variants=("legacy",))


def test_results_round_trip_and_table(tmp_path):
    reps = run([CHECK], scenarios=ONE, reps=5, variants=("after", "before"))
    summary = summarise(reps, [CHECK])
    results.save(results.Results(reps, summary, {"reps": 5}), tmp_path)
    back = results.load(tmp_path)
    assert back is not None and back.meta == {"reps": 5}
    shown = results.table(back.summary)
    assert {"coverage (null)", "type-I", "verdict", "scenario"} <= set(shown.columns)
    assert "demo.mean" in results.markdown(harness.overview(back.summary))
    assert results.load(tmp_path / "nothing") is None


def test_registered_checks_have_unique_names_and_picklable_parts():
    import pickle

    checks = all_checks()
    assert len({c.name for c in checks}) == len(checks)
    for c in checks:
        pickle.dumps(c)  # sent to worker processes
        assert c.family and c.estimator and c.estimand


def test_checks_of_a_partial_are_picklable():
    import pickle

    check = Check("demo.p", "demo", "x", "mean", functools.partial(simulate_means), estimate_mean)
    assert pickle.loads(pickle.dumps(check)).name == "demo.p"


def simulate_uniform_p(rng: np.random.Generator, hypothesis: str, shape: Scenario) -> Simulation:
    """A test whose p-value is uniform under both hypotheses: its type-I error is exactly α."""
    return Simulation(pd.DataFrame(), pd.DataFrame(), {"zero": 0.0}, {"u": float(rng.random())})


def estimate_uniform_p(sim: Simulation, options: dict[str, Any]) -> Outcome:
    return Outcome(0.0, p_value=sim.params["u"])


EXACT = Check(
    "demo.exact_test", "demo", "a test of exact size", "zero", simulate_uniform_p,
    estimate_uniform_p, interval=False,
)  # fmt: skip
#: A seed whose first 60 null replicates of EXACT reject 10 times (type-I 0.17 [0.093, 0.28]):
#: the unlucky block that a grid of hundreds of cells at R = 60 holds a few of.
UNLUCKY_SEED = 260


def test_i33_5_a_fail_on_few_replicates_is_rechecked_before_it_stands():
    reps = run([EXACT], scenarios=ONE, reps=60, seed=UNLUCKY_SEED)
    first = summarise(reps, [EXACT]).iloc[0]
    assert first["type_i"] == pytest.approx(10 / 60) and first["type_i_low"] > 0.06
    assert first["type_i_verdict"] == "fail"  # a test of exact size "fails" at R = 60
    more = extend(reps, [EXACT], max_reps=480, seed=UNLUCKY_SEED)
    assert more["r"].nunique() == 480  # re-checked on fresh replicates: 120, 240, 480
    again = summarise(more, [EXACT]).iloc[0]
    assert again["type_i"] == pytest.approx(28 / 480)
    assert again["type_i_verdict"] == "inconclusive"
    assert again["type_i_low"] < 0.05 < again["type_i_high"]


def test_i33_5_a_confirmed_or_broken_fail_is_not_rechecked():
    reps = run([EXACT], scenarios=ONE, reps=60, seed=UNLUCKY_SEED)
    summary = summarise(reps, [EXACT])
    assert harness.undecided(summary).all()
    assert not harness.undecided(summary.assign(reps=harness.CONFIRM_REPS)).any()
    assert not harness.undecided(summary.assign(failed=1)).any()  # more reps cannot undo it
    broken = Check("demo.broken", "demo", "x", "mean", simulate_means, _broken)
    failed = run([broken], scenarios=ONE, reps=3)
    assert len(extend(failed, [broken], max_reps=40)) == len(failed)


def test_a_journalled_run_resumes_instead_of_rerunning(tmp_path):
    from judgelab.reporting.calibration.journal import Journal

    journal = Journal(tmp_path / "journal", code="v1")
    first = run([CHECK], scenarios=ONE, reps=4, journal=journal)
    assert len(list((tmp_path / "journal").glob("*.parquet"))) == 2  # null, alternative
    # The same jobs again, now with an estimator that would fail: the journal answers.
    broken = Check("demo.mean", "demo", "x", "mean", simulate_means, _broken)
    again = run([broken], scenarios=ONE, reps=4, journal=journal)
    cols = ["hypothesis", "r", "estimate", "low", "high", "p_value", "error"]
    pd.testing.assert_frame_equal(first[cols], again[cols])
    # Other library code (or more replicates) is another job: it runs.
    changed = run([broken], scenarios=ONE, reps=4, journal=Journal(tmp_path / "journal", "v2"))
    assert changed["error"].str.contains("estimator failed").all()
    more = run([broken], scenarios=ONE, reps=5, journal=journal)
    assert more["error"].str.contains("estimator failed").all()


def test_pooled_rates_count_every_replicate_of_every_cell():
    from judgelab.reporting.calibration import pooled

    two = [GRID[0], next(s for s in GRID if s.name.startswith("unequal/varying/"))]
    reps = run([CHECK], scenarios=two, reps=12)
    grid = pooled.pooled(reps, [CHECK]).set_index("scenario")
    every = grid.loc["grid (all cells)"]
    assert every["reps"] == 24 and every["cells"] == 2
    assert grid.loc["unequal/varying cells", "reps"] == 12
    null = reps[reps["hypothesis"] == "null"]
    covered = (null["low"] <= null["truth"]) & (null["truth"] <= null["high"])
    assert grid.loc["grid (all cells)", "coverage_null"] == pytest.approx(covered.mean())
    low, high = harness.mc_interval(covered.sum(), len(null))
    assert grid.loc["grid (all cells)", "coverage_null_low"] == pytest.approx(low)


def test_markdown_shows_missing_cells_as_a_dash():
    frame = pd.DataFrame({"check": ["a", "b"], "eff. clusters": [None, 3.5], "x": [np.nan, 1]})
    text = results.markdown(frame)
    assert text.splitlines()[2] == "| a | — | — |"
    assert text.splitlines()[3] == "| b | 3.5 | 1.0 |"
