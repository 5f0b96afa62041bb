"""Issue 33 (Inference II) in the faithfulness family: alignment and accuracy by core.estimates.

Item 2: alignment and the margin tested against 0 are ratios of sums with the restricted wild
cluster bootstrap; the p-value inverts the margin's interval shown beside it; FaithEval
accuracy and its AVG get the same construction; every row reports its effective clusters.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import example, given, settings
from hypothesis import strategies as st

from judgelab.analyses import faithfulness as fa
from judgelab.simulate import base
from judgelab.simulate import faithfulness as sim


def _alignment(seed, design, disc, **options):
    s = sim.faithbench(np.random.default_rng(seed), design=design, discrimination=disc)
    prefs = fa.pointwise_preferences(s.extra["scores"], fa.faithbench_pairs(s.items))
    return s, fa.alignment(prefs, seed=seed, **options).iloc[0]


def test_inf2_2_alignment_margin_test_inverts_the_margin_interval():
    design = base.scenario("unequal/varying/G15/n60").design(benchmark="fb")
    s, row = _alignment(1, design, 0.8)
    assert row["reference"] == "wild" and row["method"].startswith("wild cluster bootstrap")
    assert row["few_clusters"] and row["n_eff_clusters"] < row["n_clusters"]
    assert row["ci_low"] <= row["alignment"] <= row["ci_high"]
    assert row["margin_low"] <= row["margin"] <= row["margin_high"]
    assert (row["p_value"] < 0.05) == (not row["margin_low"] <= 0 <= row["margin_high"])
    _, t = _alignment(1, design, 0.8, reference="t", n_boot=300)
    assert t["alignment"] == row["alignment"] and np.isnan(t["margin_low"])


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), G=st.integers(3, 20), disc=st.floats(0.0, 1.5))
@example(seed=3943, G=3, disc=0.0)  # 18 items in 3 clusters, no pair to compare: no row
def test_inf2_2_alignment_p_value_inverts_its_interval(seed, G, disc):
    design = base.Design(n_clusters=G, per_cluster=6, icc=0.3, size_spread=1.5, benchmark="fb")
    s = sim.faithbench(np.random.default_rng(seed), design=design, discrimination=disc)
    prefs = fa.pointwise_preferences(s.extra["scores"], fa.faithbench_pairs(s.items))
    if prefs.empty:  # a draw with no consistent/inconsistent pair: nothing to estimate
        assert fa.alignment(prefs, seed=seed).empty
        return
    row = fa.alignment(prefs, seed=seed).iloc[0]
    if not np.isfinite(row["p_value"]):
        return
    width = row["margin_high"] - row["margin_low"]
    near = min(abs(row["margin_low"]), abs(row["margin_high"])) < 1e-4 * width + 1e-9
    inside = row["margin_low"] <= 0 <= row["margin_high"]
    assert near or inside == (row["p_value"] >= 0.05)


def test_inf2_2_faitheval_accuracy_rows_carry_effective_clusters():
    design = base.scenario("unequal/varying/G8/n240").design(benchmark="fe")
    s = sim.faitheval_mc(np.random.default_rng(4), design=design)
    graded = fa.grade_answers(s.judgments, s.items)
    acc = fa.accuracy(graded, by=("label",))
    strict = acc[acc["mode"] == "strict"].iloc[0]
    assert strict["n_clusters"] == 8 and strict["few_clusters"]
    assert strict["ci_low"] <= strict["accuracy"] <= strict["ci_high"]
    old = fa.accuracy(graded, by=("label",), interval="percentile")
    assert old["accuracy"].tolist() == acc["accuracy"].tolist()
    assert old["method"].str.startswith("percentile").all()
    assert fa.accuracy(graded, by=("label",), cluster=None)["method"].eq("Wilson, items").all()


def test_inf2_2_a_margin_whose_decided_pairs_sit_in_one_cluster_says_why_it_has_no_test():
    """Calibration draws at ~1 effective cluster: every decided pair in one cluster gave
    [0, 1] with no p-value and no reason; the row's method now says why."""
    rows = [("c0", "pos"), ("c0", "neg"), ("c0", "pos")] + [(f"c{g}", "tie") for g in (1, 2, 3)]
    prefs = pd.DataFrame(
        {
            "pair_id": [f"p{i}" for i in range(len(rows))],
            "group": 1,
            "metric": "faithfulness",
            "judge": "j",
            "method": "Baseline",
            "score_pos": 1.0,
            "score_neg": 1.0,
            "pref": [p for _, p in rows],
            "cluster": [c for c, _ in rows],
        }
    )
    row = fa.alignment(prefs, tie_policy="miss", seed=0).iloc[0]
    assert row["n_clusters"] == 4 and np.isnan(row["p_value"])
    assert row["method"].endswith("; margin: no test (no interval: fewer than 2 clusters)")
