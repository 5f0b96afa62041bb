"""Closed-form sample sizes: textbook values, monotonicity, and the design effect's algebra."""

from __future__ import annotations

import math

import numpy as np
import pytest

from judgelab.analyses.design import planner, sizes


def test_rate_width_matches_the_textbook_385():
    # p = 0.5, ±0.05 at 95 %: 1.96² · 0.25 / 0.05² = 384.1 -> 385
    assert sizes.rate_width(0.5, 0.1).n == 385
    clustered = sizes.rate_width(0.5, 0.1, deff=sizes.design_effect(10, 0.1), cluster_size=10)
    assert clustered.n == math.ceil(384.146 * 1.9) and clustered.n_clusters == 73


def test_one_proportion_matches_the_normal_formula():
    # p0 = 0.5 vs p1 = 0.6, α = 0.05, power 0.8: [(1.96·0.5 + 0.8416·√0.24)/0.1]² = 193.8
    assert sizes.one_proportion(0.5, 0.6).n == 194
    assert sizes.one_proportion(0.5, 0.6, power=0.9).n > 194


def test_two_proportions_and_mcnemar_match_published_values():
    # Fleiss: p1 = 0.6, p2 = 0.4, equal groups, 80 % power -> 97 per group (uncorrected)
    assert sizes.two_proportions(0.6, 0.4).n == 97
    # Connor 1987: ψ = 0.2, d = 0.1 -> [1.96·√0.2 + 0.8416·√0.19]²/0.01 = 154.6
    assert sizes.judge_difference(0.1, 0.2).n == 155


def test_design_effect_shrinks_only_the_within_item_part():
    assert sizes.design_effect() == 1.0
    assert sizes.design_effect(5, 0.25) == pytest.approx(2.0)
    # averaging two orders halves (1 + ρ) but leaves the clustering term
    assert sizes.design_effect(5, 0.25, both_orders=True, order_corr=-0.5) == pytest.approx(1.25)
    assert sizes.design_effect(repeats=4, repeat_corr=0.5) == pytest.approx(2.5 / 4)
    with pytest.raises(ValueError):
        sizes.design_effect(0.5, 0.1)


def test_ppi_needs_fewer_labels_as_the_judge_agrees_more():
    ppi0, classical = sizes.ppi_labels(0.1, var_y=0.25, corr=0.0, n_total=10**9)
    assert ppi0.n == classical.n == 385
    sizes_by_corr = [
        sizes.ppi_labels(0.1, var_y=0.25, corr=r, n_total=5000)[0].n for r in (0.3, 0.6, 0.9)
    ]
    assert sizes_by_corr == sorted(sizes_by_corr, reverse=True)
    # with infinitely many judge labels PPI needs (1 − ρ²) of the human-only labels
    assert sizes.ppi_labels(0.1, var_y=0.25, corr=0.6, n_total=10**9)[0].n == math.ceil(
        384.146 * 0.64
    )


def test_kappa_and_error_rate_sizes():
    # κ: 1.96² · 0.8·0.2 / (0.5² · 0.05²) = 983.4
    assert sizes.kappa_width(0.8, 0.5, 0.1).n == 984
    # FPR ±0.05 at r = 0.1 needs 139 negatives; with half the labels negative, 278 labels
    assert sizes.error_rate_width(0.1, 0.1, 0.5).n == 278


def test_power_curve_inverts_the_size():
    size = sizes.position_bias(0.05, both_orders=False)
    power = planner.power_at(size.n, 0.5, 0.55, alpha=0.05, deff=1.0)
    assert 0.8 <= float(power) < 0.802
    curve = planner.power_curve([50, 200, 800], 0.05, both_orders=False)
    assert np.all(np.diff(curve["power"]) > 0)


def test_position_bias_plan_puts_both_designs_side_by_side():
    plan = planner.position_bias_plan(
        0.05, icc=0.0, cluster_size=5, order_corr=-0.3, repeats=(1, 3), repeat_corr=0.6,
        deff_floor=0.0,
    )  # fmt: skip
    assert plan["design"].tolist() == [
        "one random order",
        "both orders",
        "one random order, 3 samples",
        "both orders, 3 samples",
    ]
    one, both = plan.iloc[0], plan.iloc[1]
    # both orders: 2 verdicts an item with deff 1 − 0.3: 0.35 of the one-order items (t with
    # fewer clusters: a little more)
    assert one["n"] * 0.35 <= both["n"] <= one["n"] * 0.37
    assert both["n_judgments"] == 2 * both["n"]
    floored = planner.position_bias_plan(0.05, icc=0.0, cluster_size=5, order_corr=-0.3)
    # deff floored at 1: half the one-order items
    assert floored.iloc[0]["n"] * 0.5 <= floored.iloc[1]["n"] <= floored.iloc[0]["n"] * 0.52


def test_bad_inputs_are_refused():
    for call in (
        lambda: sizes.rate_width(1.2, 0.1),
        lambda: sizes.one_proportion(0.5, 0.5),
        lambda: sizes.judge_difference(0.3, 0.2),
        lambda: sizes.length_slope(0.0),
    ):
        with pytest.raises(ValueError):
            call()


def test_self_preference_counts_all_answers_needed():
    # FPR 0.2 vs 0.3 on own answers (20 % of answers, 30 % of them wrong)
    s = sizes.self_preference(0.2, 0.1, share_self=0.2, negative_rate=0.3)
    per_self = sizes.two_proportions(0.3, 0.2, ratio=4.0)
    assert s.n == math.ceil(per_self.n / (0.2 * 0.3))
