"""Jury tables, their summary and the members-vs-jury bars on hand-built judgments."""

from __future__ import annotations

import pandas as pd
import pytest

from judgelab.analyses import juries, pairwise

LABELS = {
    "J1": ["pos", "pos", "pos", "neg"],  # CA 3/4
    "J2": ["pos", "neg", "tie", "neg"],  # CA 1/4
    "J3": ["neg", "pos", "tie", "pos"],  # CA 2/4
}


def test_jury_table_hand_example(labelled):
    table = juries.jury_table(labelled(LABELS), size=[1, 3], n_boot=200)
    split = juries.pick(table, split="s")
    jury = split[split["size"] == 3].iloc[0]
    # votes: (pos,pos,neg)->pos, (pos,neg,pos)->pos, (pos,tie,tie)->tie, (neg,neg,pos)->neg
    assert jury["jury"] == "J1 + J2 + J3"
    assert jury["ca"] == pytest.approx(2 / 4)
    assert jury["best_member"] == "J1"
    assert jury["best_member_ca"] == pytest.approx(3 / 4)
    assert jury["mean_member_ca"] == pytest.approx((3 + 1 + 2) / 12)
    assert jury["diff_vs_best"] == pytest.approx(2 / 4 - 3 / 4)
    assert jury["diff_low"] <= jury["diff_vs_best"] <= jury["diff_high"]
    assert jury["n"] == 4 and jury["n_juries_possible"] == 1
    singles = split[split["size"] == 1].set_index("jury")
    assert singles["ca"].to_dict() == pytest.approx({"J1": 0.75, "J2": 0.25, "J3": 0.5})
    assert (singles["diff_vs_best"] == 0).all()
    # the pooled row of a single split equals the split row
    pooled = juries.pick(table, split="pooled", size=3).iloc[0]
    assert pooled["ca"] == pytest.approx(0.5)


def test_single_judge_jury_equals_metrics_ca(labelled):
    data = labelled(LABELS)
    table = juries.pick(juries.jury_table(data, size=1, n_boot=50), split="s")
    rates = pairwise.rates_for(
        pairwise.pairwise_rates(pairwise.item_outcomes(data), n_boot=50), metric="ca"
    )
    expected = rates[rates["split"] == "s"].set_index("judge")["value"]
    assert table.set_index("jury")["ca"].to_dict() == pytest.approx(expected.to_dict())


def test_vote_rule_changes_the_jury(labelled):
    table = juries.jury_table(
        labelled(LABELS), size=3, vote_rule=list(juries.VOTE_RULES), n_boot=50
    )
    ca = juries.pick(table, split="s").set_index("vote_rule")["ca"]
    # only item i2 (pos, tie, tie) differs: ignoring ties it becomes pos -> 3/4
    assert ca.to_dict() == pytest.approx(
        {"plurality_with_tie_class": 0.5, "strict_majority": 0.5, "plurality_ignore_ties": 0.75}
    )


def test_pools_are_separate_and_juries_are_capped(labelled):
    five = {f"J{i}": ["pos", "neg", "pos"] for i in range(5)}
    data = pd.concat(
        [
            labelled(five, prompt="A"),
            labelled({"K1": ["pos"] * 3, "K2": ["neg"] * 3}, prompt="B"),
        ]
    )
    table = juries.jury_table(data, size=3, max_juries=4, n_boot=20)
    a = juries.pick(table, pool="A", split="s")
    assert len(a) == 4 and a["jury"].is_unique  # 4 of C(5, 3) = 10
    assert (a["n_juries_possible"] == 10).all()
    assert juries.pick(table, pool="B").empty  # 2 judges: no jury of 3


def test_jury_summary_picks_best_judge_and_jury(labelled):
    summary = juries.jury_summary(juries.jury_table(labelled(LABELS), size=[1, 3], n_boot=50))
    row = summary[summary["split"] == "s"].iloc[0]
    assert row["best_judge"] == "J1" and row["best_judge_ca"] == pytest.approx(0.75)
    assert row["best_jury_ca"] == pytest.approx(0.5) and row["share_beating_best"] == 0.0


def test_jury_members_long_lists_members_then_jury(labelled):
    table = juries.jury_table(labelled(LABELS), size=[1, 3], n_boot=20)
    bars = juries.jury_members_long(table, pool="p")
    assert list(bars.loc[bars["split"] == "s", "who"]) == [
        "J1",
        "J2",
        "J3",
        "jury (plurality_with_tie_class)",
    ]


def test_jury_table_missing_column(labelled):
    with pytest.raises(KeyError, match="prompt"):
        juries.jury_table(labelled(LABELS).drop(columns=["prompt"]), n_boot=10)
