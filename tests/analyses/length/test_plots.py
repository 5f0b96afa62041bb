"""Plotters of the length tables: lines per judge with n, interval forests, empty tables."""

import pandas as pd

from judgelab.analyses import length


def test_rate_lines_draws_one_line_per_judge_with_n():
    data = pd.DataFrame(
        {
            "judge": ["a", "a", "b", "b"],
            "bin": ["x", "y", "x", "y"],
            "value": [0.5, 0.6, 0.7, 0.8],
            "ci_low": 0.4,
            "ci_high": 0.9,
            "n": [10, 12, 10, 14],
        }
    )
    ax = length.plots.rate_lines(data, style=None, xlabel="bin", title="t")
    assert len(ax.lines) >= 2
    labels = [t.get_text() for t in ax.get_xticklabels()]
    assert labels == ["x\nn=10", "y\nn=12–14"]
    assert ax.get_ylabel() == "accuracy (%)"


def test_plots_handle_empty_tables():
    empty = pd.DataFrame(columns=["judge", "bin", "value", "ci_low", "ci_high", "n", "condition"])
    ax = length.plots.rate_lines(empty)
    assert any("no data" in t.get_text() for t in ax.texts)
    ax = length.plots.interval_forest(empty)
    assert any("no data" in t.get_text() for t in ax.texts)
