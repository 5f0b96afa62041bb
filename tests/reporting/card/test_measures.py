"""The card's measure runner: every registered measure per judge, n/a rows with reasons."""

import pytest

from judgelab.reporting import card


def pick(measures, measure, scope=None):
    rows = measures[measures["measure"] == measure]
    if scope is not None:
        rows = rows[rows["scope"] == scope]
    assert len(rows) == 1, (measure, scope, rows)
    return rows.iloc[0]


def test_collector_pairwise_with_only_some_measures(pairwise_tables):
    items, judgments = pairwise_tables
    m = card.collect_measures(items, judgments, judge="m.p", source="toy", n_boot=200)
    assert set(m["measure"]) == set(card.MEASURES)
    # CA: items 1 and 4 are correct in both orders -> 2/4
    assert pick(m, "ca", "pooled")["value"] == pytest.approx(0.5)
    assert pick(m, "ca", "pooled")["n"] == 4
    # consistency: same verdict in both orders for items 1 and 4 -> 2/4
    assert pick(m, "consistency", "pooled")["value"] == pytest.approx(0.5)
    # position A: order 0 picks pos (= A) 4 times, order 1 picks neg (= A) twice -> 6/8;
    # the test is the restricted wild cluster bootstrap test of A = B (issue 33; 4 items,
    # so Webb weights and a coarse p; the legacy sign test of 2 items A-both-times against
    # 0 B-both-times would give 2 * 0.5**2 = 0.5, the earlier percentile bootstrap ~0.26)
    pos_a = pick(m, "pos_a_rate", "pooled")
    assert pos_a["value"] == pytest.approx(0.75)
    assert pos_a["n"] == 8
    assert pos_a["p_value"] == pytest.approx(0.175, abs=0.02)
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
    assert "judgelab probe" in why["probe_pull"]
    assert "run once per item with one prompt" in why["stability"]
    assert set(why.index) == {
        "latency_per_1k",
        "context_trend",
        "agreement_human",
        "fpr",
        "fnr",
        "pass_rate_grounded",
        "transport_error",
        "probe_pull",
        "self_gap",
        "kappa_answered",
        "answered_gap",
        "alpha_peers",
        "kappa_reference",
        "stability",
    }
    # every applicable row carries n and, for rates, an interval around the value
    ok = m[(m["status"] == "ok") & m["ci_low"].notna()]
    assert (ok["ci_low"] <= ok["value"] + 1e-12).all() and (
        ok["value"] <= ok["ci_high"] + 1e-12
    ).all()


def test_collector_single_order_pairwise_says_no_two_order_data(pairwise_tables):
    items, judgments = pairwise_tables
    one = judgments[judgments["order"] == 0]
    m = card.collect_measures(items, one, judge="m.p", n_boot=50)
    for measure in ("ca", "consistency", "pos_a_rate"):
        assert pick(m, measure)["status"] == "n/a"
        assert "no two-order data" in pick(m, measure)["note"]
    # length preference needs only one order: 4 verdicts pick pos; pos is longer in 2 of 4
    assert pick(m, "p_longer", "all")["value"] == pytest.approx(0.5)


def test_collector_pointwise_correctness(correctness_tables):
    items, judgments = correctness_tables
    m = card.collect_measures(items, judgments, judge="g.umass", n_boot=50)
    # FPR = says Correct on human-Incorrect = 1/2; FNR = 1/2; agreement 2/4; kappa 0
    assert pick(m, "fpr")["value"] == pytest.approx(0.5) and pick(m, "fpr")["n"] == 2
    assert pick(m, "fnr")["value"] == pytest.approx(0.5)
    assert pick(m, "agreement_human")["value"] == pytest.approx(0.5)
    assert pick(m, "kappa_human")["value"] == pytest.approx(0.0)
    assert "pointwise" in pick(m, "pos_a_rate")["note"]
    assert "judge_candidate" in pick(m, "self_gap")["note"]  # self = the same model


def test_collector_maps_labels_and_rejects_unknown_judges(correctness_tables):
    items, judgments = correctness_tables
    to_faith = {"Correct": "Consistent", "Incorrect": "Hallucinated"}
    items = items.assign(gold=items["gold"].map(to_faith))
    judgments = judgments.assign(verdict=judgments["verdict"].map(to_faith))
    unmapped = card.collect_measures(items, judgments, judge="g.umass", n_boot=20)
    assert pick(unmapped, "fpr")["status"] == "n/a"
    assert "label_map" in pick(unmapped, "fpr")["note"]
    mapped = card.collect_measures(
        items,
        judgments,
        judge="g.umass",
        label_map={"Consistent": "Correct", "Hallucinated": "Incorrect"},
        n_boot=20,
    )
    assert pick(mapped, "fpr")["value"] == pytest.approx(0.5)
    with pytest.raises(ValueError, match="no judgments"):
        card.collect_measures(items, judgments, judge="nobody")
    with pytest.raises(KeyError):
        card.collect_measures(items, judgments.drop(columns="sample"), judge="g.umass")


def test_collect_runs_every_registered_measure_in_page_order(pairwise_tables):
    items, judgments = pairwise_tables
    assert list(card.MEASURES) == list(card.ORDER)
    assert {m.name for m in card.card_measures()} == set(card.ORDER)
    m = card.collect_measures(items, judgments, judge="m.p", source="toy", n_boot=20)
    assert list(dict.fromkeys(m["measure"])) == list(card.ORDER)
    assert list(m.columns) == list(card.COLUMNS)
    assert m["headline"].dtype == bool and m["n"].dtype.kind == "i"
    # every measure has exactly one headline row
    assert (m[m["headline"]].groupby("measure").size() == 1).all()
    head = card.headlines(m)
    assert len(head) == len(card.ORDER)
    view = card.measures_view(m)
    assert (
        view.loc[view["measure"] == "Consistent accuracy", "value [95% CI]"]
        .str.startswith("0.500 [")
        .any()
    )
    assert (view.loc[m["status"] == "n/a", "value [95% CI]"] == "n/a").all()


def test_collect_families_option_runs_only_those(pairwise_tables):
    items, judgments = pairwise_tables
    m = card.collect_measures(items, judgments, judge="m.p", n_boot=20, families=("length",))
    assert list(m["measure"].unique()) == ["p_longer", "length_coef", "context_trend"]
    with pytest.raises(TypeError):
        card.collect_measures(items, judgments, judge="m.p", no_such_option=1)
