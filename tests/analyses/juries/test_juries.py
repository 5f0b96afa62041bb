"""Jury votes, jury tables and self-consistency (spec 000 §4.5-4.6) on hand-built judgments."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from judgelab.analyses.juries import juries
from judgelab.analyses.pairwise import metrics
from judgelab.core import schema

# A consolidated label is produced by a pair of verdicts (order 0, order 1).
PAIRS = {"pos": ("pos", "pos"), "neg": ("neg", "neg"), "tie": ("pos", "neg")}


def judgments(
    labels: dict[str, list[str]], *, split: str = "s", prompt: str = "p"
) -> pd.DataFrame:
    """Judgments giving each judge the consolidated labels listed (items i0, i1, ...)."""
    rows = []
    for judge, per_item in labels.items():
        for i, label in enumerate(per_item):
            for order, chosen in enumerate(PAIRS[label]):
                rows.append(verdict(judge, f"i{i}", order, chosen, split=split, prompt=prompt))
    return schema.new_judgments(rows)


def verdict(judge, item, order, chosen, *, split="s", prompt="p", sample=0) -> dict:
    """One judgments row; `chosen=None` is an invalid output."""
    return {
        "benchmark": "b",
        "split": split,
        "item_id": item,
        "judge": judge,
        "model": judge,
        "prompt": prompt,
        "order": order,
        "sample": sample,
        "valid": chosen is not None,
        "chosen": chosen,
        "correct": chosen == "pos",
    }


@pytest.mark.parametrize(
    ("labels", "expected"),
    [
        # (pos, tie, neg): every count is 1 -> no clear winner under every rule (paper example)
        (("pos", "tie", "neg"), (None, None, None)),
        # (tie, tie, tie): tie wins as a class (incorrect); no pos/neg vote when ties abstain
        (("tie", "tie", "tie"), ("tie", "tie", None)),
        (("pos", "pos", "neg"), ("pos", "pos", "pos")),
        # (pos, tie, tie): tie has 2 of 3 votes; ignoring ties, pos beats neg 1-0
        (("pos", "tie", "tie"), ("tie", "tie", "pos")),
        (("neg", "neg", "pos"), ("neg", "neg", "neg")),
        (("neg", "tie", "tie"), ("tie", "tie", "neg")),
        # 4 judges, (pos, pos, neg, neg): 2-2 -> no winner under every rule
        (("pos", "pos", "neg", "neg"), (None, None, None)),
        # (pos, pos, tie, neg): plurality 2 unique; 2 is not > 4/2; pos 2 > neg 1
        (("pos", "pos", "tie", "neg"), ("pos", None, "pos")),
    ],
)
def test_vote_rules_on_every_tie_case(labels, expected):
    got = tuple(juries.vote_labels(labels, rule=r) for r in juries.VOTE_RULES)
    assert got == expected


def test_vote_is_vectorised_and_rejects_unknown_rule():
    counts = np.array([[2, 1, 0], [0, 0, 3], [1, 1, 1]])
    assert juries.vote(counts, rule="strict_majority").tolist() == [0, 2, -1]
    with pytest.raises(ValueError, match="vote_rule"):
        juries.vote(counts, rule="majority")
    with pytest.raises(ValueError, match="labels"):
        juries.vote_labels(["pos", "maybe"])


def test_consolidated_labels_treat_inconsistent_and_invalid_as_tie():
    rows = [
        verdict("j", "both-pos", 0, "pos"),
        verdict("j", "both-pos", 1, "pos"),
        verdict("j", "both-neg", 0, "neg"),
        verdict("j", "both-neg", 1, "neg"),
        verdict("j", "split", 0, "pos"),
        verdict("j", "split", 1, "neg"),
        verdict("j", "invalid", 0, "pos"),
        verdict("j", "invalid", 1, None),
        verdict("j", "tie-tie", 0, "tie"),
        verdict("j", "tie-tie", 1, "tie"),
        verdict("j", "one-order", 0, "pos"),  # incomplete: left out
    ]
    out = juries.consolidated_labels(schema.new_judgments(rows)).set_index("item_id")["label"]
    assert out.to_dict() == {
        "both-pos": "pos",
        "both-neg": "neg",
        "split": "tie",
        "invalid": "tie",
        "tie-tie": "tie",
    }


LABELS = {
    "J1": ["pos", "pos", "pos", "neg"],  # CA 3/4
    "J2": ["pos", "neg", "tie", "neg"],  # CA 1/4
    "J3": ["neg", "pos", "tie", "pos"],  # CA 2/4
}


def test_jury_table_hand_example():
    table = juries.jury_table(judgments(LABELS), size=[1, 3], n_boot=200)
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


def test_single_judge_jury_equals_metrics_ca():
    data = judgments(LABELS)
    table = juries.pick(juries.jury_table(data, size=1, n_boot=50), split="s")
    rates = metrics.rates_for(
        metrics.pairwise_rates(metrics.item_outcomes(data), n_boot=50), metric="ca"
    )
    expected = rates[rates["split"] == "s"].set_index("judge")["value"]
    assert table.set_index("jury")["ca"].to_dict() == pytest.approx(expected.to_dict())


def test_vote_rule_changes_the_jury():
    table = juries.jury_table(
        judgments(LABELS), size=3, vote_rule=list(juries.VOTE_RULES), n_boot=50
    )
    ca = juries.pick(table, split="s").set_index("vote_rule")["ca"]
    # only item i2 (pos, tie, tie) differs: ignoring ties it becomes pos -> 3/4
    assert ca.to_dict() == pytest.approx(
        {"plurality_with_tie_class": 0.5, "strict_majority": 0.5, "plurality_ignore_ties": 0.75}
    )


def test_pools_are_separate_and_juries_are_capped():
    five = {f"J{i}": ["pos", "neg", "pos"] for i in range(5)}
    data = pd.concat(
        [
            judgments(five, prompt="A"),
            judgments({"K1": ["pos"] * 3, "K2": ["neg"] * 3}, prompt="B"),
        ]
    )
    table = juries.jury_table(data, size=3, max_juries=4, n_boot=20)
    a = juries.pick(table, pool="A", split="s")
    assert len(a) == 4 and a["jury"].is_unique  # 4 of C(5, 3) = 10
    assert (a["n_juries_possible"] == 10).all()
    assert juries.pick(table, pool="B").empty  # 2 judges: no jury of 3


def test_jury_summary_picks_best_judge_and_jury():
    summary = juries.jury_summary(juries.jury_table(judgments(LABELS), size=[1, 3], n_boot=50))
    row = summary[summary["split"] == "s"].iloc[0]
    assert row["best_judge"] == "J1" and row["best_judge_ca"] == pytest.approx(0.75)
    assert row["best_jury_ca"] == pytest.approx(0.5) and row["share_beating_best"] == 0.0


def test_jury_members_long_lists_members_then_jury():
    table = juries.jury_table(judgments(LABELS), size=[1, 3], n_boot=20)
    bars = juries.jury_members_long(table, pool="p")
    assert list(bars.loc[bars["split"] == "s", "who"]) == [
        "J1",
        "J2",
        "J3",
        "jury (plurality_with_tie_class)",
    ]


def test_jury_table_missing_column():
    with pytest.raises(KeyError, match="prompt"):
        juries.jury_table(judgments(LABELS).drop(columns=["prompt"]), n_boot=10)


def sc_rows(draws: list[tuple[str, str]]) -> pd.DataFrame:
    """One judge, one item, draw k given as (order-0 verdict, order-1 verdict)."""
    rows = []
    for k, pair in enumerate(draws):
        for order, chosen in enumerate(pair):
            rows.append(verdict("j", "i", order, chosen, sample=k))
    return schema.new_judgments(rows)


def test_self_consistency_modes_differ_as_specified():
    # draws: (pos,pos)=pos, (pos,neg)=tie, (neg,pos)=tie
    data = sc_rows([("pos", "pos"), ("pos", "neg"), ("neg", "pos")])
    per_draw = juries.self_consistency(data).iloc[0]
    # labels pos, tie, tie -> tie wins -> incorrect; the greedy draw was correct
    assert per_draw["sc_label"] == "tie" and per_draw["greedy_label"] == "pos"
    assert not per_draw["sc_correct"] and per_draw["greedy_correct"] and per_draw["changed"]
    per_run = juries.self_consistency(data, mode="per_run_majority").iloc[0]
    # order 0: pos, pos, neg -> pos; order 1: pos, neg, pos -> pos -> consolidated pos
    assert per_run["sc_label"] == "pos" and per_run["sc_correct"]
    assert per_run["n_samples"] == 3


def test_self_consistency_rates_and_min_samples():
    data = pd.concat(
        [sc_rows([("pos", "pos"), ("neg", "neg"), ("neg", "neg")]), judgments({"single": ["pos"]})]
    )
    sc = juries.self_consistency(data)
    assert list(sc["judge"]) == ["j"]  # the one-sample judge is left out
    rates = juries.self_consistency_rates(sc, n_boot=20)
    got = rates[rates["split"] == "s"].set_index("metric")["value"]
    # greedy pos (correct); vote pos, neg, neg -> neg (incorrect): Δ = 0 − 1
    assert got.to_dict() == pytest.approx(
        {"greedy_ca": 1.0, "sc_ca": 0.0, "sc_minus_greedy": -1.0, "changed": 1.0}
    )


def test_draw_counts_histogram():
    data = sc_rows([("pos", "pos"), ("pos", "neg"), ("neg", "neg")])
    counts = juries.draw_counts(data, count="correct").set_index(["run", "hits"])["n_items"]
    # order 0 correct in draws 0, 1 -> 2 hits; order 1 correct in draw 0 only -> 1 hit
    assert counts.to_dict() == {("Run 1", 2): 1, ("Run 2", 1): 1}
    with pytest.raises(ValueError, match="count"):
        juries.draw_counts(data, count="wrong")


def test_select_and_resolve_focus():
    data = pd.concat([judgments(LABELS, prompt="A"), judgments({"K": ["pos"]}, prompt="B")])
    assert set(juries.select(data, pools=["B"])["judge"]) == {"K"}
    with pytest.raises(ValueError, match="unknown prompt"):
        juries.select(data, pools=["C"])
    focus = juries.resolve_focus(data, focus_pool="C", focus_split="s")
    assert (focus.pool, focus.split) == ("A", "s") and "not in the data" in focus.note
