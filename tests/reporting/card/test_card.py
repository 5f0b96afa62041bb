import argparse
import json
import math

import numpy as np
import pandas as pd
import pytest

from judgelab.cli import card as cli_card
from judgelab.reporting.card import card as report_card
from judgelab.reporting.card import plots as plots_card

# --------------------------------------------------------------------------- fixtures


def pairwise_tables():
    """4 pairwise items judged in both orders by one judge (no peers, no context).

    chosen (order 0, order 1): item 1 pos,pos · item 2 pos,neg · item 3 pos,neg · item 4 pos,pos.
    pos is longer in items 1-2 (10 vs 5 words), neg is longer in items 3-4.
    """
    words = {1: (10, 5), 2: (10, 5), 3: (5, 10), 4: (5, 10)}
    items = pd.DataFrame(
        {
            "benchmark": "b",
            "split": "s",
            "item_id": [str(i) for i in words],
            "task": "pairwise",
            "question": [f"question {i}" for i in words],
            "context": "",
            "response_pos": [" ".join(["w"] * p) for p, _ in words.values()],
            "response_neg": [" ".join(["w"] * n) for _, n in words.values()],
            "response": None,
            "reference": None,
            "gold": "pos",
            "meta": "{}",
        }
    )
    chosen = {1: ("pos", "pos"), 2: ("pos", "neg"), 3: ("pos", "neg"), 4: ("pos", "pos")}
    rows = []
    for i, pair in chosen.items():
        for order, c in enumerate(pair):
            rows.append(
                {
                    "benchmark": "b",
                    "split": "s",
                    "item_id": str(i),
                    "judge": "m.p",
                    "model": "m",
                    "prompt": "p",
                    "condition": "",
                    "order": order,
                    "sample": 0,
                    "verdict": {"pos": "AB"[order], "neg": "BA"[order]}[c],
                    "valid": True,
                    "chosen": c,
                    "correct": c == "pos",
                    "cost_usd": 0.002,
                    "latency_s": np.nan,
                }
            )
    return items, pd.DataFrame(rows)


def correctness_tables():
    """4 answers graded Correct/Incorrect: human C, C, I, I; judge C, I, C, I."""
    items = pd.DataFrame(
        {
            "benchmark": "q",
            "split": "V1",
            "item_id": ["0", "1", "2", "3"],
            "task": "pointwise",
            "question": ["a", "b", "c", "d"],
            "context": "",
            "response_pos": None,
            "response_neg": None,
            "response": "an answer",
            "reference": None,
            "gold": ["Correct", "Correct", "Incorrect", "Incorrect"],
            "meta": [json.dumps({"candidate_model": "x"})] * 4,
        }
    )
    judgments = pd.DataFrame(
        {
            "benchmark": "q",
            "split": "V1",
            "item_id": ["0", "1", "2", "3"],
            "judge": "g.umass",
            "model": "g",
            "prompt": "umass",
            "condition": "",
            "order": 0,
            "sample": 0,
            "verdict": ["Correct", "Incorrect", "Correct", "Incorrect"],
            "valid": True,
            "chosen": None,
            "correct": [True, False, False, True],
            "cost_usd": np.nan,
            "latency_s": np.nan,
        }
    )
    return items, judgments


def pick(measures, measure, scope=None):
    rows = measures[measures["measure"] == measure]
    if scope is not None:
        rows = rows[rows["scope"] == scope]
    assert len(rows) == 1, (measure, scope, rows)
    return rows.iloc[0]


# --------------------------------------------------------------------------- collector


def test_collector_pairwise_with_only_some_measures():
    items, judgments = pairwise_tables()
    m = report_card.collect_measures(items, judgments, judge="m.p", source="toy", n_boot=200)
    assert set(m["measure"]) == set(report_card.MEASURES)
    # CA: items 1 and 4 are correct in both orders -> 2/4
    assert pick(m, "ca", "pooled")["value"] == pytest.approx(0.5)
    assert pick(m, "ca", "pooled")["n"] == 4
    # consistency: same verdict in both orders for items 1 and 4 -> 2/4
    assert pick(m, "consistency", "pooled")["value"] == pytest.approx(0.5)
    # position A: order 0 picks pos (= A) 4 times, order 1 picks neg (= A) twice -> 6/8;
    # sign test of 2 items A-both-times against 0 B-both-times: 2 * 0.5**2 = 0.5
    pos_a = pick(m, "pos_a_rate", "pooled")
    assert pos_a["value"] == pytest.approx(0.75)
    assert pos_a["n"] == 8
    assert pos_a["p_value"] == pytest.approx(0.5)
    # P(picks longer): longer is better (items 1-2) 3 of 4; longer is worse (3-4) 1 of 4
    assert pick(m, "p_longer", "longer is better")["value"] == pytest.approx(0.75)
    assert pick(m, "p_longer", "longer is worse")["value"] == pytest.approx(0.25)
    balanced = pick(m, "p_longer", "balanced")
    assert balanced["value"] == pytest.approx(0.5) and balanced["headline"]
    assert pick(m, "p_longer", "all")["value"] == pytest.approx((3 + 1) / 8)
    # final choices pos, tie, tie, pos: acc 1/2, wrong 0 -> kappa (0.5 - 0) / (2 - 0.5) = 1/3
    assert pick(m, "kappa_human")["value"] == pytest.approx(1 / 3)
    assert pick(m, "invalid_rate")["value"] == 0.0 and pick(m, "invalid_rate")["n"] == 8
    # 0.002 USD per judgment -> 2 USD per 1,000
    assert pick(m, "cost_per_1k")["value"] == pytest.approx(2.0)
    # measures the data cannot give say why
    why = m[m["status"] == "n/a"].set_index("measure")["note"]
    assert "not recorded" in why["latency_per_1k"]
    assert "no context text" in why["context_trend"]
    assert "Correct/Incorrect" in why["fpr"]
    assert "fewer than 2 other judges" in why["alpha_peers"]
    assert "with and without a reference" in why["kappa_reference"]
    assert set(why.index) == {
        "latency_per_1k",
        "context_trend",
        "agreement_human",
        "fpr",
        "fnr",
        "self_gap",
        "kappa_answered",
        "answered_gap",
        "alpha_peers",
        "kappa_reference",
    }
    # every applicable row carries n and, for rates, an interval around the value
    ok = m[(m["status"] == "ok") & m["ci_low"].notna()]
    assert (ok["ci_low"] <= ok["value"] + 1e-12).all() and (
        ok["value"] <= ok["ci_high"] + 1e-12
    ).all()


def test_collector_single_order_pairwise_says_no_two_order_data():
    items, judgments = pairwise_tables()
    one = judgments[judgments["order"] == 0]
    m = report_card.collect_measures(items, one, judge="m.p", n_boot=50)
    for measure in ("ca", "consistency", "pos_a_rate"):
        assert pick(m, measure)["status"] == "n/a"
        assert "no two-order data" in pick(m, measure)["note"]
    # length preference needs only one order: 4 verdicts pick pos; pos is longer in 2 of 4
    assert pick(m, "p_longer", "all")["value"] == pytest.approx(0.5)


def test_collector_pointwise_correctness():
    items, judgments = correctness_tables()
    m = report_card.collect_measures(items, judgments, judge="g.umass", n_boot=50)
    # FPR = says Correct on human-Incorrect = 1/2; FNR = 1/2; agreement 2/4; kappa 0
    assert pick(m, "fpr")["value"] == pytest.approx(0.5) and pick(m, "fpr")["n"] == 2
    assert pick(m, "fnr")["value"] == pytest.approx(0.5)
    assert pick(m, "agreement_human")["value"] == pytest.approx(0.5)
    assert pick(m, "kappa_human")["value"] == pytest.approx(0.0)
    assert "pointwise" in pick(m, "pos_a_rate")["note"]
    assert "judge_family" in pick(m, "self_gap")["note"]


def test_collector_maps_labels_and_rejects_unknown_judges():
    items, judgments = correctness_tables()
    to_faith = {"Correct": "Consistent", "Incorrect": "Hallucinated"}
    items = items.assign(gold=items["gold"].map(to_faith))
    judgments = judgments.assign(verdict=judgments["verdict"].map(to_faith))
    unmapped = report_card.collect_measures(items, judgments, judge="g.umass", n_boot=20)
    assert pick(unmapped, "fpr")["status"] == "n/a"
    assert "label_map" in pick(unmapped, "fpr")["note"]
    mapped = report_card.collect_measures(
        items,
        judgments,
        judge="g.umass",
        label_map={"Consistent": "Correct", "Hallucinated": "Incorrect"},
        n_boot=20,
    )
    assert pick(mapped, "fpr")["value"] == pytest.approx(0.5)
    with pytest.raises(ValueError, match="no judgments"):
        report_card.collect_measures(items, judgments, judge="nobody")
    with pytest.raises(KeyError):
        report_card.collect_measures(items, judgments.drop(columns="sample"), judge="g.umass")


def test_parse_key_keeps_sources_apart():
    assert report_card.parse_key("umass_llm_eval_triviaqa:GPT-4.umass") == (
        "umass_llm_eval_triviaqa",
        "GPT-4.umass",
    )
    assert str(report_card.CardKey("llmbar", "GPT-4.Vanilla")) == "llmbar:GPT-4.Vanilla"
    for bad in ("GPT-4", "llmbar:", ":GPT-4", "sample:set"):
        with pytest.raises(ValueError, match="source"):
            report_card.parse_key(bad)


def test_load_sources_falls_back_with_a_note(monkeypatch):
    monkeypatch.setenv("JUDGELAB_OFFLINE", "1")
    sources = report_card.load_sources(
        ["llmbar:GPT-4.Vanilla"], fallbacks={"llmbar": "sample:contextualjudgebench"}
    )
    ((label, cs),) = sources.items()
    assert label == "sample:contextualjudgebench" and cs.requested == "llmbar"
    assert cs.judges == ["sample-judge-1-always-first"]
    assert "unavailable" in cs.note
    with pytest.raises(ValueError, match="unknown judge"):
        report_card.load_sources(["sample:contextualjudgebench:nobody"])


# --------------------------------------------------------------------------- traffic lights


@pytest.mark.parametrize(
    ("value", "expected"),
    [(0.0, "green"), (0.05, "green"), (0.0501, "amber"), (0.15, "amber"), (0.1501, "red")],
)
def test_traffic_light_lower_is_better_boundaries(value, expected):
    assert (
        report_card.traffic_light(value, green=0.05, amber=0.15, higher_is_better=False)
        == expected
    )


@pytest.mark.parametrize(
    ("value", "expected"),
    [(0.9, "green"), (0.8, "green"), (0.7999, "amber"), (0.6, "amber"), (0.5999, "red")],
)
def test_traffic_light_higher_is_better_boundaries(value, expected):
    assert (
        report_card.traffic_light(value, green=0.8, amber=0.6, higher_is_better=True) == expected
    )


def test_traffic_light_grey_and_bad_thresholds():
    assert report_card.traffic_light(math.nan, green=1, amber=2, higher_is_better=False) == "grey"
    with pytest.raises(ValueError, match="green"):
        report_card.traffic_light(0.1, green=0.2, amber=0.1, higher_is_better=False)


def headline_frame(rows):
    base = dict(source="s", judge="j", scope="", headline=True, ci_low=np.nan, ci_high=np.nan)
    base.update(p_value=np.nan, status="ok", note="")
    return pd.DataFrame([{**base, **r} for r in rows], columns=list(report_card.COLUMNS))


@pytest.mark.parametrize(
    ("pos_a", "light"),
    # |0.55 - 0.5| carries float noise above 0.05 and still counts as the green boundary
    [(0.55, "green"), (0.45, "green"), (0.65, "amber"), (0.35, "amber"), (0.66, "red")],
)
def test_traffic_lights_position_boundaries(pos_a, light):
    m = headline_frame([{"measure": "pos_a_rate", "value": pos_a, "n": 100}])
    lights = report_card.traffic_lights(m).set_index("bias")
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
    lights = report_card.traffic_lights(m, min_n=30).set_index("bias")
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
    assert report_card.traffic_lights(rising).iloc[3]["light"] == "green"


def test_custom_thresholds_move_the_boundary_and_are_shown():
    m = headline_frame([{"measure": "invalid_rate", "value": 0.05, "n": 100}])
    strict = {**report_card.DEFAULT_THRESHOLDS, "invalid": [0.01, 0.04]}
    lights = report_card.traffic_lights(m, thresholds=strict).set_index("bias")
    assert lights.loc["Invalid outputs", "light"] == "red"
    table = report_card.threshold_table(strict).set_index("bias")
    assert table.loc["Invalid outputs", "rule"].startswith("green: Invalid outputs ≤ 0.01")
    with pytest.raises(KeyError, match="missing 'consistency'"):
        report_card.threshold_table({"position": [0.05, 0.15]})


# --------------------------------------------------------------------------- views and plots


def test_comparison_table_and_html():
    items, judgments = pairwise_tables()
    m = report_card.collect_measures(items, judgments, judge="m.p", source="toy", n_boot=50)
    lights = report_card.traffic_lights(m)
    table = report_card.comparison_table(m, lights)
    row = table.iloc[0]
    assert row["key"] == "toy:m.p"
    assert row["ca"] == pytest.approx(0.5) and row["ca_n"] == 4
    assert math.isnan(row["fpr"])  # n/a stays missing
    # lights: position |0.75-0.5| = 0.25 red, consistency 0.5 red, length 0 green,
    # kappa 1/3 red, invalid 0 green — all with n < 30 so they are grey
    assert row["n_red"] == 0 and row["n_green"] == 0
    page = report_card.comparison_html(table, lights)
    assert "jl-sortable" in page and "<script>" in page and "http" not in page
    assert "data-value='0.5'" in page
    view = report_card.lights_view(lights)
    assert view._repr_html_().count("<tr>") == 1 + len(report_card.LIGHTS)


def test_plots_draw_one_panel_per_graded_bias():
    items, judgments = pairwise_tables()
    m = report_card.collect_measures(items, judgments, judge="m.p", source="toy", n_boot=50)
    lights = report_card.traffic_lights(m, min_n=1)
    fig = plots_card.headline_forest(lights)
    titles = [ax.get_title().split("\n")[0] for ax in fig.axes if ax.get_visible()]
    assert titles == [
        "Position bias",
        "Order consistency",
        "Length bias",
        "Agreement with humans",
        "Invalid outputs",
    ]
    detail = plots_card.detail_panels(m)
    assert [ax.get_title() for ax in detail.axes if ax.get_visible()] == ["P(picks longer)"]
    assert plots_card.threshold_bands("deviation", 0.05, 0.15, lo=0.4, hi=0.6) == [
        (0.4, 0.45, "amber"),
        (0.45, 0.55, "green"),
        (0.55, 0.6, "amber"),
    ]


def test_cli_card_registers_and_names_runs():
    parser = argparse.ArgumentParser()
    cli_card.register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["card", "faithbench:gpt_4o.faithbench", "-p", "n_boot=10"])
    assert args.judge == "faithbench:gpt_4o.faithbench" and args.p == ["n_boot=10"]
    assert cli_card.run_name("sample:length_bias:illustrative-detector") == (
        "sample_length_bias__illustrative-detector"
    )
