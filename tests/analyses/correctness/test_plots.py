"""Correctness plotters (`analyses.correctness.plots`)."""

import pandas as pd
import pytest

from judgelab.analyses import correctness


def test_rate_bars_draws_one_bar_per_group_with_labels():
    data = pd.DataFrame(
        {
            "judge": ["A", "A", "B", "B"], "group": ["self", "others"] * 2,
            "value": [0.4, 0.2, 0.1, 0.3], "ci_low": [0.3, 0.1, 0.0, 0.2],
            "ci_high": [0.5, 0.3, 0.2, 0.4], "n": [10, 20, 30, 40], "metric": "fpr",
        }
    )  # fmt: skip
    ax = correctness.plots.rate_bars(data, x="judge", hue="group", ylabel="FPR", title="t")
    assert len(ax.patches) == 4 and ax.get_ylabel() == "FPR" and ax.get_title() == "t"
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["self", "others"]
    fig = correctness.plots.faceted_rate_bars(data, x="judge", hue="group", col="metric")
    assert len(fig.axes) == 1
    with pytest.raises(KeyError):
        correctness.plots.rate_bars(data.drop(columns="ci_low"), x="judge")


def test_faceted_rate_bars_on_no_rates_says_so():
    empty = pd.DataFrame(columns=["judge", "value", "ci_low", "ci_high", "n", "metric"])
    fig = correctness.plots.faceted_rate_bars(empty, x="judge", suptitle="FPR / FNR")
    assert len(fig.axes) == 1
    assert "no rates to draw" in [t.get_text() for t in fig.axes[0].texts]
