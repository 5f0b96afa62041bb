"""Issue 20 fixes of the faithfulness family, on planted truth (`simulate.faithfulness`)."""

from __future__ import annotations

import numpy as np
import pytest

from judgelab.analyses import faithfulness
from judgelab.simulate import faithfulness as sim


def _prefs(seed: int, discrimination: float):
    s = sim.faithbench(np.random.default_rng(seed), discrimination=discrimination)
    pairs = faithfulness.faithbench_pairs(s.items)
    return s, faithfulness.pointwise_preferences(s.extra["scores"], pairs)


def test_alignment_clusters_by_source_and_tests_with_the_bootstrap():
    _, prefs = _prefs(5, 0.5)
    clustered = faithfulness.alignment(prefs, n_boot=400).iloc[0]
    legacy = faithfulness.alignment(prefs, cluster=None, test="sign", n_boot=400).iloc[0]
    # sources whose ten summaries share one label give no pair
    assert 30 <= clustered["n_clusters"] <= 40 and clustered["unit"] == "source"
    assert legacy["n_clusters"] == clustered["n"]  # every pair its own unit
    width = clustered["ci_high"] - clustered["ci_low"]
    # pairs reuse summaries of one source: the source bootstrap is clearly wider
    assert width > 1.3 * (legacy["ci_high"] - legacy["ci_low"])
    assert width > 1.3 * (clustered["wilson_high"] - clustered["wilson_low"])
    assert clustered["alignment"] == legacy["alignment"]  # same estimate, other units
    assert legacy["p_value"] == legacy["p_sign"]  # the legacy test is the sign test
    assert clustered["p_value"] >= clustered["p_sign"]  # clustering weakens the evidence
    assert clustered["n_boot_p"] >= 400


def test_faitheval_accuracy_reports_unparsed_and_clusters():
    s = sim.faitheval_mc(np.random.default_rng(7), unparsed=0.1)
    graded = faithfulness.grade_answers(s.judgments, s.items)
    acc = faithfulness.accuracy(graded, by=("label",), n_boot=400)
    row = acc[acc["mode"] == "strict"].iloc[0]
    assert row["n_unparsed"] == int((~graded["parsed"]).sum()) > 0
    assert row["unparsed_share"] == pytest.approx(row["n_unparsed"] / row["n"])
    assert row["n_clusters"] == 50
    assert row["ci_high"] - row["ci_low"] > row["wilson_high"] - row["wilson_low"]
    legacy = faithfulness.accuracy(graded, by=("label",), cluster=None)
    strict = legacy[legacy["mode"] == "strict"].iloc[0]
    assert strict["ci_low"] == strict["wilson_low"]  # the legacy interval is Wilson
    avg = faithfulness.task_average(graded, by=("label",), n_boot=300)
    assert avg["n_datasets"].eq(1).all()
