"""Self-consistency (spec 000 §4.6): a vote over each judge's samples."""

from __future__ import annotations

import pandas as pd
import pytest

from judgelab.analyses import juries


def test_self_consistency_modes_differ_as_specified(draws):
    # draws: (pos,pos)=pos, (pos,neg)=tie, (neg,pos)=tie
    data = draws([("pos", "pos"), ("pos", "neg"), ("neg", "pos")])
    per_draw = juries.self_consistency(data).iloc[0]
    # labels pos, tie, tie -> tie wins -> incorrect; the greedy draw was correct
    assert per_draw["sc_label"] == "tie" and per_draw["greedy_label"] == "pos"
    assert not per_draw["sc_correct"] and per_draw["greedy_correct"] and per_draw["changed"]
    per_run = juries.self_consistency(data, mode="per_run_majority").iloc[0]
    # order 0: pos, pos, neg -> pos; order 1: pos, neg, pos -> pos -> consolidated pos
    assert per_run["sc_label"] == "pos" and per_run["sc_correct"]
    assert per_run["n_samples"] == 3


def test_self_consistency_rates_and_min_samples(draws, labelled):
    data = pd.concat(
        [draws([("pos", "pos"), ("neg", "neg"), ("neg", "neg")]), labelled({"single": ["pos"]})]
    )
    sc = juries.self_consistency(data)
    assert list(sc["judge"]) == ["j"]  # the one-sample judge is left out
    rates = juries.self_consistency_rates(sc, n_boot=20)
    got = rates[rates["split"] == "s"].set_index("metric")["value"]
    # greedy pos (correct); vote pos, neg, neg -> neg (incorrect): Δ = 0 − 1
    assert got.to_dict() == pytest.approx(
        {"greedy_ca": 1.0, "sc_ca": 0.0, "sc_minus_greedy": -1.0, "changed": 1.0}
    )


def test_i34_3_self_consistency_reason_says_why_with_one_sample(draws, labelled):
    # what 09 showed with one sample per judge: an empty table and a plot of nothing
    one = juries.self_consistency(labelled({"a": ["pos", "neg"], "b": ["tie", "pos"]}))
    assert one.empty
    reason = juries.self_consistency_reason(one)
    assert "one sample" in reason and "several samples" in reason
    several = juries.self_consistency(draws([("pos", "pos"), ("neg", "neg")]))
    assert juries.self_consistency_reason(several) is None
