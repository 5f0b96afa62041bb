"""Majority win rates, leaders and rank flips (Table 6); the pairwise sample end to end."""

import json

import pytest

from judgelab.analyses import contexteval as ce
from judgelab.data import catalog


def test_rank_flip_worked_example(judgments, example_rows):
    # Baseline (5 autoraters): majorities C2, C2, C1, and one 2-2-1 example without a
    # majority -> |M| = 3, WR = (33.3, 66.7, 0), leader b. Context: C1, C1, C2 -> leader a.
    base = example_rows(
        [
            ["C2"] * 5,
            ["C2", "C2", "C2", "C1", "Tie"],
            ["C1"] * 4 + ["C2"],
            ["C1", "C1", "C2", "C2", "Tie"],
        ]
    )
    ctx = example_rows(
        [["C1"] * 5, ["C1", "C1", "C1", "Tie", "C2"], ["C2"] * 5], setting="NoCtxGen-CtxEval"
    )
    ex = ce.example_table(ce.verdict_table(judgments(base + ctx)))
    fl = ce.rank_flips(ex, n_boot=200).set_index("setting")
    b, c = fl.loc["NoCtxGen-NoCtxEval"], fl.loc["NoCtxGen-CtxEval"]
    assert (b["n_majority"], b["n_excluded"]) == (3, 1)
    assert b["wr_c1"] == pytest.approx(100 / 3) and b["wr_c2"] == pytest.approx(200 / 3)
    assert b["leader"] == "b" and c["leader"] == "a"
    assert not b["flipped"] and c["flipped"]
    # margin: baseline 33.3 - 66.7 = -33.3, context +33.3 -> delta +66.7 points.
    assert c["delta_margin"] == pytest.approx(200 / 3)
    assert 0 <= c["p_flip"] <= 1
    lead = ce.leaders_by_source(fl.reset_index())
    assert lead["leader_autorater"].tolist() == ["b", "a"]


def test_sample_set_runs_end_to_end_and_plots():
    loaded = catalog.load_source("sample:contexteval_pairwise")
    assert all(json.loads(m)["illustrative"] for m in loaded.items["meta"])
    ex = ce.example_table(ce.verdict_table(loaded.judgments, loaded.items))
    # 3 pairs x 3 settings x (14 autorater + 8 human examples)
    assert len(ex) == 3 * 3 * (14 + 8)
    assert set(ex.loc[ex["source"] == "autorater", "n_judges"]) == {5}
    flips = ce.rank_flips(ex, n_boot=50)
    ax = ce.plots.win_rate_bars(flips)
    assert len(ax.figure.axes) == 6 and "win rate" in ax.get_ylabel()
    cross = ce.cross_source_agreement(ex)
    assert (cross["n_matched"] > 0).all()
