"""Traffic lights: inclusive boundaries, grading rules, min_n, n/a rows, custom thresholds."""

import math

import numpy as np
import pandas as pd
import pytest

from judgelab.reporting import card


@pytest.mark.parametrize(
    ("value", "expected"),
    [(0.0, "green"), (0.05, "green"), (0.0501, "amber"), (0.15, "amber"), (0.1501, "red")],
)
def test_traffic_light_lower_is_better_boundaries(value, expected):
    assert card.traffic_light(value, green=0.05, amber=0.15, higher_is_better=False) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [(0.9, "green"), (0.8, "green"), (0.7999, "amber"), (0.6, "amber"), (0.5999, "red")],
)
def test_traffic_light_higher_is_better_boundaries(value, expected):
    assert card.traffic_light(value, green=0.8, amber=0.6, higher_is_better=True) == expected


def test_traffic_light_grey_and_bad_thresholds():
    assert card.traffic_light(math.nan, green=1, amber=2, higher_is_better=False) == "grey"
    with pytest.raises(ValueError, match="green"):
        card.traffic_light(0.1, green=0.2, amber=0.1, higher_is_better=False)


def headline_frame(rows):
    base = dict(source="s", judge="j", scope="", headline=True, ci_low=np.nan, ci_high=np.nan)
    base.update(p_value=np.nan, status="ok", note="")
    return pd.DataFrame([{**base, **r} for r in rows], columns=list(card.COLUMNS))


@pytest.mark.parametrize(
    ("pos_a", "light"),
    # |0.55 - 0.5| carries float noise above 0.05 and still counts as the green boundary
    [(0.55, "green"), (0.45, "green"), (0.65, "amber"), (0.35, "amber"), (0.66, "red")],
)
def test_traffic_lights_position_boundaries(pos_a, light):
    m = headline_frame([{"measure": "pos_a_rate", "value": pos_a, "n": 100}])
    lights = card.traffic_lights(m).set_index("bias")
    assert lights.loc["Position bias", "light"] == light
    assert lights.loc["Position bias", "graded"] == pytest.approx(abs(pos_a - 0.5))


def test_traffic_lights_rules_min_n_and_na():
    m = headline_frame(
        [
            {"measure": "context_trend", "value": -0.1, "n": 50},  # drop 0.1: green boundary
            {"measure": "consistency", "value": 0.6, "n": 50},  # amber boundary
            {"measure": "kappa_human", "value": 0.9, "n": 29},  # below min_n: grey
            {"measure": "invalid_rate", "value": 0.5, "n": 100},  # red
            {"measure": "self_gap", "value": -0.2, "n": 100},  # |gap| 0.2 > 0.15: red
            {"measure": "p_longer", "status": "n/a", "note": "pointwise", "n": 0},
        ]
    )
    lights = card.traffic_lights(m, min_n=30).set_index("bias")
    assert lights.loc["Context length", "light"] == "green"
    assert lights.loc["Order consistency", "light"] == "amber"
    assert lights.loc["Agreement with humans", "light"] == "grey"
    assert "too few" in lights.loc["Agreement with humans", "note"]
    assert lights.loc["Invalid outputs", "light"] == "red"
    assert lights.loc["Self-preference", "light"] == "red"
    assert lights.loc["Length bias", "light"] == "n/a"
    assert lights.loc["Length bias", "note"] == "pointwise"
    assert lights.loc["Answerability", "note"] == "not collected"
    # a rising accuracy with context is no risk: max(-0.5, 0) = 0 -> green
    rising = headline_frame([{"measure": "context_trend", "value": 0.5, "n": 50}])
    assert card.traffic_lights(rising).iloc[3]["light"] == "green"


def test_custom_thresholds_move_the_boundary_and_are_shown():
    m = headline_frame([{"measure": "invalid_rate", "value": 0.05, "n": 100}])
    strict = {**card.DEFAULT_THRESHOLDS, "invalid": [0.01, 0.04]}
    lights = card.traffic_lights(m, thresholds=strict).set_index("bias")
    assert lights.loc["Invalid outputs", "light"] == "red"
    table = card.threshold_table(strict).set_index("bias")
    assert table.loc["Invalid outputs", "rule"].startswith("green: Invalid outputs ≤ 0.01")
    with pytest.raises(KeyError, match="missing 'consistency'"):
        card.threshold_table({"position": [0.05, 0.15]})


def test_light_rows_grade_by_the_measures_registered_direction():
    from judgelab.analyses import registry

    for _bias, (_tkey, measure, how) in card.LIGHTS.items():
        assert how == registry.get(measure).direction
    assert card.LIGHTS["Context length"] == ("context", "context_trend", "drop")
    assert card.LIGHTS["Agreement with humans"] == ("human_agreement", "kappa_human", "higher")


def test_self_and_answered_lights_read_the_test_not_the_estimate():
    m = headline_frame(
        [
            {"measure": "self_gap", "value": 0.3, "n": 100, "p_value": 0.4},  # big, n.s.
            {"measure": "answered_gap", "value": 0.02, "n": 100, "p_value": 0.001},  # small, sig.
        ]
    )
    lights = card.traffic_lights(m).set_index("bias")
    assert lights.loc["Self-preference", "light"] == "green"
    assert "not significant" in lights.loc["Self-preference", "note"]
    assert lights.loc["Answerability", "light"] == "amber"
    strong = headline_frame([{"measure": "answered_gap", "value": 0.4, "n": 100, "p_value": 0.01}])
    assert card.traffic_lights(strong).set_index("bias").loc["Answerability", "light"] == "red"


def test_few_effective_clusters_give_uncertain_not_a_colour():
    m = headline_frame(
        [
            {"measure": "pos_a_rate", "value": 0.9, "n": 100, "n_eff_clusters": 6.2},
            {"measure": "consistency", "value": 0.95, "n": 100, "n_eff_clusters": 40.0},
            {"measure": "invalid_rate", "value": 0.5, "n": 100},  # unknown: graded as before
        ]
    )
    lights = card.traffic_lights(m).set_index("measure")
    assert lights.loc["pos_a_rate", "light"] == "uncertain"
    assert "few effective clusters (6.2 < 20)" in lights.loc["pos_a_rate", "note"]
    assert lights.loc["consistency", "light"] == "green"
    assert lights.loc["invalid_rate", "light"] == "red"
    assert card.LIGHT_COLOURS["uncertain"].startswith("#")


@pytest.mark.parametrize(
    ("changed", "light"), [(0.05, "green"), (0.1, "green"), (0.15, "amber"), (0.25, "red")]
)
def test_i35_6_the_stability_row_is_graded_like_the_others(changed, light):
    m = headline_frame(
        [{"measure": "stability", "value": changed, "n": 200, "n_eff_clusters": 150.0}]
    )
    lights = card.traffic_lights(m).set_index("bias")
    assert lights.loc["Stability", "light"] == light
    assert lights.loc["Stability", "graded"] == pytest.approx(changed)
