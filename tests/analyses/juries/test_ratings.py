"""The units and values the agreement measures read."""

from __future__ import annotations

from judgelab.analyses import juries


def test_alpha_item_order_units(labelled):
    data = labelled({"a": ["pos", "neg"], "b": ["pos", "tie"]})
    long = juries.ratings(data, units="item_order")
    # b's tie item is (pos, neg) per order: units i1#0 (neg vs pos) and i1#1 (neg vs neg)
    assert len(long) == 8 and long["unit"].nunique() == 4
