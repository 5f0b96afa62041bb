"""Vote rules and consolidated labels (spec 000 §4.5 steps 1-2)."""

from __future__ import annotations

import numpy as np
import pytest

from judgelab.analyses import juries
from judgelab.core import schema


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


def test_consolidated_labels_treat_inconsistent_and_invalid_as_tie(verdict):
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
