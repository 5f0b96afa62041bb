"""The card's probe rows: one per probe where the judge ran on a probe benchmark, else n/a."""

from __future__ import annotations

import numpy as np
import pytest

from judgelab.reporting import card
from judgelab.simulate import probes as sim
from judgelab.simulate.base import Design
from judgelab.simulate.pairwise import PairwiseParams, pairwise_benchmark


def test_a_row_per_probe_with_the_pooled_headline():
    params = sim.ProbeParams(susceptibility={"authority": 0.0, "verbosity": 1.5})
    s = sim.probe_benchmark(np.random.default_rng(2), Design(30, 4, 0.2), params)
    m = card.collect_measures(s.items, s.judgments, judge="J1", n_boot=100)
    rows = m[m["measure"] == "probe_pull"].set_index("scope")
    assert list(rows.index) == ["authority", "verbosity", "all"]
    assert rows.loc["all", "headline"] and not rows.loc["verbosity", "headline"]
    assert rows.loc["verbosity", "value"] > 0.15 and rows.loc["verbosity", "p_value"] < 0.01
    assert rows.loc["authority", "ci_low"] < 0 < rows.loc["authority", "ci_high"]
    assert rows.loc["verbosity", "n"] == 30 * 4 * 2 * 2  # items × arms × orders
    assert "robustness" in rows.loc["verbosity", "note"]
    assert "accuracy" in rows.loc["verbosity", "note"]
    assert (rows["status"] == "ok").all()
    assert card.MEASURES["probe_pull"][0] == "Probe pull"


def test_other_sources_get_one_na_row():
    s = pairwise_benchmark(np.random.default_rng(0), Design(10, 2, 0.1), PairwiseParams())
    m = card.collect_measures(s.items, s.judgments, judge="J1", n_boot=50)
    row = m[m["measure"] == "probe_pull"]
    assert len(row) == 1 and row["status"].iloc[0] == "n/a"
    assert "judgelab probe" in row["note"].iloc[0]


@pytest.mark.parametrize("families", [("probes",)])
def test_the_family_can_be_selected(families):
    names = [x.name for x in card.card_measures(families)]
    assert names == ["probe_pull"]
