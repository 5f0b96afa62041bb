"""Builders shared by the pairwise tests: judgments tables from (item, order 0, order 1) specs."""

from __future__ import annotations

import pytest

from judgelab.analyses import pairwise
from judgelab.core import schema

# The hand-computed example (gold = pos for every item).
#   item  order0  order1   category          c0 c1  A-picks  decisive
#   i1    pos     pos      consistent         1  1   1 (o0)   2
#   i2    pos     neg      biased_first       1  0   2        2
#   i3    neg     pos      biased_second      0  1   0        2
#   i4    neg     neg      consistent         0  0   1 (o1)   2
#   i5    tie     pos      inconsistent_tie   0  1   0        1
#   i6    inv     inv      invalid            0  0   0        0
SIX = [
    ("i1", "pos", "pos"),
    ("i2", "pos", "neg"),
    ("i3", "neg", "pos"),
    ("i4", "neg", "neg"),
    ("i5", "tie", "pos"),
    ("i6", None, None),
]


def build_judgments(spec, *, judge="J", split="s", benchmark="b", sample=0, gold=True, drop=()):
    """Build a judgments table from (item, chosen in order 0, chosen in order 1) triples.

    `chosen` is pos/neg/tie or None (invalid). `drop` lists (item, order) rows to leave out.
    """
    rows = []
    for item, *pair in spec:
        for order, chosen in enumerate(pair):
            if (item, order) in drop:
                continue
            rows.append(
                {
                    "benchmark": benchmark,
                    "split": split,
                    "item_id": item,
                    "judge": judge,
                    "order": order,
                    "sample": sample,
                    "valid": chosen is not None,
                    "chosen": chosen,
                    "correct": (chosen == "pos") if gold else None,
                }
            )
    return schema.new_judgments(rows)


def build_rates(table, *, policy="repo", aggregation="split", **kw):
    """Return the rates of one aggregation of `table`, indexed by metric."""
    out = pairwise.item_outcomes(table, invalid_policy=policy)
    r = pairwise.pairwise_rates(out, n_boot=kw.pop("n_boot", 200), **kw)
    return r[r["aggregation"] == aggregation].set_index("metric")


def build_random_table(rng, n, choices, judge="J", split="s"):
    """Return a table of n items whose two verdicts are drawn from `choices`."""
    picks = rng.choice(len(choices), size=(n, 2))
    spec = [(f"{split}{i}", choices[a], choices[b]) for i, (a, b) in enumerate(picks)]
    return build_judgments(spec, judge=judge, split=split)


@pytest.fixture()
def six():
    """The hand-computed six-item example (see the table above)."""
    return list(SIX)


@pytest.fixture()
def judgments():
    """The judgments-table builder."""
    return build_judgments


@pytest.fixture()
def rates_of():
    """Rates of one aggregation, indexed by metric."""
    return build_rates


@pytest.fixture()
def random_table():
    """A random judgments table."""
    return build_random_table
