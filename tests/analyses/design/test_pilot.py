"""Pilot figures read from judgments: ICC, order correlation, discordance, agreement."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from judgelab.analyses.design import pilot


def test_anova_icc_recovers_a_planted_icc(rng):
    g, m, icc = 2000, 6, 0.3
    u = rng.normal(0, np.sqrt(icc), g)
    y = np.repeat(u, m) + rng.normal(0, np.sqrt(1 - icc), g * m)
    assert pilot.anova_icc(y, np.repeat(np.arange(g), m)) == pytest.approx(icc, abs=0.03)
    assert np.isnan(pilot.anova_icc(np.array([1.0, 2.0]), np.array([0, 0])))


def _pairwise(chosen0, chosen1, clusters):
    rows = []
    for i, (c0, c1, cl) in enumerate(zip(chosen0, chosen1, clusters, strict=True)):
        for order, c in ((0, c0), (1, c1)):
            rows.append(
                dict(
                    benchmark="b",
                    split="s",
                    item_id=str(i),
                    order=order,
                    chosen=c,
                    valid=True,
                    cluster=cl,
                    correct=c == "pos",
                )
            )
    return pd.DataFrame(rows)


def test_position_pilot_of_an_always_a_judge():
    j = _pairwise(["pos"] * 4, ["neg"] * 4, ["c1", "c1", "c2", "c2"])
    fig = pilot.position(j)
    assert fig["p_a"] == 1.0 and fig["n_both_orders"] == 4 and fig["cluster_size"] == 2.0


def test_position_pilot_of_a_consistent_judge_has_negative_order_corr(rng):
    right = rng.random(400) < 0.7
    c0 = np.where(right, "pos", "neg")
    fig = pilot.position(_pairwise(c0, c0, [f"c{i // 4}" for i in range(400)]))
    # picked A in order 0 = right, in order 1 = wrong: the orders' A-indicators are opposite
    assert fig["p_a"] == pytest.approx(0.5)
    assert fig["order_corr"] == pytest.approx(-1.0, abs=0.01)
    assert fig["order_corr_raw"] == pytest.approx(-1.0, abs=0.01)


def test_paired_and_agreement():
    j = _pairwise(["pos", "neg", "pos"], ["pos", "pos", "neg"], ["a", "b", "c"]).assign(judge="J1")
    k = j.assign(judge="J2", correct=True)
    fig = pilot.paired(pd.concat([j, k]), "J1", "J2")
    assert fig["n_pairs"] == 6 and fig["discordant"] == pytest.approx(2 / 6)
    assert fig["diff"] == pytest.approx(-2 / 6)
    agree = pilot.agreement(np.array([1, 1, 0, 0]), np.array([1, 0, 0, 0]))
    assert agree["p_o"] == 0.75 and agree["p_e"] == pytest.approx(0.5 * 0.25 + 0.5 * 0.75)
