"""The distribution of hits over repeated draws (Fig. 7)."""

from __future__ import annotations

import pytest

from judgelab.analyses import juries


def test_draw_counts_histogram(draws):
    data = draws([("pos", "pos"), ("pos", "neg"), ("neg", "neg")])
    counts = juries.draw_counts(data, count="correct").set_index(["run", "hits"])["n_items"]
    # order 0 correct in draws 0, 1 -> 2 hits; order 1 correct in draw 0 only -> 1 hit
    assert counts.to_dict() == {("Run 1", 2): 1, ("Run 2", 1): 1}
    with pytest.raises(ValueError, match="count"):
        juries.draw_counts(data, count="wrong")
