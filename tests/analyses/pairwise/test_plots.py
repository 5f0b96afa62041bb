"""Pairwise plotters (`analyses.pairwise.plots`): artists and labels, not pixels."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

from judgelab.analyses import pairwise


@pytest.fixture()
def rates(judgments):
    # always-A: CA 0 everywhere; right: CA 1 in s1, 1/2 in s2; right has a second run
    def table(judge, pairs, split, sample=0):
        spec = [(f"{split}-{i}", *pair) for i, pair in enumerate(pairs)]
        return judgments(spec, judge=judge, split=split, sample=sample)

    tables = [table("always-A", [("pos", "neg")] * 2, split) for split in ("s1", "s2")]
    tables += [
        table("right", [("pos", "pos")] * 2, "s1"),
        table("right", [("pos", "pos"), ("neg", "pos")], "s2"),
        table("right", [("pos", "pos"), (None, "pos")], "s1", sample=1),
        table("right", [("tie", "pos"), ("neg", "neg")], "s2", sample=1),
    ]
    out = pairwise.item_outcomes(pd.concat(tables, ignore_index=True))
    return pairwise.pairwise_rates(out, n_boot=100)


def test_leaderboard_heatmap_cells_and_counts(rates):
    data = pairwise.rates_for(rates, metric="ca", sample=0)
    ax = pairwise.plots.leaderboard_heatmap(data, y_order=["right", "always-A"])
    assert len(ax.images) == 1
    grid = ax.images[0].get_array()
    # rows right, always-A; columns s1, s2, pooled, mean_of_splits
    assert np.allclose(grid, [[1.0, 0.5, 0.75, 0.75], [0, 0, 0, 0]])
    texts = [t.get_text() for t in ax.texts]
    assert len(texts) == 8
    assert texts[0] == "100.0\nn=2" and texts[2] == "75.0\nn=4"
    assert [t.get_text() for t in ax.get_xticklabels()] == [
        "s1",
        "s2",
        "Average (pooled)",
        "Mean of splits",
    ]
    assert len(ax.lines) == 1  # the separator before the averages
    with pytest.raises(ValueError, match="several rows"):
        pairwise.plots.leaderboard_heatmap(pairwise.rates_for(rates, metric="ca"))


def test_accuracy_bars_heights_and_error_bars(rates):
    data = pairwise.rates_for(
        rates, metric=["a1", "a2", "ca", "oa"], aggregation="pooled", sample=0
    )
    ax = pairwise.plots.accuracy_bars(data)
    assert len(ax.patches) == 2 * 4
    heights = [p.get_height() for p in ax.patches]
    # bars by metric then judge (always-A, right): a1 100, 75; a2 0, 100; ca 0, 75; oa 100, 100
    assert heights == pytest.approx([100, 75, 0, 100, 0, 75, 100, 100])
    assert len(ax.containers) == 4 + 4  # 4 bar containers + 4 error-bar containers
    assert [t.get_text() for t in ax.get_legend().get_texts()] == [
        "Run 1 (A1)",
        "Run 2 (A2)",
        "Consistent (CA)",
        "Optimistic (OA)",
    ]


def test_accuracy_panels_two_groups(rates):
    data = pairwise.rates_for(
        rates, metric=["a1", "a2", "ca", "oa"], aggregation="pooled", sample=0
    )
    fig = pairwise.plots.accuracy_panels(
        data, panels={"control": ["always-A"], "model": ["right"]}
    )
    assert [ax.get_title() for ax in fig.axes] == ["control", "model"]
    assert [len(ax.patches) for ax in fig.axes] == [4, 4]
    assert len(fig.legends) == 1
    with pytest.raises(ValueError, match="not in the data"):
        pairwise.plots.accuracy_panels(data, panels={"x": ["nobody"]})
    assert len(pairwise.plots.accuracy_panels(data).axes) == 1


def test_preference_forest_points_and_p_values(rates):
    pref = pairwise.position_preference(rates, test="sign")
    pref = pairwise.rates_for(pref, aggregation="pooled", sample=0)
    ax = pairwise.plots.preference_forest(pref)
    # always-A picks A in all 8 verdicts -> 100 %; right: A-picks 1 + 1 (s1) + 1 + 0 (s2)
    # over 8 decisive verdicts -> 3/8 = 37.5 %
    points = ax.lines[0].get_xdata()
    assert list(points) == pytest.approx([100.0, 37.5])
    assert ax.lines[-1].get_xdata()[0] == 50.0  # the reference line
    texts = [t.get_text() for t in ax.texts]
    # always-A: 4 of 4 items A-both-times -> p = 2 · 0.5⁴ = 0.125;
    # right: 0 A-both-times vs 1 B-both-times (s2 item 1) -> p = 1
    assert texts == ["p = 0.12", "p = 1"]


def test_category_bars_stack_to_100(rates):
    cats = pairwise.consistency_categories(rates)
    cats = pairwise.rates_for(cats, aggregation="pooled", sample=0)
    ax = pairwise.plots.category_bars(cats)
    assert len(ax.patches) == 2 * 5
    widths = np.array([p.get_width() for p in ax.patches]).reshape(5, 2)
    assert widths.sum(axis=0) == pytest.approx([100.0, 100.0])
    # right (row 2): consistent 3/4 -> 75 %, biased_second 1/4 -> 25 %
    assert widths[:, 1] == pytest.approx([75, 0, 25, 0, 0])


def test_radar_lines_and_axes(rates):
    data = pairwise.rates_for(rates, metric="ca", aggregation=["split", "pooled"], sample=0)
    ax = pairwise.plots.radar(data)
    assert ax.name == "polar"
    assert len(ax.lines) == 2
    labels = [t.get_text() for t in ax.get_xticklabels()]
    assert labels == ["Average (pooled)", "s1", "s2"]
    # the right judge's closed line: pooled 75, s1 100, s2 50, back to 75
    assert list(ax.lines[1].get_ydata()) == pytest.approx([75, 100, 50, 75])
    with pytest.raises(ValueError, match="polar"):
        pairwise.plots.radar(data, ax=plt.figure().gca())


def test_stability_plot_dots_and_spread(rates):
    data = pairwise.rates_for(rates, metric="cons", aggregation="pooled")
    ax = pairwise.plots.stability_plot(data, ylabel="consistency (%)")
    # one scatter per judge; the error bar only for the judge with two runs
    assert len(ax.collections) == 2 + 1
    right = ax.collections[1].get_offsets()[:, 1]
    # right: sample 0 cons 3/4, sample 1 cons (both items: 1 consistent, 1 tie / 1 invalid) 2/4
    assert sorted(right) == pytest.approx([50.0, 75.0])
    assert ax.get_ylabel() == "consistency (%)"


def test_missing_column_raises(rates):
    with pytest.raises(KeyError, match="missing column"):
        pairwise.plots.accuracy_bars(pd.DataFrame({"judge": ["a"]}))
