"""HTML views: the comparison table (values, intervals, light counts), sortable HTML, lights."""

import math

import pytest

from judgelab.reporting import card


def test_comparison_table_and_html(pairwise_tables):
    items, judgments = pairwise_tables
    m = card.collect_measures(items, judgments, judge="m.p", source="toy", n_boot=50)
    lights = card.traffic_lights(m)
    table = card.comparison_table(m, lights)
    row = table.iloc[0]
    assert row["key"] == "toy:m.p"
    assert row["ca"] == pytest.approx(0.5) and row["ca_n"] == 4
    assert math.isnan(row["fpr"])  # n/a stays missing
    # lights: position |0.75-0.5| = 0.25 red, consistency 0.5 red, length 0 green,
    # kappa 1/3 red, invalid 0 green — all with n < 30 so they are grey
    assert row["n_red"] == 0 and row["n_green"] == 0
    page = card.comparison_html(table, lights)
    assert "jl-sortable" in page and "<script>" in page and "http" not in page
    assert "data-value='0.5'" in page
    view = card.lights_view(lights)
    assert view._repr_html_().count("<tr>") == 1 + len(card.LIGHTS)
