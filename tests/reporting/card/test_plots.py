"""Card plots: one headline panel per graded bias, detail panels, threshold bands."""

from judgelab.reporting import card


def test_plots_draw_one_panel_per_graded_bias(pairwise_tables):
    items, judgments = pairwise_tables
    m = card.collect_measures(items, judgments, judge="m.p", source="toy", n_boot=50)
    lights = card.traffic_lights(m, min_n=1)
    fig = card.plots.headline_forest(lights)
    titles = [ax.get_title().split("\n")[0] for ax in fig.axes if ax.get_visible()]
    assert titles == [
        "Position bias",
        "Order consistency",
        "Length bias",
        "Agreement with humans",
        "Invalid outputs",
    ]
    detail = card.plots.detail_panels(m)
    assert [ax.get_title() for ax in detail.axes if ax.get_visible()] == ["P(picks longer)"]
    assert card.plots.threshold_bands("deviation", 0.05, 0.15, lo=0.4, hi=0.6) == [
        (0.4, 0.45, "amber"),
        (0.45, 0.55, "green"),
        (0.55, 0.6, "amber"),
    ]
