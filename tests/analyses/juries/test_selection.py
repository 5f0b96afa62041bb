"""Notebook helpers: selecting pools and choosing the focus of a figure."""

from __future__ import annotations

import pandas as pd
import pytest

from judgelab.analyses import juries

LABELS = {
    "J1": ["pos", "pos", "pos", "neg"],
    "J2": ["pos", "neg", "tie", "neg"],
    "J3": ["neg", "pos", "tie", "pos"],
}


def test_select_and_resolve_focus(labelled):
    data = pd.concat([labelled(LABELS, prompt="A"), labelled({"K": ["pos"]}, prompt="B")])
    assert set(juries.select(data, pools=["B"])["judge"]) == {"K"}
    with pytest.raises(ValueError, match="unknown prompt"):
        juries.select(data, pools=["C"])
    focus = juries.resolve_focus(data, focus_pool="C", focus_split="s")
    assert (focus.pool, focus.split) == ("A", "s") and "not in the data" in focus.note
