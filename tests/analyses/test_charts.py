"""Shared chart scaffolding (`analyses.charts`): artists and labels, not pixels."""

from __future__ import annotations

import importlib

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from matplotlib.colors import to_rgba

from judgelab.analyses import charts


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


@pytest.fixture()
def rates():
    """Two judges × two groups of fractions with intervals and counts."""
    return pd.DataFrame(
        {
            "judge": ["A", "A", "B", "B"],
            "group": ["self", "others"] * 2,
            "value": [0.4, 0.2, 0.1, np.nan],
            "ci_low": [0.3, 0.1, 0.0, np.nan],
            "ci_high": [0.5, 0.3, 0.2, np.nan],
            "n": [10, 20, 30, 0],
        }
    )


# ---------------------------------------------------------------- where to draw


def test_axes_keeps_the_given_axes_or_makes_a_figure_of_the_size():
    ax = plt.figure().gca()
    assert charts.axes(ax, (1, 1)) is ax
    new = charts.axes(None, (7, 3.5))
    assert new is not ax
    assert tuple(new.figure.get_size_inches()) == (7, 3.5)


def test_facets_grid_size_and_spare_cells_off():
    fig, axes = charts.facets(5, 3, size=(2, 1.5), sharey=True)
    assert axes.shape == (6,) and len(fig.axes) == 6
    assert tuple(fig.get_size_inches()) == (6, 3)
    assert [a.axison for a in axes] == [True] * 5 + [False]
    assert axes[1].get_shared_y_axes().joined(axes[0], axes[1])
    fig, axes = charts.facets(0, 1, size=(2, 2))  # no panel: still one cell to write on
    assert len(axes) == 1
    fig, axes = charts.facets(0, 0, size=(2, 2))  # no columns either (a faceting on no values)
    assert len(axes) == 1 and len(fig.axes) == 1


def test_no_data_writes_the_reason_and_clears_ticks():
    ax = charts.no_data(plt.figure().gca(), "no split with two or more judges", title="alpha")
    assert [t.get_text() for t in ax.texts] == ["no split with two or more judges"]
    assert ax.texts[0].get_transform() == ax.transAxes
    assert list(ax.get_xticks()) == [] and list(ax.get_yticks()) == []
    assert ax.get_title() == "alpha" and ax.axison
    off = charts.no_data(plt.figure().gca(), axis_off=True)
    assert off.texts[0].get_text() == "no data" and not off.axison and off.get_title() == ""


# ---------------------------------------------------------------- order, positions, whiskers


def test_ordered_uses_the_order_else_first_seen():
    assert charts.ordered(pd.Series(["b", "a", "b", "c"])) == ["b", "a", "c"]
    assert charts.ordered(["b", "a"], ("a", "z")) == ["a", "z"]


def test_dodge_places_group_members_side_by_side():
    left, width = charts.dodge(3, 0, 2)
    right, _ = charts.dodge(3, 1, 2)
    assert width == pytest.approx(0.4)
    assert left == pytest.approx([-0.2, 0.8, 1.8]) and right == pytest.approx([0.2, 1.2, 2.2])
    alone, width = charts.dodge(2, 0, 1)
    assert alone == pytest.approx([0, 1]) and width == pytest.approx(0.8)
    # given slot centres and a narrower span; the members of a slot average to its centre
    pos = [charts.dodge([5.0, 2.0], k, 3, span=0.81)[0] for k in range(3)]
    assert pos[0] == pytest.approx([4.73, 1.73]) and np.mean(pos, axis=0) == pytest.approx([5, 2])


def test_interval_err_clips_scales_and_fills_missing_bounds():
    err = charts.interval_err([0.5, 0.2, 0.3], [0.4, 0.3, np.nan], [0.7, 0.1, 0.4], scale=100)
    # a bound on the wrong side of its value gives a 0 whisker, a missing bound 0 (or NaN)
    assert err == pytest.approx(np.array([[10, 0, 0], [20, 0, 10]]))
    kept = charts.interval_err([0.3], [np.nan], [0.4], keep_nan=True)
    assert np.isnan(kept[0, 0]) and kept[1, 0] == pytest.approx(0.1)


# ---------------------------------------------------------------- decorations


def test_reference_and_identity_lines_are_grey_dashed():
    ax = plt.figure().gca()
    charts.reference_line(ax, 50, label="chance (50 %)")
    charts.reference_line(ax, 0, axis="y")
    charts.identity_line(ax)
    vertical, horizontal, diagonal = ax.lines
    assert list(vertical.get_xdata()) == [50, 50] and vertical.get_label() == "chance (50 %)"
    assert list(horizontal.get_ydata()) == [0, 0] and horizontal.get_label().startswith("_")
    assert list(diagonal.get_xdata()) == [0, 100] and list(diagonal.get_ydata()) == [0, 100]
    for line in ax.lines:
        assert line.get_linestyle() == "--" and line.get_linewidth() == 1
        assert to_rgba(line.get_color()) == to_rgba("grey")
    assert ax.get_xlim() == (0, 100) and ax.get_ylim() == (0, 100)


def test_side_labels_right_of_the_axes_skipping_none():
    ax = plt.figure().gca()
    charts.side_labels(ax, [2, 1, 0], ["n=3", None, "n=5"], x=1.02, fontsize=8)
    assert [t.get_text() for t in ax.texts] == ["n=3", "n=5"]
    assert [t.get_position() for t in ax.texts] == [(1.02, 2), (1.02, 0)]
    assert all(t.get_fontsize() == 8 for t in ax.texts)


def test_n_ticklabels_and_rotated_ticks():
    counts = pd.Series({"s1": 10.0, "pooled": 30})
    labels = charts.n_ticklabels(["s1", "s2", "pooled"], counts)
    assert labels == ["s1\n(n=10)", "s2", "pooled\n(n=30)"]
    assert charts.n_ticklabels(["a"], {}) == ["a"]
    ax = plt.figure().gca()
    ax.set_xticks(range(3), labels)
    charts.rotate_xticklabels(ax, 30)
    assert [t.get_rotation() for t in ax.get_xticklabels()] == [30] * 3
    assert {t.get_horizontalalignment() for t in ax.get_xticklabels()} == {"right"}


def test_annotate_cells_row_major_with_missing_cells():
    ax = plt.figure().gca()
    charts.annotate_cells(
        ax,
        [["a", None], ["c", "d"]],
        fontsize=7,
        colors=[["white", None], ["black", None]],
        weights=[["bold", "normal"], ["normal", "normal"]],
    )
    assert [t.get_text() for t in ax.texts] == ["a", "–", "c", "d"]
    assert [t.get_position() for t in ax.texts] == [(0, 0), (1, 0), (0, 1), (1, 1)]
    assert [t.get_fontsize() for t in ax.texts] == [7, 8, 7, 7]  # a missing cell is size 8
    assert to_rgba(ax.texts[0].get_color()) == to_rgba("white")
    assert ax.texts[0].get_fontweight() == "bold" and ax.texts[2].get_fontweight() == "normal"


def test_percent_format():
    assert charts.percent_format()(0.253, None) == "25"
    assert charts.percent_format(signed=True)(0.1, None) == "+10"
    assert charts.percent_format(signed=True)(-0.05, None) == "-5"


# ---------------------------------------------------------------- bars


def test_percent_bars_heights_whiskers_labels(rates):
    ax = plt.figure().gca()
    charts.percent_bars(
        ax,
        rates,
        x="judge",
        y="value",
        hue="group",
        xs=["A", "B"],
        hues=["self", "others"],
        low="ci_low",
        high="ci_high",
        labels={"self": "Self"},
        ticklabels=["A\n(n=30)", "B"],
        tick_fontsize=8,
    )
    # bars by hue then judge; the missing B/others draws as a 0-height bar
    assert [p.get_height() for p in ax.patches] == pytest.approx([40, 10, 20, 0])
    assert [p.get_x() + p.get_width() / 2 for p in ax.patches] == pytest.approx(
        [-0.2, 0.8, 0.2, 1.2]
    )
    assert len(ax.containers) == 2 + 2  # 2 bar containers + 2 error-bar containers
    assert ax.get_legend_handles_labels()[1] == ["Self", "others"]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["A\n(n=30)", "B"]
    assert ax.get_xticklabels()[0].get_fontsize() == 8
    assert ax.get_ylim() == (0, 105) and ax.get_ylabel() == "%" and ax.get_xlabel() == "judge"
    plain = charts.percent_bars(
        plt.figure().gca(), rates, x="judge", y="value", hue="group", xs=["A"], hues=["self"]
    )
    assert len(plain.containers) == 1  # no interval columns: no whiskers
    assert [t.get_text() for t in plain.get_xticklabels()] == ["A"]


def test_rate_bars_bars_whiskers_counts_legend(rates):
    ax = charts.rate_bars(rates, x="judge", hue="group", ylabel="FPR", title="t", ylim=(0, 1))
    assert [p.get_height() for p in ax.patches[:3]] == pytest.approx([0.4, 0.1, 0.2])
    assert np.isnan(ax.patches[3].get_height())
    assert [p.get_width() for p in ax.patches] == pytest.approx([0.38] * 4)
    # one n per drawn bar (the missing bar has none)
    assert [t.get_text() for t in ax.texts] == ["n=10", "n=30", "n=20"]
    assert ax.get_ylabel() == "FPR" and ax.get_title() == "t" and ax.get_ylim() == (0, 1)
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["self", "others"]
    assert ax.get_legend().get_title().get_text() == "group"
    one = charts.rate_bars(rates[rates["group"] == "self"], x="judge", n=None, order=["B", "A"])
    assert [p.get_height() for p in one.patches] == pytest.approx([0.1, 0.4])
    assert len(one.texts) == 0 and one.get_legend() is None and one.get_ylabel() == "value"
    with pytest.raises(KeyError, match="missing column"):
        charts.rate_bars(rates.drop(columns="ci_low"), x="judge")


@pytest.mark.parametrize("family", ["correctness", "reference"])
def test_rate_bars_is_reexported_by_the_families_that_draw_it(family):
    plots = importlib.import_module(f"judgelab.analyses.{family}.plots")
    assert plots.rate_bars is charts.rate_bars
