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
from judgelab.reporting.calibration import Check, Outcome, results, run, summarise
from judgelab.reporting.calibration.checks import all_checks
from judgelab.simulate.base import Simulation


def simulate_means(rng: np.random.Generator, scenario: str) -> Simulation:
    n_c, per = 40, 5
    shift = 0.0 if scenario == "null" else 0.5
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
    reps = run([CHECK], reps=60, variants=("after", "before"))
    assert set(reps["error"]) == {""}
    summary = summarise(reps, [CHECK]).set_index("variant")
    assert summary.loc["after", "coverage"] >= 0.85
    assert summary.loc["before", "coverage"] <= 0.70  # ignoring the clusters under-covers
    assert summary.loc["before", "type_i"] >= 0.25
    assert summary.loc["after", "power"] > summary.loc["after", "type_i"]
    assert summary.loc["after", "reps"] == 60
    assert summary.loc["after", "coverage_se"] == pytest.approx(
        inference.mc_se(summary.loc["after", "coverage"], 120)
    )
    assert not summary.loc["before", "meets_targets"]


def test_harness_is_deterministic_and_parallel_safe():
    one = run([CHECK], reps=6, variants=("after",), seed=3)
    two = run([CHECK], reps=6, variants=("after",), seed=3, workers=2)
    cols = ["check", "scenario", "r", "estimate", "low", "high", "p_value"]
    pd.testing.assert_frame_equal(one[cols], two[cols])


def _broken(sim: Simulation, options: dict[str, Any]) -> Outcome:
    raise RuntimeError("estimator failed")


def test_a_failing_estimator_is_counted_not_raised():
    check = Check("demo.broken", "demo", "x", "mean", simulate_means, _broken)
    reps = run([check], reps=3)
    assert reps["error"].str.contains("estimator failed").all()
    s = summarise(reps, [check]).iloc[0]
    assert s["failed"] == 6 and s["coverage"] != s["coverage"]  # NaN: nothing measured


def test_unknown_variant_is_refused():
    with pytest.raises(ValueError, match="unknown variant"):
        run([CHECK], reps=1, variants=("legacy",))


def test_results_round_trip_and_table(tmp_path):
    reps = run([CHECK], reps=5, variants=("after", "before"))
    summary = summarise(reps, [CHECK])
    results.save(results.Results(reps, summary, {"reps": 5}), tmp_path)
    back = results.load(tmp_path)
    assert back is not None and back.meta == {"reps": 5}
    shown = results.table(back.summary)
    assert {"coverage (default)", "coverage (legacy)", "type-I (default)"} <= set(shown.columns)
    assert "demo.mean" in results.markdown(back.summary)
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
